#include "cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trident {

ProgressLine::ProgressLine(const std::string& label, size_t total)
    : label_(label),
      total_(total),
      enabled_(::isatty(2) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressLine::~ProgressLine() { finish(); }

std::string ProgressLine::format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

void ProgressLine::item_done(bool failed) {
  ++done_;
  if (failed) ++failed_;
  draw();
}

void ProgressLine::tick() {
  if (std::chrono::steady_clock::now() - last_draw_ >= std::chrono::milliseconds(250)) draw();
}

void ProgressLine::draw() {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::string eta = "ETA --:--";
  if (done_ > 0) {
    eta = "ETA " + format_duration(elapsed / static_cast<double>(done_) *
                                   static_cast<double>(total_ - done_));
  }
  std::fprintf(stderr, "\r\033[K%s: %zu/%zu done, %zu failed, %s elapsed, %s", label_.c_str(),
               done_, total_, failed_, format_duration(elapsed).c_str(), eta.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fputc('\n', stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace trident

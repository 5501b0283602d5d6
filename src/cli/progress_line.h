// A one-line progress display on stderr ("sweep: 5/16 done, 1 failed, 0:12 elapsed, ETA 0:30"),
// redrawn in place. It draws only when stderr is a terminal, so logs and pipes stay clean.
#ifndef TRIDENT_CLI_PROGRESS_LINE_H_
#define TRIDENT_CLI_PROGRESS_LINE_H_

#include <chrono>
#include <string>

namespace trident {

class ProgressLine {
 public:
  // `label` starts the line; `total` is the number of items this run will do.
  ProgressLine(const std::string& label, size_t total);
  ~ProgressLine();

  // Counts one finished item (failed or not) and redraws.
  void item_done(bool failed);
  // Redraws at most a few times a second (elapsed time and ETA move while waiting).
  void tick();
  // Erases the line, so that other output to the terminal (rows on stdout) starts clean; the
  // next item_done() or tick() draws it again.
  void clear();
  // Ends the line (a line break) if anything was drawn. Called by the destructor too.
  void finish();

  // "1:05" for 65 s, "1:01:40" past an hour.
  static std::string format_duration(double seconds);

 private:
  void draw();

  std::string label_;
  size_t total_;
  size_t done_ = 0;
  size_t failed_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace trident

#endif  // TRIDENT_CLI_PROGRESS_LINE_H_

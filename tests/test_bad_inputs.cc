// The bad-input corpus: every tests/bad_inputs/*.yaml must be refused with one clear,
// located message.
//
// Each case's first line is `# expect: <fragment of the message>`; an optional next line
// `# set: key=value` (repeatable) gives overrides, and `# kind: plan` asks for a PlanError.
// Files the cases reference live in common/ (good pieces) and pieces/ (broken pieces, named
// after their case so that the message still names the case).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/scenario.h"
#include "core/errors.h"

namespace {

struct BadCase {
  std::string path;
  std::string stem;
  std::string expect;
  std::vector<std::string> overrides;
  bool plan_error = false;
};

bool take_prefix(const std::string& line, const std::string& prefix, std::string* rest) {
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  *rest = line.substr(prefix.size());
  return true;
}

BadCase read_case(const std::filesystem::path& file) {
  BadCase c;
  c.path = file.string();
  c.stem = file.stem().string();
  std::ifstream in(file);
  std::string line, rest;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      first = false;
      if (!take_prefix(line, "# expect: ", &c.expect)) break;
      continue;
    }
    if (take_prefix(line, "# set: ", &rest)) {
      c.overrides.push_back(rest);
    } else if (take_prefix(line, "# kind: ", &rest)) {
      c.plan_error = rest == "plan";
    } else {
      break;
    }
  }
  return c;
}

std::string regex_escape(const std::string& s) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(s, special, R"(\$&)");
}

}  // namespace

TEST_CASE("every input in the bad-input corpus is refused with a located message",
          "[config][bad_inputs]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(TRIDENT_SOURCE_DIR) / "tests" / "bad_inputs";
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 25);

  for (const fs::path& file : files) {
    const BadCase c = read_case(file);
    INFO("case " << c.stem);
    REQUIRE_FALSE(c.expect.empty());  // first line must be "# expect: ..."
    std::string message;
    bool plan_error = false;
    try {
      trident::load_scenario(c.path, c.overrides);
    } catch (const trident::PlanError& e) {
      message = e.what();
      plan_error = true;
    } catch (const trident::ConfigError& e) {
      message = e.what();
    }
    INFO("message: " << message);
    REQUIRE_FALSE(message.empty());  // no ConfigError thrown
    CHECK_THAT(message, Catch::Contains(c.expect));
    CHECK(message.find('\n') == std::string::npos);
    if (c.plan_error) CHECK(plan_error);
    if (!c.overrides.empty()) {
      CHECK_THAT(message, Catch::StartsWith("--set "));
    } else {
      // "<dir>/<stem>[.piece].yaml:<line>:<col>: " names the case's file and position.
      const std::regex located(regex_escape(c.stem) + R"([^/: ]*\.(yaml|json):\d+:\d+: )");
      CHECK(std::regex_search(message, located));
    }
  }
}

TEST_CASE("validation of every corpus input reports the loader's message first",
          "[config][bad_inputs][validate]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(TRIDENT_SOURCE_DIR) / "tests" / "bad_inputs";
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 40);
  for (const fs::path& file : files) {
    const BadCase c = read_case(file);
    INFO("case " << c.stem);
    std::string thrown;
    try {
      trident::load_scenario(c.path, c.overrides);
    } catch (const trident::ConfigError& e) {
      thrown = e.what();
    }
    trident::Diagnostics diag;
    trident::check_config_file(c.path, c.overrides, &diag);
    REQUIRE_FALSE(diag.empty());
    CHECK(diag.problems().front().text() == thrown);
    CHECK(diag.problems().front().plan == c.plan_error);
    for (const trident::Problem& p : diag.problems()) {
      INFO(p.text());
      CHECK(p.text().find('\n') == std::string::npos);
      CHECK_FALSE(p.where.file.empty());
    }
  }
}

// The resumable sweep writer (cli/sweep_output): rows in point order, resuming a killed run.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/sweep_csv.h"
#include "cli/sweep_output.h"
#include "cli/sweep_points.h"
#include "core/errors.h"

using namespace trident;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("trident_sweep_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace

TEST_CASE("SweepOutput writes in point order and resumes", "[sweep]") {
  const std::vector<SweepAxis> axes = {{"plan.num_microbatches", {"1", "2", "3", "4"}}};
  const std::vector<SweepPoint> points = expand_points(axes);
  const std::string header = sweep_header(axes, "x\n");
  auto row = [&](size_t i) { return sweep_row(points[i], std::to_string(i * 10), 1, "ok"); };
  const std::string full = header + row(0) + row(1) + row(2) + row(3);
  const std::string path = temp_path("out.csv");

  {
    SweepOutput out(path, header, points, false);
    out.add(2, row(2));
    out.add(1, row(1));
    CHECK(slurp(path) == header);  // point 0 still missing: nothing after the header
    out.add(0, row(0));
    CHECK(slurp(path) == header + row(0) + row(1) + row(2));
    out.add(3, row(3));
    out.finish();
  }
  CHECK(slurp(path) == full);

  // A killed run: a prefix and a torn line; resume keeps the prefix and cuts the tear.
  std::ofstream(path, std::ios::binary) << header << row(0) << row(1) << "2,3,2";
  {
    SweepOutput out(path, header, points, true);
    CHECK(out.resumed() == 2);
    CHECK(out.has_row(1));
    CHECK_FALSE(out.has_row(2));
    out.add(3, row(3));
    out.add(2, row(2));
    out.finish();
  }
  CHECK(slurp(path) == full);

  // Rows with a gap (edited by hand): rebuilt through a temporary file.
  std::ofstream(path, std::ios::binary) << header << row(0) << row(2);
  {
    SweepOutput out(path, header, points, true);
    CHECK(out.resumed() == 2);
    out.add(1, row(1));
    out.add(3, row(3));
    CHECK(slurp(path) == header + row(0) + row(2));  // untouched until finished
    out.finish();
  }
  CHECK(slurp(path) == full);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // A file from another sweep is refused.
  std::ofstream(path, std::ios::binary) << sweep_header(axes, "y\n");
  CHECK_THROWS_AS(SweepOutput(path, header, points, true), ConfigError);
  std::ofstream(path, std::ios::binary) << header << "0,7,0,ok\n";
  CHECK_THROWS_AS(SweepOutput(path, header, points, true), ConfigError);
  std::filesystem::remove(path);
}

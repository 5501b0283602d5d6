// Writes a sweep's CSV rows in point order while points finish in any order, so that a sweep
// killed at any moment (even by SIGKILL) leaves a file that `--resume` can complete into exactly
// the file an uninterrupted run writes.
//
// Rows are appended as whole lines, each with one write() and an fsync, in point order: the
// file is always the header and a prefix of the rows (plus, after a power cut, perhaps a torn
// last line). Resuming reads the file back, drops a torn last line and appends the rest. A file
// whose rows are not such a prefix (edited by hand) is instead rebuilt in a temporary file
// beside it that replaces it by rename once every row is in. So is a file holding rows of
// interrupted points (kInterruptedStatus): resuming runs them again.
//
// A file output is locked (flock, advisory) while the sweep runs: a second sweep on the same
// --out refuses. Its manifest (cli/sweep_manifest.h) is written beside it when it starts, and
// a resume whose inputs differ from the manifest's is refused.
#ifndef TRIDENT_CLI_SWEEP_OUTPUT_H_
#define TRIDENT_CLI_SWEEP_OUTPUT_H_

#include <string>
#include <vector>

#include "cli/sweep_manifest.h"
#include "cli/sweep_points.h"

namespace trident {

class SweepOutput {
 public:
  // Writes to `path`, or to stdout when `path` is empty. `planned` are the points this run is
  // responsible for (one shard), in point order; `header` is sweep_header() of the sweep.
  // With `resume` and an existing non-empty file at `path`, keeps the rows already there
  // (but those of interrupted points). `manifest` describes this run (written beside a file).
  // Throws ConfigError (exit 2) when the file cannot be opened, another sweep holds its lock,
  // or it is not from this sweep (another header, a row of a point outside `planned`, a
  // duplicate, other varied values, a manifest with other inputs), and std::runtime_error when
  // writing fails.
  SweepOutput(const std::string& path, const std::string& header,
              const std::vector<SweepPoint>& planned, bool resume,
              const SweepManifest& manifest = SweepManifest());
  ~SweepOutput();
  SweepOutput(const SweepOutput&) = delete;
  SweepOutput& operator=(const SweepOutput&) = delete;

  // Whether planned point `position` (an index into `planned`) already has its row.
  bool has_row(size_t position) const { return !rows_[position].empty(); }
  // Number of planned points whose rows were found in the resumed file.
  size_t resumed() const { return resumed_; }

  // Gives the row line (with '\n') of planned point `position`; writes every row that is now
  // next in point order. Throws std::runtime_error when writing fails.
  void add(size_t position, const std::string& line);

  // Call once every planned point has its row: completes a rebuilt file (rename).
  void finish();

 private:
  void write_line(const std::string& line);
  // The file being written, or "standard output", for messages.
  std::string stream_name() const;
  void flush_ready();

  std::string path_;               // final file, "" for stdout
  std::string tmp_path_;           // set when rebuilding into a temporary file
  int fd_ = -1;                    // written to
  int lock_fd_ = -1;               // the locked output file (== fd_ unless rebuilding)
  bool sync_ = false;              // fsync after each line (files, not stdout)
  std::vector<std::string> rows_;  // per planned position; "" while missing
  size_t next_ = 0;                // first position not yet in the file
  size_t resumed_ = 0;
};

}  // namespace trident

#endif  // TRIDENT_CLI_SWEEP_OUTPUT_H_

// ProgressLine: the live one-line status of a run, redrawn in place ("\r") when the
// output is a terminal and silent otherwise (CI logs stay clean).
//
// Not thread-safe; used by the run controller's thread only.
//
// Usage:
//   ProgressLine progress(stderr);
//   progress.Update("c=16 window 2/10 12345 req/s p99 1.2 ms");
//   progress.Clear();   // before printing a normal line
#ifndef INFERA_TOOLS_BENCH_PROGRESS_LINE_H_
#define INFERA_TOOLS_BENCH_PROGRESS_LINE_H_

#include <cstdio>
#include <string>

namespace infera::bench {

class ProgressLine {
 public:
  // Enabled iff `out` is a terminal (override with `force`).
  explicit ProgressLine(std::FILE* out, int force = -1);
  ~ProgressLine() { Clear(); }

  bool enabled() const { return enabled_; }
  void Update(const std::string& text);
  void Clear();

 private:
  std::FILE* out_;
  bool enabled_;
  size_t shown_ = 0;  // characters on the line now
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_PROGRESS_LINE_H_

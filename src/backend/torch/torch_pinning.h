// PinIntraOpThreads: `--cpu-placement pinned` for one pytorch instance
// (docs/cpu_placement.md). LibTorch (OpenMP build) runs an execution's intra-op work on
// the calling thread's OpenMP team: thread 0 is the caller (the instance's worker), the
// others are libgomp pool threads that belong to that caller and are reused by its
// later parallel regions of the same size. So one parallel region of `threads` members,
// run on the worker before its first execution, pins each member to its CPU for good.
//
// The region is ATen's inline OpenMP code, so this file is compiled with -fopenmp (gcc,
// libgomp: LibTorch's runtime; src/backend/torch/CMakeLists.txt); a build without it
// pins the calling thread alone and says so in the returned text (thread 0 only).
//
// Thread-compatible: call on the instance's worker thread, after at::set_num_threads.
#ifndef INFERA_BACKEND_TORCH_TORCH_PINNING_H_
#define INFERA_BACKEND_TORCH_TORCH_PINNING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera {

// Member i of the calling thread's team of `threads` goes to cpus[i % cpus.size()].
// Returns "thread 0 (tid 123) -> CPU 1, ..." for the log; an error names the member
// whose pinning failed (the others stay pinned). REQUIRES: !cpus.empty(), threads >= 1.
absl::StatusOr<std::string> PinIntraOpThreads(const std::vector<int>& cpus, int threads);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_PINNING_H_

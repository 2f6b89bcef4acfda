#include "backend/torch/torch_pinning.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/cpu_placement.h"
#include "common/cpu_topology.h"
#include "common/str_cat.h"

namespace infera {

absl::StatusOr<std::string> PinIntraOpThreads(const std::vector<int>& cpus, int threads) {
  absl::Mutex mu;
  std::map<int, std::pair<pid_t, int>> pinned;  // team member -> (tid, CPU), guarded by mu
  absl::Status failure;                        // guarded by mu
  // Grain 1 over `threads` items: one item per team member (at::parallel_for gives
  // member t the range [t, t+1)); with one thread it runs inline on the caller.
  at::parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    const int member = at::get_thread_num();
    const int cpu = cpus[static_cast<size_t>(member) % cpus.size()];
    absl::Status status = PinCurrentThread({cpu});
    absl::MutexLock lock(&mu);
    if (!status.ok() && failure.ok()) {
      failure = absl::Status(status.code(), StrCat("intra-op thread ", member, ": ", status.message()));
    }
    if (status.ok()) pinned[member] = {gettid(), cpu};
  });
  absl::MutexLock lock(&mu);
  if (!failure.ok()) return failure;
  std::string out;
  for (const auto& [member, where] : pinned) {
    out += StrCat(out.empty() ? "" : ", ", "thread ", member, " (tid ", where.first, ") -> CPU ", where.second);
  }
  return out;
}

}  // namespace infera

#include "repository/config_limits.h"

#include <unistd.h>

#include <algorithm>

#include "common/cpu_budget.h"

namespace infera {

const MachineLimits& MachineLimits::Current() {
  static const MachineLimits limits = [] {
    MachineLimits m;
    m.num_cores = std::max(1, AvailableCpus());
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    m.physical_memory_bytes =
        pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
    return m;
  }();
  return limits;
}

int MachineLimits::MaxInstancesPerModel() const {
  return std::max(kMinInstancesPerModelLimit, kInstancesPerCore * std::max(1, num_cores));
}

int MachineLimits::MaxThreads() const { return kThreadsPerCore * std::max(1, num_cores); }

}  // namespace infera

#include "common/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace infera {
namespace {

std::optional<std::string> ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<long> ParseLong(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int CpusFromQuota(long quota, long period) {
  return std::max(1, static_cast<int>(std::ceil(static_cast<double>(quota) / static_cast<double>(period))));
}

}  // namespace

std::optional<int> CpusFromCgroupV2(std::string_view cpu_max) {
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto quota = ParseLong(cpu_max.substr(0, space));  // "max" fails to parse: no limit
  auto period = ParseLong(cpu_max.substr(space + 1));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return CpusFromQuota(*quota, *period);
}

int AvailableCpus() {
  int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = std::min(cpus, std::max(1, CPU_COUNT(&set)));
  if (auto v2 = ReadFile("/sys/fs/cgroup/cpu.max")) {
    if (auto quota = CpusFromCgroupV2(*v2)) cpus = std::min(cpus, *quota);
  } else if (auto quota = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) {
    auto period = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    auto q = ParseLong(*quota);
    auto p = period ? ParseLong(*period) : std::nullopt;
    if (q && p && *q > 0 && *p > 0) cpus = std::min(cpus, CpusFromQuota(*q, *p));
  }
  return cpus;
}

}  // namespace infera

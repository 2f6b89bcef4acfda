#include "common/cpu_topology.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr int kMaxCpuId = 4095;

std::optional<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return text;
}

std::optional<int> ParseInt(std::string_view text) {
  text = Trim(text);
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// An integer file (core_id, physical_package_id), or `fallback` when missing/garbled.
int ReadIntFile(const std::filesystem::path& path, int fallback) {
  std::optional<std::string> text = ReadFile(path);
  if (!text) return fallback;
  return ParseInt(*text).value_or(fallback);
}

// The NUMA node of one CPU: the `nodeM` entry in its sysfs directory; 0 without one.
int ReadNode(const std::filesystem::path& cpu_dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(0, 4, "node") == 0) {
      if (auto node = ParseInt(std::string_view(name).substr(4)); node && *node >= 0) return *node;
    }
  }
  return 0;
}

}  // namespace

int CpuTopology::PhysicalCores() const {
  std::set<int> cores;
  for (const LogicalCpu& cpu : cpus) cores.insert(cpu.core);
  return static_cast<int>(cores.size());
}

int CpuTopology::NumaNodes() const {
  std::set<int> nodes;
  for (const LogicalCpu& cpu : cpus) nodes.insert(cpu.node);
  return static_cast<int>(nodes.size());
}

bool CpuTopology::Smt() const { return PhysicalCores() < static_cast<int>(cpus.size()); }

std::string CpuTopology::Describe() const {
  std::vector<int> ids;
  for (const LogicalCpu& cpu : cpus) ids.push_back(cpu.id);
  const int nodes = NumaNodes();
  return StrCat(cpus.size(), " usable CPU", cpus.size() == 1 ? "" : "s", " (", FormatCpuList(ids), ") of ",
                online, " online: ", PhysicalCores(), " physical core", PhysicalCores() == 1 ? "" : "s", ", ",
                Smt() ? "SMT siblings present" : "no SMT", ", ", nodes, " NUMA node", nodes == 1 ? "" : "s");
}

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return absl::InvalidArgumentError("empty CPU list");
  std::set<int> cpus;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) {
      return absl::InvalidArgumentError("CPU list ends with ','");
    }
    const size_t dash = item.find('-');
    std::optional<int> first = ParseInt(dash == std::string_view::npos ? item : item.substr(0, dash));
    std::optional<int> last = dash == std::string_view::npos ? first : ParseInt(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < 0) {
      return absl::InvalidArgumentError(StrCat("CPU list item '", item, "' is not N or N-M"));
    }
    if (*first > *last) return absl::InvalidArgumentError(StrCat("CPU list range '", item, "' is reversed"));
    if (*last > kMaxCpuId) {
      return absl::InvalidArgumentError(StrCat("CPU list item '", item, "' exceeds CPU ", kMaxCpuId));
    }
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.insert(cpu);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? StrCat(cpus[i]) : StrCat(cpus[i], "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

absl::StatusOr<CpuTopology> ReadCpuTopology(const std::filesystem::path& sysfs_cpu_root,
                                            const std::vector<int>& allowed) {
  const std::filesystem::path online_path = sysfs_cpu_root / "online";
  std::optional<std::string> online_text = ReadFile(online_path);
  if (!online_text) {
    return absl::FailedPreconditionError(StrCat("cannot read ", online_path.string()));
  }
  absl::StatusOr<std::vector<int>> online = ParseCpuList(*online_text);
  if (!online.ok()) {
    return absl::InvalidArgumentError(StrCat(online_path.string(), ": ", online.status().message()));
  }
  CpuTopology topology;
  topology.online = static_cast<int>(online->size());
  const std::set<int> online_set(online->begin(), online->end());
  // (package, core_id) -> a dense physical core number; core_id repeats across packages.
  std::map<std::pair<int, int>, int> core_numbers;
  std::set<int> ids(allowed.begin(), allowed.end());
  for (int id : ids) {
    if (online_set.count(id) == 0) continue;
    const std::filesystem::path dir = sysfs_cpu_root / StrCat("cpu", id);
    LogicalCpu cpu;
    cpu.id = id;
    cpu.package = std::max(0, ReadIntFile(dir / "topology" / "physical_package_id", 0));
    // Without core_id each CPU is its own core (-1 - id never collides with a real one).
    const int core_id = ReadIntFile(dir / "topology" / "core_id", -1 - id);
    auto [it, inserted] = core_numbers.emplace(std::make_pair(cpu.package, core_id),
                                               static_cast<int>(core_numbers.size()));
    cpu.core = it->second;
    cpu.node = ReadNode(dir);
    topology.cpus.push_back(cpu);
  }
  if (topology.cpus.empty()) {
    return absl::FailedPreconditionError(StrCat("none of the CPUs this process may use (",
                                                FormatCpuList(std::vector<int>(ids.begin(), ids.end())),
                                                ") is online (", FormatCpuList(*online), ")"));
  }
  return topology;
}

std::vector<int> CurrentThreadCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

absl::StatusOr<CpuTopology> ReadProcessCpuTopology() {
  return ReadCpuTopology("/sys/devices/system/cpu", CurrentThreadCpus());
}

}  // namespace infera

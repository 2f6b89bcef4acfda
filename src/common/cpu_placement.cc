#include "common/cpu_placement.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "common/logging.h"
#include "common/str_cat.h"

namespace infera {
namespace {

// Preference order: the first logical CPU of every physical core before any second
// sibling, node by node, then core, then id.
std::vector<LogicalCpu> PreferenceOrder(const CpuTopology& topology) {
  std::map<int, int> seen_per_core;
  std::vector<std::pair<int, LogicalCpu>> ranked;  // (sibling rank, cpu)
  for (const LogicalCpu& cpu : topology.cpus) ranked.emplace_back(seen_per_core[cpu.core]++, cpu);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.node, a.second.core, a.second.id) <
           std::tie(b.first, b.second.node, b.second.core, b.second.id);
  });
  std::vector<LogicalCpu> order;
  for (const auto& [rank, cpu] : ranked) order.push_back(cpu);
  return order;
}

absl::Mutex process_mu(absl::kConstInit);
std::shared_ptr<CpuPlacement>& ProcessSlot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(process_mu) {
  static auto* slot = new std::shared_ptr<CpuPlacement>();
  return *slot;
}

}  // namespace

absl::StatusOr<CpuPlacementMode> ParseCpuPlacementMode(std::string_view text) {
  if (text == "none") return CpuPlacementMode::kNone;
  if (text == "pinned") return CpuPlacementMode::kPinned;
  return absl::InvalidArgumentError(
      StrCat("'", text, "' is not one of none, pinned"));
}

int IoCpuCount(int cpus, int io_threads) {
  return std::max(1, std::min(io_threads, cpus / 4));
}

CpuPlanner::CpuPlanner(const CpuTopology& topology, int budget, int io_cpus) {
  std::vector<LogicalCpu> order = PreferenceOrder(topology);
  const int used = std::clamp(budget, 1, static_cast<int>(order.size()));
  order.resize(used);
  used_ = std::move(order);
  load_.assign(used_.size(), 0);
  int max_core = 0;
  for (const LogicalCpu& cpu : used_) max_core = std::max(max_core, cpu.core);
  core_load_.assign(max_core + 1, 0);
  const int io = std::clamp(io_cpus, 1, used);
  for (int i = 0; i < static_cast<int>(used_.size()); ++i) {
    order_.push_back(used_[i].id);
    if (i < io) {
      io_.push_back(used_[i].id);
      load_[i] = 1;
      ++core_load_[used_[i].core];
    }
  }
  std::sort(io_.begin(), io_.end());
}

int CpuPlanner::Load(int cpu) const {
  for (size_t i = 0; i < used_.size(); ++i) {
    if (used_[i].id == cpu) return load_[i];
  }
  return 0;
}

CpuPlanner::Assignment CpuPlanner::Assign(int threads) {
  Assignment out;
  int first_node = -1;
  for (int t = 0; t < std::max(1, threads); ++t) {
    size_t best = 0;
    auto key = [&](size_t i) {
      const int other_node = first_node >= 0 && used_[i].node != first_node ? 1 : 0;
      return std::make_tuple(load_[i], other_node, core_load_[used_[i].core], i);
    };
    for (size_t i = 1; i < used_.size(); ++i) {
      if (key(i) < key(best)) best = i;
    }
    if (load_[best] > 0) out.shared = true;
    ++load_[best];
    ++core_load_[used_[best].core];
    if (first_node < 0) first_node = used_[best].node;
    out.cpus.push_back(used_[best].id);
  }
  return out;
}

void CpuPlanner::Release(const std::vector<int>& cpus) {
  for (int cpu : cpus) {
    for (size_t i = 0; i < used_.size(); ++i) {
      if (used_[i].id == cpu && load_[i] > 0) {
        --load_[i];
        --core_load_[used_[i].core];
        break;
      }
    }
  }
}

CpuLease::CpuLease(std::shared_ptr<CpuPlacement> owner, std::vector<int> cpus)
    : owner_(std::move(owner)), cpus_(std::move(cpus)) {}

CpuLease::~CpuLease() {
  if (owner_) owner_->Release(cpus_);
}

CpuPlacement::CpuPlacement(const CpuTopology& topology, int budget, int io_cpus)
    : topology_(topology), planner_(topology, budget, io_cpus) {}

std::shared_ptr<CpuPlacement> CpuPlacement::Create(const CpuTopology& topology, int budget, int io_threads) {
  const int cpus = std::clamp(budget, 1, static_cast<int>(topology.cpus.size()));
  return std::shared_ptr<CpuPlacement>(new CpuPlacement(topology, cpus, IoCpuCount(cpus, io_threads)));
}

std::vector<int> CpuPlacement::io_cpus() const {
  absl::MutexLock lock(&mu_);
  return planner_.io_cpus();
}

std::vector<int> CpuPlacement::cpus() const {
  absl::MutexLock lock(&mu_);
  std::vector<int> all = planner_.cpus();
  std::sort(all.begin(), all.end());
  return all;
}

std::string CpuPlacement::DescribePlan() const {
  absl::MutexLock lock(&mu_);
  std::vector<int> rest;
  for (int cpu : planner_.cpus()) {
    if (std::find(planner_.io_cpus().begin(), planner_.io_cpus().end(), cpu) == planner_.io_cpus().end()) {
      rest.push_back(cpu);
    }
  }
  std::vector<int> sorted_rest = rest;
  std::sort(sorted_rest.begin(), sorted_rest.end());
  return StrCat("I/O threads (HTTP, gRPC and the server's other threads) on CPU ",
                FormatCpuList(planner_.io_cpus()), "; pytorch instance threads one per CPU on ",
                rest.empty() ? std::string("the I/O CPUs too (there is no other)") : "CPU " + FormatCpuList(sorted_rest),
                ", least loaded first; with more threads than the ", planner_.cpus().size(),
                " CPU(s) in use they share CPUs round-robin, the I/O CPUs included");
}

std::unique_ptr<CpuLease> CpuPlacement::Reserve(std::string_view name, int threads) {
  CpuPlanner::Assignment assignment;
  {
    absl::MutexLock lock(&mu_);
    assignment = planner_.Assign(threads);
  }
  std::string list;
  for (size_t t = 0; t < assignment.cpus.size(); ++t) {
    list += StrCat(t == 0 ? "" : ", ", "thread ", t, " -> CPU ", assignment.cpus[t]);
  }
  if (assignment.shared) {
    INFERA_LOG(WARNING) << "cpu placement: instance " << name << ": " << list
                        << " (more threads than CPUs: shared with other threads)";
  } else {
    INFERA_LOG(INFO) << "cpu placement: instance " << name << ": " << list;
  }
  return std::make_unique<CpuLease>(shared_from_this(), std::move(assignment.cpus));
}

void CpuPlacement::Release(const std::vector<int>& cpus) {
  absl::MutexLock lock(&mu_);
  planner_.Release(cpus);
}

absl::Status PinCurrentThread(const std::vector<int>& cpus) {
  if (cpus.empty()) return absl::InvalidArgumentError("pinning a thread to no CPU");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return absl::InvalidArgumentError(StrCat("CPU ", cpu, " out of range"));
    CPU_SET(cpu, &set);
  }
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); err != 0) {
    return absl::FailedPreconditionError(
        StrCat("pthread_setaffinity_np(CPU ", FormatCpuList(cpus), "): ", std::strerror(err)));
  }
  std::vector<int> wanted = cpus;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const std::vector<int> applied = CurrentThreadCpus();
  if (applied != wanted) {
    return absl::FailedPreconditionError(StrCat("asked for CPU ", FormatCpuList(wanted), ", the thread runs on ",
                                                FormatCpuList(applied)));
  }
  return absl::OkStatus();
}

void PinCurrentThreadForModelLoading() {
  const std::shared_ptr<CpuPlacement> placement = ProcessCpuPlacement();
  if (placement == nullptr) return;
  if (absl::Status pinned = PinCurrentThread(placement->cpus()); !pinned.ok()) {
    INFERA_LOG(WARNING) << "cpu placement: a model-loading thread keeps the I/O CPUs: " << pinned.message();
  }
}

void SetProcessCpuPlacement(std::shared_ptr<CpuPlacement> placement) {
  absl::MutexLock lock(&process_mu);
  ProcessSlot() = std::move(placement);
}

std::shared_ptr<CpuPlacement> ProcessCpuPlacement() {
  absl::MutexLock lock(&process_mu);
  return ProcessSlot();
}

}  // namespace infera

#include "backend/load_timings.h"

#include "common/str_cat.h"

namespace infera {

long long RoundedMillis(LoadTimings::Duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration + std::chrono::microseconds(500)).count();
}

LoadTimings::Duration LoadTimings::InstanceCreateSum() const {
  Duration sum{};
  for (const Instance& i : instances) sum += i.create;
  return sum;
}

LoadTimings::Duration LoadTimings::InstanceWarmupSum() const {
  Duration sum{};
  for (const Instance& i : instances) sum += i.warmup;
  return sum;
}

std::string LoadTimings::Describe() const {
  std::string out;
  auto add = [&out](std::string_view name, Duration d) {
    if (!out.empty()) out += ", ";
    out += StrCat(name, " ", RoundedMillis(d), " ms");
  };
  if (stages.empty()) {
    add("backend load", backend_load);
  } else {
    for (const auto& [name, duration] : stages) add(name, duration);
  }
  if (instances.empty()) return out;
  out += StrCat(", ", instances.size(), instances.size() == 1 ? " instance: " : " instances: ");
  out += StrCat("create ", RoundedMillis(InstanceCreateSum()), " ms, warm-up ", RoundedMillis(InstanceWarmupSum()),
                " ms");
  if (instances.size() > 1) {
    std::vector<long long> each;
    for (const Instance& i : instances) each.push_back(RoundedMillis(i.create + i.warmup));
    out += StrCat(" (per instance ", StrJoin(each, " / "), " ms, ", instance_threads, " at a time)");
  }
  return out;
}

}  // namespace infera

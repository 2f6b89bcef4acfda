#include "console/console_readings.h"

#include <map>
#include <string>
#include <utility>

namespace infera {

std::vector<ConsoleModelReading> ReadConsoleModels(const ModelManager& manager, const LlmMetricsReader& read_llm) {
  std::map<std::string, CanaryStatus> canaries;
  for (CanaryStatus& c : manager.Canaries()) canaries.emplace(c.model, std::move(c));
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<ModelVersion>> serving;
  for (std::shared_ptr<ModelVersion>& v : manager.VersionsForStatistics("", std::nullopt).value_or(
           std::vector<std::shared_ptr<ModelVersion>>{})) {
    serving.emplace(std::make_pair(v->name(), v->version()), std::move(v));
  }
  std::vector<ConsoleModelReading> out;
  for (const ModelIndexEntry& entry : manager.Index()) {
    ConsoleModelReading r;
    r.name = entry.name;
    r.version = entry.version;
    r.state = std::string(ModelStateName(entry.state));
    r.reason = entry.reason;
    r.backend = entry.backend;
    if (auto c = canaries.find(entry.name); c != canaries.end()) r.canary = c->second;
    if (entry.state == ModelState::kReady && entry.version) {
      auto it = serving.find({entry.name, *entry.version});
      if (it != serving.end()) {
        const ModelVersion& v = *it->second;
        r.serving = true;
        r.max_batch_size = v.config().max_batch_size();
        r.queue_depth = v.QueueDepth();
        for (const auto& group : v.config().instance_group()) {
          r.instances.push_back({group.name(), inference::ModelInstanceGroup::Kind_Name(group.kind()),
                                 group.count() > 0 ? group.count() : 1});
        }
        r.stats = v.statistics().Snapshot();
        r.latency = v.statistics().latency().Snapshot();
        if (read_llm) r.llm = read_llm(v);
        if (r.backend.empty()) r.backend = v.config().backend().empty() ? v.config().platform() : v.config().backend();
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace infera

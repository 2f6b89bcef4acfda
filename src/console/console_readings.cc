#include "console/console_readings.h"

#include <map>
#include <string>
#include <utility>

namespace infera {

std::vector<ConsoleModelReading> ReadConsoleModels(const ModelManager& manager) {
  std::map<std::string, CanaryStatus> canaries;
  for (CanaryStatus& c : manager.Canaries()) canaries.emplace(c.model, std::move(c));
  std::map<std::pair<std::string, int64_t>, ModelVersionSnapshot> serving;
  for (ModelVersionSnapshot& v :
       manager.Snapshots("", std::nullopt).value_or(std::vector<ModelVersionSnapshot>{})) {
    std::pair<std::string, int64_t> key(v.name, v.version);
    serving.emplace(std::move(key), std::move(v));
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
        ModelVersionSnapshot& v = it->second;
        const inference::ModelConfig& config = *v.config;
        r.serving = true;
        r.max_batch_size = config.max_batch_size();
        r.queue_depth = v.queue_depth;
        for (const auto& group : config.instance_group()) {
          r.instances.push_back({group.name(), inference::ModelInstanceGroup::Kind_Name(group.kind()),
                                 group.count() > 0 ? group.count() : 1});
        }
        r.stats = std::move(v.statistics);
        r.latency = std::move(v.latency);
        r.llm = std::move(v.generation);
        if (r.backend.empty()) r.backend = config.backend().empty() ? config.platform() : config.backend();
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace infera

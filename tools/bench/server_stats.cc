#include "tools/bench/server_stats.h"

#include <charconv>

#include "common/str_cat.h"
#include "rapidjson/document.h"

namespace infera::bench {
namespace {

// A uint64 written as a number or (protobuf JSON) a string; 0 when absent.
int64_t Integer(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return 0;
  auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return 0;
  if (it->value.IsInt64()) return it->value.GetInt64();
  if (it->value.IsUint64()) return static_cast<int64_t>(it->value.GetUint64());
  if (it->value.IsString()) {
    int64_t v = 0;
    std::string_view s(it->value.GetString(), it->value.GetStringLength());
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }
  return 0;
}

StageTotal Stage(const rapidjson::Value& stats, const char* key) {
  if (!stats.IsObject()) return {};
  auto it = stats.FindMember(key);
  if (it == stats.MemberEnd()) return {};
  return {Integer(it->value, "count"), Integer(it->value, "ns")};
}

void Add(StageTotal& a, const StageTotal& b) {
  a.count += b.count;
  a.ns += b.ns;
}

StageTotal Sub(const StageTotal& a, const StageTotal& b) { return {a.count - b.count, a.ns - b.ns}; }

double MeanUs(const StageTotal& s) {
  return s.count > 0 ? static_cast<double>(s.ns) / static_cast<double>(s.count) / 1e3 : 0;
}

}  // namespace

ServerStats ServerStats::Minus(const ServerStats& e) const {
  ServerStats d;
  d.inference_count = inference_count - e.inference_count;
  d.execution_count = execution_count - e.execution_count;
  d.success = Sub(success, e.success);
  d.fail = Sub(fail, e.fail);
  d.queue = Sub(queue, e.queue);
  d.compute_input = Sub(compute_input, e.compute_input);
  d.compute_infer = Sub(compute_infer, e.compute_infer);
  d.compute_output = Sub(compute_output, e.compute_output);
  return d;
}

absl::StatusOr<ServerStats> ParseServerStats(std::string_view json, std::string_view model,
                                             std::string_view version) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("model_stats") ||
      !doc["model_stats"].IsArray()) {
    return absl::InvalidArgumentError("statistics are not {\"model_stats\": [...]}");
  }
  ServerStats stats;
  bool found = false;
  for (const auto& entry : doc["model_stats"].GetArray()) {
    if (!entry.IsObject() || !entry.HasMember("name") || !entry["name"].IsString() ||
        entry["name"].GetString() != model) {
      continue;
    }
    if (!version.empty() && entry.HasMember("version") && entry["version"].IsString() &&
        entry["version"].GetString() != version) {
      continue;
    }
    found = true;
    stats.inference_count += Integer(entry, "inference_count");
    stats.execution_count += Integer(entry, "execution_count");
    const rapidjson::Value empty(rapidjson::kObjectType);
    const rapidjson::Value& s = entry.HasMember("inference_stats") ? entry["inference_stats"] : empty;
    Add(stats.success, Stage(s, "success"));
    Add(stats.fail, Stage(s, "fail"));
    Add(stats.queue, Stage(s, "queue"));
    Add(stats.compute_input, Stage(s, "compute_input"));
    Add(stats.compute_infer, Stage(s, "compute_infer"));
    Add(stats.compute_output, Stage(s, "compute_output"));
  }
  if (!found) return absl::NotFoundError(StrCat("no statistics for model '", model, "'"));
  return stats;
}

ServerBreakdown ComputeBreakdown(const ServerStats& d) {
  ServerBreakdown b;
  b.requests = d.success.count;
  b.failures = d.fail.count;
  b.inferences = d.inference_count;
  b.executions = d.execution_count;
  b.avg_batch_rows = d.execution_count > 0
                         ? static_cast<double>(d.inference_count) / static_cast<double>(d.execution_count)
                         : 0;
  b.request_us = MeanUs(d.success);
  b.queue_us = MeanUs(d.queue);
  b.compute_input_us = MeanUs(d.compute_input);
  b.compute_infer_us = MeanUs(d.compute_infer);
  b.compute_output_us = MeanUs(d.compute_output);
  b.overhead_us = b.request_us - b.queue_us - b.compute_input_us - b.compute_infer_us -
                  b.compute_output_us;
  if (b.overhead_us < 0) b.overhead_us = 0;
  return b;
}

}  // namespace infera::bench

#include "http/kserve_extension_routes.h"

#include <string>
#include <vector>

#include "common/status.h"
#include "common/json_reader.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/proto_json.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteString(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

HttpResponse JsonResponse(const rapidjson::StringBuffer& buffer) {
  return HttpResponse{200, "application/json", std::string(buffer.GetString(), buffer.GetSize()),
                      {}};
}

void WriteDuration(JsonWriter& w, const char* key, const StatisticsSnapshot::Duration& d) {
  w.Key(key);
  w.StartObject();
  w.Key("count");
  w.Uint64(d.count);
  w.Key("ns");
  w.Uint64(d.ns);
  w.EndObject();
}

void WriteModelStatistics(JsonWriter& w, const ModelVersion& model) {
  const StatisticsSnapshot s = model.statistics().Snapshot();
  w.StartObject();
  w.Key("name");
  WriteString(w, model.name());
  w.Key("version");
  WriteString(w, std::to_string(model.version()));
  w.Key("last_inference");
  w.Uint64(s.last_inference_ms);
  w.Key("inference_count");
  w.Uint64(s.inference_count);
  w.Key("execution_count");
  w.Uint64(s.execution_count);
  w.Key("inference_stats");
  w.StartObject();
  WriteDuration(w, "success", s.success);
  WriteDuration(w, "fail", s.fail);
  WriteDuration(w, "queue", s.queue);
  WriteDuration(w, "compute_input", s.compute_input);
  WriteDuration(w, "compute_infer", s.compute_infer);
  WriteDuration(w, "compute_output", s.compute_output);
  WriteDuration(w, "cache_hit", {});  // infera has no response cache
  WriteDuration(w, "cache_miss", {});
  w.EndObject();
  w.Key("batch_stats");
  w.StartArray();
  for (const StatisticsSnapshot::BatchSize& b : s.batch_stats) {
    w.StartObject();
    w.Key("batch_size");
    w.Uint64(b.batch_size);
    WriteDuration(w, "compute_input", b.compute_input);
    WriteDuration(w, "compute_infer", b.compute_infer);
    WriteDuration(w, "compute_output", b.compute_output);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}


absl::StatusOr<bool> ParseIndexRequest(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return false;
  rapidjson::Document doc;
  RETURN_IF_ERROR(ReadJson(body, "repository index body", doc));
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError(
        "repository index body must be a JSON object such as {\"ready\": true}");
  }
  auto ready = doc.FindMember("ready");
  if (ready == doc.MemberEnd()) return false;
  if (!ready->value.IsBool()) {
    return absl::InvalidArgumentError("repository index \"ready\" must be true or false");
  }
  return ready->value.GetBool();
}

}  // namespace

HttpResponse ModelConfigResponse(const ModelManager& manager, std::string_view name,
                                 std::optional<int64_t> version) {
  auto model = manager.GetModelVersion(name, version);
  if (!model.ok()) return ErrorResponse(model.status());
  return HttpResponse{200, "application/json", ProtoToJson((*model)->config()), {}};
}

HttpResponse ModelStatisticsResponse(const ModelManager& manager, std::string_view name,
                                     std::optional<int64_t> version) {
  auto models = manager.VersionsForStatistics(name, version);
  if (!models.ok()) return ErrorResponse(models.status());
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("model_stats");
  w.StartArray();
  for (const auto& model : *models) WriteModelStatistics(w, *model);
  w.EndArray();
  w.EndObject();
  return JsonResponse(buffer);
}

HttpResponse RepositoryIndexResponse(const ModelManager& manager, std::string_view body) {
  absl::StatusOr<bool> ready_only = ParseIndexRequest(body);
  if (!ready_only.ok()) return ErrorResponse(ready_only.status());
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartArray();
  for (const ModelIndexEntry& entry : manager.Index()) {
    if (*ready_only && entry.state != ModelState::kReady) continue;
    w.StartObject();
    w.Key("name");
    WriteString(w, entry.name);
    if (entry.version) {
      w.Key("version");
      WriteString(w, std::to_string(*entry.version));
    }
    w.Key("state");
    WriteString(w, ModelStateName(entry.state));
    w.Key("reason");
    WriteString(w, entry.reason);
    w.EndObject();
  }
  w.EndArray();
  return JsonResponse(buffer);
}

}  // namespace infera

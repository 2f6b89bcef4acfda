#include "http/kserve_extension_routes.h"

#include <string>
#include <vector>

#include "common/json_writer.h"
#include "common/status.h"
#include "common/json_reader.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/proto_json.h"
#include "protocol/model_answers.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

HttpResponse JsonResponse(std::string body) {
  return HttpResponse{200, "application/json", std::move(body), {}};
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
    return absl::InvalidArgumentError(
        "Invalid value for 'ready': expected a boolean (repository index \"ready\" must be true or false)");
  }
  return ready->value.GetBool();
}

}  // namespace

HttpResponse ModelConfigResponse(const ModelManager& manager, std::string_view name,
                                 std::optional<int64_t> version) {
  inference::ModelConfigResponse response;
  if (absl::Status built = BuildModelConfig(manager, name, version, &response); !built.ok()) {
    return ErrorResponse(built);
  }
  return JsonResponse(ProtoToJson(response.config()));
}

HttpResponse ModelStatisticsResponse(const ModelManager& manager, std::string_view name,
                                     std::optional<int64_t> version) {
  inference::ModelStatisticsResponse response;
  if (absl::Status built = BuildModelStatistics(manager, name, version, &response); !built.ok()) {
    return ErrorResponse(built);
  }
  return JsonResponse(ProtoToJson(response));
}

HttpResponse RepositoryIndexResponse(const ModelManager& manager, std::string_view body, const ApiKeyGrantPtr& key) {
  absl::StatusOr<bool> ready_only = ParseIndexRequest(body);
  if (!ready_only.ok()) return ErrorResponse(ready_only.status());
  inference::RepositoryIndexResponse response;
  BuildRepositoryIndex(manager, *ready_only, &response);
  // Triton's HTTP index is a bare array; "version" only when known, as Triton prints it.
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartArray();
  for (const inference::RepositoryIndexResponse::ModelIndex& model : response.models()) {
    if (key != nullptr && !key->entry.AllowsModel(model.name())) continue;  // the key's models only
    w.StartObject();
    w.Key("name");
    WriteString(w, model.name());
    if (!model.version().empty()) {
      w.Key("version");
      WriteString(w, model.version());
    }
    w.Key("state");
    WriteString(w, model.state());
    w.Key("reason");
    WriteString(w, model.reason());
    w.EndObject();
  }
  w.EndArray();
  return JsonResponse(std::string(buffer.GetString(), buffer.GetSize()));
}

}  // namespace infera

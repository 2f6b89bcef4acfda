#include "http/shared_memory_routes.h"

#include <optional>
#include <string>
#include <vector>

#include "common/json_reader.h"
#include "common/str_cat.h"
#include "http/admin_access.h"
#include "http/http_status.h"
#include "http/url_path.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

constexpr std::string_view kSystem = "systemsharedmemory";
constexpr std::string_view kCuda = "cudasharedmemory";

HttpResponse Ok(std::string body) { return HttpResponse{200, "application/json", std::move(body), {}}; }

HttpResponse MethodNotAllowed(std::string_view allowed) {
  HttpResponse response = ErrorResponse(405, StrCat("method not allowed; use ", allowed));
  response.headers.emplace_back("Allow", std::string(allowed));
  return response;
}

std::string StatusJson(const std::vector<SharedMemoryRegionInfo>& regions) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const SharedMemoryRegionInfo& info : regions) {
    w.StartObject();
    w.Key("name");
    w.String(info.name.data(), static_cast<rapidjson::SizeType>(info.name.size()));
    w.Key("key");
    w.String(info.key.data(), static_cast<rapidjson::SizeType>(info.key.size()));
    w.Key("offset");
    w.Uint64(info.offset);
    w.Key("byte_size");
    w.Uint64(info.byte_size);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

struct RegisterBody {
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

absl::StatusOr<RegisterBody> ParseRegisterBody(std::string_view body) {
  rapidjson::Document doc;
  if (absl::Status read = ReadJson(body, "register request body", doc); !read.ok()) return read;
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError(
        "register request body must be a JSON object {\"key\", \"offset\", \"byte_size\"}");
  }
  RegisterBody parsed;
  auto key = doc.FindMember("key");
  if (key == doc.MemberEnd() || !key->value.IsString()) {
    return absl::InvalidArgumentError("register request body needs \"key\" as a string");
  }
  parsed.key.assign(key->value.GetString(), key->value.GetStringLength());
  for (auto [field, out, required] : {std::tuple{"offset", &parsed.offset, false},
                                      std::tuple{"byte_size", &parsed.byte_size, true}}) {
    auto member = doc.FindMember(field);
    if (member == doc.MemberEnd()) {
      if (required) {
        return absl::InvalidArgumentError(
            StrCat("register request body needs \"", field, "\" as a non-negative integer"));
      }
      continue;
    }
    if (!member->value.IsUint64()) {
      return absl::InvalidArgumentError(
          StrCat("\"", field, "\" in the register request body must be a non-negative integer"));
    }
    *out = member->value.GetUint64();
  }
  return parsed;
}

}  // namespace

bool SharedMemoryRoutes::Matches(std::string_view path) {
  const std::vector<std::string_view> parts = SplitPath(path);
  return parts.size() >= 2 && parts[0] == "v2" && (parts[1] == kSystem || parts[1] == kCuda);
}

HttpResponse SharedMemoryRoutes::Handle(const HttpRequest& request) const {
  const std::vector<std::string_view> parts = SplitPath(request.path());
  // /v2/<kind>/<action> or /v2/<kind>/region/<name>/<action>
  std::string_view action;
  std::optional<std::string> name;
  if (parts.size() == 3) {
    action = parts[2];
  } else if (parts.size() == 5 && parts[2] == "region") {
    name = PercentDecode(parts[3]);
    if (!name) return ErrorResponse(400, "malformed percent-escape in region name");
    if (name->empty()) return ErrorResponse(400, "shared memory region name is empty");
    action = parts[4];
  } else {
    return ErrorResponse(404, StrCat("no route for ", request.path()));
  }
  const bool status = action == "status";
  if (!status && action != "register" && action != "unregister") {
    return ErrorResponse(404, StrCat("no route for ", request.path()));
  }
  if (status ? (request.method != "GET" && request.method != "POST") : request.method != "POST") {
    return MethodNotAllowed(status ? "GET, POST" : "POST");
  }
  // Register is closed unless opened (api/admin_guard.h); status and unregister stay
  // cheap and harmless: with registration closed there is nothing to list or release.
  const AdminGuard::Operation operation = status                   ? AdminGuard::Operation::kRead
                                          : action == "unregister" ? AdminGuard::Operation::kRelease
                                                                   : AdminGuard::Operation::kAdmin;
  const std::string audit_action = StrCat("shm.", parts[1] == kCuda ? "cuda." : "system.", action);
  const std::string_view audit_target = name ? std::string_view(*name) : std::string_view("*");
  if (absl::Status denied = CheckAdminAccess(guard_, ApiCategory::kSharedMemory, operation, request,
                                             audit_action, audit_target);
      !denied.ok()) {
    return AdminDeniedResponse(denied);
  }
  if (!status) {
    // Register and unregister change the server: audited with their outcome.
    HttpResponse response;
    if (parts[1] == kCuda) {
      const absl::Status change = CudaSharedMemoryChange(name ? *name : "", action);
      response = change.ok() ? Ok("") : ErrorResponse(change);
    } else {
      response = HandleSystem(request, name ? std::string_view(*name) : "", action);
    }
    AuditHttpResponse(HttpAdminAudit(guard_, ApiCategory::kSharedMemory, request, audit_action, audit_target),
                      response);
    return response;
  }
  if (parts[1] == kCuda) {
    if (name) {
      return ErrorResponse(404, StrCat("Unable to find cuda shared memory region: '",
                                       std::string_view(*name).substr(0, 128), "'"));
    }
    return Ok("[]");
  }
  return HandleSystem(request, name ? std::string_view(*name) : std::string_view(), action);
}

HttpResponse SharedMemoryRoutes::HandleSystem(const HttpRequest& request, std::string_view name,
                                              std::string_view action) const {
  if (action == "status") {
    absl::StatusOr<std::vector<SharedMemoryRegionInfo>> regions = registry_.Status(name);
    if (!regions.ok()) return ErrorResponse(regions.status());
    return Ok(StatusJson(*regions));
  }
  if (action == "unregister") {
    if (name.empty()) {
      registry_.UnregisterAll();
    } else if (absl::Status s = registry_.Unregister(name); !s.ok()) {
      return ErrorResponse(s);
    }
    return Ok("");
  }
  if (name.empty()) return ErrorResponse(SharedMemoryRegionNameRequired("system"));
  absl::StatusOr<RegisterBody> body = ParseRegisterBody(request.body);
  if (!body.ok()) return ErrorResponse(body.status());
  if (absl::Status s = registry_.Register(name, body->key, body->offset, body->byte_size); !s.ok()) {
    return ErrorResponse(s);
  }
  return Ok("");
}

}  // namespace infera

#include "security/api_key_audit.h"

#include <string>

#include "common/str_cat.h"
#include "security/audit_log.h"

namespace infera {
namespace {

std::string_view RightName(uint8_t right) {
  switch (right) {
    case kRightInfer:
      return "infer";
    case kRightAdmin:
      return "admin";
    default:
      return "read";
  }
}

}  // namespace

void AuditApiKeyRefusal(const ApiKeyStore& store, std::optional<std::string_view> authorization,
                        std::string_view peer, std::string_view transport, uint8_t right,
                        std::string_view model, const absl::Status& refusal) {
  switch (refusal.code()) {
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kInvalidArgument:
      break;
    default:
      return;
  }
  AuditEvent event;
  event.credential = store.CredentialOf(authorization);
  event.peer = std::string(peer);
  event.transport = std::string(transport);
  event.action = StrCat("auth.", RightName(right));
  event.target = model.empty() ? std::string("server") : std::string(model);
  event.outcome = AuditOutcome{StrCat("denied: ", refusal.message())};
  RecordAudit(event);
}

}  // namespace infera

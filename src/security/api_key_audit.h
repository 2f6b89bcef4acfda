// Refused authentications in the audit log (docs/security.md, "Audit log"): each request
// an API key check turns away — no key, an unknown key, a key without the right or the
// model, a key sent in the query string — is one audit line, on either transport. Quota
// refusals (429 / RESOURCE_EXHAUSTED) are not: the key was good.
//
// Thread-safe (the store and the audit log are).
#ifndef INFERA_SECURITY_API_KEY_AUDIT_H_
#define INFERA_SECURITY_API_KEY_AUDIT_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "security/api_key_store.h"

namespace infera {

// Records `refusal` when it is an authentication refusal (Unauthenticated,
// PermissionDenied, or InvalidArgument for a key in the query string); nothing otherwise.
// Action "auth.<right>" (read, infer, admin), target the model (empty: "server"), the
// credential as ApiKeyStore::CredentialOf names it — never the key.
void AuditApiKeyRefusal(const ApiKeyStore& store, std::optional<std::string_view> authorization,
                        std::string_view peer, std::string_view transport, uint8_t right,
                        std::string_view model, const absl::Status& refusal);

}  // namespace infera

#endif  // INFERA_SECURITY_API_KEY_AUDIT_H_

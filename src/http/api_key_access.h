// The HTTP side of API keys (docs/api_keys.md): which right and model each route needs,
// and the one check the server's dispatch runs before the route table when keys are
// configured.
//
//   if (absl::Status denied = CheckHttpApiKey(store, request); !denied.ok()) {
//     return Send(ApiKeyDeniedResponse(ErrorResponse(denied), denied));
//   }
//   // request.api_key is the grant: routes check body models and charge tokens to it.
//
// Thread-safe (pure functions over a thread-safe store).
#ifndef INFERA_HTTP_API_KEY_ACCESS_H_
#define INFERA_HTTP_API_KEY_ACCESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "http/http_message.h"
#include "security/api_key_store.h"

namespace infera {

// What a route needs from a key.
struct HttpKeyAccess {
  bool open = false;                 // health, the console's static pages: no key
  uint8_t right = kRightRead;        // kRightRead, kRightInfer or kRightAdmin
  std::optional<std::string> model{};  // the model the path names (percent-decoded)
  bool every_model = false;          // an aggregate over all models: needs models=*
};

// The access `method` + `path` (percent-encoded, before '?') needs. Paths of no route
// are reads (they answer 404 to a valid key). Models named in the body (OpenAI,
// embeddings) are checked by their routes (CheckGrantModel).
HttpKeyAccess HttpKeyAccessFor(std::string_view method, std::string_view path);

// The name of an API-key parameter in `target`'s query string (api_key, key,
// access_token; case-insensitive), if any.
std::optional<std::string> KeyInQueryString(std::string_view target);

// OK (request.api_key set, or left null on an open route), or the refusal: 400 for a
// key in the query string, 401 missing/unknown key, 403 right or model, 429 quota.
absl::Status CheckHttpApiKey(ApiKeyStore& store, HttpRequest& request);

// `rendered` (the route family's error body for `status`) with `WWW-Authenticate:
// Bearer` on a 401 and the status's Retry-After hint on a 429.
HttpResponse ApiKeyDeniedResponse(HttpResponse rendered, const absl::Status& status);

}  // namespace infera

#endif  // INFERA_HTTP_API_KEY_ACCESS_H_

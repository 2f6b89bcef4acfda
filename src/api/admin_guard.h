// AdminGuard: the one access check in front of infera's admin-sensitive APIs, for both
// transports. It combines infera's --admin-token with Triton's restricted-API shape
// (`--http-restricted-api` / `--grpc-restricted-protocol`):
//
//   --http-restricted-api=<category>[,<category>...]:<header>=<value>   (repeatable)
//   --grpc-restricted-protocol=<category>[,<category>...]:<key>=<value> (repeatable)
//
// A restricted category needs the header on every request to it: over HTTP the header
// `<header>` itself, over gRPC the metadata `triton-grpc-protocol-<key>` (Triton's
// names). A category may be in one group only. Categories (Triton's names; the routes
// infera has in each):
//
//   model-repository  POST /v2/repository/index, .../models/{m}/load, .../unload,
//                     .../canary/promote; gRPC RepositoryIndex, RepositoryModelLoad,
//                     RepositoryModelUnload
//   logging           GET / POST /v2/logging; gRPC LogSettings (all kAdmin)
//   shared-memory     GET / POST /v2/{system,cuda}sharedmemory/...; gRPC
//                     SystemSharedMemory*, CudaSharedMemory* (register kAdmin,
//                     unregister kRelease, status kRead)
//   trace             GET / POST /v2[/models/{m}]/trace/setting; gRPC TraceSetting
//                     (reads are Operation::kRead, updates kAdmin)
//
// Triton's protocol categories have no admin operation: only rule 1 applies to them
// (CheckRestricted; http/protocol_restriction.h maps the routes, the gRPC service its
// calls). They may be restricted, never opened by --allow-admin-api:
//
//   health            /v2/health/{live,ready}, /v2/models/{m}[/versions/{v}]/ready;
//                     gRPC ServerLive, ServerReady, ModelReady
//   metadata          GET /v2, /v2/models/{m}[/versions/{v}], /v1/models; gRPC
//                     ServerMetadata, ModelMetadata
//   model-config      /v2/models/{m}[/versions/{v}]/config; gRPC ModelConfig
//   statistics        /v2/models[/{m}[/versions/{v}]]/stats, .../diagnosis; gRPC
//                     ModelStatistics
//   inference         .../infer, .../generate, .../generate_stream, the OpenAI /v1
//                     routes; gRPC ModelInfer, ModelStreamInfer
//
// Operations: kRead (status, settings reads, the repository index), kAdmin (everything
// that changes the server: load, unload, promote, every logging call, a trace settings
// update, shared-memory register) and kRelease (shared-memory unregister: undoes what a
// kAdmin operation did, so it is guarded like one, but never closed — with registration
// closed there is nothing to release, and clients call it to clean up).
//
// The rules, checked in this order:
//   1. A restricted category without its header (or with the wrong value):
//      PermissionDenied "This API is restricted, expecting header '<header>'" (HTTP 403)
//      or, over gRPC, "This protocol is restricted, expecting header
//      'triton-grpc-protocol-<key>'" (Triton's texts; Triton answers gRPC with
//      UNAVAILABLE, which clients retry, so infera uses PERMISSION_DENIED).
//   2. With --admin-token, every kAdmin and kRelease operation needs
//      `Authorization: Bearer <token>` (Unauthenticated, HTTP 401). Reads do not.
//   3. Closed by default: a kAdmin operation on a category with neither a token nor a
//      restriction covering it (no credential at all) is PermissionDenied unless the
//      operator opened the category for every client: `--allow-admin-api=<categories>`,
//      `--allow-client-shm=true` (shared-memory, Triton's flag) or
//      `--model-control-mode=explicit` (model-repository). The server logs a SECURITY
//      warning at start for every category left open that way (OpenAdminApiWarnings).
//      The refusal names the flags that open it.
//
// With API keys configured (docs/api_keys.md), rules 2 and 3 become one: every kAdmin
// and kRelease operation needs `Authorization: Bearer <key>` of a key with the admin
// right (Options::api_key_admin decides; --admin-token is then such a key).
//
// Secrets are compared in constant time. Thread-safe (immutable after construction).
#ifndef INFERA_API_ADMIN_GUARD_H_
#define INFERA_API_ADMIN_GUARD_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace infera {

enum class ApiCategory {
  kModelRepository, kLogging, kSharedMemory, kTrace,
  // Triton's protocol categories: restrictable, no admin operations (see above).
  kHealth, kMetadata, kInference, kModelConfig, kStatistics,
};

// "model-repository", "logging", "shared-memory", "trace", "health", "metadata",
// "inference", "model-config", "statistics".
std::string_view ApiCategoryName(ApiCategory category);

// One `<categories>:<key>=<value>` group.
struct ApiRestriction {
  std::vector<ApiCategory> categories;
  std::string key;  // lower-cased (HTTP header names and gRPC metadata keys are)
  std::string value;
};

// Parses a flag value. InvalidArgument naming the problem: no ':' or '=', an empty key
// or value,
// an unknown category ("unknown restricted api '<name>'", Triton's words, listing the
// known ones). Every one of Triton's nine categories is accepted.
absl::StatusOr<ApiRestriction> ParseApiRestriction(std::string_view spec);

// Parses "<category>[,<category>...]" (--allow-admin-api): InvalidArgument naming an
// unknown or empty category, or a protocol category (nothing to open there).
absl::StatusOr<std::vector<ApiCategory>> ParseApiCategories(std::string_view list);

class AdminGuard {
 public:
  enum class Operation { kRead, kAdmin, kRelease };
  // Looks up a request header / metadata key (lower-case name); nullopt when absent.
  using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

  struct Options {
    std::string admin_token;                    // empty: no token
    std::vector<ApiRestriction> restrictions;   // of this transport
    std::string header_prefix;                  // "" for HTTP, "triton-grpc-protocol-" for gRPC
    bool explicit_mode = false;                 // --model-control-mode=explicit
    // Categories whose admin operations the operator opened to every client without a
    // credential (--allow-admin-api, --allow-client-shm); explicit_mode opens
    // model-repository too.
    std::vector<ApiCategory> opened;
    // Set when API keys are configured: OK when the Authorization value (nullopt: none)
    // is a key with the admin right, else its Unauthenticated / PermissionDenied.
    std::function<absl::Status(std::optional<std::string_view> authorization)> api_key_admin;
    // Set with api_key_admin: the audit log's name for the Authorization value's holder
    // ("key:<id>", "unknown-key", "none"; PresentedCredential).
    std::function<std::string(std::optional<std::string_view> authorization)> credential_of;
  };

  // InvalidArgument when a category is in two groups (Triton refuses that too).
  static absl::StatusOr<AdminGuard> Create(Options options);

  // OK, or the status to answer with (see the rules above).
  absl::Status Check(ApiCategory category, Operation operation, const HeaderLookup& headers) const;
  // Rule 1 alone: OK when `category` is not restricted or the request carries its
  // header. What protocol categories need, and what comes first on a model load
  // (before "explicit model load / unload is not allowed", as Triton).
  absl::Status CheckRestricted(ApiCategory category, const HeaderLookup& headers) const;
  // True when a restricted-API group names `category`.
  bool Restricted(ApiCategory category) const { return RestrictionFor(category) != nullptr; }
  // True when any restricted-API group is configured (the request path skips the
  // category lookup otherwise).
  bool AnyRestricted() const { return !options_.restrictions.empty(); }

  // Which credential the request presented for `category`, for the audit log
  // (security/audit_log.h): "admin-token" (an Authorization: Bearer header, with
  // --admin-token set and no API keys), with API keys Options::credential_of's answer
  // ("key:<id>" or "unknown-key"), "restricted:<category>" (the category's restricted-API
  // header), joined with '+', or "none". Says nothing of whether it was right, and never
  // contains the secret.
  std::string PresentedCredential(ApiCategory category, const HeaderLookup& headers) const;

  // True when admin operations on `category` need a credential (token or restriction).
  bool Protected(ApiCategory category) const;
  // True when any client may run admin operations on `category`: opened (see Options)
  // and not Protected.
  bool OpenToEveryone(ApiCategory category) const;

 private:
  explicit AdminGuard(Options options) : options_(std::move(options)) {}
  const ApiRestriction* RestrictionFor(ApiCategory category) const;
  bool Opened(ApiCategory category) const;

  Options options_;
};

// The SECURITY warnings to log at start: one line per category that OpenToEveryone on
// either transport, naming the transports, the risk and how to close it. Empty when
// every admin operation needs a credential or is closed.
std::vector<std::string> OpenAdminApiWarnings(const AdminGuard& http, const AdminGuard& grpc);

}  // namespace infera

#endif  // INFERA_API_ADMIN_GUARD_H_

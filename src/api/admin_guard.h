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
//   logging           GET / POST /v2/logging
//   shared-memory     GET / POST /v2/{system,cuda}sharedmemory/...; gRPC
//                     SystemSharedMemory*, CudaSharedMemory* (register / unregister are
//                     admin operations, status a read)
//   trace             GET / POST /v2[/models/{m}]/trace/setting; gRPC TraceSetting
//                     (reads are Operation::kRead, updates kAdmin)
//
// The rules, checked in this order:
//   1. A restricted category without its header (or with the wrong value):
//      PermissionDenied "This API is restricted, expecting header '<header>'" (HTTP 403;
//      Triton answers gRPC with UNAVAILABLE, which clients retry, so infera uses
//      PERMISSION_DENIED).
//   2. With --admin-token, every admin operation (Operation::kAdmin: load, unload,
//      promote, every logging call, a trace settings update, shared-memory register /
//      unregister) needs `Authorization: Bearer <token>` (Unauthenticated, HTTP 401).
//      Reads such as the repository index do not.
//   3. An admin operation on the model repository with neither a token nor a
//      restriction covering it is open only in explicit model control mode (the
//      operator chose an open admin API; the server logs a warning at start). In the
//      other modes it is PermissionDenied, so that canary promotion is never open by
//      default. (Load / unload are refused outside explicit mode anyway, by the routes.)
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

enum class ApiCategory { kModelRepository, kLogging, kSharedMemory, kTrace };

// "model-repository", "logging", "shared-memory", "trace".
std::string_view ApiCategoryName(ApiCategory category);

// One `<categories>:<key>=<value>` group.
struct ApiRestriction {
  std::vector<ApiCategory> categories;
  std::string key;  // lower-cased (HTTP header names and gRPC metadata keys are)
  std::string value;
};

// Parses a flag value. InvalidArgument naming the problem: no ':' or '=', an empty key
// or value,
// an unknown category (the message lists the known ones) — Triton's other categories
// (health, metadata, inference, model-config, statistics) are not accepted,
// because infera would not enforce them.
absl::StatusOr<ApiRestriction> ParseApiRestriction(std::string_view spec);

class AdminGuard {
 public:
  enum class Operation { kRead, kAdmin };
  // Looks up a request header / metadata key (lower-case name); nullopt when absent.
  using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

  struct Options {
    std::string admin_token;                    // empty: no token
    std::vector<ApiRestriction> restrictions;   // of this transport
    std::string header_prefix;                  // "" for HTTP, "triton-grpc-protocol-" for gRPC
    bool explicit_mode = false;                 // --model-control-mode=explicit
  };

  // InvalidArgument when a category is in two groups (Triton refuses that too).
  static absl::StatusOr<AdminGuard> Create(Options options);

  // OK, or the status to answer with (see the rules above).
  absl::Status Check(ApiCategory category, Operation operation, const HeaderLookup& headers) const;

  // True when admin operations on `category` need a credential (token or restriction).
  bool Protected(ApiCategory category) const;

 private:
  explicit AdminGuard(Options options) : options_(std::move(options)) {}
  const ApiRestriction* RestrictionFor(ApiCategory category) const;

  Options options_;
};

}  // namespace infera

#endif  // INFERA_API_ADMIN_GUARD_H_

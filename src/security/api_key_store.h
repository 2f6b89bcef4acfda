// ApiKeyStore: the configured API keys (docs/api_keys.md) and the one decision every
// transport asks: may the holder of this `Authorization` value do this (right, model),
// within its quota?
//
//   ASSIGN_OR_RETURN(auto store, ApiKeyStore::Create(options));
//   absl::StatusOr<ApiKeyGrantPtr> grant = store->Authorize(header, kRightInfer, "resnet");
//   // Unauthenticated (missing / unknown key), PermissionDenied (right or model),
//   // ResourceExhausted with a Retry-After hint (quota), or the grant to carry along.
//
// Keys come from --api-key (id "default": read + infer on every model), --admin-token
// (id "admin-token": every right) and --api-key-file (reloaded when it changes: the
// modification is noticed by the first request at least a second after the last check;
// a bad replacement keeps the previous keys and logs one ERROR).
//
// Lookup: SHA-256 of the presented key, a hash map on that digest, then CRYPTO_memcmp of
// the full digest (why that leaks nothing: docs/api_keys.md). Quota buckets and usage
// counters are kept per key id across reloads.
//
// Thread-safety: thread-safe. Authorize copies the current snapshot pointer under a
// mutex; entries are immutable; buckets lock themselves; counters are atomics.
#ifndef INFERA_SECURITY_API_KEY_STORE_H_
#define INFERA_SECURITY_API_KEY_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "security/api_key_file.h"
#include "security/token_bucket.h"

namespace infera {

// Why a request was refused (the metric label).
enum class ApiKeyRejection { kRights, kModels, kQuotaRequests, kQuotaTokens };
enum class AuthFailure { kMissing, kUnknown, kQueryString };

// Counters of one metric label (a key id, or "other" past the cardinality bound).
struct ApiKeyUsage {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> prompt_tokens{0};
  std::atomic<uint64_t> completion_tokens{0};
  std::atomic<uint64_t> rejected[4] = {};  // by ApiKeyRejection
};

// The quota buckets of one key (null: unlimited).
struct ApiKeyQuota {
  std::unique_ptr<TokenBucket> requests;  // per second, burst max(1, rps)
  std::unique_ptr<TokenBucket> tokens;    // tokens_per_min / 60 per second, burst tokens_per_min
};

// One key as admitted requests carry it.
struct ApiKeyState {
  ApiKeyEntry entry;
  std::shared_ptr<ApiKeyQuota> quota;
  std::shared_ptr<ApiKeyUsage> usage;
};
using ApiKeyGrantPtr = std::shared_ptr<const ApiKeyState>;

class ApiKeyStore {
 public:
  struct Options {
    std::string api_key;      // --api-key / INFERA_API_KEY; empty: none
    std::string admin_token;  // --admin-token; a key with every right when any key is set
    std::string key_file;     // --api-key-file; empty: none
    const Clock* clock = SystemClock();
    size_t max_metric_labels = 100;  // distinct key ids in metrics; the rest are "other"
  };

  // Null when neither --api-key nor --api-key-file is given (keys off; --admin-token alone
  // keeps its AdminGuard meaning). InvalidArgument naming the file and line on a bad file.
  static absl::StatusOr<std::unique_ptr<ApiKeyStore>> Create(Options options);

  // `authorization`: the Authorization header / metadata value, if any. `model`: the
  // model the request names (nullopt: none). `every_model`: an aggregate read over all
  // models (needs a `*` glob). Takes one request token from the key's bucket.
  absl::StatusOr<ApiKeyGrantPtr> Authorize(std::optional<std::string_view> authorization, uint8_t right,
                                           std::optional<std::string_view> model, bool every_model = false);
  // The key of `authorization` without quota or counters: for AdminGuard, which asks
  // whether the credential has the admin right. Unauthenticated / PermissionDenied.
  absl::Status CheckRight(std::optional<std::string_view> authorization, uint8_t right);
  // Who presented `authorization`, for the audit log: "key:<id>" for a configured key,
  // "unknown-key" for a bearer value that is none, "none" without one. Never the key.
  std::string CredentialOf(std::optional<std::string_view> authorization) const;
  // Counts a request refused before any key was looked up (a key in the query string).
  void CountAuthFailure(AuthFailure reason);

  // Appends the infera_api_key_* and infera_auth_failures_total families (Prometheus text).
  void AppendMetrics(std::string& out) const;

  // Rereads the key file now when it changed (tests; Authorize does this at most once a
  // second). OK when unchanged or reloaded; the parse error otherwise (old keys kept).
  absl::Status ReloadIfChanged();

  size_t size() const;

 private:
  struct Snapshot {
    std::vector<ApiKeyGrantPtr> keys;
    absl::flat_hash_map<KeyDigest, size_t> by_digest;
  };
  struct FileVersion {
    int64_t mtime_ns = 0, size = -1;
    uint64_t inode = 0;
    bool operator==(const FileVersion&) const = default;
  };

  explicit ApiKeyStore(Options options);
  absl::StatusOr<ApiKeySet> ReadKeys(FileVersion* version) const;
  absl::StatusOr<std::shared_ptr<const Snapshot>> BuildSnapshot(ApiKeySet set);
  std::shared_ptr<const Snapshot> Current() const;
  void MaybeReload();
  // The entry whose digest is the presented key's; null when absent or malformed.
  ApiKeyGrantPtr Lookup(const Snapshot& snapshot, std::optional<std::string_view> authorization) const;
  // The key `authorization` presents (reloading the file first when due): Unauthenticated,
  // counted, for none or an unknown one.
  absl::StatusOr<ApiKeyGrantPtr> Authenticate(std::optional<std::string_view> authorization);
  std::shared_ptr<ApiKeyUsage> UsageFor(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Reject(const ApiKeyState& key, ApiKeyRejection reason) const;

  const Options options_;
  std::atomic<int64_t> next_check_ns_{0};
  std::atomic<uint64_t> auth_failures_[3] = {};

  mutable absl::Mutex reload_mu_;  // one reload at a time
  FileVersion loaded_ ABSL_GUARDED_BY(reload_mu_);
  FileVersion failed_ ABSL_GUARDED_BY(reload_mu_);  // the version last logged as bad

  mutable absl::Mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_ ABSL_GUARDED_BY(mu_);
  // Per metric label, in the order first seen (at most max_metric_labels + "other").
  std::vector<std::pair<std::string, std::shared_ptr<ApiKeyUsage>>> usage_ ABSL_GUARDED_BY(mu_);
};

// AdminGuard::Options::api_key_admin for `store`: OK when the Authorization value is a
// key with the admin right.
inline std::function<absl::Status(std::optional<std::string_view>)> ApiKeyAdminCheck(ApiKeyStore* store) {
  return [store](std::optional<std::string_view> authorization) {
    return store->CheckRight(authorization, kRightAdmin);
  };
}

// AdminGuard::Options::credential_of for `store` (the audit log's credential field).
inline std::function<std::string(std::optional<std::string_view>)> ApiKeyCredentialOf(const ApiKeyStore* store) {
  return [store](std::optional<std::string_view> authorization) { return store->CredentialOf(authorization); };
}

// A model named only in the body (OpenAI routes): PermissionDenied when the key's globs
// miss it (counted). OK for a null grant (keys off).
absl::Status CheckGrantModel(const ApiKeyGrantPtr& grant, std::string_view model);
// Charges LLM usage to the key's token bucket and counters; nothing for a null grant.
void ChargeGrantTokens(const ApiKeyGrantPtr& grant, uint64_t prompt_tokens, uint64_t completion_tokens);

// The key of an `Authorization` value: "Bearer <key>" (scheme case-insensitive, spaces
// around the key trimmed); nullopt for anything else.
std::optional<std::string_view> BearerKey(std::string_view authorization);

}  // namespace infera

#endif  // INFERA_SECURITY_API_KEY_STORE_H_

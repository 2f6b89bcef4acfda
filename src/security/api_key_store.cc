#include "security/api_key_store.h"

#include <openssl/crypto.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/logging.h"
#include "common/retry_after.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr char kMissingKey[] = "missing API key: send 'Authorization: Bearer <key>'";
constexpr char kInvalidKey[] = "invalid API key";
constexpr char kNotAllowed[] = "this API key is not allowed to do this";
constexpr Nanos kReloadCheckInterval = std::chrono::seconds(1);

ApiKeyEntry StaticEntry(std::string id, std::string_view key, uint8_t rights) {
  ApiKeyEntry entry;
  entry.id = std::move(id);
  entry.digest = DigestOf(key);
  entry.rights = rights;
  entry.model_globs = {"*"};
  return entry;
}

int RetryAfterOf(Nanos wait) {
  return static_cast<int>(std::ceil(std::chrono::duration<double>(wait).count()));
}

}  // namespace

std::optional<std::string_view> BearerKey(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return std::nullopt;
  }
  std::string_view key = authorization.substr(kScheme.size());
  const size_t first = key.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  key = key.substr(first, key.find_last_not_of(" \t") - first + 1);
  return key;
}

ApiKeyStore::ApiKeyStore(Options options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<ApiKeyStore>> ApiKeyStore::Create(Options options) {
  if (options.api_key.empty() && options.key_file.empty()) return std::unique_ptr<ApiKeyStore>();
  std::unique_ptr<ApiKeyStore> store(new ApiKeyStore(std::move(options)));
  FileVersion version;
  absl::StatusOr<ApiKeySet> keys = store->ReadKeys(&version);
  if (!keys.ok()) return keys.status();
  ASSIGN_OR_RETURN(std::shared_ptr<const Snapshot> snapshot, store->BuildSnapshot(std::move(*keys)));
  store->next_check_ns_ = (store->options_.clock->Now() + kReloadCheckInterval).time_since_epoch().count();
  absl::MutexLock reload_lock(&store->reload_mu_);
  store->loaded_ = version;
  absl::MutexLock lock(&store->mu_);
  store->snapshot_ = std::move(snapshot);
  return store;
}

absl::StatusOr<ApiKeySet> ApiKeyStore::ReadKeys(FileVersion* version) const {
  ApiKeySet set;
  if (!options_.key_file.empty()) {
    const std::string& path = options_.key_file;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return absl::NotFoundError(StrCat("--api-key-file ", path, ": cannot stat"));
    *version = FileVersion{static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                           static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(StrCat("--api-key-file ", path, ": cannot open"));
    std::ostringstream text;
    text << in.rdbuf();
    absl::StatusOr<ApiKeySet> parsed = ParseApiKeyFile(text.str());
    if (!parsed.ok()) return absl::InvalidArgumentError(StrCat("--api-key-file ", path, ": ", parsed.status().message()));
    set = std::move(*parsed);
  }
  if (!options_.api_key.empty()) {
    if (absl::Status s = set.Add(StaticEntry("default", options_.api_key, kRightRead | kRightInfer)); !s.ok()) {
      return absl::InvalidArgumentError(StrCat("--api-key: ", s.message(), " (id 'default' or its key is in the file)"));
    }
  }
  if (!options_.admin_token.empty()) {
    if (absl::Status s = set.Add(StaticEntry("admin-token", options_.admin_token, kAllApiKeyRights)); !s.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--admin-token: ", s.message(), " (id 'admin-token' or the token is also an API key)"));
    }
  }
  return set;
}

std::shared_ptr<ApiKeyUsage> ApiKeyStore::UsageFor(const std::string& id) {
  for (const auto& [label, usage] : usage_) {
    if (label == id) return usage;
  }
  if (usage_.size() < options_.max_metric_labels) {
    usage_.emplace_back(id, std::make_shared<ApiKeyUsage>());
    return usage_.back().second;
  }
  if (usage_.size() == options_.max_metric_labels) usage_.emplace_back("other", std::make_shared<ApiKeyUsage>());
  return usage_.back().second;
}

absl::StatusOr<std::shared_ptr<const ApiKeyStore::Snapshot>> ApiKeyStore::BuildSnapshot(ApiKeySet set) {
  auto snapshot = std::make_shared<Snapshot>();
  absl::MutexLock lock(&mu_);
  absl::flat_hash_map<std::string_view, const ApiKeyState*> previous;
  if (snapshot_) {
    for (const ApiKeyGrantPtr& old : snapshot_->keys) previous.emplace(old->entry.id, old.get());
  }
  for (ApiKeyEntry& entry : set.entries) {
    auto state = std::make_shared<ApiKeyState>();
    // The same id with the same limits keeps its buckets across a reload.
    if (auto it = previous.find(entry.id); it != previous.end() && it->second->entry.rps == entry.rps &&
                                           it->second->entry.tokens_per_min == entry.tokens_per_min) {
      state->quota = it->second->quota;
    }
    if (!state->quota) {
      state->quota = std::make_shared<ApiKeyQuota>();
      if (entry.rps) state->quota->requests = std::make_unique<TokenBucket>(*entry.rps, *entry.rps, options_.clock);
      if (entry.tokens_per_min) {
        state->quota->tokens =
            std::make_unique<TokenBucket>(*entry.tokens_per_min / 60.0, *entry.tokens_per_min, options_.clock);
      }
    }
    state->usage = UsageFor(entry.id);
    state->entry = std::move(entry);
    snapshot->keys.push_back(std::move(state));
  }
  snapshot->by_digest = std::move(set.by_digest);
  return std::shared_ptr<const Snapshot>(std::move(snapshot));
}

std::shared_ptr<const ApiKeyStore::Snapshot> ApiKeyStore::Current() const {
  absl::MutexLock lock(&mu_);
  return snapshot_;
}

size_t ApiKeyStore::size() const { return Current()->keys.size(); }

absl::Status ApiKeyStore::ReloadIfChanged() {
  if (options_.key_file.empty()) return absl::OkStatus();
  absl::MutexLock reload_lock(&reload_mu_);
  struct stat st;
  FileVersion now;
  if (::stat(options_.key_file.c_str(), &st) == 0) {
    now = FileVersion{static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                      static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
  }
  if (now == loaded_) return absl::OkStatus();
  const bool logged = now == failed_;
  FileVersion version = now;
  absl::StatusOr<ApiKeySet> keys = ReadKeys(&version);
  absl::StatusOr<std::shared_ptr<const Snapshot>> snapshot =
      keys.ok() ? BuildSnapshot(std::move(*keys)) : absl::StatusOr<std::shared_ptr<const Snapshot>>(keys.status());
  if (!snapshot.ok()) {
    if (!logged) {
      INFERA_LOG(ERROR) << "API keys not reloaded, the previous keys stay: " << snapshot.status().message();
    }
    failed_ = now;
    return snapshot.status();
  }
  loaded_ = version;
  failed_ = FileVersion{};
  const size_t count = (*snapshot)->keys.size();
  {
    absl::MutexLock lock(&mu_);
    snapshot_ = std::move(*snapshot);
  }
  INFERA_LOG(INFO) << "API keys reloaded from " << options_.key_file << ": " << count << " keys";
  return absl::OkStatus();
}

void ApiKeyStore::MaybeReload() {
  if (options_.key_file.empty()) return;
  const int64_t now = options_.clock->Now().time_since_epoch().count();
  int64_t next = next_check_ns_.load(std::memory_order_relaxed);
  if (now < next) return;
  // One thread per interval wins the check; the others go on with the current keys.
  if (!next_check_ns_.compare_exchange_strong(next, now + kReloadCheckInterval.count())) return;
  (void)ReloadIfChanged();
}

ApiKeyGrantPtr ApiKeyStore::Lookup(const Snapshot& snapshot, std::optional<std::string_view> authorization) const {
  std::optional<std::string_view> key = authorization ? BearerKey(*authorization) : std::nullopt;
  if (!key) return nullptr;
  const KeyDigest digest = DigestOf(*key);
  auto it = snapshot.by_digest.find(digest);
  if (it == snapshot.by_digest.end()) return nullptr;
  const ApiKeyGrantPtr& found = snapshot.keys[it->second];
  if (CRYPTO_memcmp(found->entry.digest.data(), digest.data(), digest.size()) != 0) return nullptr;
  return found;
}

std::string ApiKeyStore::CredentialOf(std::optional<std::string_view> authorization) const {
  if (!authorization) return "none";
  const ApiKeyGrantPtr key = Lookup(*Current(), authorization);
  return key ? StrCat("key:", key->entry.id) : std::string("unknown-key");
}

void ApiKeyStore::Reject(const ApiKeyState& key, ApiKeyRejection reason) const {
  key.usage->rejected[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
}

void ApiKeyStore::CountAuthFailure(AuthFailure reason) {
  auth_failures_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<ApiKeyGrantPtr> ApiKeyStore::Authenticate(std::optional<std::string_view> authorization) {
  MaybeReload();
  const std::shared_ptr<const Snapshot> snapshot = Current();
  if (!authorization) {
    CountAuthFailure(AuthFailure::kMissing);
    return absl::UnauthenticatedError(kMissingKey);
  }
  ApiKeyGrantPtr grant = Lookup(*snapshot, authorization);
  if (!grant) {
    CountAuthFailure(AuthFailure::kUnknown);
    return absl::UnauthenticatedError(kInvalidKey);
  }
  return grant;
}

absl::StatusOr<ApiKeyGrantPtr> ApiKeyStore::Authorize(std::optional<std::string_view> authorization, uint8_t right,
                                                      std::optional<std::string_view> model, bool every_model) {
  absl::StatusOr<ApiKeyGrantPtr> authenticated = Authenticate(authorization);
  if (!authenticated.ok()) return authenticated.status();
  ApiKeyGrantPtr grant = std::move(*authenticated);
  const ApiKeyEntry& entry = grant->entry;
  if ((entry.rights & right) != right) {
    Reject(*grant, ApiKeyRejection::kRights);
    return absl::PermissionDeniedError(kNotAllowed);
  }
  if ((model && !entry.AllowsModel(*model)) || (every_model && !entry.AllowsEveryModel())) {
    Reject(*grant, ApiKeyRejection::kModels);
    return absl::PermissionDeniedError(kNotAllowed);
  }
  if (grant->quota->tokens) {
    if (Nanos wait = grant->quota->tokens->TimeUntilPositive(); wait > Nanos(0)) {
      Reject(*grant, ApiKeyRejection::kQuotaTokens);
      return WithRetryAfter(absl::ResourceExhaustedError("API key quota exceeded: LLM tokens per minute"),
                            RetryAfterOf(wait));
    }
  }
  if (grant->quota->requests) {
    if (Nanos wait = grant->quota->requests->TryTake(1); wait > Nanos(0)) {
      Reject(*grant, ApiKeyRejection::kQuotaRequests);
      return WithRetryAfter(absl::ResourceExhaustedError("API key quota exceeded: requests per second"),
                            RetryAfterOf(wait));
    }
  }
  grant->usage->requests.fetch_add(1, std::memory_order_relaxed);
  return grant;
}

absl::Status ApiKeyStore::CheckRight(std::optional<std::string_view> authorization, uint8_t right) {
  absl::StatusOr<ApiKeyGrantPtr> authenticated = Authenticate(authorization);
  if (!authenticated.ok()) return authenticated.status();
  const ApiKeyGrantPtr& grant = *authenticated;
  if ((grant->entry.rights & right) != right) {
    Reject(*grant, ApiKeyRejection::kRights);
    return absl::PermissionDeniedError(kNotAllowed);
  }
  return absl::OkStatus();
}

absl::Status CheckGrantModel(const ApiKeyGrantPtr& grant, std::string_view model) {
  if (grant == nullptr || grant->entry.AllowsModel(model)) return absl::OkStatus();
  grant->usage->rejected[static_cast<int>(ApiKeyRejection::kModels)].fetch_add(1, std::memory_order_relaxed);
  return absl::PermissionDeniedError(kNotAllowed);
}

void ChargeGrantTokens(const ApiKeyGrantPtr& grant, uint64_t prompt_tokens, uint64_t completion_tokens) {
  if (grant == nullptr) return;
  grant->usage->prompt_tokens.fetch_add(prompt_tokens, std::memory_order_relaxed);
  grant->usage->completion_tokens.fetch_add(completion_tokens, std::memory_order_relaxed);
  if (grant->quota->tokens) grant->quota->tokens->Charge(static_cast<double>(prompt_tokens + completion_tokens));
}

void ApiKeyStore::AppendMetrics(std::string& out) const {
  std::vector<std::pair<std::string, std::shared_ptr<ApiKeyUsage>>> usage;
  {
    absl::MutexLock lock(&mu_);
    usage = usage_;
  }
  auto family = [&out](std::string_view name, std::string_view help) {
    out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n");
  };
  family("infera_api_key_requests_total", "Requests admitted, per API key id (past 100 ids: other).");
  for (const auto& [key, u] : usage) out += StrCat("infera_api_key_requests_total{key=\"", key, "\"} ", u->requests.load(), "\n");
  family("infera_api_key_tokens_total", "LLM tokens charged, per API key id and kind.");
  for (const auto& [key, u] : usage) {
    out += StrCat("infera_api_key_tokens_total{key=\"", key, "\",kind=\"prompt\"} ", u->prompt_tokens.load(), "\n");
    out += StrCat("infera_api_key_tokens_total{key=\"", key, "\",kind=\"completion\"} ", u->completion_tokens.load(),
                  "\n");
  }
  family("infera_api_key_rejected_total", "Requests refused for a known API key, per id and reason.");
  static constexpr const char* kReasons[] = {"rights", "models", "quota_requests", "quota_tokens"};
  for (const auto& [key, u] : usage) {
    for (int r = 0; r < 4; ++r) {
      out += StrCat("infera_api_key_rejected_total{key=\"", key, "\",reason=\"", kReasons[r], "\"} ",
                    u->rejected[r].load(), "\n");
    }
  }
  family("infera_auth_failures_total", "Requests refused before a key was found, per reason.");
  static constexpr const char* kFailures[] = {"missing", "unknown", "query_string"};
  for (int r = 0; r < 3; ++r) {
    out += StrCat("infera_auth_failures_total{reason=\"", kFailures[r], "\"} ", auth_failures_[r].load(), "\n");
  }
}

}  // namespace infera

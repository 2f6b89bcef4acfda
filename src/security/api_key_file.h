// The API key file (docs/api_keys.md): one key per line,
//
//   <id> sha256:<64 hex> rights=<read|infer|admin>[,...] models=<glob>[,...] [rps=N] [tokens_per_min=N]
//
// `#` starts a comment; blank lines are skipped. Only the SHA-256 of each key is stored.
// ParseApiKeyFile is pure (fuzzed by fuzz/fuzz_api_key_file.cc); its errors name the line
// number and the problem, never the line's text.
//
// Thread-safety: ApiKeyEntry / ApiKeySet are immutable values once built.
#ifndef INFERA_SECURITY_API_KEY_FILE_H_
#define INFERA_SECURITY_API_KEY_FILE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace infera {

// The rights a key may hold (a bit set).
enum ApiKeyRight : uint8_t { kRightRead = 1, kRightInfer = 2, kRightAdmin = 4 };
constexpr uint8_t kAllApiKeyRights = kRightRead | kRightInfer | kRightAdmin;

using KeyDigest = std::array<uint8_t, 32>;  // SHA-256

struct ApiKeyEntry {
  std::string id;
  KeyDigest digest{};
  uint8_t rights = 0;
  std::vector<std::string> model_globs;
  std::optional<double> rps;             // requests per second
  std::optional<double> tokens_per_min;  // LLM tokens per minute

  // True when one of the globs matches `model`.
  bool AllowsModel(std::string_view model) const;
  // True when a glob is "*" (every model: aggregate reads, unfiltered listings).
  bool AllowsEveryModel() const;
};

// A parsed file: the entries and an index from digest to entry.
struct ApiKeySet {
  std::vector<ApiKeyEntry> entries;
  absl::flat_hash_map<KeyDigest, size_t> by_digest;
  absl::flat_hash_map<std::string, size_t> by_id;

  // Adds `entry`; InvalidArgument when its id or digest is already there.
  absl::Status Add(ApiKeyEntry entry);
};

// Lines longer than this are refused (a key file is small; this bounds the parser).
inline constexpr size_t kMaxApiKeyLineBytes = 4096;
// Files with more entries are refused.
inline constexpr size_t kMaxApiKeys = 100000;

// Parses a key file. InvalidArgument "line N: <problem>" on the first bad line.
absl::StatusOr<ApiKeySet> ParseApiKeyFile(std::string_view text);

// Parses "read,infer" into rights bits: InvalidArgument on an unknown or empty right.
absl::StatusOr<uint8_t> ParseApiKeyRights(std::string_view list);
// "read,infer,admin" for a bit set.
std::string ApiKeyRightsName(uint8_t rights);

// `*` matches any run of characters (also none), `?` one character; the rest literally.
// Iterative, O(|glob| * |text|) worst case, no recursion.
bool GlobMatches(std::string_view glob, std::string_view text);

// SHA-256 of `key` (OpenSSL).
KeyDigest DigestOf(std::string_view key);
// Lower-case hex of a digest.
std::string DigestHex(const KeyDigest& digest);

}  // namespace infera

#endif  // INFERA_SECURITY_API_KEY_FILE_H_

#include "security/api_key_file.h"

#include <openssl/sha.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/str_cat.h"

namespace infera {
namespace {

constexpr size_t kMaxIdBytes = 64;
constexpr size_t kMaxGlobs = 256;
constexpr double kMaxRate = 1e9;

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// `text` split at `separator` (empty pieces kept).
std::vector<std::string_view> SplitAt(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  while (true) {
    const size_t at = text.find(separator);
    pieces.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return pieces;
    text.remove_prefix(at + 1);
  }
}

// `text` split at runs of spaces and tabs (no empty pieces).
std::vector<std::string_view> Fields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (true) {
    i = text.find_first_not_of(" \t", i);
    if (i == std::string_view::npos) return fields;
    const size_t end = std::min(text.find_first_of(" \t", i), text.size());
    fields.push_back(text.substr(i, end - i));
    i = end;
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<KeyDigest> ParseDigest(std::string_view field) {
  constexpr std::string_view kPrefix = "sha256:";
  if (!field.starts_with(kPrefix)) return absl::InvalidArgumentError("the second field must be sha256:<64 hex digits>");
  field.remove_prefix(kPrefix.size());
  if (field.size() != 64) return absl::InvalidArgumentError("the digest must be 64 hex digits");
  KeyDigest digest;
  for (size_t i = 0; i < digest.size(); ++i) {
    const int hi = HexValue(field[2 * i]), lo = HexValue(field[2 * i + 1]);
    if (hi < 0 || lo < 0) return absl::InvalidArgumentError("the digest has a character that is not hex");
    digest[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return digest;
}

absl::StatusOr<double> ParseRate(std::string_view name, std::string_view value) {
  double rate = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), rate);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(rate) || rate <= 0 ||
      rate > kMaxRate) {
    return absl::InvalidArgumentError(StrCat(name, " must be a number in (0, 1e9]"));
  }
  return rate;
}

absl::StatusOr<std::vector<std::string>> ParseGlobs(std::string_view list) {
  std::vector<std::string> globs;
  for (std::string_view glob : SplitAt(list, ',')) {
    if (glob.empty()) return absl::InvalidArgumentError("models= has an empty glob");
    if (globs.size() == kMaxGlobs) return absl::InvalidArgumentError("models= has more than 256 globs");
    globs.emplace_back(glob);
  }
  return globs;
}

// Applies one `name=value` field to `entry`; `seen` guards against repeats.
absl::Status ApplyField(std::string_view field, ApiKeyEntry& entry, uint8_t& seen) {
  const size_t eq = field.find('=');
  if (eq == std::string_view::npos) return absl::InvalidArgumentError("a field is not name=value");
  const std::string_view name = field.substr(0, eq), value = field.substr(eq + 1);
  static constexpr std::string_view kNames[] = {"rights", "models", "rps", "tokens_per_min"};
  size_t which = 0;
  while (which < 4 && kNames[which] != name) ++which;
  if (which == 4) return absl::InvalidArgumentError("unknown field (known: rights, models, rps, tokens_per_min)");
  if (seen & (1u << which)) return absl::InvalidArgumentError(StrCat("field ", name, " given twice"));
  seen = static_cast<uint8_t>(seen | (1u << which));
  switch (which) {
    case 0: {
      absl::StatusOr<uint8_t> rights = ParseApiKeyRights(value);
      if (!rights.ok()) return rights.status();
      entry.rights = *rights;
      return absl::OkStatus();
    }
    case 1: {
      absl::StatusOr<std::vector<std::string>> globs = ParseGlobs(value);
      if (!globs.ok()) return globs.status();
      entry.model_globs = std::move(*globs);
      return absl::OkStatus();
    }
    case 2: {
      absl::StatusOr<double> rate = ParseRate(name, value);
      if (!rate.ok()) return rate.status();
      entry.rps = *rate;
      return absl::OkStatus();
    }
    default: {
      absl::StatusOr<double> rate = ParseRate(name, value);
      if (!rate.ok()) return rate.status();
      entry.tokens_per_min = *rate;
      return absl::OkStatus();
    }
  }
}

absl::StatusOr<ApiKeyEntry> ParseLine(std::string_view line) {
  std::vector<std::string_view> fields = Fields(line);
  if (fields.size() < 4) return absl::InvalidArgumentError("needs <id> sha256:<hex> rights=... models=...");
  ApiKeyEntry entry;
  if (fields[0].size() > kMaxIdBytes) return absl::InvalidArgumentError("the id is longer than 64 characters");
  for (char c : fields[0]) {
    if (!IdChar(c)) return absl::InvalidArgumentError("the id may hold only letters, digits, '.', '_' and '-'");
  }
  entry.id = std::string(fields[0]);
  absl::StatusOr<KeyDigest> digest = ParseDigest(fields[1]);
  if (!digest.ok()) return digest.status();
  entry.digest = *digest;
  uint8_t seen = 0;
  for (size_t i = 2; i < fields.size(); ++i) {
    if (absl::Status s = ApplyField(fields[i], entry, seen); !s.ok()) return s;
  }
  if (!(seen & 1)) return absl::InvalidArgumentError("rights= is missing");
  if (!(seen & 2)) return absl::InvalidArgumentError("models= is missing");
  return entry;
}

}  // namespace

bool ApiKeyEntry::AllowsModel(std::string_view model) const {
  for (const std::string& glob : model_globs) {
    if (GlobMatches(glob, model)) return true;
  }
  return false;
}

bool ApiKeyEntry::AllowsEveryModel() const {
  for (const std::string& glob : model_globs) {
    if (glob == "*") return true;
  }
  return false;
}

absl::Status ApiKeySet::Add(ApiKeyEntry entry) {
  if (by_id.contains(entry.id)) return absl::InvalidArgumentError("duplicate id");
  if (!by_digest.emplace(entry.digest, entries.size()).second) {
    return absl::InvalidArgumentError("duplicate digest (the same key under two ids)");
  }
  by_id.emplace(entry.id, entries.size());
  entries.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::StatusOr<ApiKeySet> ParseApiKeyFile(std::string_view text) {
  ApiKeySet set;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.size() > kMaxApiKeyLineBytes) {
      return absl::InvalidArgumentError(StrCat("line ", line_number, ": longer than 4096 bytes"));
    }
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    absl::StatusOr<ApiKeyEntry> entry = ParseLine(line);
    if (!entry.ok()) return absl::InvalidArgumentError(StrCat("line ", line_number, ": ", entry.status().message()));
    if (set.entries.size() == kMaxApiKeys) {
      return absl::InvalidArgumentError(StrCat("line ", line_number, ": more than 100000 keys"));
    }
    if (absl::Status added = set.Add(std::move(*entry)); !added.ok()) {
      return absl::InvalidArgumentError(StrCat("line ", line_number, ": ", added.message()));
    }
  }
  return set;
}

absl::StatusOr<uint8_t> ParseApiKeyRights(std::string_view list) {
  uint8_t rights = 0;
  for (std::string_view right : SplitAt(list, ',')) {
    if (right == "read") {
      rights |= kRightRead;
    } else if (right == "infer") {
      rights |= kRightInfer;
    } else if (right == "admin") {
      rights |= kRightAdmin;
    } else {
      return absl::InvalidArgumentError(right.empty() ? "rights= has an empty right"
                                                      : "unknown right (known: read, infer, admin)");
    }
  }
  return rights;
}

std::string ApiKeyRightsName(uint8_t rights) {
  std::string name;
  for (auto [bit, text] : {std::pair{kRightRead, "read"}, {kRightInfer, "infer"}, {kRightAdmin, "admin"}}) {
    if (!(rights & bit)) continue;
    if (!name.empty()) name += ',';
    name += text;
  }
  return name;
}

bool GlobMatches(std::string_view glob, std::string_view text) {
  size_t g = 0, t = 0;
  size_t star = std::string_view::npos, resume = 0;  // the last '*' and where its match ends
  while (t < text.size()) {
    if (g < glob.size() && (glob[g] == '?' || (glob[g] != '*' && glob[g] == text[t]))) {
      ++g;
      ++t;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

KeyDigest DigestOf(std::string_view key) {
  KeyDigest digest;
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  return digest;
}

std::string DigestHex(const KeyDigest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint8_t b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

}  // namespace infera

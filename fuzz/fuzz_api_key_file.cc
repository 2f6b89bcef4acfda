// Fuzz target: the API key file parser (security/api_key_file.h ParseApiKeyFile) and the
// glob matcher.
//
// Input: a key file's text. Oracle besides ASan/UBSan: a parsed set is consistent (one
// index entry per key, each pointing at an entry with that digest; ids unique; rights
// non-empty and known; every entry has a glob), and an error names a line ("line N:")
// without echoing the input. The glob matcher runs on the input's halves.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "security/api_key_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<infera::ApiKeySet> set = infera::ParseApiKeyFile(text);
  if (set.ok()) {
    if (set->by_digest.size() != set->entries.size() || set->by_id.size() != set->entries.size()) std::abort();
    for (const auto& [digest, index] : set->by_digest) {
      if (index >= set->entries.size() || set->entries[index].digest != digest) std::abort();
    }
    for (const infera::ApiKeyEntry& entry : set->entries) {
      if (entry.rights == 0 || (entry.rights & ~infera::kAllApiKeyRights) != 0) std::abort();
      if (entry.model_globs.empty() || entry.id.empty()) std::abort();
      (void)entry.AllowsModel(text.substr(0, 64));
    }
  } else if (!std::string(set.status().message()).starts_with("line ")) {
    std::abort();
  }
  (void)infera::GlobMatches(text.substr(0, size / 2), text.substr(size / 2));
  return 0;
}

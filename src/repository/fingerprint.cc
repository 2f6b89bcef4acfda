#include "repository/fingerprint.h"

#include <algorithm>
#include <system_error>
#include <vector>

namespace infera {
namespace fs = std::filesystem;

uint64_t HashText(std::string_view text, uint64_t seed) {
  uint64_t hash = seed;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

uint64_t DirectoryFingerprint(const fs::path& dir) {
  std::vector<std::string> entries;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    const auto size = it->file_size(file_ec);
    const auto mtime = it->last_write_time(file_ec).time_since_epoch().count();
    entries.push_back(fs::relative(it->path(), dir, file_ec).string() + '\0' + std::to_string(size) +
                      '\0' + std::to_string(mtime));
  }
  std::sort(entries.begin(), entries.end());  // directory order is not stable
  uint64_t hash = HashText(dir.filename().string());
  for (const std::string& entry : entries) hash = HashText(entry + '\n', hash);
  return hash;
}

}  // namespace infera

#include "repository/confined_path.h"

#include <algorithm>
#include <deque>
#include <string>
#include <system_error>

namespace infera {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit

// True when `path` is `dir` or below it (both free of symbolic links).
bool IsInside(const fs::path& path, const fs::path& dir) {
  auto [dir_end, unused] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_end == dir.end();
}

}  // namespace

bool EscapesLexically(std::string_view name) {
  if (name.empty() || name.find('\0') != std::string_view::npos) return true;
  const fs::path path{std::string(name)};
  if (path.is_absolute() || path.has_root_path()) return true;
  return std::any_of(path.begin(), path.end(), [](const fs::path& part) { return part == ".."; });
}

std::optional<fs::path> ResolveInside(const fs::path& dir, std::string_view name) {
  if (EscapesLexically(name)) return std::nullopt;
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return std::nullopt;
  const fs::path relative{std::string(name)};
  std::deque<fs::path> todo(relative.begin(), relative.end());
  fs::path current = root;
  int links = 0;
  while (!todo.empty()) {
    const fs::path part = std::move(todo.front());
    todo.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {  // only from a link's target: `current` has no links left
      current = current.parent_path();
      continue;
    }
    current /= part;
    const fs::file_status status = fs::symlink_status(current, ec);
    if (ec || !fs::is_symlink(status)) continue;  // a real entry, or nothing (yet)
    if (++links > kMaxLinks) return std::nullopt;
    const fs::path target = fs::read_symlink(current, ec);
    if (ec) return std::nullopt;
    current = target.is_absolute() ? target.root_path() : current.parent_path();
    const fs::path rest = target.relative_path();
    todo.insert(todo.begin(), rest.begin(), rest.end());
  }
  if (!IsInside(current, root)) return std::nullopt;
  return current;
}

}  // namespace infera

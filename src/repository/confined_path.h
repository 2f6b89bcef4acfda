// ResolveInside: where a path named in a config really leads, and whether it stays in
// its folder (a model's warmup/ folder; any file a config names relative to the model).
//
//   std::optional<fs::path> file = ResolveInside(model_dir / "warmup", "sample.bin");
//   if (!file) return InvalidArgument("... must name a file inside warmup/");
//
// The name must be a plain relative path: not empty, not absolute, no '..' component,
// no NUL. Then every symbolic link on the way is resolved by hand, component by
// component (at most 40), dangling ones included, so a link that leads out is refused
// the same way whether or not its target exists: a caller's error built only from the
// config's text is no existence oracle for paths outside. The result has no symbolic
// links left (components that do not exist stay as named); the caller still checks
// what it finds there (a regular file, its size).
//
// Thread-safe (reads the file system only).
#ifndef INFERA_REPOSITORY_CONFINED_PATH_H_
#define INFERA_REPOSITORY_CONFINED_PATH_H_

#include <filesystem>
#include <optional>
#include <string_view>

namespace infera {

// True when `name` is empty, absolute, has a '..' component or a NUL byte: a name no
// config may give, decided without touching the file system.
bool EscapesLexically(std::string_view name);

// `name` under `dir` with every symbolic link resolved, or nullopt when it escapes
// lexically, leads outside `dir`, `dir` does not exist, or a link cannot be read or
// loops.
std::optional<std::filesystem::path> ResolveInside(const std::filesystem::path& dir,
                                                   std::string_view name);

}  // namespace infera

#endif  // INFERA_REPOSITORY_CONFINED_PATH_H_

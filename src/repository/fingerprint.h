// Fingerprints of what is on disk, to tell whether a model or version changed since it
// was loaded (poll mode, reload without needless work).
//
// A fingerprint hashes file names, sizes and modification times (not contents: a
// model.pt can be gigabytes); a rewrite of the same size within the file system's
// time resolution goes unnoticed, as in Triton's poller.
//
// Thread-safe (pure functions of the file system).
#ifndef INFERA_REPOSITORY_FINGERPRINT_H_
#define INFERA_REPOSITORY_FINGERPRINT_H_

#include <cstdint>
#include <filesystem>
#include <string>

namespace infera {

// Every regular file under `dir` (recursively): relative path, size, mtime.
uint64_t DirectoryFingerprint(const std::filesystem::path& dir);

// FNV-1a of `text` continued from `seed`.
uint64_t HashText(std::string_view text, uint64_t seed = 1469598103934665603ull);

}  // namespace infera

#endif  // INFERA_REPOSITORY_FINGERPRINT_H_

// `infera api-key create --id ID [--rights read,infer] [--models '*'] [--rps N]
// [--tokens-per-min N]`: prints a fresh API key once (32 bytes of OpenSSL RAND_bytes,
// base64url, prefixed "inf-") and the line to append to the --api-key-file
// (docs/api_keys.md). The key itself is stored nowhere.
//
// Thread-safety: a command; runs on the main thread.
#ifndef INFERA_SECURITY_API_KEY_COMMAND_H_
#define INFERA_SECURITY_API_KEY_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera {

struct CreatedApiKey {
  std::string key;        // shown once
  std::string file_line;  // "<id> sha256:<hex> rights=... models=..." (no newline)
};

// `args` as after "infera api-key create". InvalidArgument naming a bad flag or value
// (the line it builds must parse: ParseApiKeyFile checks it).
absl::StatusOr<CreatedApiKey> CreateApiKey(const std::vector<std::string>& args);

// "base64url" of `bytes` without padding.
std::string Base64Url(const unsigned char* bytes, size_t size);

// The subcommand: exit status 0, or 2 with the usage on stderr.
int RunApiKeyCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infera

#endif  // INFERA_SECURITY_API_KEY_COMMAND_H_

#include "security/api_key_command.h"

#include <openssl/rand.h>

#include <algorithm>
#include <string_view>

#include "common/str_cat.h"
#include "security/api_key_file.h"

namespace infera {
namespace {

constexpr char kUsage[] =
    "Usage: infera api-key create --id ID [--rights read,infer] [--models '*']\n"
    "                             [--rps N] [--tokens-per-min N]\n"
    "Prints a new API key (shown once: store it now) and the line to append to the\n"
    "--api-key-file. Rights: read, infer, admin. Models: comma-separated globs.\n";

// docs/cli.md: a bad command line is one line naming the problem, then where to look.
int UsageError(std::ostream& err, std::string_view problem) {
  err << "infera api-key: " << problem << "\nsee 'infera api-key --help'\n";
  return 2;
}

}  // namespace

std::string Base64Url(const unsigned char* bytes, size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < size; ++i) {
    buffer = (buffer << 8) | bytes[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 63];
  return out;
}

absl::StatusOr<CreatedApiKey> CreateApiKey(const std::vector<std::string>& args) {
  std::string id, rights = "read,infer", models = "*", rps, tokens_per_min;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(StrCat(name, " needs a value"));
    }
    if (name == "--id") {
      id = value;
    } else if (name == "--rights") {
      rights = value;
    } else if (name == "--models") {
      models = value;
    } else if (name == "--rps") {
      rps = value;
    } else if (name == "--tokens-per-min") {
      tokens_per_min = value;
    } else {
      return absl::InvalidArgumentError(StrCat("unknown flag ", name));
    }
  }
  if (id.empty()) return absl::InvalidArgumentError("--id is required");
  for (const std::string* field : {&id, &rights, &models, &rps, &tokens_per_min}) {
    if (field->find_first_of(" \t\r\n#") != std::string::npos) {
      return absl::InvalidArgumentError("values may not hold spaces or '#'");
    }
  }
  unsigned char random[32];
  if (RAND_bytes(random, sizeof(random)) != 1) return absl::InternalError("OpenSSL RAND_bytes failed");
  CreatedApiKey created;
  created.key = "inf-" + Base64Url(random, sizeof(random));
  created.file_line = StrCat(id, " sha256:", DigestHex(DigestOf(created.key)), " rights=", rights, " models=", models,
                             rps.empty() ? "" : StrCat(" rps=", rps),
                             tokens_per_min.empty() ? "" : StrCat(" tokens_per_min=", tokens_per_min));
  // The line must be one the server accepts.
  absl::StatusOr<ApiKeySet> check = ParseApiKeyFile(created.file_line);
  if (!check.ok()) {
    std::string message(check.status().message());
    if (message.starts_with("line 1: ")) message.erase(0, 8);
    return absl::InvalidArgumentError(message);
  }
  return created;
}

int RunApiKeyCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto asks_help = [](const std::string& arg) { return arg == "--help" || arg == "-h" || arg == "help"; };
  if (std::any_of(args.begin(), args.end(), asks_help)) {
    out << kUsage;
    return 0;
  }
  if (args.empty()) return UsageError(err, "a command is required (create)");
  if (args[0] != "create") return UsageError(err, StrCat("unknown command '", args[0], "' (create)"));
  absl::StatusOr<CreatedApiKey> created = CreateApiKey({args.begin() + 1, args.end()});
  if (!created.ok()) {
    return UsageError(err, StrCat("create: ", std::string_view(created.status().message().data(),
                                                                created.status().message().size())));
  }
  out << "API key (shown once; clients send 'Authorization: Bearer <key>'):\n  " << created->key
      << "\nAppend this line to the --api-key-file:\n" << created->file_line << "\n";
  return 0;
}

}  // namespace infera

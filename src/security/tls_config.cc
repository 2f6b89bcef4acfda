#include "security/tls_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/str_cat.h"

namespace infera {
namespace {

absl::Status CheckReadableFile(std::string_view flag, const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return absl::InvalidArgumentError(StrCat(flag, ": cannot open '", path, "'"));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(StrCat(flag, ": '", path, "' is not a regular file"));
  }
  if (::access(path.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(StrCat(flag, ": '", path, "' is not readable"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsClientAuth> ParseTlsClientAuth(std::string_view text) {
  if (text == "none") return TlsClientAuth::kNone;
  if (text == "optional") return TlsClientAuth::kOptional;
  if (text == "require") return TlsClientAuth::kRequire;
  return absl::InvalidArgumentError(StrCat("'", text, "' is not one of none, optional, require"));
}

std::string_view TlsClientAuthName(TlsClientAuth mode) {
  switch (mode) {
    case TlsClientAuth::kNone:
      return "none";
    case TlsClientAuth::kOptional:
      return "optional";
    case TlsClientAuth::kRequire:
      return "require";
  }
  return "none";
}

absl::Status ValidateTlsConfig(const TlsConfig& config, std::string_view flag_prefix) {
  const std::string cert_flag = StrCat(flag_prefix, flag_prefix == "--grpc-" ? "server-cert" : "cert-file");
  const std::string key_flag = StrCat(flag_prefix, flag_prefix == "--grpc-" ? "server-key" : "key-file");
  const std::string ca_flag = StrCat(flag_prefix, flag_prefix == "--grpc-" ? "root-cert" : "ca-file");
  if (config.cert_file.empty() != config.key_file.empty()) {
    return absl::InvalidArgumentError(
        config.cert_file.empty() ? StrCat(key_flag, " needs ", cert_flag) : StrCat(cert_flag, " needs ", key_flag));
  }
  if (!config.enabled()) {
    if (!config.ca_file.empty() || config.client_auth != TlsClientAuth::kNone) {
      return absl::InvalidArgumentError(StrCat("client authentication needs TLS: give ", cert_flag, " and ", key_flag));
    }
    return absl::OkStatus();
  }
  if (config.client_auth != TlsClientAuth::kNone && config.ca_file.empty()) {
    return absl::InvalidArgumentError(
        StrCat("client authentication '", TlsClientAuthName(config.client_auth), "' needs ", ca_flag));
  }
  // Triton's --grpc-root-cert may come without --grpc-use-ssl-mutual (Triton then ignores
  // it); infera's own --tls-ca-file without client authentication is a mistake.
  if (config.client_auth == TlsClientAuth::kNone && !config.ca_file.empty() && flag_prefix != "--grpc-") {
    return absl::InvalidArgumentError(
        StrCat(ca_flag, " is only read with client authentication (optional or require)"));
  }
  for (const auto& [flag, path] : {std::pair<const std::string&, const std::string&>{cert_flag, config.cert_file},
                                   {key_flag, config.key_file}, {ca_flag, config.ca_file}}) {
    if (path.empty()) continue;
    if (absl::Status s = CheckReadableFile(flag, path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace infera

#include "tools/diagnose/diagnose_command.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "common/status.h"
#include "common/str_cat.h"
#include "tools/bench/simple_http.h"

namespace infera::diagnose {
namespace {

constexpr char kHelp[] =
    "infera diagnose: where a model's time goes and what would change it, from a running\n"
    "server's own timings (GET /v2/models/MODEL/diagnosis). Tensor models are judged by their\n"
    "stages, instances and batches; LLMs by TTFT, time per output token, KV-cache use,\n"
    "running/waiting sequences and preemptions; ensembles by their slowest step.\n"
    "\n"
    "Usage: infera diagnose -m MODEL [-u HOST:PORT] [flags]\n"
    "\n"
    "  -u, --url HOST:PORT       the server's HTTP endpoint (http://HOST:PORT also accepted;\n"
    "                            default 127.0.0.1:8000)\n"
    "  -m, --model-name NAME     the model to diagnose (required; --model is the same)\n"
    "  -x, --model-version V     a version (default: the one an unversioned request gets)\n"
    "      --window S            seconds of history, 1..300 (default 60); rates and utilisation\n"
    "                            are judged on the seconds in it that carried traffic\n"
    "      --json                print the server's JSON instead of the table\n"
    "  -h, --help                this text\n"
    "\n"
    "Example: infera diagnose -u 127.0.0.1:8000 -m fortune --window 30\n"
    "Exit status: 0 answered, 1 the server answered an error or was unreachable, 2 bad flags.\n";

template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// HOST:PORT (perf_analyzer's -u) or http://HOST:PORT; [v6]:PORT for IPv6.
absl::Status ParseUrl(const std::string& url, DiagnoseOptions* options) {
  std::string_view rest = url;
  const size_t scheme = rest.find("://");
  if (scheme != std::string_view::npos) {
    if (rest.substr(0, scheme) != "http") {
      return absl::InvalidArgumentError(StrCat("--url '", url, "': only http:// is served (or give HOST:PORT)"));
    }
    rest.remove_prefix(scheme + 3);
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const size_t colon = rest.rfind(':');
  if (rest.find('/') != std::string_view::npos || colon == std::string_view::npos || colon == 0) {
    return absl::InvalidArgumentError(StrCat("--url '", url, "' must be HOST:PORT (or http://HOST:PORT)"));
  }
  int port = 0;
  if (!ParseNumber(std::string(rest.substr(colon + 1)), &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(StrCat("--url '", url, "': the port must be 1..65535"));
  }
  options->host = std::string(rest.substr(0, colon));
  if (options->host.size() > 2 && options->host.front() == '[' && options->host.back() == ']') {
    options->host = options->host.substr(1, options->host.size() - 2);
  }
  options->port = static_cast<uint16_t>(port);
  return absl::OkStatus();
}

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof(buffer), "%%%02X", c);
      out += buffer;
    }
  }
  return out;
}


}  // namespace

absl::StatusOr<DiagnoseOptions> ParseDiagnoseArgs(const std::vector<std::string>& args) {
  DiagnoseOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;  // --flag=value
    if (flag.rfind("--", 0) == 0) {
      if (const size_t eq = flag.find('='); eq != std::string::npos) {
        inline_value = flag.substr(eq + 1);
        flag.resize(eq);
      }
    }
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(StrCat(flag, " needs a value"));
      return args[++i];
    };
    auto no_value = [&]() -> absl::Status {
      return inline_value ? absl::InvalidArgumentError(StrCat(flag, " takes no value")) : absl::OkStatus();
    };
    if (flag == "-h" || flag == "--help") {
      RETURN_IF_ERROR(no_value());
      options.help = true;
    } else if (flag == "--json") {
      RETURN_IF_ERROR(no_value());
      options.json = true;
    } else if (flag == "-u" || flag == "--url") {
      ASSIGN_OR_RETURN(std::string url, value());
      RETURN_IF_ERROR(ParseUrl(url, &options));
    } else if (flag == "-m" || flag == "--model-name" || flag == "--model") {
      ASSIGN_OR_RETURN(options.model, value());
      if (options.model.empty()) return absl::InvalidArgumentError(StrCat(flag, " needs a model name"));
    } else if (flag == "-x" || flag == "--model-version") {
      ASSIGN_OR_RETURN(std::string text, value());
      int64_t version = 0;
      if (!ParseNumber(text, &version) || version < 1) {
        return absl::InvalidArgumentError(StrCat(flag, " '", text, "' must be an integer >= 1"));
      }
      options.version = version;
    } else if (flag == "--window") {
      ASSIGN_OR_RETURN(std::string text, value());
      int window = 0;
      if (!ParseNumber(text, &window) || window < 1 || window > 300) {
        return absl::InvalidArgumentError(StrCat("--window '", text, "' must be whole seconds 1..300"));
      }
      options.window_seconds = window;
    } else if (!flag.empty() && flag[0] == '-') {
      return absl::InvalidArgumentError(StrCat("unknown flag '", flag, "'"));
    } else {
      return absl::InvalidArgumentError(StrCat("unexpected argument '", flag, "' (the model is -m NAME)"));
    }
  }
  if (!options.help && options.model.empty()) {
    return absl::InvalidArgumentError("-m/--model-name MODEL is required");
  }
  return options;
}

std::string DiagnosisPath(const DiagnoseOptions& options) {
  std::string path = StrCat("/v2/models/", PercentEncode(options.model));
  if (options.version) path += StrCat("/versions/", *options.version);
  path += "/diagnosis";
  if (options.window_seconds) path += StrCat("?window=", *options.window_seconds);
  return path;
}


std::string DiagnoseHelp() { return kHelp; }

int RunDiagnoseCommand(const std::vector<std::string>& args) {
  absl::StatusOr<DiagnoseOptions> options = ParseDiagnoseArgs(args);
  if (!options.ok()) {
    std::cerr << "infera diagnose: " << options.status().message() << "\nsee 'infera diagnose --help'\n";
    return 2;
  }
  if (options->help) {
    std::cout << kHelp;
    return 0;
  }
  absl::StatusOr<bench::HttpReply> reply = bench::SimpleHttpGet(options->host, options->port,
                                                                DiagnosisPath(*options), 10000);
  if (!reply.ok()) {
    std::cerr << "infera diagnose: " << reply.status().message() << "\n";
    return 1;
  }
  if (reply->status != 200) {
    std::cerr << "infera diagnose: HTTP " << reply->status << ": " << reply->body << "\n";
    return 1;
  }
  if (options->json) {
    std::cout << reply->body << "\n";
    return 0;
  }
  absl::StatusOr<std::string> table = RenderDiagnosisTable(reply->body);
  if (!table.ok()) {
    std::cerr << "infera diagnose: " << table.status().message() << "\n";
    return 1;
  }
  std::cout << *table;
  return 0;
}

}  // namespace infera::diagnose

// infera: one binary, subcommands.
//   infera serve --model-repository DIR [flags]
//   infera bench -m MODEL [flags]       (the load generator, tools/bench)
//   infera analyze --repository DIR -m MODEL --objective ...   (tools/analyze)
//   infera api-key create --id ID ...                          (security/api_key_command.h)
//   infera --help | --version
#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "security/api_key_command.h"
#include "server/options.h"
#include "server/server.h"
#include "server/version.h"
#include "tools/analyze/analyze_command.h"
#include "tools/bench/bench_command.h"
#include "tools/diagnose/diagnose_command.h"

namespace {

constexpr char kUsage[] =
    "infera — an inference server for image, text, ranking models over KServe v2.\n\n"
    "Usage: infera <command> [flags]\n\n"
    "Commands:\n"
    "  serve     Serve a model repository (infera serve --help for its flags).\n"
    "  bench     Load-test a KServe v2 server (infera bench --help for its flags).\n"
    "  analyze   Find the best model configuration for a latency objective (infera analyze --help).\n"
    "  diagnose  Where a model's time goes (infera diagnose --help for its flags).\n"
    "  api-key   Create an API key for --api-key-file (infera api-key create --id ID).\n"
    "  version   Print the version.\n"
    "  help      Show this text.\n";

}  // namespace

int main(int argc, char** argv) {
#ifdef NDEBUG
  // abseil's lock-order checking costs CPU on every contended mutex; it is a debugging
  // aid, kept for debug builds only.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::cout << "infera " << infera::kInferaVersion << "\n";
    return 0;
  }
  if (args[0] == "serve") {
    auto options = infera::ParseServeOptions({args.begin() + 1, args.end()});
    if (!options.ok()) {
      std::cerr << "infera serve: " << options.status().message() << "\n\n"
                << infera::ServeHelpText();
      return 2;
    }
    if (options->help) {
      std::cout << infera::ServeHelpText();
      return 0;
    }
    return infera::RunServe(*options);
  }
  if (args[0] == "bench") return infera::bench::RunBenchCommand({args.begin() + 1, args.end()});
  if (args[0] == "analyze") return infera::analyze::RunAnalyzeCommand({args.begin() + 1, args.end()});
  if (args[0] == "api-key") return infera::RunApiKeyCommand({args.begin() + 1, args.end()}, std::cout, std::cerr);
  if (args[0] == "diagnose") return infera::diagnose::RunDiagnoseCommand({args.begin() + 1, args.end()});
  std::cerr << "infera: unknown command '" << args[0] << "'\n\n" << kUsage;
  return 2;
}

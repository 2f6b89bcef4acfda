// infera: one binary, subcommands.
//   infera serve --model-repository DIR [flags]
//   infera bench ...       (the load generator, tools/bench)
//   infera analyze ...     (the configuration search, tools/analyze)
//   infera diagnose ...    (where a model's time goes, tools/diagnose)
//   infera api-key create --id ID ...                          (security/api_key_command.h)
//   infera llm convert --input IN --output OUT ...              (llm/convert/convert_command.h)
//   infera --help | --version
#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "llm/convert/convert_command.h"
#include "security/api_key_command.h"
#include "server/options.h"
#include "server/server.h"
#include "server/version.h"
#include "tools/analyze/analyze_command.h"
#include "tools/bench/bench_command.h"
#include "tools/diagnose/diagnose_command.h"

namespace {

constexpr char kUsage[] =
    "infera: an inference server. It serves a Triton-layout model repository (image, text,\n"
    "ranking models, pipelines and LLMs) over KServe v2 HTTP and gRPC, the OpenAI API\n"
    "(/v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models) and a web console\n"
    "at http://HOST:8000/console.\n"
    "\n"
    "Usage: infera <command> [flags]\n"
    "\n"
    "Commands:\n"
    "  serve     Serve a model repository: infera serve --model-repository DIR\n"
    "  bench     Load-test a KServe v2 or OpenAI endpoint, as perf_analyzer does:\n"
    "            infera bench -m/--model-name MODEL [-u HOST:PORT]\n"
    "  analyze   Find the model configuration that meets a latency or throughput objective\n"
    "  diagnose  Where a served model's time goes, and what to change\n"
    "  api-key   Create an API key for --api-key-file: infera api-key create --id ID\n"
    "  version   Print the version\n"
    "  help      Show this text\n"
    "\n"
    "Each command's flags: infera <command> --help\n";

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
      // One line naming the problem and where the flags are: the whole help would scroll
      // the error out of sight.
      std::cerr << "infera serve: " << options.status().message() << "\n"
                << "see 'infera serve --help'\n";
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
  if (args[0] == "llm") {
    if (args.size() >= 2 && args[1] == "convert") {
      return infera::llm::convert::RunConvertCommand({args.begin() + 2, args.end()}, std::cout, std::cerr);
    }
    std::cerr << "infera llm: " << (args.size() < 2 ? std::string("a subcommand is required")
                                                    : "unknown subcommand '" + args[1] + "'")
              << " (convert)\n";
    return 2;
  }
  if (args[0] == "diagnose") return infera::diagnose::RunDiagnoseCommand({args.begin() + 1, args.end()});
  std::cerr << "infera: unknown command '" << args[0] << "'\n"
            << "see 'infera --help'\n";
  return 2;
}

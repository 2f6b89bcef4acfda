// `infera diagnose`: asks a running server for a model's bottleneck diagnosis
// (GET /v2/models/{m}[/versions/{v}]/diagnosis, docs/diagnosis.md) and prints it as a
// table for people or, with --json, the server's JSON unchanged for machines.
//
//   infera diagnose -m MODEL [-u HOST:PORT] [-x VERSION] [--window S] [--json]
//
// Flags follow the convention every subcommand shares (perf_analyzer's names where they
// exist: -u HOST:PORT, -m/--model-name, -x/--model-version). Exit status: 0 answered,
// 1 the server answered an error or could not be reached, 2 bad flags (one line naming
// the problem, then "see 'infera diagnose --help'").
#ifndef INFERA_TOOLS_DIAGNOSE_DIAGNOSE_COMMAND_H_
#define INFERA_TOOLS_DIAGNOSE_DIAGNOSE_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/diagnose/diagnosis_table.h"  // RenderDiagnosisTable

namespace infera::diagnose {

struct DiagnoseOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  std::string model;
  std::optional<int64_t> version;
  std::optional<int> window_seconds;
  bool json = false;
  bool help = false;
};

// InvalidArgument naming the flag for anything malformed.
absl::StatusOr<DiagnoseOptions> ParseDiagnoseArgs(const std::vector<std::string>& args);

// The request path for `options` (model name percent-encoded).
std::string DiagnosisPath(const DiagnoseOptions& options);

// The --help text (each line at most 100 columns).
std::string DiagnoseHelp();

int RunDiagnoseCommand(const std::vector<std::string>& args);

}  // namespace infera::diagnose

#endif  // INFERA_TOOLS_DIAGNOSE_DIAGNOSE_COMMAND_H_

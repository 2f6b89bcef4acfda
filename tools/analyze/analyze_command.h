// `infera analyze`: the entry point, called by the infera binary's main() for
// `infera analyze ...` (flags: AnalyzeHelpText(); design: docs/analyze.md).
//
// Steps: parse flags; read the model's config.pbtxt; start a server of its own
// (server_process.h); run the search (search.h) measuring each point with
// point_measure.h; write OUT/config.pbtxt (the best point), OUT/report.md,
// OUT/latency_throughput.svg; print the report.
//
// Exit status: 0 when a configuration was measured (the report says whether the
// objective was met), 1 when the server could not start or died, or nothing could be
// measured, 2 for bad flags or an unreadable model config, 130 when interrupted (the
// partial report is still written).
//
// Thread-compatible: call once per process (SIGINT/SIGTERM handlers are installed for
// the duration of the run).
#ifndef INFERA_TOOLS_ANALYZE_ANALYZE_COMMAND_H_
#define INFERA_TOOLS_ANALYZE_ANALYZE_COMMAND_H_

#include <string>
#include <vector>

namespace infera::analyze {

int RunAnalyzeCommand(const std::vector<std::string>& args);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_ANALYZE_COMMAND_H_

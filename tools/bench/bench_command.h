// `infera bench`: the load generator's entry point, called by the infera binary's
// main() for `infera bench ...` (see BenchHelpText() for the flags).
//
// Steps: parse flags; read the model's metadata (and config, for max_batch_size) from
// the server; resolve input shapes; make the payloads (and the expected outputs with
// --check); encode them for the protocol; probe the statistics endpoint; start the
// client threads; run the sweep (bench_runner.h); print the table and write the
// CSV / JSON / SVG files asked for. With --service-kind openai the payloads are
// synthetic streaming completions/chat requests instead (openai_payload.h) and no
// metadata is read.
//
// `infera bench plot ...` draws saved reports together instead (plot_command.h).
//
// Exit status: 0 when the run measured something, 1 when every request failed or any
// response failed --check (so CI notices), 2 for bad flags or an unreachable server.
//
// Thread-compatible: call once per process (it installs a SIGINT handler for the
// duration of the run: Ctrl-C stops the sweep and still reports).
#ifndef INFERA_TOOLS_BENCH_BENCH_COMMAND_H_
#define INFERA_TOOLS_BENCH_BENCH_COMMAND_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_options.h"
#include "tools/bench/run_report.h"

namespace infera::bench {

int RunBenchCommand(const std::vector<std::string>& args);

// The KServe tensor path of `infera bench` for callers inside this process (`infera
// analyze`): reads the model's metadata and config, makes the payloads, runs the sweep of
// `options` with the same load driver, histograms and report, and returns the report
// without printing anything. `stop` ends the sweep early (what was measured is kept);
// `on_level` (optional) sees each level as it finishes. No shared memory, no openai.
// Errors: Unavailable / NotFound when the server or model cannot be reached, others
// for inputs the payloads cannot be made for.
absl::StatusOr<RunReport> RunKServeSweep(const BenchOptions& options, const std::atomic<bool>& stop,
                                         const std::function<void(const LevelResult&)>& on_level = {});

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_BENCH_COMMAND_H_

// Server-side statistics of the model under test, read from Triton's statistics
// extension (GET /v2/models/{m}[/versions/{v}]/stats), and the per-request breakdown
// (queue vs compute) of a measurement window computed from two snapshots.
//
// Expected JSON (Triton's shape; counts and ns as numbers or strings):
//   {"model_stats": [{"name": "simple", "version": "1",
//     "inference_count": N, "execution_count": M,
//     "inference_stats": {"success": {"count": C, "ns": T}, "fail": {...}, "queue": {...},
//                         "compute_input": {...}, "compute_infer": {...},
//                         "compute_output": {...}}}, ...]}
// Entries for other models are ignored; several versions of the model are summed unless
// a version is asked for. Stage counts are per request (Triton attributes a batch's
// stage time to each request in it), so each stage's ns / count is a per-request mean.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_SERVER_STATS_H_
#define INFERA_TOOLS_BENCH_SERVER_STATS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace infera::bench {

struct StageTotal {
  int64_t count = 0;
  int64_t ns = 0;
};

struct ServerStats {
  int64_t inference_count = 0;  // rows (a batch-4 request counts 4)
  int64_t execution_count = 0;  // backend executions
  StageTotal success, fail, queue, compute_input, compute_infer, compute_output;

  // Field-wise difference (later - earlier).
  ServerStats Minus(const ServerStats& earlier) const;
};

// Per-request means over a window, in microseconds.
struct ServerBreakdown {
  int64_t requests = 0;        // successful requests the server counted
  int64_t failures = 0;
  int64_t inferences = 0;      // rows
  int64_t executions = 0;
  double avg_batch_rows = 0;   // inferences / executions: > requests' batch when batching
  double request_us = 0;       // end to end inside the server (success)
  double queue_us = 0;
  double compute_input_us = 0;
  double compute_infer_us = 0;
  double compute_output_us = 0;
  double overhead_us = 0;      // request - queue - compute: HTTP/codec/scheduling inside
};

// NotFound when the model has no entry; InvalidArgument for malformed JSON.
absl::StatusOr<ServerStats> ParseServerStats(std::string_view json, std::string_view model,
                                             std::string_view version);

ServerBreakdown ComputeBreakdown(const ServerStats& delta);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_SERVER_STATS_H_

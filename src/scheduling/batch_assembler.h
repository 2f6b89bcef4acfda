// Packs several requests into one backend execution and splits the results back.
//
// Requests in one batch must agree on every input's datatype and non-batch dims (the
// scheduler only groups such requests). Packing concatenates along dimension 0;
// splitting hands each request the rows it contributed, as zero-copy slices of the
// batch output.
//
//   request A (2 rows) ─┐                      ┌─ rows 0..1 → A
//                       ├─ [3, ...] → Execute ─┤
//   request B (1 row)  ─┘                      └─ row 2     → B
//
// A batch of one request passes its tensors through untouched.
//
// Thread-safe (pure functions).
#ifndef INFERA_SCHEDULING_BATCH_ASSEMBLER_H_
#define INFERA_SCHEDULING_BATCH_ASSEMBLER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "api/tensor.h"
#include "scheduling/scheduler.h"

namespace infera {

// The batch's inputs, moved out of (one request) or copied from (several) `requests`.
absl::StatusOr<std::vector<Tensor>> GatherBatchInputs(ScheduledRequests& requests);

// Splits each output's leading dimension into `batch_sizes` (summing to dim 0) and
// returns one output list per request. When `batch_sizes` has one entry the outputs
// are returned as they are.
absl::StatusOr<std::vector<std::vector<Tensor>>> ScatterBatchOutputs(
    std::vector<Tensor> outputs, const std::vector<int64_t>& batch_sizes);

}  // namespace infera

#endif  // INFERA_SCHEDULING_BATCH_ASSEMBLER_H_

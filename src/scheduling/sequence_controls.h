// The control tensors a sequence model receives with every row (START, READY, END,
// CORRID: docs/sequence_batching.md), and the padding rows of the direct strategy.
//
// Thread-safe (pure functions).
#ifndef INFERA_SCHEDULING_SEQUENCE_CONTROLS_H_
#define INFERA_SCHEDULING_SEQUENCE_CONTROLS_H_

#include <memory>
#include <vector>

#include "api/tensor.h"
#include "scheduling/scheduler.h"
#include "scheduling/sequence_options.h"
#include "scheduling/sequence_request.h"

namespace infera {

// Appends one tensor per control, in `controls` order, to `inputs`: shape [1, 1] when
// `batched` (one row), else [1]. `sequence` null: a padding row (READY false, START and
// END false, CORRID 0 / "").
void AppendSequenceControls(const std::vector<SequenceControl>& controls, bool batched,
                            const SequenceRequest* sequence, std::vector<Tensor>& inputs);

// A row for an idle slot: `like`'s inputs (before controls) with zero bytes (BYTES: empty
// elements), a callback that drops its result. Marked `padding`.
std::unique_ptr<ScheduledRequest> MakePaddingRequest(const ScheduledRequest& like);

// Whether `a` and `b` may share a batch: the same inputs with the same dtypes and shapes.
bool SameInputShapes(const ScheduledRequest& a, const ScheduledRequest& b);

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_CONTROLS_H_

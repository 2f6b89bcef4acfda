// InferRequest / InferResponse: the transport-neutral inference exchange.
//
// Frontends (HTTP JSON/binary, gRPC) decode into an InferRequest, hand it to the model
// manager, and encode the InferResponse they get back; nothing below the frontends
// knows which wire format a request came from.
#ifndef INFERA_API_INFER_REQUEST_H_
#define INFERA_API_INFER_REQUEST_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "api/cancellation.h"
#include "api/generation.h"
#include "api/parameters.h"
#include "api/tensor.h"

namespace infera {

class CompletionBatch;  // common/completion_batch.h
class TokenMeter;       // api/token_meter.h

// An output the client asked for. Per-output parameters carry transport hints the
// frontend interprets (e.g. HTTP `binary_data`); the core only reads `name`.
struct RequestedOutput {
  std::string name;
  Parameters parameters;
};

struct InferRequest {
  std::string model_name;
  // Unset: the newest ready version the model's version policy serves.
  std::optional<int64_t> model_version;
  std::string id;  // echoed in the response; may be empty
  Parameters parameters;
  std::vector<Tensor> inputs;
  // Empty, or one entry per input: the input's parameters. Frontends keep them only when
  // an input names a shared-memory region (`shared_memory_region`, no data); such an
  // input's `data` is empty until shm/shared_memory_binding.h resolves it. Read only
  // before the request is handed to the model manager (which reorders `inputs`).
  std::vector<Parameters> input_parameters;
  // Empty: every output the model declares, in config order.
  std::vector<RequestedOutput> outputs;
  // When the frontend finished reading the request; start of end-to-end latency.
  std::chrono::steady_clock::time_point arrival_time{};
  // Set by the frontend when the client goes away; may be null (never cancelled).
  std::shared_ptr<const CancellationToken> cancellation;
  // Ensembles this request is a step of (0: a client's request). The EnsembleScheduler
  // sets it on the step requests it makes and refuses a request that would nest past
  // kMaxEnsembleDepth, so a request never recurses without bound.
  int ensemble_depth = 0;
  // Charged with the LLM tokens the request spends (api/token_meter.h); null: not metered.
  std::shared_ptr<TokenMeter> token_meter{};
};

// When the scheduler handled a request (for tracing and logs); unset fields are
// default-constructed time points.
struct RequestTimings {
  std::chrono::steady_clock::time_point enqueue{};          // entered the scheduler queue
  std::chrono::steady_clock::time_point execution_start{};  // its batch started
  std::chrono::steady_clock::time_point execution_end{};    // its batch finished
  int64_t batch_rows = 0;      // rows in the batch it ran in
  int64_t batch_requests = 0;  // requests in that batch
};

struct InferResponse {
  std::string model_name;
  int64_t model_version = 0;
  std::string id;
  Parameters parameters;
  std::vector<Tensor> outputs;
  // Empty, or one entry per output: set for an output whose bytes were written into a
  // shared-memory region (shm/shared_memory_binding.h). Its `data` is then empty and the
  // encoders send only its name, datatype, shape and these parameters, as Triton does.
  std::vector<std::optional<Parameters>> shared_memory_outputs;
  RequestTimings timings;
  // Set on the final response of a generation (an LLM's tensor requests): where its time
  // went, for the trace's queue / prefill / decode / detokenize spans.
  std::optional<GenerationTimings> generation;
};

// How a result reaches the frontend, besides the result itself (explicit, where a
// thread-local used to carry it; docs/request_path.md).
struct ResponseDelivery {
  // False for a decoupled model's non-final response: more follow.
  bool final = true;
  // The batch whose results are being delivered on this thread, or null: a frontend that
  // hands each result to another thread (an HTTP connection's I/O thread) may defer the
  // hand-off to the batch's end and make it once per target thread
  // (CompletionBatch::AtClose, common/completion_batch.h). Valid during the call only.
  CompletionBatch* batch = nullptr;
};

// Receives the outcome of one request, on an arbitrary thread; it must not block
// (frontends post the write back to their own I/O thread). A model that answers once
// (every model that is not decoupled) calls it exactly once, final. A decoupled model
// calls it zero or more times with final = false (each an OK response), then exactly
// once with final = true: an error, a response, or an OK response without outputs (the
// empty final response: the model ended the request without one).
using InferCallback = absl::AnyInvocable<void(absl::StatusOr<InferResponse> result, ResponseDelivery delivery)>;

}  // namespace infera

#endif  // INFERA_API_INFER_REQUEST_H_

// KServe v2 gRPC inference messages <-> the transport-neutral InferRequest / InferResponse.
//
// The gRPC counterpart of codec/kserve_http_codec.h: the gRPC frontend decodes a
// ModelInferRequest here, hands the InferRequest to the model manager (the same path
// HTTP takes) and encodes the InferResponse it gets back.
//
// Request contract (every problem is InvalidArgument naming it):
//   - model_name is required; model_version is "" (the policy's version) or an integer >= 1.
//   - Input data comes either all raw (raw_input_contents, one entry per input, in input
//     order, exactly the bytes the datatype and shape need) or all typed (each input's
//     `contents`, see tensor_contents.h). Mixing them, a count mismatch, a shape with a
//     negative dimension, an unknown datatype or a duplicate input or output name is
//     an error. FP16 and BF16 can only be raw (the protocol has no typed field for them).
//   - Parameters (request and requested-output) keep bool / int64 / double / string
//     values; a uint64 above INT64_MAX is an error. Input parameters are checked, not
//     kept (Tensor has none), as over HTTP.
//   - An input with a `shared_memory_region` parameter (system shared-memory extension)
//     carries no contents and has no raw_input_contents entry; its data stays empty and
//     the parameters of every input are kept in InferRequest::input_parameters for
//     shm/shared_memory_binding.h.
//   - With `owner` set, raw inputs are zero-copy views into `message` (which `owner`
//     must keep alive); without it they are copied.
//
// Response contract: outputs in the response's order, their data always in
// raw_output_contents (one entry per output, api/tensor.h layout: little-endian elements,
// BYTES as 4-byte length + bytes each), whichever form the request used — as Triton
// answers, and what Triton's clients read (they only look at raw_output_contents).
// An output marked in InferResponse::shared_memory_outputs has no contents, the region's
// parameters, and an empty raw_output_contents entry.
//
// Thread-safe (pure functions).
//
// Usage:
//   ASSIGN_OR_RETURN(InferRequest request, DecodeModelInferRequest(message, nullptr));
//   ... run the model ...
//   RETURN_IF_ERROR(EncodeModelInferResponse(response, &reply));
#ifndef INFERA_GRPC_INFER_MESSAGE_CODEC_H_
#define INFERA_GRPC_INFER_MESSAGE_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "grpc_service.pb.h"

namespace infera {

// "" -> unset; "3" -> 3; anything else (including "0", "-1", "1.0") InvalidArgument.
absl::StatusOr<std::optional<int64_t>> ParseModelVersion(std::string_view version);

// Sets arrival_time to now; cancellation is left for the caller.
absl::StatusOr<InferRequest> DecodeModelInferRequest(const inference::ModelInferRequest& message,
                                                     std::shared_ptr<const void> owner);

// Fills `message` (expected empty). Internal when an output's bytes do not match its
// datatype and shape.
absl::Status EncodeModelInferResponse(const InferResponse& response,
                                      inference::ModelInferResponse* message);

// Everything EncodeModelInferResponse fills except raw_output_contents (same checks):
// the frontend appends those entries itself, referencing the output buffers
// (infer_response_serializer.h).
absl::Status EncodeModelInferResponseHeader(const InferResponse& response,
                                            inference::ModelInferResponse* message);

// Whether output `index` was written into a shared-memory region (its raw entry is empty).
bool OutputInSharedMemory(const InferResponse& response, size_t index);

}  // namespace infera

#endif  // INFERA_GRPC_INFER_MESSAGE_CODEC_H_

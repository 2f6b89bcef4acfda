// A request's sequence parameters (docs/sequence_batching.md): `sequence_id` (uint64 or
// string), `sequence_start`, `sequence_end`, as Triton's clients send them over HTTP
// (KServe parameters) and gRPC (InferParameter).
//
// Thread-safe (pure functions).
#ifndef INFERA_SCHEDULING_SEQUENCE_REQUEST_H_
#define INFERA_SCHEDULING_SEQUENCE_REQUEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/statusor.h"
#include "api/parameters.h"

namespace infera {

// A correlation id: numeric or string, never 0 or "".
using SequenceId = std::variant<uint64_t, std::string>;

// "42" or "abc", for messages (as Triton prints it).
std::string SequenceIdToString(const SequenceId& id);

struct SequenceRequest {
  SequenceId id;
  bool start = false;
  bool end = false;
};

// Reads the sequence parameters of a request to `model_name`. InvalidArgument (Triton's
// text) when the id is missing, 0 or empty; when a parameter has the wrong type.
absl::StatusOr<SequenceRequest> ParseSequenceRequest(const Parameters& parameters, std::string_view model_name);

}  // namespace infera

#endif  // INFERA_SCHEDULING_SEQUENCE_REQUEST_H_

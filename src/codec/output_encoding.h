// OutputEncoding: which response outputs travel as binary tensor data.
//
// Triton's binary tensor extension lets a client ask for outputs as raw bytes after the
// JSON instead of JSON arrays:
//   - request parameter "binary_data_output": bool — the default for every output
//     (false when absent);
//   - per requested output, parameter "binary_data": bool — overrides the default for
//     that output.
// DecodeInferRequest has already rejected non-bool values for both.
//
// Independent of this choice, the response encoder sends a BYTES output as binary when
// one of its elements is not valid UTF-8 (JSON strings cannot carry it).
//
// Immutable after construction; thread-safe for concurrent readers.
//
// Usage:
//   OutputEncoding encoding = OutputEncoding::FromRequest(request);
//   ... later, with the model's response:
//   ASSIGN_OR_RETURN(EncodedInferResponse out, EncodeInferResponse(response, encoding));
#ifndef INFERA_CODEC_OUTPUT_ENCODING_H_
#define INFERA_CODEC_OUTPUT_ENCODING_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/infer_request.h"

namespace infera {

struct OutputEncoding {
  // Encoding of outputs without an override ("binary_data_output").
  bool binary_by_default = false;
  // Per-output "binary_data" values, in request order.
  std::vector<std::pair<std::string, bool>> overrides;

  static OutputEncoding FromRequest(const InferRequest& request);

  // Whether output `name` is sent as binary data.
  bool IsBinary(std::string_view name) const;
};

}  // namespace infera

#endif  // INFERA_CODEC_OUTPUT_ENCODING_H_

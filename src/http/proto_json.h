// ProtoToJson: a protobuf message as JSON the way Triton's HTTP endpoints print one
// (used for GET /v2/models/{m}/config, Triton's model_configuration extension).
//
// Differences from protobuf's canonical proto3 JSON mapping, all as Triton does it:
//   - field names as in the .proto (max_batch_size, not maxBatchSize);
//   - every scalar, repeated and map field is printed, default values included; singular
//     message fields and oneof members only when set;
//   - 64-bit integers are JSON numbers, not strings ("dims": [16], not ["16"]);
// and, as in the canonical mapping: enums by name, maps as objects with string keys
// (sorted), bytes as base64, non-finite floats as "NaN" / "Infinity" / "-Infinity".
//
// Thread-safe (pure function).
#ifndef INFERA_HTTP_PROTO_JSON_H_
#define INFERA_HTTP_PROTO_JSON_H_

#include <string>

#include "google/protobuf/message.h"

namespace infera {

std::string ProtoToJson(const google::protobuf::Message& message);

}  // namespace infera

#endif  // INFERA_HTTP_PROTO_JSON_H_

// MakeArenaModelInferRequest: an empty ModelInferRequest on a protobuf Arena whose first
// block is part of the same allocation as the arena and the shared_ptr's control block.
//
// A `simple`-sized request (two [1,16] raw inputs) parsed into it costs one allocation
// for the message and its sub-messages, repeated fields and string objects, plus the
// character buffers of strings longer than the small-string buffer (the raw input
// contents; protobuf 3.21 keeps those on the global heap), instead of one per
// sub-message, repeated field and string as on the heap (docs/grpc.md, "Performance,
// second step"). Larger requests spill into further arena blocks.
//
// The returned pointer owns the arena: views into the parsed message (the zero-copy raw
// inputs, infer_message_codec.h) stay valid while any copy of it lives. Not thread-safe
// while being written (parse on one thread, then share for reading).
#ifndef INFERA_GRPC_ARENA_INFER_REQUEST_H_
#define INFERA_GRPC_ARENA_INFER_REQUEST_H_

#include <cstddef>
#include <memory>

#include "grpc_service.pb.h"

namespace infera {

// Bytes of the arena's first block, inside the same allocation.
inline constexpr size_t kArenaInferRequestInitialBlock = 2048;

std::shared_ptr<inference::ModelInferRequest> MakeArenaModelInferRequest();

}  // namespace infera

#endif  // INFERA_GRPC_ARENA_INFER_REQUEST_H_

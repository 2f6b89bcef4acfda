#include "grpc/arena_infer_request.h"

#include "google/protobuf/arena.h"

namespace infera {
namespace {

google::protobuf::ArenaOptions FirstBlock(char* block, size_t size) {
  google::protobuf::ArenaOptions options;
  options.initial_block = block;
  options.initial_block_size = size;
  return options;
}

// Declaration order matters: the block exists before the arena that uses it, and the
// arena (which destroys the message) is destroyed before the block.
struct ArenaHolder {
  ArenaHolder()
      : arena(FirstBlock(block, sizeof(block))),
        message(google::protobuf::Arena::CreateMessage<inference::ModelInferRequest>(&arena)) {}

  alignas(std::max_align_t) char block[kArenaInferRequestInitialBlock];
  google::protobuf::Arena arena;
  inference::ModelInferRequest* const message;
};

}  // namespace

std::shared_ptr<inference::ModelInferRequest> MakeArenaModelInferRequest() {
  auto holder = std::make_shared<ArenaHolder>();
  return std::shared_ptr<inference::ModelInferRequest>(holder, holder->message);
}

}  // namespace infera

#include "grpc/arena_infer_request.h"

#include <string>
#include <string_view>

#include "google/protobuf/arena.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

// A `simple`-shaped request: two INT32 [1,16] raw inputs.
std::string SimpleRequestBytes() {
  inference::ModelInferRequest request;
  request.set_model_name("simple");
  request.set_id("request-1");
  for (const char* name : {"INPUT0", "INPUT1"}) {
    auto* input = request.add_inputs();
    input->set_name(name);
    input->set_datatype("INT32");
    input->add_shape(1);
    input->add_shape(16);
    request.add_raw_input_contents(std::string(64, name[5]));
  }
  return request.SerializeAsString();
}

TEST(ArenaInferRequestTest, MessageLivesOnAnArenaOwnedByThePointer) {
  std::shared_ptr<inference::ModelInferRequest> message = MakeArenaModelInferRequest();
  ASSERT_NE(message->GetArena(), nullptr);
  EXPECT_EQ(message->model_name(), "");
  EXPECT_EQ(message->inputs_size(), 0);
}

TEST(ArenaInferRequestTest, SimpleRequestFitsTheFirstBlock) {
  std::shared_ptr<inference::ModelInferRequest> message = MakeArenaModelInferRequest();
  ASSERT_TRUE(message->ParseFromString(SimpleRequestBytes()));
  EXPECT_EQ(message->model_name(), "simple");
  EXPECT_EQ(message->id(), "request-1");
  ASSERT_EQ(message->inputs_size(), 2);
  EXPECT_EQ(message->inputs(1).name(), "INPUT1");
  EXPECT_EQ(message->inputs(1).shape(1), 16);
  ASSERT_EQ(message->raw_input_contents_size(), 2);
  EXPECT_EQ(message->raw_input_contents(0), std::string(64, '0'));
  // Everything the parse put on the arena is in the block that came with the holder:
  // no further arena block was allocated.
  EXPECT_EQ(message->GetArena()->SpaceAllocated(), kArenaInferRequestInitialBlock);
}

TEST(ArenaInferRequestTest, LargerRequestsSpillIntoMoreBlocks) {
  inference::ModelInferRequest request;
  request.set_model_name("wide");
  for (int i = 0; i < 64; ++i) {
    auto* input = request.add_inputs();
    input->set_name("INPUT_WITH_A_NAME_LONGER_THAN_SSO_" + std::to_string(i));
    input->set_datatype("FP32");
    input->add_shape(1 << 16);
    request.add_raw_input_contents(std::string(1 << 16, static_cast<char>(i)));
  }
  std::shared_ptr<inference::ModelInferRequest> message = MakeArenaModelInferRequest();
  ASSERT_TRUE(message->ParseFromString(request.SerializeAsString()));
  EXPECT_GT(message->GetArena()->SpaceAllocated(), kArenaInferRequestInitialBlock);
  ASSERT_EQ(message->inputs_size(), 64);
  EXPECT_EQ(message->inputs(63).name(), "INPUT_WITH_A_NAME_LONGER_THAN_SSO_63");
  EXPECT_EQ(message->raw_input_contents(63), std::string(1 << 16, static_cast<char>(63)));
}

TEST(ArenaInferRequestTest, ViewsStayValidWhileAnyCopyOfThePointerLives) {
  std::shared_ptr<const void> owner;
  std::string_view view;
  {
    std::shared_ptr<inference::ModelInferRequest> message = MakeArenaModelInferRequest();
    ASSERT_TRUE(message->ParseFromString(SimpleRequestBytes()));
    view = message->raw_input_contents(1);
    owner = message;  // what the decoded tensors hold (infer_message_codec.h)
  }
  // The original pointer is gone; the arena, and so the bytes, live on with `owner`
  // (ASan reports a use after free here if they do not).
  EXPECT_EQ(view, std::string(64, '1'));
  owner.reset();
}

}  // namespace
}  // namespace infera

// Triton's vLLM-backend tensors → TensorGenerationRequest, hostile inputs included.
#include "llm/tensor_request.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llm/test_tensors.h"

namespace infera::llm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<Tensor> Inputs(std::vector<Tensor> tensors) { return tensors; }

std::string Error(const absl::StatusOr<TensorGenerationRequest>& r) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(TensorRequestTest, ReadsEveryTensor) {
  std::vector<Tensor> inputs;
  inputs.push_back(Bytes("text_input", {"Hello"}));
  inputs.push_back(Bytes("sampling_parameters", {R"({"max_tokens": 7, "temperature": 0, "stop": ["x"]})"}));
  inputs.push_back(Bool("exclude_input_in_output", true));
  inputs.push_back(Bool("stream", false));
  auto r = ParseTensorGenerationRequest(inputs, 0);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->prompts, ElementsAre("Hello"));
  EXPECT_EQ(r->sampling.max_tokens, 7);
  EXPECT_EQ(r->sampling.temperature, 0);
  EXPECT_THAT(r->sampling.stop, ElementsAre("x"));
  EXPECT_TRUE(r->exclude_input);
  EXPECT_FALSE(r->stream);
}

TEST(TensorRequestTest, DefaultsPrependThePromptUnlessStreaming) {
  auto plain = ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a"})}), 0);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->exclude_input);
  EXPECT_FALSE(plain->stream);
  EXPECT_EQ(plain->sampling.max_tokens, SamplingParams{}.max_tokens);
  auto streamed = ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a"}), Bool("stream", true)}), 0);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_TRUE(streamed->stream);
  EXPECT_TRUE(streamed->exclude_input);
  // An empty sampling_parameters string means the defaults.
  auto empty = ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a"}), Bytes("sampling_parameters", {""})}), 0);
  ASSERT_TRUE(empty.ok()) << empty.status();
}

TEST(TensorRequestTest, ABatchHasOnePromptPerRow) {
  auto r = ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a", "b", "c"}, {3, 1})}), 3);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->prompts, ElementsAre("a", "b", "c"));
  EXPECT_THAT(Error(ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a", "b"}, {1, 2})}), 1)),
              HasSubstr("one prompt per row"));
}

TEST(TensorRequestTest, StreamingTakesOnePromptAndNeverEchoesIt) {
  EXPECT_THAT(Error(ParseTensorGenerationRequest(
                  Inputs({Bytes("text_input", {"a", "b"}, {2, 1}), Bool("stream", true)}), 2)),
              HasSubstr("stream=true streams one generation per request"));
  EXPECT_THAT(Error(ParseTensorGenerationRequest(
                  Inputs({Bytes("text_input", {"a"}), Bool("stream", true), Bool("exclude_input_in_output", false)}),
                  0)),
              HasSubstr("exclude_input_in_output=false is not allowed with stream=true"));
}

TEST(TensorRequestTest, HostileInputsAreRefusedNamingTheTensor) {
  EXPECT_THAT(Error(ParseTensorGenerationRequest(Inputs({}), 0)), HasSubstr("'text_input' is required"));
  EXPECT_THAT(Error(ParseTensorGenerationRequest(Inputs({Bytes("text_input", {})}), 0)), HasSubstr("no prompt"));
  Tensor truncated = Bytes("text_input", {"hello"});
  truncated.data = Buffer::FromString(std::string("\x09\0\0\0abc", 7));  // says 9 bytes, holds 3
  EXPECT_FALSE(ParseTensorGenerationRequest(Inputs({truncated}), 0).ok());
  Tensor wrong_type = Bool("text_input", true);
  EXPECT_THAT(Error(ParseTensorGenerationRequest(Inputs({wrong_type}), 0)), HasSubstr("must be BYTES"));
  Tensor stream_bytes = Bytes("stream", {"yes"});
  EXPECT_THAT(Error(ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a"}), stream_bytes}), 0)),
              HasSubstr("'stream' must be BOOL"));
  for (const char* json : {"{not json", "[1, 2]", R"({"temperature": -1})", R"({"n": 2})",
                           R"({"max_tokens": "many"})", R"({"stop": [1]})"}) {
    const std::string error = Error(ParseTensorGenerationRequest(
        Inputs({Bytes("text_input", {"a"}), Bytes("sampling_parameters", {json})}), 0));
    EXPECT_FALSE(error.empty()) << json;
  }
  EXPECT_THAT(Error(ParseTensorGenerationRequest(
                  Inputs({Bytes("text_input", {"a"}), Bytes("sampling_parameters", {"[1]"})}), 0)),
              HasSubstr("sampling_parameters must be a JSON object"));
}

TEST(TensorRequestTest, AnEmptyFlagIsUnset) {
  Tensor empty_stream = Bool("stream", true);
  empty_stream.shape = {0};
  empty_stream.data = Buffer::FromString("");
  auto r = ParseTensorGenerationRequest(Inputs({Bytes("text_input", {"a"}), empty_stream}), 0);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->stream);
}

}  // namespace
}  // namespace infera::llm

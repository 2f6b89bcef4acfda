#include "codec/output_encoding.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

RequestedOutput Output(std::string name, std::optional<bool> binary) {
  RequestedOutput out;
  out.name = std::move(name);
  if (binary) out.parameters["binary_data"] = *binary;
  return out;
}

TEST(OutputEncodingTest, JsonByDefault) {
  InferRequest request;
  OutputEncoding encoding = OutputEncoding::FromRequest(request);
  EXPECT_FALSE(encoding.binary_by_default);
  EXPECT_FALSE(encoding.IsBinary("anything"));
}

TEST(OutputEncodingTest, RequestDefaultAppliesToEveryOutput) {
  InferRequest request;
  request.parameters["binary_data_output"] = true;
  request.outputs = {Output("listed", std::nullopt)};
  OutputEncoding encoding = OutputEncoding::FromRequest(request);
  EXPECT_TRUE(encoding.IsBinary("listed"));
  EXPECT_TRUE(encoding.IsBinary("not_listed"));
}

TEST(OutputEncodingTest, PerOutputOverridesTheDefault) {
  InferRequest request;
  request.parameters["binary_data_output"] = true;
  request.outputs = {Output("json", false), Output("bin", true), Output("plain", std::nullopt)};
  OutputEncoding encoding = OutputEncoding::FromRequest(request);
  EXPECT_FALSE(encoding.IsBinary("json"));
  EXPECT_TRUE(encoding.IsBinary("bin"));
  EXPECT_TRUE(encoding.IsBinary("plain"));

  request.parameters.clear();
  encoding = OutputEncoding::FromRequest(request);
  EXPECT_FALSE(encoding.IsBinary("json"));
  EXPECT_TRUE(encoding.IsBinary("bin"));
  EXPECT_FALSE(encoding.IsBinary("plain"));
}

TEST(OutputEncodingTest, NonBoolValuesAreIgnored) {
  // DecodeInferRequest rejects these; a hand-built request falls back to the defaults.
  InferRequest request;
  request.parameters["binary_data_output"] = int64_t{1};
  RequestedOutput out;
  out.name = "y";
  out.parameters["binary_data"] = std::string("true");
  request.outputs = {out};
  OutputEncoding encoding = OutputEncoding::FromRequest(request);
  EXPECT_FALSE(encoding.IsBinary("y"));
}

}  // namespace
}  // namespace infera

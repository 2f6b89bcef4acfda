#include "scheduling/batch_assembler.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

Tensor Int32Tensor(const std::string& name, Shape shape, std::vector<int32_t> values) {
  return Tensor{name, DataType::kInt32, std::move(shape),
                Buffer::Copy(values.data(), values.size() * sizeof(int32_t))};
}

std::vector<int32_t> Int32Values(const Tensor& t) {
  std::vector<int32_t> out(t.data.size() / 4);
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

std::unique_ptr<ScheduledRequest> Request(std::vector<Tensor> inputs) {
  auto r = std::make_unique<ScheduledRequest>();
  r->batch_size = inputs[0].shape[0];
  r->request.inputs = std::move(inputs);
  return r;
}

TEST(BatchAssemblerTest, SingleRequestPassesThroughWithoutCopy) {
  ScheduledRequests requests;
  requests.push_back(Request({Int32Tensor("x", {1, 2}, {1, 2})}));
  const uint8_t* data = requests[0]->request.inputs[0].data.data();
  auto batch = GatherBatchInputs(requests);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)[0].data.data(), data);
  auto split = ScatterBatchOutputs(std::move(*batch), {1});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ((*split)[0][0].data.data(), data);
}

TEST(BatchAssemblerTest, PacksAndSplitsMultiRowRequests) {
  ScheduledRequests requests;
  requests.push_back(Request({Int32Tensor("x", {2, 2}, {1, 2, 3, 4})}));
  requests.push_back(Request({Int32Tensor("x", {1, 2}, {5, 6})}));
  requests.push_back(Request({Int32Tensor("x", {3, 2}, {7, 8, 9, 10, 11, 12})}));
  auto batch = GatherBatchInputs(requests);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), 1u);
  EXPECT_EQ((*batch)[0].shape, (Shape{6, 2}));
  EXPECT_EQ(Int32Values((*batch)[0]), (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));

  auto split = ScatterBatchOutputs(std::move(*batch), {2, 1, 3});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 3u);
  EXPECT_EQ((*split)[0][0].shape, (Shape{2, 2}));
  EXPECT_EQ(Int32Values((*split)[0][0]), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(Int32Values((*split)[1][0]), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ((*split)[2][0].shape, (Shape{3, 2}));
  EXPECT_EQ(Int32Values((*split)[2][0]), (std::vector<int32_t>{7, 8, 9, 10, 11, 12}));
}

TEST(BatchAssemblerTest, SplitsBytesOutputsByElements) {
  std::string bytes;
  for (const char* s : {"a", "bb", "", "dddd"}) AppendBytesElement(bytes, s);
  Tensor out{"s", DataType::kBytes, {4, 1}, Buffer::FromString(std::move(bytes))};
  auto split = ScatterBatchOutputs({out}, {1, 3});
  ASSERT_TRUE(split.ok()) << split.status();
  auto first = SplitBytesElements((*split)[0][0].data.AsStringView());
  auto second = SplitBytesElements((*split)[1][0].data.AsStringView());
  EXPECT_THAT(*first, ::testing::ElementsAre("a"));
  EXPECT_THAT(*second, ::testing::ElementsAre("bb", "", "dddd"));
}

TEST(BatchAssemblerTest, RejectsMismatchedShapesAndRows) {
  ScheduledRequests requests;
  requests.push_back(Request({Int32Tensor("x", {1, 2}, {1, 2})}));
  requests.push_back(Request({Int32Tensor("x", {1, 3}, {1, 2, 3})}));
  EXPECT_EQ(GatherBatchInputs(requests).status().code(), absl::StatusCode::kInternal);
  auto bad = ScatterBatchOutputs({Int32Tensor("y", {3}, {1, 2, 3})}, {1, 1});
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("first dimension"));
}

}  // namespace
}  // namespace infera

#include "shm/shared_memory_binding.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/shm_test_util.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

Parameters ShmParams(const std::string& region, int64_t byte_size,
                     std::optional<int64_t> offset = std::nullopt) {
  Parameters p;
  p.emplace(kShmRegionParameter, region);
  p.emplace(kShmByteSizeParameter, byte_size);
  if (offset) p.emplace(kShmOffsetParameter, *offset);
  return p;
}

InferRequest Fp32Request(Shape shape, Parameters params) {
  InferRequest request;
  Tensor input;
  input.name = "x";
  input.dtype = DataType::kFp32;
  input.shape = std::move(shape);
  request.inputs.push_back(std::move(input));
  request.input_parameters.push_back(std::move(params));
  return request;
}

class BindingTest : public ::testing::Test {
 protected:
  BindingTest() : object_(4096) {
    EXPECT_TRUE(registry_.Register("region", object_.key(), 0, 4096).ok());
  }
  TestShmObject object_;
  SharedMemoryRegistry registry_;
};

// The input is copied when the request is bound: whatever the client does to its object
// afterwards (rewrite, shrink, unregister) does not reach the queued request.
TEST_F(BindingTest, InputIsCopiedAtBindTime) {
  const float values[4] = {1.5f, -2.f, 3.f, 4.25f};
  std::memcpy(object_.data() + 64, values, sizeof(values));
  InferRequest request = Fp32Request({1, 4}, ShmParams("region", 16, 64));
  ASSERT_TRUE(BindSharedMemory(&registry_, request).ok());
  const Buffer& data = request.inputs[0].data;
  ASSERT_EQ(data.size(), 16u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data.data()) % 64, 0u);  // aligned for any dtype
  EXPECT_EQ(std::memcmp(data.data(), values, 16), 0);
  reinterpret_cast<float*>(object_.data() + 64)[0] = 8.f;
  ASSERT_TRUE(registry_.Unregister("region").ok());
  object_.Resize(0);
  EXPECT_EQ(std::memcmp(data.data(), values, 16), 0);
}

TEST_F(BindingTest, MisalignedInputIsReadIntoAnAlignedBuffer) {
  const float value = 6.5f;
  std::memcpy(object_.data() + 3, &value, 4);
  InferRequest request = Fp32Request({1}, ShmParams("region", 4, 3));
  ASSERT_TRUE(BindSharedMemory(&registry_, request).ok());
  float got;
  std::memcpy(&got, request.inputs[0].data.data(), 4);
  EXPECT_EQ(got, 6.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(request.inputs[0].data.data()) % 4, 0u);
}

// A region shrunk between registration and bind: a clear error, before the model runs.
TEST_F(BindingTest, ObjectShrunkBeforeBindIsAnError) {
  object_.Resize(100);
  InferRequest input = Fp32Request({1, 4}, ShmParams("region", 16, 96));
  absl::Status status = BindSharedMemory(&registry_, input).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("input 'x'"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("shrank to 100 bytes"));
  InferRequest output;
  output.outputs.push_back(RequestedOutput{"y", ShmParams("region", 16, 2048)});
  status = BindSharedMemory(&registry_, output).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 'y'"));
  EXPECT_EQ(object_.Size(), 100u);
}

// Shrunk while the request was queued or running: the output write fails cleanly and
// does not grow the client's object back.
TEST_F(BindingTest, ObjectShrunkBeforeTheOutputWriteIsAnError) {
  InferRequest request;
  request.outputs.push_back(RequestedOutput{"y", ShmParams("region", 64, 128)});
  auto outputs = BindSharedMemory(&registry_, request);
  ASSERT_TRUE(outputs.ok());
  object_.Resize(0);
  InferResponse response;
  const float values[3] = {1.f, 2.f, 3.f};
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {3}, Buffer::Copy(values, 12)});
  absl::Status status = outputs->WriteInto(response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 'y'"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("shrank to 0 bytes"));
  EXPECT_EQ(object_.Size(), 0u);
}

TEST_F(BindingTest, InputBytesPerRequestAreBounded) {
  SharedMemoryRegistry small(/*max_regions=*/4, /*max_request_bytes=*/32);
  ASSERT_TRUE(small.Register("region", object_.key(), 0, 4096).ok());
  InferRequest fits = Fp32Request({4}, ShmParams("region", 16));
  fits.inputs.push_back(fits.inputs[0]);
  fits.inputs[1].name = "x2";
  fits.input_parameters.push_back(ShmParams("region", 16, 16));
  EXPECT_TRUE(BindSharedMemory(&small, fits).ok());
  InferRequest over = Fp32Request({4}, ShmParams("region", 16));
  over.inputs.push_back(over.inputs[0]);
  over.inputs[1].name = "x2";
  over.inputs[1].shape = {5};
  over.input_parameters.push_back(ShmParams("region", 20, 16));
  absl::Status status = BindSharedMemory(&small, over).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("limit of 32 bytes per request"));
}

// A request holds every region it names, inputs' too, until it ends: unregistered
// meanwhile, the region stays listed (Triton's answer) and goes when the request does.
TEST_F(BindingTest, RegionStaysRegisteredUntilItsLastRequestEnds) {
  InferRequest request = Fp32Request({1, 4}, ShmParams("region", 16));
  absl::StatusOr<SharedMemoryOutputs> bound = BindSharedMemory(&registry_, request);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_FALSE(bound->empty());
  ASSERT_TRUE(registry_.Unregister("region").ok());
  EXPECT_EQ(registry_.Status("")->size(), 1u);
  InferRequest second = Fp32Request({1, 4}, ShmParams("region", 16));
  absl::StatusOr<SharedMemoryOutputs> also = BindSharedMemory(&registry_, second);
  ASSERT_TRUE(also.ok()) << also.status();  // still usable, as in Triton
  bound = SharedMemoryOutputs();
  EXPECT_EQ(registry_.Status("")->size(), 1u);  // the second request still holds it
  also = SharedMemoryOutputs();
  EXPECT_EQ(registry_.Status("region").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_.size(), 0u);
}

TEST_F(BindingTest, ByteSizeMustMatchTheShape) {
  InferRequest request = Fp32Request({1, 4}, ShmParams("region", 12));
  absl::Status status = BindSharedMemory(&registry_, request).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("needs 16 bytes"));
}

TEST_F(BindingTest, RangePastTheRegionIsRefused) {
  InferRequest request = Fp32Request({1, 4}, ShmParams("region", 16, 4090));
  absl::Status status = BindSharedMemory(&registry_, request).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  // Triton's texts lead (its clients and qa tests match them).
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("Invalid offset + byte size for shared memory region: 'region'"));
  InferRequest huge = Fp32Request({1, 4}, ShmParams("region", 16, INT64_MAX));
  absl::Status past = BindSharedMemory(&registry_, huge).status();
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(past.message()), HasSubstr("Invalid offset for shared memory region: 'region'"));
}

TEST_F(BindingTest, UnknownRegionAndBadParameters) {
  InferRequest unknown = Fp32Request({1}, ShmParams("nope", 4));
  absl::Status status = BindSharedMemory(&registry_, unknown).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("Unable to find shared memory region: 'nope'"));

  Parameters no_size;
  no_size.emplace(kShmRegionParameter, std::string("region"));
  InferRequest missing = Fp32Request({1}, no_size);
  EXPECT_THAT(std::string(BindSharedMemory(&registry_, missing).status().message()),
              HasSubstr("shared_memory_byte_size"));
  InferRequest negative = Fp32Request({1}, ShmParams("region", 4, -1));
  EXPECT_THAT(std::string(BindSharedMemory(&registry_, negative).status().message()),
              HasSubstr("shared_memory_offset"));
  Parameters not_string = ShmParams("region", 4);
  not_string[kShmRegionParameter] = int64_t{3};
  InferRequest wrong_type = Fp32Request({1}, not_string);
  EXPECT_EQ(BindSharedMemory(&registry_, wrong_type).status().code(),
            absl::StatusCode::kInvalidArgument);
  InferRequest no_registry = Fp32Request({1}, ShmParams("region", 4));
  EXPECT_EQ(BindSharedMemory(nullptr, no_registry).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BindingTest, InputWithDataAndRegionIsRefused) {
  InferRequest request = Fp32Request({1}, ShmParams("region", 4));
  request.inputs[0].data = Buffer::Copy("abcd", 4);
  EXPECT_EQ(BindSharedMemory(&registry_, request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BindingTest, BytesInputIsParsedFromTheRegion) {
  std::string serialized;
  AppendBytesElement(serialized, "hello");
  AppendBytesElement(serialized, "");
  std::memcpy(object_.data(), serialized.data(), serialized.size());
  InferRequest request = Fp32Request({2}, ShmParams("region", static_cast<int64_t>(serialized.size())));
  request.inputs[0].dtype = DataType::kBytes;
  ASSERT_TRUE(BindSharedMemory(&registry_, request).ok());
  EXPECT_EQ(request.inputs[0].data.AsStringView(), serialized);
  // A length prefix running past byte_size is refused.
  InferRequest bad = Fp32Request({2}, ShmParams("region", 7));
  bad.inputs[0].dtype = DataType::kBytes;
  EXPECT_EQ(BindSharedMemory(&registry_, bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(BindingTest, OutputIsWrittenIntoTheRegion) {
  InferRequest request;
  request.outputs.push_back(RequestedOutput{"y", ShmParams("region", 64, 128)});
  request.outputs.push_back(RequestedOutput{"z", {}});
  auto outputs = BindSharedMemory(&registry_, request);
  ASSERT_TRUE(outputs.ok());
  ASSERT_FALSE(outputs->empty());

  InferResponse response;
  const float values[3] = {1.f, 2.f, 3.f};
  response.outputs.push_back(Tensor{"z", DataType::kFp32, {1}, Buffer::Copy(values, 4)});
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {3}, Buffer::Copy(values, 12)});
  ASSERT_TRUE(outputs->WriteInto(response).ok());
  EXPECT_EQ(std::memcmp(object_.data() + 128, values, 12), 0);
  EXPECT_TRUE(response.outputs[1].data.empty());
  EXPECT_EQ(response.outputs[0].data.size(), 4u);
  ASSERT_EQ(response.shared_memory_outputs.size(), 2u);
  EXPECT_FALSE(response.shared_memory_outputs[0].has_value());
  ASSERT_TRUE(response.shared_memory_outputs[1].has_value());
  const Parameters& echo = *response.shared_memory_outputs[1];
  EXPECT_EQ(GetStringParameter(echo, kShmRegionParameter), "region");
  EXPECT_EQ(GetIntParameter(echo, kShmByteSizeParameter), 12);
  EXPECT_EQ(GetIntParameter(echo, kShmOffsetParameter), 128);
}

TEST_F(BindingTest, TooSmallOutputRegionNamesTheNeededSize) {
  InferRequest request;
  request.outputs.push_back(RequestedOutput{"y", ShmParams("region", 8)});
  auto outputs = BindSharedMemory(&registry_, request);
  ASSERT_TRUE(outputs.ok());
  InferResponse response;
  const float values[3] = {1.f, 2.f, 3.f};
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {3}, Buffer::Copy(values, 12)});
  absl::Status status = outputs->WriteInto(response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("at least 12 bytes"));
}

TEST_F(BindingTest, OutputRegionHeldAcrossUnregister) {
  InferRequest request;
  request.outputs.push_back(RequestedOutput{"y", ShmParams("region", 4)});
  auto outputs = BindSharedMemory(&registry_, request);
  ASSERT_TRUE(outputs.ok());
  ASSERT_TRUE(registry_.Unregister("region").ok());
  InferResponse response;
  const int32_t value = 77;
  response.outputs.push_back(Tensor{"y", DataType::kInt32, {1}, Buffer::Copy(&value, 4)});
  ASSERT_TRUE(outputs->WriteInto(response).ok());
  int32_t got;
  std::memcpy(&got, object_.data(), 4);
  EXPECT_EQ(got, 77);
}

TEST_F(BindingTest, RequestWithoutSharedMemoryIsUntouched) {
  InferRequest request;
  request.inputs.push_back(Tensor{"x", DataType::kFp32, {1}, Buffer::Copy("abcd", 4)});
  request.outputs.push_back(RequestedOutput{"y", {}});
  auto outputs = BindSharedMemory(nullptr, request);
  ASSERT_TRUE(outputs.ok());
  EXPECT_TRUE(outputs->empty());
  InferResponse response;
  response.outputs.push_back(Tensor{"y", DataType::kFp32, {1}, Buffer::Copy("abcd", 4)});
  ASSERT_TRUE(outputs->WriteInto(response).ok());
  EXPECT_TRUE(response.shared_memory_outputs.empty());
}

}  // namespace
}  // namespace infera

// DecodeInferRequest with Triton's binary tensor data extension.
#include <cstdint>
#include <string>
#include <vector>

#include "codec/codec_test_util.h"
#include "codec/request_decoder.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Bytes;
using testing_util::BytesValues;
using testing_util::SerializeBytes;
using testing_util::Values;

constexpr size_t kMaxElements = 1 << 20;

std::string ErrorOf(std::string body, std::optional<size_t> header_length) {
  absl::StatusOr<InferRequest> r = DecodeInferRequest(std::move(body), header_length, kMaxElements);
  if (r.ok()) return "<decoded without error>";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

std::string BinaryInput(std::string_view name, std::string_view dtype, std::string_view shape,
                        size_t size) {
  return StrCat(R"({"name":")", name, R"(","datatype":")", dtype, R"(","shape":)", shape,
                R"(,"parameters":{"binary_data_size":)", size, "}}");
}

TEST(DecodeBinaryTest, MixedBinaryAndJsonInputsAreZeroCopy) {
  const std::string a = Bytes(std::vector<float>{1.5f, -2.0f, 0.0f, 1e-30f});
  const std::string c = Bytes(std::vector<int64_t>{INT64_MIN, 7});
  const std::string json = StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[2,2]", a.size()),
                                  R"(,{"name":"b","shape":[1],"datatype":"INT32","data":[9]},)",
                                  BinaryInput("c", "INT64", "[2]", c.size()), "]}");
  std::string body = json + a + c;
  const char* original = body.data();
  absl::StatusOr<InferRequest> r = DecodeInferRequest(std::move(body), json.size(), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->inputs.size(), 3u);
  EXPECT_THAT(Values<float>(r->inputs[0]), ElementsAre(1.5f, -2.0f, 0.0f, 1e-30f));
  EXPECT_THAT(Values<int32_t>(r->inputs[1]), ElementsAre(9));
  EXPECT_THAT(Values<int64_t>(r->inputs[2]), ElementsAre(INT64_MIN, 7));
  // The binary inputs view the body that was passed in (moved, not copied).
  EXPECT_EQ(reinterpret_cast<const char*>(r->inputs[0].data.data()), original + json.size());
  EXPECT_EQ(reinterpret_cast<const char*>(r->inputs[2].data.data()),
            original + json.size() + a.size());
}

TEST(DecodeBinaryTest, BinaryBytesAfterTheJsonAreRestored) {
  // The decoder writes a NUL after the JSON while parsing; the first binary byte must
  // come back unchanged.
  const std::vector<uint8_t> raw = {0xab, '{', 0, '"'};
  const std::string json = StrCat(R"({"inputs":[)", BinaryInput("u", "UINT8", "[4]", 4), "]}");
  absl::StatusOr<InferRequest> r = DecodeInferRequest(json + Bytes(raw), json.size(), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<uint8_t>(r->inputs[0]), ElementsAre(0xab, '{', 0, '"'));
}

TEST(DecodeBinaryTest, BinaryBytesTensor) {
  const std::string bytes = SerializeBytes({"x", std::string("\0\xff", 2), ""});
  const std::string json =
      StrCat(R"({"inputs":[)", BinaryInput("s", "BYTES", "[3]", bytes.size()), "]}");
  absl::StatusOr<InferRequest> r = DecodeInferRequest(json + bytes, json.size(), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(BytesValues(r->inputs[0]), ElementsAre("x", std::string("\0\xff", 2), ""));

  const std::string wrong =
      StrCat(R"({"inputs":[)", BinaryInput("s", "BYTES", "[2]", bytes.size()), "]}");
  EXPECT_THAT(ErrorOf(wrong + bytes, wrong.size()),
              HasSubstr("'s' has 3 BYTES elements but shape [2]"));
  const std::string cut = bytes.substr(0, bytes.size() - 1);
  const std::string trunc =
      StrCat(R"({"inputs":[)", BinaryInput("s", "BYTES", "[3]", cut.size()), "]}");
  EXPECT_THAT(ErrorOf(trunc + cut, trunc.size()), HasSubstr("'s'"));
}

TEST(DecodeBinaryTest, HeaderCoveringTheWholeBodyIsPlainJson) {
  const std::string json = R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[3]}]})";
  absl::StatusOr<InferRequest> r = DecodeInferRequest(json, json.size(), kMaxElements);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values<int32_t>(r->inputs[0]), ElementsAre(3));
}

TEST(DecodeBinaryTest, SizeMismatch) {
  const std::string json = StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[4]", 16), "]}");
  EXPECT_THAT(ErrorOf(json + std::string(20, 'x'), json.size()),
              HasSubstr("binary data size mismatch: inputs declare 16 bytes, body has 20"));
  EXPECT_THAT(ErrorOf(json + std::string(10, 'x'), json.size()),
              HasSubstr("binary data size mismatch: inputs declare 16 bytes, body has 10"));
  EXPECT_THAT(ErrorOf(json, json.size()),
              HasSubstr("binary data size mismatch: inputs declare 16 bytes, body has 0"));
  // Extra bytes after a JSON-only request.
  const std::string plain =
      R"({"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[3]}]})";
  EXPECT_THAT(ErrorOf(plain + "abc", plain.size()),
              HasSubstr("binary data size mismatch: inputs declare 0 bytes, body has 3"));
  // Declared sizes that overflow when added.
  const std::string huge =
      StrCat(R"({"inputs":[)", BinaryInput("a", "UINT8", "[1]", uint64_t{1} << 62), ",",
             BinaryInput("b", "UINT8", "[1]", uint64_t{1} << 62), ",",
             BinaryInput("c", "UINT8", "[1]", uint64_t{1} << 62), ",",
             BinaryInput("d", "UINT8", "[1]", uint64_t{1} << 62), "]}");
  EXPECT_THAT(ErrorOf(huge + "ab", huge.size()), HasSubstr("binary data size mismatch"));
}

TEST(DecodeBinaryTest, SizeMustMatchDatatypeAndShape) {
  const std::string json = StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[4]", 12), "]}");
  EXPECT_THAT(ErrorOf(json + std::string(12, 'x'), json.size()),
              HasSubstr("input 'a' has binary_data_size 12 but FP32 shape [4] needs 16 bytes"));
}

TEST(DecodeBinaryTest, BadHeaderAndParameters) {
  const std::string json = StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[1]", 4), "]}");
  EXPECT_THAT(ErrorOf(json + "abcd", json.size() + 5),
              HasSubstr(StrCat("Inference-Header-Content-Length ", json.size() + 5,
                               " exceeds the body size ", json.size() + 4)));
  // Without the header the whole body is JSON: trailing binary bytes are malformed JSON,
  // and a JSON-only body cannot supply the declared bytes.
  EXPECT_THAT(ErrorOf(json + "abcd", std::nullopt),
              HasSubstr("The document root must not be followed by other values"));
  EXPECT_THAT(ErrorOf(json, std::nullopt),
              HasSubstr("input 'a' has a binary_data_size parameter but the request has no "
                        "Inference-Header-Content-Length header"));
  // A header that cuts the JSON short.
  EXPECT_THAT(ErrorOf(json + "abcd", json.size() - 3), HasSubstr("malformed JSON"));
  EXPECT_THAT(ErrorOf(json + "abcd", 0), HasSubstr("malformed JSON at byte offset 0"));

  auto with_params = [](std::string_view params) {
    return StrCat(R"({"inputs":[{"name":"a","shape":[1],"datatype":"FP32","parameters":)", params,
                  "}]}");
  };
  std::string j = with_params(R"({"binary_data_size":-4})");
  EXPECT_THAT(
      ErrorOf(j + "abcd", j.size()),
      HasSubstr("parameter 'binary_data_size' of input 'a' must be a non-negative integer"));
  j = with_params(R"({"binary_data_size":"4"})");
  EXPECT_THAT(ErrorOf(j + "abcd", j.size()), HasSubstr("'binary_data_size' of input 'a'"));
  j = with_params(R"({"binary_data_size":4.0})");
  EXPECT_THAT(ErrorOf(j + "abcd", j.size()), HasSubstr("'binary_data_size' of input 'a'"));
  j = StrCat(R"({"inputs":[{"name":"a","shape":[1],"datatype":"FP32","data":[1],)",
             R"("parameters":{"binary_data_size":4}}]})");
  EXPECT_THAT(ErrorOf(j + "abcd", j.size()),
              HasSubstr("input 'a' has both 'data' and a binary_data_size parameter"));
}

TEST(DecodeBinaryTest, ShapeLimitsApplyToBinaryInputs) {
  const std::string json =
      StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[4611686018427387904,4]", 16), "]}");
  EXPECT_THAT(ErrorOf(json + std::string(16, 'x'), json.size()),
              HasSubstr("more elements than int64 can count"));
  const std::string big = StrCat(R"({"inputs":[)", BinaryInput("a", "FP32", "[1048577]", 16), "]}");
  EXPECT_THAT(ErrorOf(big + std::string(16, 'x'), big.size()), HasSubstr("more than the limit"));
}

}  // namespace
}  // namespace infera

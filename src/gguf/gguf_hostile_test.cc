// Malformed GGUF files: each is refused with an InvalidArgument that names the problem
// (and where), never a crash or an out-of-bounds read (the ASan build runs these too).
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/test_gguf_builder.h"
#include "gtest/gtest.h"

namespace infera::gguf {
namespace {

using testing::GgufBuilder;

absl::Status ParseStatus(const std::string& bytes) {
  // A heap copy of exactly the file's size, so ASan sees any read past its end.
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  auto file = GgufFile::FromBytes(copy.data(), copy.size(), "bad.gguf");
  return file.status();
}

void ExpectError(const std::string& bytes, const std::string& needle) {
  const absl::Status status = ParseStatus(bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find(needle), std::string_view::npos) << "message: " << status.message();
  EXPECT_EQ(status.message().find("bad.gguf"), 0u) << status.message();
}

std::string Valid() {
  return GgufBuilder()
      .Str("general.architecture", "llama")
      .StrArray("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .F32Array("tokenizer.ggml.scores", {0, 0, -1})
      .Tensor("token_embd.weight", 0, {4, 3}, 48)
      .Tensor("blk.0.attn_q.weight", 8, {32, 2}, 68)
      .Build();
}

std::string Typed(uint32_t type, const std::string& bytes) {
  std::string s;
  GgufBuilder::PutU32(s, type);
  return s + bytes;
}
std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string U64(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

TEST(GgufHostileTest, ValidBaseParses) { EXPECT_TRUE(ParseStatus(Valid()).ok()) << ParseStatus(Valid()); }

TEST(GgufHostileTest, TruncatedAtEveryByte) {
  const std::string valid = Valid();
  for (size_t n = 0; n < valid.size(); ++n) {
    const absl::Status status = ParseStatus(valid.substr(0, n));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "prefix " << n << ": " << status;
  }
}

TEST(GgufHostileTest, BadMagicAndVersions) {
  std::string bad = Valid();
  bad[0] = 'X';
  ExpectError(bad, "bad magic");
  ExpectError(GgufBuilder().Version(1).Build(), "version 1 is not supported");
  ExpectError(GgufBuilder().Version(4).Build(), "unsupported GGUF version 4");
  ExpectError(GgufBuilder().Version(0x03000000).Build(), "big-endian");
  ExpectError("GGUF", "shorter than the 24-byte header");
}

TEST(GgufHostileTest, HugeCounts) {
  ExpectError(GgufBuilder().KvCount(uint64_t{1} << 62).Build(), "metadata count 4611686018427387904");
  ExpectError(GgufBuilder().TensorCount(~uint64_t{0}).Build(), "tensor count 18446744073709551615");
  ExpectError(GgufBuilder().Str("a", "b").KvCount(2).Build(), "metadata count 2");
  // Counts that fit the size bound but not the bytes present.
  ExpectError(GgufBuilder().Str("k", std::string(100, 'x')).KvCount(3).Build(), "metadata key #1");
  ExpectError(GgufBuilder().RawKv("arr", Typed(9, U32(0) + U64(uint64_t{1} << 40))).Build(),
              "1099511627776 elements of uint8 cannot fit");
  ExpectError(GgufBuilder().RawKv("arr", Typed(9, U32(8) + U64(~uint64_t{0} / 8))).Build(), "elements of string");
  ExpectError(GgufBuilder().RawKv("arr", Typed(9, U32(6) + U64(3) + U32(0))).Build(),
              "3 elements of float32 cannot fit in the 4 bytes left");
}

TEST(GgufHostileTest, StringsBeyondTheFile) {
  ExpectError(GgufBuilder().RawKv("s", Typed(8, U64(1000) + "abc")).Build(), "string length 1000 runs past the end");
  ExpectError(GgufBuilder().RawKv("s", Typed(8, U64(~uint64_t{0}))).Build(), "runs past the end");
  std::string long_key = GgufBuilder().Str("x", "y").Build();
  long_key[24] = 0x7F;  // the key's length byte
  ExpectError(long_key, "metadata key #0");
  ExpectError(GgufBuilder().Str("", "y").Build(), "has length 0");
  ExpectError(GgufBuilder().Str(std::string(65536, 'k'), "y").Build(), "has length 65536");
}

TEST(GgufHostileTest, BadValuesAndTypes) {
  ExpectError(GgufBuilder().RawKv("type", Typed(13, "")).Build(), "unknown value type 13");
  ExpectError(GgufBuilder().RawKv("t", Typed(9, U32(77) + U64(0))).Build(), "unknown value type 77");
  ExpectError(GgufBuilder().RawKv("b", Typed(7, "\x02")).Build(), "bool value 2 is not 0 or 1");
  ExpectError(GgufBuilder().RawKv("b", Typed(9, U32(7) + U64(2) + std::string("\x01\x05", 2))).Build(),
              "element 1");
}

TEST(GgufHostileTest, DeepNesting) {
  auto nested = [](int depth) {
    std::string value = U32(0) + U64(0);  // innermost: empty uint8 array
    for (int i = 1; i < depth; ++i) value = U32(9) + U64(1) + value;
    return Typed(9, value);
  };
  EXPECT_TRUE(ParseStatus(GgufBuilder().RawKv("n", nested(kMaxArrayNesting)).Build()).ok());
  ExpectError(GgufBuilder().RawKv("n", nested(kMaxArrayNesting + 1)).Build(), "nest deeper than 8");
  ExpectError(GgufBuilder().RawKv("n", nested(1000)).Build(), "nest deeper than 8");
}

TEST(GgufHostileTest, DuplicateNames) {
  ExpectError(GgufBuilder().Str("a", "1").U32("a", 2).Build(), "metadata key 'a' at byte");
  ExpectError(GgufBuilder().Str("a", "1").U32("a", 2).Build(), "appears twice");
  ExpectError(GgufBuilder().Tensor("w", 0, {1}, 4).Tensor("w", 0, {1}, 4).Build(), "tensor name 'w'");
}

TEST(GgufHostileTest, BadAlignment) {
  ExpectError(GgufBuilder().U32("general.alignment", 0).Build(), "general.alignment 0 is not a power of two");
  ExpectError(GgufBuilder().U32("general.alignment", 48).Build(), "general.alignment 48 is not a power of two");
  ExpectError(GgufBuilder().Str("general.alignment", "32").Build(), "general.alignment is string, expected uint32");
  ExpectError(GgufBuilder().U64("general.alignment", 32).Build(), "expected uint32");
}

TEST(GgufHostileTest, TensorInfos) {
  ExpectError(GgufBuilder().Tensor("w", 0, {1, 1, 1, 1, 1}, 4).Build(), "n_dims 5 is more than 4");
  ExpectError(GgufBuilder().Tensor("w", 99, {4}, 16).Build(), "tensor 'w' at byte");
  ExpectError(GgufBuilder().Tensor("w", 99, {4}, 16).Build(), "unknown ggml type id 99");
  ExpectError(GgufBuilder().Tensor("w", 4, {32}, 20).Build(), "unknown ggml type id 4");
  ExpectError(GgufBuilder().Tensor("w", 2, {33}, 18).Build(), "not a multiple of Q4_0's block size 32");
  ExpectError(GgufBuilder().Tensor("w", 0, {uint64_t{1} << 32, uint64_t{1} << 32}, 4).Build(),
              "makes the element count overflow");
  ExpectError(GgufBuilder().Tensor("w", 0, {~uint64_t{0}}, 4).Build(), "makes the element count overflow");
  // Fits int64 elements, but not bytes: 2^62 F32 values.
  ExpectError(GgufBuilder().Tensor("w", 0, {uint64_t{1} << 62}, 4).Build(), "byte size overflows");
  ExpectError(GgufBuilder().Tensor(std::string(65, 'n'), 0, {1}, 4).Build(), "has length 65");
  ExpectError(GgufBuilder().Tensor("", 0, {1}, 4).Build(), "has length 0");
}

TEST(GgufHostileTest, OffsetsAndSizes) {
  ExpectError(GgufBuilder().Tensor("w", 0, {4}, 16, 1u << 20).Build(), "tensor 'w' data (offset 1048576");
  ExpectError(GgufBuilder().Tensor("w", 0, {4}, 16, ~uint64_t{0} - 31).Build(), "runs past the end");
  ExpectError(GgufBuilder().Tensor("w", 0, {4}, 16, 8).Build(), "offset 8 is not a multiple of the alignment 32");
  // Declares more bytes than the file holds: 1024 floats, 16 bytes written.
  ExpectError(GgufBuilder().Tensor("w", 0, {1024}, 16).Build(), "4096 bytes) runs past the end");
  // A second tensor beyond the end.
  ExpectError(GgufBuilder().Tensor("a", 0, {4}, 16).Tensor("b", 0, {4}, 16, 64).Build(), "tensor 'b'");
}

TEST(GgufHostileTest, EveryByteFlipDoesNotCrash) {
  // Single-byte corruptions of the header, metadata and infos: any outcome but a crash
  // (ASan) is fine; most are errors, some still-valid files.
  const std::string valid = Valid();
  const size_t header_and_infos = valid.size() - 128;  // the data section is the last bytes
  for (size_t i = 0; i < header_and_infos; ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x80}, uint8_t{0x09}}) {
      std::string bytes = valid;
      bytes[i] = static_cast<char>(v);
      const absl::Status status = ParseStatus(bytes);
      if (!status.ok()) {
        EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
      }
    }
  }
}

}  // namespace
}  // namespace infera::gguf

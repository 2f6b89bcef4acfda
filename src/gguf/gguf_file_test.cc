// GgufFile on valid files: header, tensor views (type, dims, bytes, data pointer),
// alignment (default and general.alignment), version 2, tensors with no data, and a
// file on disk memory-mapped.
#include "gguf/gguf_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gguf/test_gguf_builder.h"
#include "gtest/gtest.h"

namespace infera::gguf {
namespace {

using testing::GgufBuilder;

absl::StatusOr<std::unique_ptr<GgufFile>> Parse(const std::string& bytes) {
  return GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.gguf");
}

TEST(GgufFileTest, ReadsTensorsAndTheirBytes) {
  const std::string bytes = GgufBuilder()
                                .Str("general.architecture", "llama")
                                .Tensor("token_embd.weight", 0, {8, 3}, 8 * 3 * 4)
                                .Tensor("blk.0.attn_q.weight", 2, {64, 2}, 2 * 2 * 18)
                                .Tensor("blk.0.ffn_up.weight", 12, {256, 1}, 144)
                                .Tensor("output_norm.weight", 30, {8}, 16)
                                .Build();
  auto file = Parse(bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->version(), 3u);
  EXPECT_EQ((*file)->alignment(), 32u);
  EXPECT_EQ((*file)->data_offset() % 32, 0u);
  ASSERT_EQ((*file)->tensors().size(), 4u);
  const GgufTensor* q = (*file)->FindTensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, GgmlType::kQ4_0);
  EXPECT_EQ(q->dims, (std::vector<int64_t>{64, 2}));
  EXPECT_EQ(q->RowMajorShape(), (std::vector<int64_t>{2, 64}));
  EXPECT_EQ(q->NumElements(), 128);
  EXPECT_EQ(q->num_bytes, 72u);
  EXPECT_EQ(q->file_offset % 32, 0u);
  // The builder fills tensor i's bytes with (i * 31 + b) & 0xFF.
  EXPECT_EQ(q->data[0], 31);
  EXPECT_EQ(q->data[5], 36);
  EXPECT_EQ(q->data, reinterpret_cast<const uint8_t*>(bytes.data()) + q->file_offset);
  EXPECT_EQ((*file)->FindTensor("output_norm.weight")->type, GgmlType::kBF16);
  EXPECT_EQ((*file)->FindTensor("blk.0.ffn_up.weight")->num_bytes, 144u);
  EXPECT_EQ((*file)->metadata().GetString("general.architecture").value(), "llama");
  auto missing = (*file)->GetTensor("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'nope'"), std::string_view::npos);
}

TEST(GgufFileTest, HonoursGeneralAlignmentAndVersion2) {
  const std::string bytes = GgufBuilder()
                                .Version(2)
                                .U32("general.alignment", 64)
                                .Alignment(64)
                                .Tensor("a", 0, {3}, 12)
                                .Tensor("b", 1, {5}, 10)
                                .Build();
  auto file = Parse(bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->version(), 2u);
  EXPECT_EQ((*file)->alignment(), 64u);
  EXPECT_EQ((*file)->data_offset() % 64, 0u);
  EXPECT_EQ((*file)->FindTensor("b")->file_offset, (*file)->data_offset() + 64);
}

TEST(GgufFileTest, MetadataOnlyFileAndEmptyTensors) {
  auto file = Parse(GgufBuilder().Str("general.name", "x").Build());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->tensors().empty());
  auto empty = Parse(GgufBuilder().Tensor("z", 0, {0, 4}, 0).Tensor("one", 0, {1}, 4).Build());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)->FindTensor("z")->num_bytes, 0u);
  EXPECT_EQ((*empty)->FindTensor("z")->NumElements(), 0);
}

// The weights' holder drops the metadata; the tensors and their bytes stay.
TEST(GgufFileTest, ReleaseMetadataKeepsTheTensors) {
  const std::string bytes = GgufBuilder()
                                .Str("general.architecture", "llama")
                                .StrArray("tokenizer.ggml.tokens", {"a", "b", "c"})
                                .Tensor("w", 0, {4, 2}, 32)
                                .Build();
  auto file = Parse(bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  (*file)->ReleaseMetadata();
  EXPECT_EQ((*file)->metadata().size(), 0u);
  EXPECT_FALSE((*file)->metadata().Has("tokenizer.ggml.tokens"));
  EXPECT_EQ((*file)->metadata().GetString("general.architecture").status().code(), absl::StatusCode::kNotFound);
  const GgufTensor* w = (*file)->FindTensor("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->num_bytes, 32u);
  EXPECT_EQ(w->data, reinterpret_cast<const uint8_t*>(bytes.data()) + w->file_offset);
  EXPECT_EQ(w->data[1], 1);
}

// Both residencies read the same bytes and give the same views; the copy starts on a
// 2 MiB boundary (huge pages) and outlives the file's name as the mapping does.
TEST(GgufFileTest, OpensAFileOnDiskMappedOrCopied) {
  std::string bytes = GgufBuilder().Str("general.architecture", "qwen2").Tensor("w", 0, {4, 4}, 64).Build();
  bytes.resize(bytes.size() + (size_t{3} << 20) + 5, '\x5a');  // past one huge page; trailing bytes are allowed
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gguf_file_test_" + std::to_string(getpid()) + ".gguf");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  auto mapped = GgufFile::Open(path);
  auto copied = GgufFile::Open(path, GgufResidency::kHugePageCopy);
  std::filesystem::remove(path);  // the bytes outlive the name
  for (const auto* file : {&mapped, &copied}) {
    ASSERT_TRUE(file->ok()) << file->status();
    const GgufTensor* w = (**file)->FindTensor("w");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->num_bytes, 64u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data) % 32, 0u);  // aligned start + aligned offset
    EXPECT_EQ(w->data[63], 63);
    EXPECT_EQ((**file)->file_size(), bytes.size());
    const uint8_t* start = w->data - w->file_offset;
    EXPECT_EQ(std::memcmp(start, bytes.data(), bytes.size()), 0);
  }
  const GgufTensor* w = (*copied)->FindTensor("w");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data - w->file_offset) % (uintptr_t{2} << 20), 0u);
  EXPECT_NE(w->data, (*mapped)->FindTensor("w")->data);

  for (GgufResidency residency : {GgufResidency::kMapped, GgufResidency::kHugePageCopy}) {
    auto absent = GgufFile::Open(path, residency);
    EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
    auto directory = GgufFile::Open(path.parent_path(), residency);
    EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(directory.status().message().find("not a regular file"), std::string_view::npos);
  }
}

TEST(GgufFileTest, TypeTable) {
  EXPECT_EQ(FindGgmlType(4), nullptr);   // retired Q4_2
  EXPECT_EQ(FindGgmlType(31), nullptr);  // repacked layouts never in files
  EXPECT_EQ(FindGgmlType(40), nullptr);
  EXPECT_EQ(FindGgmlType(1000000), nullptr);
  const GgmlTypeInfo* q6 = FindGgmlType(14);
  ASSERT_NE(q6, nullptr);
  EXPECT_EQ(q6->name, "Q6_K");
  EXPECT_EQ(q6->block_size, 256u);
  EXPECT_EQ(q6->type_size, 210u);
  EXPECT_EQ(GgmlTypeName(GgmlType::kQ8_0), "Q8_0");
  EXPECT_EQ(GgmlTypeInfoOf(GgmlType::kQ8_0).type_size, 34u);
}

}  // namespace
}  // namespace infera::gguf

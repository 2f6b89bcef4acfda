// The tokenizer from GGUF metadata.
//
// Reference checks: a tokenizer.json (fortune's byte-level BPE from the demo repository,
// and the SentencePiece-style and GPT-2-style test tokenizers) is converted to a GGUF
// file by scripts/gguf_tokenizer.py (Python writer), loaded back through GgufFile and
// LoadGgufTokenizer, and must give the same ids as the tokenizer.json tokenizer on a
// corpus (ASCII, Unicode, emoji, whitespace runs, special tokens), with and without
// special tokens, and decode them the same. Then the mapping's own cases and errors on
// metadata written here.
#include "gguf/gguf_tokenizer.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gguf/gguf_file.h"
#include "gguf/test_gguf_builder.h"
#include "gtest/gtest.h"
#include "text/test_tokenizers.h"

namespace infera::gguf {
namespace {

namespace fs = std::filesystem;
using testing::GgufBuilder;

const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> corpus = {
      "",
      "a",
      " ",
      "Hello world",
      "hello hello hello, the theory of the thing",
      "  leading spaces",
      "trailing spaces   ",
      "tabs\tand\nnewlines\n\n\nand\r\nCRLF",
      "multiple      spaces     between words",
      "it's they're we've I'd you'll",
      "numbers 12345 3.14159 2024-12-06 1,000,000",
      "punctuation!!! ??? ... ;;; (a) [b] {c} \"q\" 'q'",
      "héllo wörld ñandú façade",
      "日本語のテキストと中文",
      "Ω≈ç√∫˜µ≤≥÷ ∑∏π",
      "emoji 🎉🚀 family 👩‍👩‍👧 flag 🇫🇷 \xF0\x9F\x98\x80",
      "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n",
      "<|endoftext|>",
      "mixed<|endoftext|>text <|endoftext|> spaced",
      "<s>hello</s> <unk>",
      "literal <0x41> and ▁ marks",
      "hello world wordy words or order",
      "\x01\x02 control \x7F bytes",
      std::string(300, ' ') + "x" + std::string(50, '\n'),
      "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX!",
  };
  return corpus;
}

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("gguf_tokenizer_test_" + std::to_string(getpid()) + "_" + name);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Runs the Python converter on `hf_dir` and loads the GGUF it writes.
std::unique_ptr<GgufFile> ConvertWithPython(const fs::path& hf_dir, const fs::path& out) {
  const std::string command = std::string("/usr/bin/python3 ") + INFERA_SOURCE_DIR + "/scripts/gguf_tokenizer.py '" +
                              hf_dir.string() + "' '" + out.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  auto file = GgufFile::Open(out);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? std::move(*file) : nullptr;
}

void ExpectSameTokenizer(const text::Tokenizer& reference, const text::Tokenizer& converted) {
  ASSERT_EQ(converted.vocab_size(), reference.vocab_size());
  for (int32_t id = 0; id < reference.vocab_size(); ++id) {
    EXPECT_EQ(converted.TokenBytes(id), reference.TokenBytes(id)) << "id " << id;
    EXPECT_EQ(converted.IsSpecial(id), reference.IsSpecial(id)) << "id " << id;
  }
  int compared = 0;
  for (const std::string& text : Corpus()) {
    for (bool special : {false, true}) {
      const std::vector<int32_t> want = reference.Encode(text, special);
      const std::vector<int32_t> got = converted.Encode(text, special);
      EXPECT_EQ(got, want) << "text '" << text << "' add_special_tokens=" << special;
      EXPECT_EQ(converted.Decode(got), reference.Decode(want)) << text;
      EXPECT_EQ(converted.Decode(got, false), reference.Decode(want, false)) << text;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2 * static_cast<int>(Corpus().size()));
}

TEST(GgufTokenizerReferenceTest, FortuneByteLevelBpe) {
  const char* repo = std::getenv("INFERA_DEMO_REPO");
  if (repo == nullptr || !fs::exists(fs::path(repo) / "fortune/1/tokenizer.json")) {
    GTEST_SKIP() << "INFERA_DEMO_REPO with fortune/1/tokenizer.json is not set";
  }
  const fs::path hf_dir = fs::path(repo) / "fortune/1";
  const fs::path dir = TempDir("fortune");
  auto file = ConvertWithPython(hf_dir, dir / "fortune.gguf");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->metadata().GetString("tokenizer.ggml.model").value(), "gpt2");
  auto converted = LoadGgufTokenizer(file->metadata(), file->where());
  ASSERT_TRUE(converted.ok()) << converted.status();
  auto reference = text::Tokenizer::Load(hf_dir);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ExpectSameTokenizer(**reference, **converted);
  EXPECT_EQ((*converted)->bos_token_id(), (*reference)->bos_token_id());
  EXPECT_EQ((*converted)->eos_token_ids(), (*reference)->eos_token_ids());
  EXPECT_EQ((*converted)->chat_template(), (*reference)->chat_template());
  EXPECT_FALSE((*converted)->chat_template().empty());
  fs::remove_all(dir);
}

TEST(GgufTokenizerReferenceTest, SentencePieceStyleBpe) {
  const fs::path dir = TempDir("spm");
  WriteFile(dir / "tokenizer.json", text::testing::SentencePieceTokenizerJson());
  auto file = ConvertWithPython(dir, dir / "spm.gguf");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->metadata().GetString("tokenizer.ggml.model").value(), "llama");
  auto converted = LoadGgufTokenizer(file->metadata(), file->where());
  ASSERT_TRUE(converted.ok()) << converted.status();
  auto reference = text::Tokenizer::FromJson(text::testing::SentencePieceTokenizerJson());
  ASSERT_TRUE(reference.ok()) << reference.status();
  ExpectSameTokenizer(**reference, **converted);
  // ▁hello ▁wor l d
  EXPECT_EQ((*converted)->Encode("hello world", true), (std::vector<int32_t>{1, 271, 274, 262, 266}));
  fs::remove_all(dir);
}

// Converts `json` through the Python writer and compares with the tokenizer.json
// tokenizer; returns the converted file's tokenizer.ggml.pre.
std::string CheckByteLevelJson(const std::string& name, const std::string& json) {
  const fs::path dir = TempDir(name);
  WriteFile(dir / "tokenizer.json", json);
  auto file = ConvertWithPython(dir, dir / (name + ".gguf"));
  if (file == nullptr) return "";
  auto converted = LoadGgufTokenizer(file->metadata(), file->where());
  EXPECT_TRUE(converted.ok()) << converted.status();
  auto reference = text::Tokenizer::FromJson(json);
  EXPECT_TRUE(reference.ok()) << reference.status();
  if (converted.ok() && reference.ok()) ExpectSameTokenizer(**reference, **converted);
  std::string pre(file->metadata().GetString("tokenizer.ggml.pre").value_or(""));
  fs::remove_all(dir);
  return pre;
}

// The Split step of Llama-3 / Qwen2 tokenizer.json files around `regex`.
std::string SplitPreTokenizer(const std::string& regex) {
  std::string split = R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": ")";
  for (char c : regex) {
    if (c == '\\' || c == '"') split += '\\';
    split += c;
  }
  return split + R"("}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})";
}

TEST(GgufTokenizerReferenceTest, Gpt2StyleByteLevelBpe) {
  EXPECT_EQ(CheckByteLevelJson("gpt2", text::testing::ByteLevelTokenizerJson(text::testing::kGpt2PreTokenizer)),
            "gpt-2");
}

TEST(GgufTokenizerReferenceTest, Llama3StyleByteLevelBpe) {
  std::string json = text::testing::ByteLevelTokenizerJson(SplitPreTokenizer(
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"));
  // Llama-3's tokenizer.json emits a piece that is a vocabulary entry whole.
  const size_t model = json.find(R"("type": "BPE",)");
  ASSERT_NE(model, std::string::npos);
  json.insert(model + std::string(R"("type": "BPE",)").size(), R"( "ignore_merges": true,)");
  EXPECT_EQ(CheckByteLevelJson("llama3", json), "llama-bpe");
}

TEST(GgufTokenizerReferenceTest, Qwen2StyleByteLevelBpe) {
  EXPECT_EQ(CheckByteLevelJson("qwen2", text::testing::ByteLevelTokenizerJson(SplitPreTokenizer(
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"))),
            "qwen2");
}

// A SentencePiece-style vocabulary written directly: ▁=3 h=4 i=5 ▁h=6 ▁hi=7, bytes.
GgufBuilder SpmMetadata() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi"};
  std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1, 1};
  std::vector<float> scores = {0, 0, 0, 0, 0, 0, -1, -2};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
    scores.push_back(0);
  }
  GgufBuilder builder;
  builder.Str("tokenizer.ggml.model", "llama")
      .StrArray("tokenizer.ggml.tokens", tokens)
      .I32Array("tokenizer.ggml.token_type", types)
      .F32Array("tokenizer.ggml.scores", scores)
      .U32("tokenizer.ggml.bos_token_id", 1)
      .U32("tokenizer.ggml.eos_token_id", 2)
      .Str("tokenizer.chat_template", "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}");
  return builder;
}

absl::StatusOr<std::unique_ptr<text::Tokenizer>> Load(const std::string& bytes) {
  auto file = GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.gguf");
  if (!file.ok()) return file.status();
  return LoadGgufTokenizer((*file)->metadata(), "t.gguf");
}

TEST(GgufTokenizerTest, SentencePieceFromScoresWithByteFallbackAndDefaults) {
  const std::string bytes = SpmMetadata().Build();
  auto tok = Load(bytes);
  ASSERT_TRUE(tok.ok()) << tok.status();
  // add_bos_token defaults to true for "llama"; "x" is not in the vocabulary: byte 0x78.
  EXPECT_EQ((*tok)->Encode("hi hix", true), (std::vector<int32_t>{1, 7, 7, 8 + 0x78}));
  EXPECT_EQ((*tok)->Decode((*tok)->Encode("hi hix", true)), "hi hix");
  EXPECT_EQ((*tok)->bos_token_id(), 1);
  EXPECT_EQ((*tok)->eos_token_ids(), (std::vector<int32_t>{2}));
  EXPECT_EQ((*tok)->chat_template(), "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}");
  EXPECT_EQ((*tok)->bos_token(), "<s>");
  EXPECT_TRUE((*tok)->IsSpecial(1));
}

TEST(GgufTokenizerTest, AddBosFalseAndNoSpacePrefix) {
  const std::string bytes = SpmMetadata()
                                .Bool("tokenizer.ggml.add_bos_token", false)
                                .Bool("tokenizer.ggml.add_space_prefix", false)
                                .Build();
  auto tok = Load(bytes);
  ASSERT_TRUE(tok.ok()) << tok.status();
  EXPECT_EQ((*tok)->Encode("hi", true), (std::vector<int32_t>{4, 5}));  // no "▁" prepended
}

TEST(GgufTokenizerTest, Gpt2PreTokenizerFamilies) {
  for (const std::string pre : {"llama-bpe", "qwen2", "gpt2", "default"}) {
    std::vector<std::string> tokens;
    for (int i = 0; i < 4; ++i) tokens.push_back(std::string(1, static_cast<char>('a' + i)));
    tokens.push_back("ab");
    const std::string bytes = GgufBuilder()
                                  .Str("tokenizer.ggml.model", "gpt2")
                                  .Str("tokenizer.ggml.pre", pre)
                                  .StrArray("tokenizer.ggml.tokens", tokens)
                                  .StrArray("tokenizer.ggml.merges", {"a b"})
                                  .Build();
    auto docs_file = GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t");
    ASSERT_TRUE(docs_file.ok());
    auto docs = ConvertGgufTokenizer((*docs_file)->metadata(), "t");
    ASSERT_TRUE(docs.ok()) << pre << ": " << docs.status();
    EXPECT_NE(docs->tokenizer_json.find(pre == "llama-bpe" ? "\\\\p{N}{1,3}" : pre == "qwen2" ? "Split" : "ByteLevel"),
              std::string::npos)
        << pre;
    auto tok = Load(bytes);
    ASSERT_TRUE(tok.ok()) << pre << ": " << tok.status();
    EXPECT_EQ((*tok)->Encode("abcd", false), (std::vector<int32_t>{4, 2, 3})) << pre;
  }
}

void ExpectLoadError(const std::string& bytes, const std::string& needle) {
  auto tok = Load(bytes);
  ASSERT_FALSE(tok.ok());
  EXPECT_EQ(tok.status().code(), absl::StatusCode::kInvalidArgument) << tok.status();
  EXPECT_NE(tok.status().message().find(needle), std::string_view::npos) << tok.status().message();
}

TEST(GgufTokenizerTest, ErrorsNameTheKey) {
  ExpectLoadError(GgufBuilder().Str("general.architecture", "x").Build(), "'tokenizer.ggml.model' is missing");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "bert").Build(),
                  "tokenizer.ggml.model 'bert' is not supported");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "gpt2").Str("tokenizer.ggml.pre", "falcon")
                      .StrArray("tokenizer.ggml.tokens", {"a"}).Build(),
                  "tokenizer.ggml.pre 'falcon' is not supported");
  ExpectLoadError(SpmMetadata().U32("tokenizer.ggml.padding_token_id", 5000).Build(),
                  "tokenizer.ggml.padding_token_id = 5000 is past the vocabulary (264 tokens)");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "llama").StrArray("tokenizer.ggml.tokens", {"a", "b"})
                      .I32Array("tokenizer.ggml.token_type", {1}).Build(),
                  "token_type has 1 entries for 2 tokens");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "llama").StrArray("tokenizer.ggml.tokens", {"a"})
                      .I32Array("tokenizer.ggml.token_type", {9}).Build(),
                  "token_type[0] = 9");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "llama").StrArray("tokenizer.ggml.tokens", {"a", "\xFF"})
                      .Build(),
                  "tokenizer.ggml.tokens[1] is not valid UTF-8");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "llama").U32("tokenizer.ggml.tokens", 3).Build(),
                  "'tokenizer.ggml.tokens' is uint32, expected an array");
  ExpectLoadError(GgufBuilder().Str("tokenizer.ggml.model", "gpt2").StrArray("tokenizer.ggml.tokens", {"a", "b"})
                      .StrArray("tokenizer.ggml.merges", {"a c"}).Build(),
                  "merge 'a c' uses tokens missing from the vocab");
  ExpectLoadError(SpmMetadata().Str("tokenizer.ggml.add_bos_token", "yes").Build(),
                  "'tokenizer.ggml.add_bos_token' is string, expected bool");
}

}  // namespace
}  // namespace infera::gguf

namespace infera::gguf {
namespace {

// The fuzz target's seeds (fuzz/make_corpus.py, written with scripts/gguf_writer.py)
// are what they say: the valid ones load, tensors and tokenizers included; the
// near-misses are refused.
TEST(GgufFuzzSeedsTest, ValidSeedsLoadAndNearMissesFail) {
  const fs::path corpus = fs::path(INFERA_SOURCE_DIR) / "fuzz/corpus/fuzz_gguf";
  for (const std::string name : {"seed-tensors", "seed-align64", "seed-tokenizer-llama", "seed-tokenizer-gpt2"}) {
    auto file = GgufFile::Open(corpus / name);
    ASSERT_TRUE(file.ok()) << name << ": " << file.status();
    if (name.find("tokenizer") != std::string::npos) {
      auto tok = LoadGgufTokenizer((*file)->metadata(), name);
      ASSERT_TRUE(tok.ok()) << name << ": " << tok.status();
      EXPECT_FALSE((*tok)->Encode("he the", false).empty());
    }
  }
  auto tensors = GgufFile::Open(corpus / "seed-tensors");
  ASSERT_TRUE(tensors.ok());
  const GgufTensor* q4k = (*tensors)->FindTensor("q4k");
  ASSERT_NE(q4k, nullptr);
  EXPECT_EQ(q4k->type, GgmlType::kQ4_K);
  EXPECT_EQ(q4k->dims, (std::vector<int64_t>{256, 1}));  // written row-major (1, 256), stored reversed
  EXPECT_EQ((*tensors)->FindTensor("f32")->RowMajorShape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*tensors)->metadata().GetUint("llama.block_count").value(), 2u);
  auto align64 = GgufFile::Open(corpus / "seed-align64");
  ASSERT_TRUE(align64.ok());
  EXPECT_EQ((*align64)->alignment(), 64u);
  for (GgufResidency residency : {GgufResidency::kMapped, GgufResidency::kHugePageCopy}) {
    EXPECT_EQ(GgufFile::Open(corpus / "seed-truncated", residency).status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_NE(GgufFile::Open(corpus / "seed-version1").status().message().find("version 1"), std::string::npos);
}

}  // namespace
}  // namespace infera::gguf

namespace infera::gguf {
namespace {

// scripts/gguf_writer.py's own encoders, read back by the C++ reader: F32 as is, F16
// (IEEE half, round to nearest), BF16 (round to nearest even: 1 + 2^-8 is a tie that
// stays 1.0), row-major shapes stored reversed, nested arrays, explicit types.
TEST(GgufWriterTest, PythonWriterRoundTrips) {
  const fs::path dir = TempDir("writer");
  WriteFile(dir / "write.py", R"(
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from gguf_writer import GGUFWriter, GGMLType, ValueType, typed
w = GGUFWriter(alignment=16)
a = np.array([[1.0, -2.5, 3.140625], [65504.0, 1e-8, 1.00390625]], dtype=np.float32)
w.add_array_tensor("f32", a, GGMLType.F32)
w.add_array_tensor("f16", a, GGMLType.F16)
w.add_array_tensor("bf16", a, GGMLType.BF16)
w.add("nested", typed(ValueType.ARRAY, [[1, 2], [3]], ValueType.ARRAY))
w.add("big", 2**40)
w.add("i8", typed(ValueType.INT8, -5))
w.add("name", "h\u00e9")
w.write(sys.argv[2])
)");
  const std::string command = "/usr/bin/python3 '" + (dir / "write.py").string() + "' " + INFERA_SOURCE_DIR +
                              "/scripts '" + (dir / "w.gguf").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  auto file = GgufFile::Open(dir / "w.gguf");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->alignment(), 16u);
  auto u16s = [](const GgufTensor* t) {
    std::vector<uint16_t> v(t->num_bytes / 2);
    std::memcpy(v.data(), t->data, t->num_bytes);
    return v;
  };
  const GgufTensor* f32 = (*file)->FindTensor("f32");
  ASSERT_NE(f32, nullptr);
  EXPECT_EQ(f32->dims, (std::vector<int64_t>{3, 2}));
  float first[2];
  std::memcpy(first, f32->data, 8);
  EXPECT_EQ(first[0], 1.0f);
  EXPECT_EQ(first[1], -2.5f);
  EXPECT_EQ(u16s((*file)->FindTensor("f16")), (std::vector<uint16_t>{0x3C00, 0xC100, 0x4248, 0x7BFF, 0x0000, 0x3C04}));
  EXPECT_EQ(u16s((*file)->FindTensor("bf16")), (std::vector<uint16_t>{0x3F80, 0xC020, 0x4049, 0x4780, 0x322C, 0x3F80}));
  const GgufMetadata& md = (*file)->metadata();
  auto nested = md.GetArray("nested");
  ASSERT_TRUE(nested.ok()) << nested.status();
  ASSERT_EQ((*nested)->items().size(), 2u);
  EXPECT_EQ((*nested)->items()[0].element_type(), GgufValueType::kUint32);
  EXPECT_EQ((*nested)->items()[0].ScalarAt(1).AsUint(), 2u);
  EXPECT_EQ((*nested)->items()[1].ScalarAt(0).AsUint(), 3u);
  EXPECT_EQ(md.Find("big")->type(), GgufValueType::kInt64);
  EXPECT_EQ(md.GetInt("big").value(), int64_t{1} << 40);
  EXPECT_EQ(md.GetInt("i8").value(), -5);
  EXPECT_EQ(md.GetString("name").value(), "hé");
  EXPECT_EQ(md.GetUint("general.alignment").value(), 16u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infera::gguf

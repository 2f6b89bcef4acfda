// The tokenizer of a GGUF file: its `tokenizer.ggml.*` metadata converted into the
// Hugging Face documents the project's tokenizer already loads (tokenizer.json,
// tokenizer_config.json, generation_config.json), then text::Tokenizer::FromJson.
//
// Why documents rather than filling text::Tokenizer's structures directly: the loader
// is the one path every model's tokenizer takes, with its checks, budgets and
// decoder; GGUF's facts map one to one onto tokenizer.json fields, so a converted GGUF
// tokenizer behaves exactly like the tokenizer.json it came from (the reference tests
// check this token for token), and no second way of building a Tokenizer has to be
// kept in step with the first. The cost, a JSON text the size of the vocabulary
// written and parsed once at load, is small next to reading the weights.
//
// Mapping (docs/gguf.md, "Tokenizer"):
//   tokenizer.ggml.model "gpt2"  byte-level BPE: vocab from `tokens`, `merges`
//       ("a b"), pre-tokenizer from `tokenizer.ggml.pre` (gpt2 / default: GPT-2
//       ByteLevel regex; llama3 / llama-bpe / llama-v3 / smaug-bpe: the cl100k Split
//       + ByteLevel, with ignore_merges; qwen2 / deepseek-r1-qwen: the Qwen2 Split +
//       ByteLevel); ByteLevel decoder.
//   tokenizer.ggml.model "llama" SentencePiece-style BPE: merges rebuilt from `scores`
//       (spm_merges.h), byte fallback when <0xXX> byte tokens exist, unknown token,
//       normalizer Prepend("▁", when add_space_prefix, default true) + Replace(" ",
//       "▁"), decoder ▁ -> " ", byte fallback, fuse, strip the leading space.
//   token_type CONTROL / UNKNOWN -> special added tokens, USER_DEFINED -> non-special
//       added tokens (matched in raw text first, as Hugging Face does).
//   bos / eos / unknown / padding token ids; eot and eom ids become further end
//       tokens; add_bos_token (default true for "llama", false for "gpt2"),
//       add_eos_token; tokenizer.chat_template -> Tokenizer::chat_template(), and
//       tokenizer.chat_template.<name> -> tokenizer_config's named-template list
//       (tool_use -> Tokenizer::chat_template_tool_use()).
// Anything else is an InvalidArgument naming the key and value (e.g. model "bert",
// an unknown `pre`, an id past the vocabulary, token_type of the wrong length).
//
// Thread-safe (pure functions of the metadata).
#ifndef INFERA_GGUF_GGUF_TOKENIZER_H_
#define INFERA_GGUF_GGUF_TOKENIZER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gguf/gguf_metadata.h"
#include "text/tokenizer.h"

namespace infera::gguf {

// GGUF token types (tokenizer.ggml.token_type).
enum class GgufTokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// The exact Split regex texts text::PreTokenizer recognises (pre_tokenizer.cc): `pre`
// llama-bpe (cl100k) and qwen2. Shared with the converter, which maps them back.
inline constexpr std::string_view kCl100kRegex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct TokenizerDocuments {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::string generation_config_json;
};

// `where` names the file in errors.
absl::StatusOr<TokenizerDocuments> ConvertGgufTokenizer(const GgufMetadata& metadata, std::string_view where);
absl::StatusOr<std::unique_ptr<text::Tokenizer>> LoadGgufTokenizer(const GgufMetadata& metadata,
                                                                    std::string_view where);

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGUF_TOKENIZER_H_

// The GGUF `tokenizer.ggml.*` metadata and `tokenizer.chat_template` of a Hugging Face
// tokenizer (tokenizer.json, tokenizer_config.json, generation_config.json): the inverse
// of gguf/gguf_tokenizer.h's ConvertGgufTokenizer, the C++ side of
// scripts/gguf_tokenizer.py (same rules, so both write the same keys).
//
// Byte-level BPE (ByteLevel pre-tokenizer) -> model "gpt2": tokens, merges, token_type,
// `pre` (gpt-2, or llama-bpe / qwen2 from the Split regex). SentencePiece-style BPE
// (byte_fallback, Metaspace, or a Prepend / Replace normalizer) -> model "llama": tokens,
// token_type, scores (-merge rank of the merge that makes the token, far below for the
// rest, so the reader's score-ordered merges are the tokenizer.json merges) and
// add_space_prefix. Added tokens: special -> CONTROL, others -> USER_DEFINED; the unknown
// token -> UNKNOWN; <0xXX> (SentencePiece) -> BYTE; ids without a token -> UNUSED
// "[PADn]". bos / eos / unknown / padding ids, a second end id as eot, add_bos_token,
// add_eos_token, and tokenizer_config's chat_template (a string, or the list form's
// "default" with the others as tokenizer.chat_template.<name>; else a chat_template.jinja
// file beside it).
// Other tokenizer models (Unigram, WordPiece) and unknown Split regexes are an
// InvalidArgument naming them.
//
// Thread-safe (a pure function of the files).
#ifndef INFERA_LLM_CONVERT_HF_TOKENIZER_KEYS_H_
#define INFERA_LLM_CONVERT_HF_TOKENIZER_KEYS_H_

#include <filesystem>
#include <string_view>

#include "absl/status/status.h"
#include "llm/convert/gguf_writer.h"

namespace infera::llm::convert {

// Reads tokenizer.json (required), tokenizer_config.json and generation_config.json
// (optional) from `hf_dir`.
absl::Status AddTokenizerKeys(const std::filesystem::path& hf_dir, GgufWriter& w);
// The same from the files' texts ("" for an absent optional file); `where` names
// tokenizer.json in errors. The fuzz target's entry point.
absl::Status AddTokenizerKeysFromJson(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                      std::string_view generation_config_json, std::string_view where,
                                      GgufWriter& w);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_HF_TOKENIZER_KEYS_H_

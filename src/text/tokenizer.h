// Tokenizer: Hugging Face `tokenizer.json` (BPE or WordPiece) text ↔ token ids, with the
// special-token facts the LLM engine needs from `tokenizer_config.json` and
// `generation_config.json`. Shared by the LLM engine (src/llm) and the `tokenize`
// processing backend (src/backend/processing).
//
// Three families are covered:
//   - byte-level BPE (GPT-2, Llama-3, Qwen2): ByteLevel / Split pre-tokenizers, pieces in
//     the GPT-2 byte alphabet, ByteLevel decoder;
//   - SentencePiece-style BPE (Llama-2, TinyLlama, Mistral): "▁" for spaces (normalizer
//     Prepend+Replace, or a Metaspace pre-tokenizer), byte fallback (<0xXX> tokens) for
//     characters outside the vocabulary;
//   - WordPiece (BERT and its descendants): BertNormalizer, BertPreTokenizer, WordPiece
//     model (wordpiece_model.h), BertProcessing / TemplateProcessing "[CLS] $A [SEP]",
//     WordPiece decoder.
// Encode: added tokens (special or not) are matched in the raw text first (longest
// match; lstrip/rstrip absorb neighbouring whitespace); every segment between them is
// normalised, pre-tokenised and BPE-encoded; add_special_tokens applies the
// post_processor template (e.g. "<s> $A", "[CLS] $A [SEP]") or, without one,
// add_bos_token/add_eos_token. EncodeTruncated() also truncates and returns type ids.
//
// Budgets (hostile input: a client's prompt may be tens of MB): EncodeWithin() and
// EncodeTruncated() stop once the ids pass their budget — segment by segment (text
// between added tokens), piece by piece (pre-tokenized words) — so their cost follows
// the budget, not the text's length. Where the tokenizer bounds the bytes one id can
// stand for (max_bytes_per_token()), EncodeWithin() refuses a text or a segment longer
// than budget × that bound without normalising it, and callers can check a prompt's
// length before they queue it (docs/llm.md "Prompt length"). Where the pre-tokenizer
// has cut points that do not depend on the text around them (PreTokenizer::CutPoints:
// whitespace for BERT-style, a space between letters for the GPT-2 / Llama-3 / Qwen2
// regexes) and the normalizer maps each character alone, a long segment is normalised
// and split a window (64 KiB) at a time, cut there, so a budget also bounds that pass;
// the ids are exactly the same.
// Decode: each token's bytes (see TokenBytes) concatenated; special tokens skipped on
// request; invalid UTF-8 replaced by U+FFFD.
//
// Thread-safe after construction (const; set_window_bytes is for before it is shared).
//
// Usage:
//   ASSIGN_OR_RETURN(auto tok, Tokenizer::Load(version_dir));
//   std::vector<int32_t> ids = tok->Encode("Hello world", /*add_special_tokens=*/true);
//   std::string text = tok->Decode(ids);
#ifndef INFERA_TEXT_TOKENIZER_H_
#define INFERA_TEXT_TOKENIZER_H_

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/bpe_model.h"
#include "text/normalizer.h"
#include "text/packed_strings.h"
#include "text/pre_tokenizer.h"
#include "text/wordpiece_model.h"

namespace infera::text {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
};

// One encoded sequence: ids and their token type ids (segment ids), same length.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;
};

class Tokenizer {
 public:
  // Reads tokenizer.json (required), tokenizer_config.json and generation_config.json
  // (optional) from `dir`. Errors name the file and what is unsupported.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::filesystem::path& dir);
  // The same from file contents; empty strings for absent optional files.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromJson(std::string_view tokenizer_json,
                                                             std::string_view tokenizer_config_json = "",
                                                             std::string_view generation_config_json = "");

  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const;
  // Encode() when that gives at most `max_ids` ids (special tokens included), else
  // nullopt, found without encoding much past the budget (see the file comment). The ids
  // it returns are exactly Encode()'s.
  std::optional<std::vector<int32_t>> EncodeWithin(std::string_view text, bool add_special_tokens,
                                                   size_t max_ids) const;
  // The most bytes of text one id can stand for, when that is bounded: a text of n bytes
  // then encodes to at least ceil(n / max_bytes_per_token()) ids besides the special
  // tokens, so a length check before tokenising refuses nothing that would fit. It is
  // the longest vocabulary entry or added token, times what the normalizer can shrink
  // text by (normalizer.h). nullopt where a text can vanish or one id can stand for any
  // number of bytes: WordPiece (a word past max_input_chars_per_word is one [UNK]),
  // pre-tokenizers that drop whitespace, normalizers that drop characters, unknown
  // characters without a byte fallback for each byte (dropped, or fused by fuse_unk),
  // added tokens that absorb whitespace (lstrip / rstrip).
  std::optional<size_t> max_bytes_per_token() const { return max_bytes_per_token_; }
  // Encodes `text` into at most `max_length` ids, special tokens included: the text's own
  // ids are cut at the end (Hugging Face's truncation, direction right) to leave room
  // for the special tokens, which are always kept. Type ids come from the
  // post-processor's template (0 without one).
  // REQUIRES: max_length >= num_special_tokens(add_special_tokens).
  Encoding EncodeTruncated(std::string_view text, bool add_special_tokens, size_t max_length) const;
  // How many ids add_special_tokens adds to a single sequence ([CLS] + [SEP]: 2).
  size_t num_special_tokens(bool add_special_tokens) const;
  // tokenizer.json "padding": {"pad_id"} when present.
  std::optional<int32_t> pad_token_id() const { return pad_id_; }
  bool is_wordpiece() const { return wordpiece_.has_value(); }
  std::string Decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const;

  // The bytes token `id` contributes in the middle of a text (possibly a partial UTF-8
  // character; "" for an unknown id). The incremental detokenizer concatenates these.
  std::string_view TokenBytes(int32_t id) const;
  bool IsSpecial(int32_t id) const;
  std::optional<int32_t> TokenToId(std::string_view token) const;

  // One past the highest id (vocabulary plus added tokens).
  int32_t vocab_size() const { return static_cast<int32_t>(token_bytes_.size()); }
  std::optional<int32_t> bos_token_id() const { return bos_id_; }
  const std::vector<int32_t>& eos_token_ids() const { return eos_ids_; }
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }
  // tokenizer_config.json "chat_template" ("" when absent); in the list-of-named-templates
  // form, the one named "default", and chat_template_tool_use() the one named "tool_use".
  const std::string& chat_template() const { return chat_template_; }
  const std::string& chat_template_tool_use() const { return chat_template_tool_use_; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  // The window of a budgeted encoding (see the file comment; 64 KiB). Tests and the fuzz
  // target set a few bytes to exercise the cuts; no effect where the tokenizer has none.
  void set_window_bytes(size_t bytes) {
    if (window_bytes_ > 0) window_bytes_ = std::max<size_t>(bytes, 1);
  }

 private:
  Tokenizer() = default;
  absl::Status ParseTokenizerJson(std::string_view text);
  absl::Status ParseDecoder(const void* json);
  absl::Status ParseTokenizerConfig(std::string_view text);
  absl::Status ParseGenerationConfig(std::string_view text);
  void BuildTokenBytes();
  void ComputeMaxBytesPerToken();
  // Both append ids to `ids` and return false when they stopped because ids.size()
  // reached `stop_at`, or, with `length_bound`, because the text left is long enough
  // (max_bytes_per_token_) to reach it; true when they encoded all of `text`.
  bool EncodeSegment(std::string_view text, bool first, std::vector<int32_t>& ids, size_t stop_at,
                     bool length_bound) const;
  bool EncodeWindow(std::string_view text, bool first, std::vector<int32_t>& ids, size_t stop_at) const;
  bool EncodeContent(std::string_view text, std::vector<int32_t>& ids, size_t stop_at, bool length_bound) const;
  // With length_bound: true when `bytes` more bytes of segment text give at least
  // `stop_at - ids` more ids.
  bool ReachesBudget(size_t bytes, size_t ids, size_t stop_at) const;
  void SpecialTokens(std::vector<int32_t>& prefix, std::vector<int32_t>& suffix) const;
  int32_t ModelVocabSize() const;
  std::string_view ModelIdToToken(int32_t id) const;

  BpeModel bpe_;                            // unless wordpiece_
  std::optional<WordPieceModel> wordpiece_;  // model type WordPiece
  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::vector<AddedToken> added_;  // sorted longest content first
  bool added_first_byte_[256] = {};  // some added token starts with this byte
  // Segments can be encoded window by window (see EncodeSegment); 0: not.
  size_t window_bytes_ = 0;
  std::optional<size_t> max_bytes_per_token_;
  std::vector<int32_t> prefix_ids_, suffix_ids_;  // post_processor template
  std::vector<int32_t> prefix_type_ids_, suffix_type_ids_;
  int32_t sequence_type_id_ = 0;
  std::optional<int32_t> pad_id_;
  bool has_template_ = false;
  bool add_bos_ = false, add_eos_ = false;
  // Decoder.
  bool decode_byte_level_ = false;
  bool decode_byte_fallback_ = false;
  bool decode_strip_leading_space_ = false;
  bool decode_wordpiece_ = false;
  bool decode_wordpiece_cleanup_ = false;
  std::string decode_wordpiece_prefix_;
  std::vector<std::pair<std::string, std::string>> decode_replacements_;
  PackedStrings token_bytes_;  // per id: the bytes it decodes to
  std::vector<bool> special_;
  // Special-token facts.
  std::optional<int32_t> bos_id_;
  std::vector<int32_t> eos_ids_;
  std::string bos_token_, eos_token_, chat_template_, chat_template_tool_use_;
};

}  // namespace infera::text

#endif  // INFERA_TEXT_TOKENIZER_H_

// PreTokenizer: splits (normalised) text into the pieces BPE runs on, as a Hugging Face
// tokenizer.json "pre_tokenizer" says.
//
// Supported steps (and Sequence of them):
//   ByteLevel {add_prefix_space, use_regex}  GPT-2 split pattern, then every byte mapped
//                                             to the GPT-2 byte alphabet
//   Split {pattern: Regex, behavior: Isolated} with the GPT-2, Llama-3 (cl100k) or Qwen2
//                                             pattern — recognised by its text and run by
//                                             hand-written matchers (no regex engine in
//                                             Debian's C++ stack handles \p{L} with lookahead)
//   Metaspace {replacement, prepend_scheme, split}   SentencePiece-style "▁" words
//   Digits {individual_digits}
//   BertPreTokenizer                          whitespace removed, punctuation isolated
//                                             (ASCII punctuation or Unicode P*)
//   WhitespaceSplit                           whitespace removed
// Anything else is a load error naming the type or pattern.
//
// Thread-safe after construction (const).
#ifndef INFERA_TEXT_PRE_TOKENIZER_H_
#define INFERA_TEXT_PRE_TOKENIZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace infera::text {

// Regex families the hand-written matchers implement.
enum class SplitPattern { kGpt2, kCl100k, kQwen2 };

// Splits `text` into the matches of `pattern` (these patterns match every character, so
// the matches partition the text). Exposed for tests.
std::vector<std::string> SplitByPattern(std::string_view text, SplitPattern pattern);

class PreTokenizer {
 public:
  // `json` is the "pre_tokenizer" value; null or absent means no pre-tokenization.
  static absl::StatusOr<PreTokenizer> FromJson(const rapidjson::Value* json);

  // Splits one segment of input (text between added tokens). `first_segment`: it starts
  // the input (Metaspace prepend_scheme "first").
  std::vector<std::string> Split(std::string_view text, bool first_segment) const;

  // True when pieces come out in the GPT-2 byte alphabet.
  bool byte_level() const { return byte_level_; }
  // True when a step removes text (BertPreTokenizer, WhitespaceSplit: whitespace).
  // Otherwise the pieces hold every byte of the text (mapped, and with "▁" added).
  bool drops_text() const { return drops_text_; }
  // Where a text can be cut so that its pieces are the pieces of the two parts (the
  // second split as a later part: Split(text[p:], first_segment=false)):
  //   kAtWhitespace        before any ASCII whitespace byte: the first splitting step
  //                        drops whitespace (BertPreTokenizer, WhitespaceSplit), and the
  //                        later steps work on each piece alone (Split, Digits, Bert,
  //                        WhitespaceSplit)
  //   kBeforeSpacedLetter  before a ' ' between two ASCII letters: the first splitting
  //                        step is a regex (Split, or ByteLevel with use_regex), every
  //                        pattern here ends a letter run at a space and starts " word"
  //                        there, and the later steps are Split, ByteLevel, Digits
  //   kNowhere             otherwise (Metaspace; no splitting step: one piece)
  enum class CutPoints { kNowhere, kAtWhitespace, kBeforeSpacedLetter };
  CutPoints cut_points() const { return cut_points_; }
  // Where the next cut point at or after `from` is (text.size() when none).
  size_t NextCut(std::string_view text, size_t from) const;

  struct Step;  // defined in the .cc

 private:
  std::vector<std::shared_ptr<const Step>> steps_;
  bool byte_level_ = false;
  bool drops_text_ = false;
  CutPoints cut_points_ = CutPoints::kNowhere;
};

}  // namespace infera::text

#endif  // INFERA_TEXT_PRE_TOKENIZER_H_

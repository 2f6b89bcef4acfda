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

  struct Step;  // defined in the .cc

 private:
  std::vector<std::shared_ptr<const Step>> steps_;
  bool byte_level_ = false;
};

}  // namespace infera::text

#endif  // INFERA_TEXT_PRE_TOKENIZER_H_

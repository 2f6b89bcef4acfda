// Normalizer: the tokenizer.json "normalizer" applied to each segment of input text
// (text between added tokens) before pre-tokenization.
//
// Supported: Sequence, Prepend {prepend}, Replace {pattern: {String}, content},
// Lowercase (full Unicode, per code point), NFD, StripAccents (drops Mn marks), NFC (see
// IMPORTANT), and BertNormalizer {clean_text, handle_chinese_chars, strip_accents,
// lowercase} as Hugging Face's: clean_text drops U+0000, U+FFFD and category C* except
// \t \n \r and turns whitespace into ' '; handle_chinese_chars puts spaces around CJK
// ideographs; strip_accents (null: follows lowercase) is NFD then dropping Mn marks;
// lowercase last. Anything else is a load error naming the type.
//
// NFD here decomposes each code point on its own and does not reorder runs of
// combining marks by combining class; with StripAccents after it (the BERT case) the
// marks are dropped anyway, so the result matches.
//
// IMPORTANT: NFC is applied as the identity: composing needs the Unicode composition
// tables, which are not in this build. Text already in NFC (what browsers, editors and
// every OpenAI client send) tokenises exactly; decomposed input (e + U+0301) tokenises
// differently from Hugging Face's tokenizers.
//
// Thread-safe after construction (const).
#ifndef INFERA_TEXT_NORMALIZER_H_
#define INFERA_TEXT_NORMALIZER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace infera::text {

// The most UTF-8 bytes a code point has per byte of its lowercase mapping
// (AppendLowercase), and per byte of its canonical decomposition (AppendCanonicalDecomposition).
inline constexpr double kLowercaseMaxShrink = 3.0;
inline constexpr double kNfdMaxShrink = 3.0;

class Normalizer {
 public:
  static absl::StatusOr<Normalizer> FromJson(const rapidjson::Value* json);
  std::string Normalize(std::string_view text) const;
  bool empty() const { return steps_.empty(); }
  // The most input bytes one byte of Normalize()'s output can stand for: Normalize(t)
  // has at least t.size() / max_shrink() bytes. nullopt when a step can drop text
  // (StripAccents, BertNormalizer, Replace with an empty content). Lowercase: 3 (U+212A
  // KELVIN SIGN, 3 bytes, lowercases to 'k'); NFD: 3 (the same sign decomposes to 'K');
  // tokenizer_budget_test checks both factors over every code point.
  std::optional<double> max_shrink() const;
  // True when every step maps each character on its own (no Prepend, no Replace), so
  // normalising a text cut at a character boundary gives the pieces' concatenation.
  bool maps_characters_independently() const;

 private:
  struct Step {
    enum Kind { kPrepend, kReplace, kLowercase, kNfd, kStripAccents, kBert } kind;
    std::string a, b;  // prepend: a; replace: a → b
    // kBert.
    bool clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true;
  };
  static std::string ApplyBert(const Step& step, std::string_view text);
  std::vector<Step> steps_;
  static absl::Status Parse(const rapidjson::Value& json, std::vector<Step>& steps);
};

}  // namespace infera::text

#endif  // INFERA_TEXT_NORMALIZER_H_

// Normalizer: the tokenizer.json "normalizer" applied to each segment of input text
// (text between added tokens) before pre-tokenization.
//
// Supported: Sequence, Prepend {prepend}, Replace {pattern: {String}, content},
// Lowercase, NFC (see IMPORTANT). Anything else is a load error naming the type.
//
// IMPORTANT: NFC is applied as the identity: composing needs the Unicode composition
// tables, which are not in this build. Text already in NFC (what browsers, editors and
// every OpenAI client send) tokenises exactly; decomposed input (e + U+0301) tokenises
// differently from Hugging Face's tokenizers.
//
// Thread-safe after construction (const).
#ifndef INFERA_LLM_NORMALIZER_H_
#define INFERA_LLM_NORMALIZER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace infera::llm {

class Normalizer {
 public:
  static absl::StatusOr<Normalizer> FromJson(const rapidjson::Value* json);
  std::string Normalize(std::string_view text) const;
  bool empty() const { return steps_.empty(); }

 private:
  struct Step {
    enum Kind { kPrepend, kReplace, kLowercase } kind;
    std::string a, b;  // prepend: a; replace: a → b
  };
  std::vector<Step> steps_;
  static absl::Status Parse(const rapidjson::Value& json, std::vector<Step>& steps);
};

}  // namespace infera::llm

#endif  // INFERA_LLM_NORMALIZER_H_

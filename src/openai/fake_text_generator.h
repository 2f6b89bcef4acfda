// A TextGenerator for the openai module's tests: a fixed vocabulary for TokenBytes (token
// i is kVocabulary[i]; 5 is a lone UTF-8 lead byte). Generate() refuses: the tests drive
// a job's callbacks themselves.
//
// Thread-safe (immutable).
#ifndef INFERA_OPENAI_FAKE_TEXT_GENERATOR_H_
#define INFERA_OPENAI_FAKE_TEXT_GENERATOR_H_

#include <array>
#include <string>
#include <string_view>

#include "backend/text_generator.h"

namespace infera::openai::testing {

class FakeTextGenerator : public TextGenerator {
 public:
  static constexpr std::array<std::string_view, 6> kVocabulary = {"a", "b", "cd", " é", "!", "\xc3"};

  const std::string& name() const override { return name_; }
  int64_t max_model_len() const override { return 64; }
  int64_t created_unix_seconds() const override { return 1; }
  std::string_view TokenBytes(int32_t id) const override {
    return id >= 0 && static_cast<size_t>(id) < kVocabulary.size() ? kVocabulary[id] : std::string_view();
  }
  GenerationMetrics Metrics() const override { return {}; }
  void Generate(GenerationRequest, GenerationCallbacks callbacks) override {
    callbacks.admitted(absl::UnimplementedError("FakeTextGenerator does not generate"), "");
  }

 private:
  std::string name_ = "fake";
};

}  // namespace infera::openai::testing

#endif  // INFERA_OPENAI_FAKE_TEXT_GENERATOR_H_

// Fuzz target: tokenizer.json loading and encoding (text/tokenizer.h), with
// tokenizer_config.json and generation_config.json.
//
// Input: byte 0 selects the mode, the rest is split on the line "\n@@@@\n":
//   even: text only. The text is encoded and decoded with the test tokenizers (a
//         SentencePiece-style BPE and a GPT-2 byte-level BPE, src/text/test_tokenizers.h);
//         the input bytes are also decoded as token ids (in and out of the vocabulary).
//   odd:  tokenizer.json, tokenizer_config.json, generation_config.json, text: loaded
//         with Tokenizer::FromJson, then the text is encoded and decoded with it.
// Invariant checked beyond "no crash": every encoded id is inside the vocabulary.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/test_tokenizers.h"
#include "text/tokenizer.h"

namespace {

using infera::text::Tokenizer;

std::vector<std::unique_ptr<Tokenizer>>* g_fixed = nullptr;

std::vector<std::string_view> Split(std::string_view input, size_t max_parts) {
  constexpr std::string_view kSeparator = "\n@@@@\n";
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = input.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(input);
  return parts;
}

void Exercise(const Tokenizer& tokenizer, std::string_view text, const uint8_t* raw, size_t raw_size) {
  for (bool special : {false, true}) {
    std::vector<int32_t> ids = tokenizer.Encode(text, special);
    for (int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
    }
    (void)tokenizer.Decode(ids, /*skip_special_tokens=*/special);
  }
  // Arbitrary ids, as a client's prompt_ids or stop_token_ids can be.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 2 <= raw_size && ids.size() < 256; i += 2) {
    ids.push_back(static_cast<int16_t>(raw[i] | (raw[i + 1] << 8)));
  }
  (void)tokenizer.Decode(ids, /*skip_special_tokens=*/false);
  (void)tokenizer.Decode(ids, /*skip_special_tokens=*/true);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_fixed = new std::vector<std::unique_ptr<Tokenizer>>();
  for (const std::string& json :
       {infera::text::testing::SentencePieceTokenizerJson(),
        infera::text::testing::ByteLevelTokenizerJson(infera::text::testing::kGpt2PreTokenizer)}) {
    auto tokenizer = Tokenizer::FromJson(json);
    if (!tokenizer.ok()) std::abort();
    g_fixed->push_back(std::move(*tokenizer));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    for (const auto& tokenizer : *g_fixed) Exercise(*tokenizer, input, data + 1, size - 1);
    return 0;
  }
  std::vector<std::string_view> parts = Split(input, 4);
  parts.resize(4);
  auto tokenizer = Tokenizer::FromJson(parts[0], parts[1], parts[2]);
  if (!tokenizer.ok()) return 0;
  Exercise(**tokenizer, parts[3], data + 1, size - 1);
  return 0;
}

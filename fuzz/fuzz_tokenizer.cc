// Fuzz target: tokenizer.json loading and encoding (text/tokenizer.h), with
// tokenizer_config.json and generation_config.json.
//
// Input: byte 0 selects the mode, the rest is split on the line "\n@@@@\n":
//   even: text only. The text is encoded and decoded with the test tokenizers (a
//         SentencePiece-style BPE and a GPT-2 byte-level BPE, src/text/test_tokenizers.h);
//         the input bytes are also decoded as token ids (in and out of the vocabulary).
//   odd:  tokenizer.json, tokenizer_config.json, generation_config.json, text: loaded
//         with Tokenizer::FromJson, then the text is encoded and decoded with it.
// Invariants checked beyond "no crash": every encoded id is inside the vocabulary;
// EncodeWithin(text, budget) is Encode(text) when that fits the budget and nothing
// otherwise (budgets around the real length and from the input); EncodeTruncated's
// early stop gives Encode's first ids — both with windows of a few bytes, so that every
// cut point the tokenizer allows is exercised; where the tokenizer states max_bytes_per_token,
// the text has at most that many bytes per id (the bound the prompt-length check
// refuses prompts by, so hostile tokenizer.json files test it too).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
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

void CheckBudgets(const Tokenizer& tokenizer, std::string_view text, bool special, const std::vector<int32_t>& ids,
                  size_t budget_from_input) {
  for (size_t budget : {ids.size() > 0 ? ids.size() - 1 : 0, ids.size(), budget_from_input}) {
    std::optional<std::vector<int32_t>> within = tokenizer.EncodeWithin(text, special, budget);
    if (ids.size() <= budget ? (!within || *within != ids) : within.has_value()) std::abort();
  }
  if (special) return;
  if (auto per_token = tokenizer.max_bytes_per_token(); per_token && text.size() > *per_token * ids.size()) {
    std::abort();
  }
  for (size_t length : {ids.size() / 2, budget_from_input}) {
    const std::vector<int32_t> cut = tokenizer.EncodeTruncated(text, /*add_special_tokens=*/false, length).ids;
    if (cut.size() != std::min(length, ids.size()) || !std::equal(cut.begin(), cut.end(), ids.begin())) std::abort();
  }
}

void Exercise(const Tokenizer& tokenizer, std::string_view text, const uint8_t* raw, size_t raw_size) {
  const size_t budget_from_input = raw_size > 0 ? raw[0] : 0;
  for (bool special : {false, true}) {
    std::vector<int32_t> ids = tokenizer.Encode(text, special);
    for (int32_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
    }
    CheckBudgets(tokenizer, text, special, ids, budget_from_input);
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
    (*tokenizer)->set_window_bytes(3);
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
  (*tokenizer)->set_window_bytes(1 + (size > 1 ? data[1] % 16 : 0));
  Exercise(**tokenizer, parts[3], data + 1, size - 1);
  return 0;
}

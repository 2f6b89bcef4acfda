// Fuzz target: the WordPiece path of the tokenizer (text/wordpiece_model.h, the BERT
// normalizer and pre-tokenizer, truncation) as the `tokenize` backend drives it.
//
// Input: byte 0 selects the mode, the rest is the payload.
//   even: text, encoded with a fixed BERT-style tokenizer (text/test_tokenizers.h) with
//         and without special tokens and truncated to a length taken from byte 0.
//   odd:  "tokenizer.json\n@@@@\ntext": loaded with Tokenizer::FromJson (hostile vocab
//         ids, unk tokens, prefixes, limits, normalizer flags), then the text encoded.
// Invariants checked beyond "no crash": ids are inside the vocabulary, type ids match
// ids in length, truncation never exceeds max_length when it leaves room for the text
// and gives the untruncated encoding's first ids, EncodeWithin is Encode or nothing —
// with windows of a few bytes (Tokenizer::set_window_bytes), so every cut is exercised.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/test_tokenizers.h"
#include "text/tokenizer.h"

namespace {

using infera::text::Tokenizer;

const Tokenizer* g_bert = nullptr;

void Exercise(const Tokenizer& tokenizer, std::string_view text, size_t max_length) {
  for (bool special : {false, true}) {
    for (int32_t id : tokenizer.Encode(text, special)) {
      if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
    }
    const std::vector<int32_t> all = tokenizer.Encode(text, special);
    const infera::text::Encoding e = tokenizer.EncodeTruncated(text, special, max_length);
    if (e.ids.size() != e.type_ids.size()) std::abort();
    if (max_length > tokenizer.num_special_tokens(special) && e.ids.size() > max_length) std::abort();
    // The early stop (and the windows, a few bytes here) keeps Hugging Face's ids: the
    // untruncated encoding's when it fits, else its first ids then the suffix tokens.
    if (all.size() <= max_length && e.ids != all) std::abort();
    if (!special && all.size() > max_length && !std::equal(e.ids.begin(), e.ids.end(), all.begin())) std::abort();
    const std::optional<std::vector<int32_t>> within = tokenizer.EncodeWithin(text, special, max_length);
    if (all.size() <= max_length ? within != all : within.has_value()) std::abort();
    (void)tokenizer.Decode(e.ids, special);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto bert = Tokenizer::FromJson(infera::text::testing::BertTokenizerJson());
  if (!bert.ok()) std::abort();
  (*bert)->set_window_bytes(2);
  g_bert = bert->release();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t max_length = 1 + (data[0] >> 1);
  if ((data[0] & 1) == 0) {
    Exercise(*g_bert, input, max_length);
    return 0;
  }
  constexpr std::string_view kSeparator = "\n@@@@\n";
  const size_t at = input.find(kSeparator);
  const std::string_view json = input.substr(0, at);
  const std::string_view text = at == std::string_view::npos ? "" : input.substr(at + kSeparator.size());
  auto tokenizer = Tokenizer::FromJson(json);
  if (!tokenizer.ok()) return 0;
  (*tokenizer)->set_window_bytes(1 + max_length % 7);
  Exercise(**tokenizer, text, max_length);
  return 0;
}

#include "llm/text_stream.h"

#include <algorithm>

namespace infera::llm {

TextStream::TextStream(const Tokenizer& tokenizer, const SamplingParams& params)
    : detokenizer_(tokenizer, params.skip_special_tokens),
      stops_(params.stop),
      include_stop_(params.include_stop_str_in_output) {
  for (const std::string& s : stops_) hold_ = std::max(hold_, s.size() - 1);
}

TextStream::Piece TextStream::Push(int32_t token_id) {
  Piece piece;
  if (stopped_) return piece;
  held_ += detokenizer_.Push(token_id);
  if (stops_.empty()) {
    piece.text.swap(held_);
    return piece;
  }
  size_t best = std::string::npos, best_len = 0;
  for (const std::string& s : stops_) {
    const size_t at = held_.find(s);
    if (at < best) best = at, best_len = s.size();
  }
  if (best != std::string::npos) {
    piece.text = held_.substr(0, include_stop_ ? best + best_len : best);
    piece.stopped = stopped_ = true;
    held_.clear();
    return piece;
  }
  if (held_.size() > hold_) {
    size_t cut = held_.size() - hold_;
    // Never split a UTF-8 character: back up over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(held_[cut]) & 0xC0) == 0x80) --cut;
    piece.text = held_.substr(0, cut);
    held_.erase(0, cut);
  }
  return piece;
}

std::string TextStream::Finish() {
  if (stopped_) return {};
  std::string out = std::move(held_) + detokenizer_.Flush();
  held_.clear();
  return out;
}

}  // namespace infera::llm

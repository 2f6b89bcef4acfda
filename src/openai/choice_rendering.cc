#include "openai/choice_rendering.h"

#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "text/unicode.h"

namespace infera::openai {

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string TokenRenderer::Text(int32_t token) const {
  if (as_token_ids_) return StrCat("token_id:", token);
  return text::SanitizeUtf8(model_.TokenBytes(token));
}

ChoiceDelta RenderOutput(GenerationOutput& output, int index, Endpoint endpoint, bool logprobs,
                         const TokenRenderer& tokens, int64_t& next_offset) {
  ChoiceDelta delta;
  delta.index = index;
  delta.text = std::move(output.text);
  if (!logprobs) return delta;
  delta.logprobs = output.logprobs;
  for (size_t t = 0; t < output.token_ids.size(); ++t) {
    const int32_t id = output.token_ids[t];
    delta.tokens.push_back(tokens.Text(id));
    delta.token_bytes.emplace_back(tokens.Bytes(id));
    delta.text_offsets.push_back(next_offset);
    next_offset += CodePoints(delta.tokens.back());
    const bool has_top = t < output.top_logprobs.size();
    if (!has_top && endpoint != Endpoint::kCompletions) continue;
    std::vector<TopToken>& top = delta.top.emplace_back();
    bool chosen_listed = false;
    if (has_top) {
      for (const TokenLogprob& alt : output.top_logprobs[t]) {
        top.push_back({tokens.Text(alt.token_id), std::string(tokens.Bytes(alt.token_id)), alt.logprob});
        chosen_listed = chosen_listed || alt.token_id == id;
      }
    }
    if (endpoint == Endpoint::kCompletions && !chosen_listed && t < output.logprobs.size()) {
      top.push_back({delta.tokens.back(), delta.token_bytes.back(), output.logprobs[t]});
    }
  }
  return delta;
}

}  // namespace infera::openai

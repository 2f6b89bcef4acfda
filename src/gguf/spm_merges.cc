#include "gguf/spm_merges.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>

namespace infera::gguf {

std::vector<std::pair<std::string_view, std::string_view>> SpmMergesFromScores(
    const std::vector<std::string_view>& tokens, const std::vector<float>& scores,
    const std::vector<bool>& mergeable) {
  std::unordered_map<std::string_view, int32_t> ids;
  ids.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i], static_cast<int32_t>(i));  // first id wins

  std::vector<int32_t> targets;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i < mergeable.size() && mergeable[i] && tokens[i].size() > 1) targets.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(targets.begin(), targets.end(), [&](int32_t x, int32_t y) {
    const float sx = x < static_cast<int32_t>(scores.size()) ? scores[x] : 0.0f;
    const float sy = y < static_cast<int32_t>(scores.size()) ? scores[y] : 0.0f;
    return sx > sy;
  });

  std::vector<std::pair<std::string_view, std::string_view>> merges;
  struct Split {
    int32_t a, b;
    size_t cut;
  };
  std::vector<Split> splits;
  for (int32_t t : targets) {
    const std::string_view text = tokens[t];
    splits.clear();
    for (size_t cut = 1; cut < text.size(); ++cut) {
      if ((static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
      auto a = ids.find(text.substr(0, cut));
      if (a == ids.end()) continue;
      auto b = ids.find(text.substr(cut));
      if (b == ids.end()) continue;
      splits.push_back({a->second, b->second, cut});
    }
    std::sort(splits.begin(), splits.end(),
              [](const Split& x, const Split& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    for (const Split& s : splits) merges.emplace_back(text.substr(0, s.cut), text.substr(s.cut));
  }
  return merges;
}

}  // namespace infera::gguf

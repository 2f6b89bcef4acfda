#include "text/wordpiece_model.h"

#include <algorithm>

#include "common/str_cat.h"
#include "text/json_util.h"

namespace infera::text {
namespace {

size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // a stray continuation byte: its own unit (callers pass valid UTF-8)
}

}  // namespace

absl::StatusOr<WordPieceModel> WordPieceModel::FromJson(const rapidjson::Value& model) {
  WordPieceModel wp;
  const rapidjson::Value* vocab = FindMember(model, "vocab");
  if (!vocab || !vocab->IsObject()) return absl::InvalidArgumentError("WordPiece model has no vocab object");
  const size_t count = vocab->MemberCount();
  wp.id_to_token_.resize(count);
  for (auto it = vocab->MemberBegin(); it != vocab->MemberEnd(); ++it) {
    if (!it->value.IsInt() || it->value.GetInt() < 0 || static_cast<size_t>(it->value.GetInt()) >= count) {
      return absl::InvalidArgumentError(StrCat("WordPiece vocab entry '", AsView(it->name),
                                               "' needs an id in [0, ", count, ")"));
    }
    const int32_t id = it->value.GetInt();
    std::string token(AsView(it->name));
    wp.max_token_bytes_ = std::max(wp.max_token_bytes_, token.size());
    wp.id_to_token_[id] = token;
    wp.vocab_.emplace(std::move(token), id);
  }
  if (const rapidjson::Value* p = FindMember(model, "continuing_subword_prefix")) {
    if (!p->IsString()) return absl::InvalidArgumentError("WordPiece continuing_subword_prefix is not a string");
    wp.prefix_ = AsView(*p);
  }
  if (auto max_chars = GetInt(model, "max_input_chars_per_word")) {
    if (*max_chars < 1) return absl::InvalidArgumentError("WordPiece max_input_chars_per_word must be >= 1");
    wp.max_input_chars_per_word_ = static_cast<size_t>(*max_chars);
  }
  const std::string unk = GetString(model, "unk_token").value_or("[UNK]");
  auto unk_it = wp.vocab_.find(unk);
  if (unk_it == wp.vocab_.end()) {
    return absl::InvalidArgumentError(StrCat("WordPiece unk_token '", unk, "' is not in the vocab"));
  }
  wp.unk_id_ = unk_it->second;
  return wp;
}

void WordPieceModel::Encode(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  // Character boundaries (byte offsets), so matches never split a code point. A word
  // past the limit is one [UNK] after counting limit + 1 characters, whatever its length.
  std::vector<size_t> bounds;
  for (size_t i = 0; i < word.size(); i += Utf8Length(static_cast<unsigned char>(word[i]))) {
    if (bounds.size() == max_input_chars_per_word_) {
      ids.push_back(unk_id_);
      return;
    }
    bounds.push_back(i);
  }
  bounds.push_back(word.size());
  const size_t first_new = ids.size();
  std::string candidate;
  for (size_t start = 0; start + 1 < bounds.size();) {
    // No entry is longer than max_token_bytes_: the longest candidate that can match is
    // found walking forward from `start`, so a long word costs O(length × longest entry),
    // not O(length²).
    size_t end = start + 1;
    while (end + 1 < bounds.size() && bounds[end + 1] - bounds[start] <= max_token_bytes_) ++end;
    int32_t match = -1;
    for (; end > start; --end) {
      candidate.clear();
      if (start > 0) candidate = prefix_;
      candidate.append(word.substr(bounds[start], bounds[end] - bounds[start]));
      if (auto it = vocab_.find(candidate); it != vocab_.end()) {
        match = it->second;
        break;
      }
    }
    if (match < 0) {
      ids.resize(first_new);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(match);
    start = end;
  }
}

std::optional<int32_t> WordPieceModel::TokenToId(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string& WordPieceModel::IdToToken(int32_t id) const {
  static const std::string kEmpty;
  if (id < 0 || id >= vocab_size()) return kEmpty;
  return id_to_token_[id];
}

}  // namespace infera::text

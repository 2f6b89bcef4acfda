#include "text/vocabulary.h"

#include <algorithm>

#include "common/str_cat.h"

namespace infera::text {

absl::Status Vocabulary::Add(std::string_view token, int32_t id) {
  if (id < 0 || id > kMaxId) {
    return absl::InvalidArgumentError(
        StrCat("vocab entry '", token, "' has id ", id, ", outside 0..", kMaxId));
  }
  const auto entry = static_cast<uint32_t>(strings_.size());
  strings_.Append(token);
  entry_id_.push_back(id);
  if (static_cast<size_t>(id) >= id_entry_.size()) id_entry_.resize(static_cast<size_t>(id) + 1, kNoEntry);
  id_entry_[id] = entry;
  index_.insert(entry);  // a repeated string keeps its first entry
  max_token_bytes_ = std::max(max_token_bytes_, token.size());
  return absl::OkStatus();
}

void Vocabulary::Finish() {
  strings_.ShrinkToFit();
  entry_id_.shrink_to_fit();
  id_entry_.shrink_to_fit();
}

std::optional<int32_t> Vocabulary::Find(std::string_view token) const {
  auto it = index_.find(token);
  if (it == index_.end()) return std::nullopt;
  return entry_id_[*it];
}

std::string_view Vocabulary::Token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= id_entry_.size() || id_entry_[id] == kNoEntry) return {};
  return strings_[id_entry_[id]];
}

}  // namespace infera::text

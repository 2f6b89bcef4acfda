#include "text/bpe_model.h"

#include <algorithm>
#include <cctype>
#include <queue>

#include "common/status.h"
#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

size_t Utf8CharLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

}  // namespace

absl::StatusOr<BpeModel> BpeModel::FromJson(const rapidjson::Value& model) {
  if (GetString(model, "type").value_or("BPE") != "BPE") {
    return absl::InvalidArgumentError(StrCat("tokenizer model type '", GetString(model, "type").value_or(""),
                                             "' is not supported (BPE)"));
  }
  if (GetString(model, "continuing_subword_prefix").value_or("") != "" ||
      GetString(model, "end_of_word_suffix").value_or("") != "") {
    return absl::InvalidArgumentError("BPE continuing_subword_prefix/end_of_word_suffix are not supported");
  }
  BpeModel bpe;
  std::fill(std::begin(bpe.byte_ids_), std::end(bpe.byte_ids_), -1);
  const rapidjson::Value* vocab = FindMember(model, "vocab");
  if (!vocab || !vocab->IsObject()) return absl::InvalidArgumentError("tokenizer model has no vocab object");
  for (auto it = vocab->MemberBegin(); it != vocab->MemberEnd(); ++it) {
    if (!it->value.IsInt() || it->value.GetInt() < 0) {
      return absl::InvalidArgumentError(StrCat("vocab entry '", AsView(it->name), "' has no valid id"));
    }
    const int32_t id = it->value.GetInt();
    const std::string_view token = AsView(it->name);
    RETURN_IF_ERROR(bpe.vocab_->Add(token, id));
    if (token.size() == 6 && token.starts_with("<0x") && token.back() == '>' &&
        std::isxdigit(static_cast<unsigned char>(token[3])) &&
        std::isxdigit(static_cast<unsigned char>(token[4]))) {
      bpe.byte_ids_[std::stoi(std::string(token.substr(3, 2)), nullptr, 16)] = id;
    }
  }
  bpe.vocab_->Finish();
  if (const rapidjson::Value* merges = FindMember(model, "merges"); merges && merges->IsArray()) {
    int32_t rank = 0;
    bpe.merges_.reserve(merges->Size());
    std::string joined;
    for (const auto& m : merges->GetArray()) {
      std::string_view a, b;
      if (m.IsString()) {
        std::string_view s = AsView(m);
        const size_t space = s.find(' ', 1);
        if (space == std::string_view::npos) return absl::InvalidArgumentError(StrCat("bad merge '", s, "'"));
        a = s.substr(0, space), b = s.substr(space + 1);
      } else if (m.IsArray() && m.Size() == 2 && m[0].IsString() && m[1].IsString()) {
        a = AsView(m[0]), b = AsView(m[1]);
      } else {
        return absl::InvalidArgumentError(StrCat("merge ", rank, " is malformed"));
      }
      joined.assign(a).append(b);
      const std::optional<int32_t> ia = bpe.vocab_->Find(a), ib = bpe.vocab_->Find(b), im = bpe.vocab_->Find(joined);
      if (!ia || !ib || !im) {
        return absl::InvalidArgumentError(StrCat("merge '", a, " ", b, "' uses tokens missing from the vocab"));
      }
      bpe.merges_.emplace(PairKey(*ia, *ib), Merge{rank++, *im});
    }
  }
  if (auto unk = GetString(model, "unk_token")) {
    if (std::optional<int32_t> id = bpe.vocab_->Find(*unk)) bpe.unk_id_ = *id;
  }
  bpe.byte_fallback_ = GetBool(model, "byte_fallback").value_or(false);
  bpe.fuse_unk_ = GetBool(model, "fuse_unk").value_or(false);
  bpe.ignore_merges_ = GetBool(model, "ignore_merges").value_or(false);
  return bpe;
}

std::optional<int32_t> BpeModel::TokenToId(std::string_view token) const { return vocab_->Find(token); }

int BpeModel::ByteFallbackValue(int32_t id) const {
  for (int b = 0; b < 256; ++b) {
    if (byte_ids_[b] == id) return b;
  }
  return -1;
}

bool BpeModel::EncodesEveryCharacter(bool byte_level) const {
  if (byte_level) {
    bool all = true;
    for (int b = 0; b < 256 && all; ++b) {
      std::string ch;
      AppendUtf8(ByteToUnicode(static_cast<uint8_t>(b)), ch);
      all = vocab_->Contains(ch);
    }
    if (all) return true;
  }
  if (byte_fallback_ && std::find(std::begin(byte_ids_), std::end(byte_ids_), -1) == std::end(byte_ids_)) return true;
  return unk_id_ >= 0 && !fuse_unk_;
}

void BpeModel::AppendSymbol(std::string_view ch, std::vector<int32_t>& symbols) const {
  if (std::optional<int32_t> id = vocab_->Find(ch)) {
    symbols.push_back(*id);
    return;
  }
  if (byte_fallback_) {
    bool all = true;
    for (unsigned char b : ch) all = all && byte_ids_[b] >= 0;
    if (all) {
      for (unsigned char b : ch) symbols.push_back(byte_ids_[b]);
      return;
    }
  }
  if (unk_id_ < 0) return;  // no way to represent it: dropped, as Hugging Face does
  if (fuse_unk_ && !symbols.empty() && symbols.back() == unk_id_) return;
  symbols.push_back(unk_id_);
}

void BpeModel::Encode(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (std::optional<int32_t> id = vocab_->Find(piece)) {
      ids.push_back(*id);
      return;
    }
  }
  std::vector<int32_t> sym;
  for (size_t i = 0; i < piece.size();) {
    const size_t n = std::min(Utf8CharLength(static_cast<unsigned char>(piece[i])), piece.size() - i);
    AppendSymbol(piece.substr(i, n), sym);
    i += n;
  }
  // Doubly linked symbols; merges in (rank, position) order with lazy invalidation.
  const int n = static_cast<int>(sym.size());
  std::vector<int> next(n), prev(n);
  std::vector<bool> alive(n, true);
  for (int i = 0; i < n; ++i) next[i] = i + 1 < n ? i + 1 : -1, prev[i] = i - 1;
  struct Candidate {
    int32_t rank;
    int pos;
    int32_t left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push = [&](int pos) {
    if (pos < 0 || next[pos] < 0) return;
    auto it = merges_.find(PairKey(sym[pos], sym[next[pos]]));
    if (it != merges_.end()) heap.push({it->second.rank, pos, sym[pos], sym[next[pos]]});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int right = next[c.pos];
    if (!alive[c.pos] || right < 0 || sym[c.pos] != c.left || sym[right] != c.right) continue;
    sym[c.pos] = merges_.at(PairKey(c.left, c.right)).merged_id;
    alive[right] = false;
    next[c.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.pos;
    push(prev[c.pos]);
    push(c.pos);
  }
  for (int i = 0; i >= 0 && i < n; i = next[i]) ids.push_back(sym[i]);
}

}  // namespace infera::text

#include "text/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/status.h"
#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

// "<s>" or {"content": "<s>", ...}
std::string TokenContent(const rapidjson::Value* v) {
  if (!v) return "";
  if (v->IsString()) return std::string(AsView(*v));
  return GetString(*v, "content").value_or("");
}

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out += to;
  }
  out.append(s, pos);
  return out;
}

// The WordPiece decoder's `cleanup` (Hugging Face's clean_up_tokenization).
std::string CleanUpTokenization(std::string s) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},       {" !", "!"},       {" ,", ","},     {" ' ", "'"},        {" n't", "n't"},
      {" 'm", "'m"},   {" do not", " don't"}, {" 's", "'s"},  {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) s = ReplaceAll(std::move(s), from, to);
  return s;
}

bool IsSpaceByte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The single-sequence template of a TemplateProcessing post-processor.
struct Template {
  std::vector<int32_t> prefix, suffix, prefix_types, suffix_types;
  int32_t sequence_type = 0;
};

absl::Status ParseTemplate(const rapidjson::Value& pp, Template& t, const rapidjson::Value* special_tokens) {
  const rapidjson::Value* single = FindMember(pp, "single");
  if (!single || !single->IsArray()) return absl::InvalidArgumentError("TemplateProcessing without 'single'");
  bool seen_sequence = false;
  for (const auto& piece : single->GetArray()) {
    if (const rapidjson::Value* seq = FindMember(piece, "Sequence")) {
      seen_sequence = true;
      t.sequence_type = static_cast<int32_t>(GetInt(*seq, "type_id").value_or(0));
      continue;
    }
    const rapidjson::Value* st = FindMember(piece, "SpecialToken");
    auto id = st ? GetString(*st, "id") : std::nullopt;
    const int32_t type_id = st ? static_cast<int32_t>(GetInt(*st, "type_id").value_or(0)) : 0;
    const rapidjson::Value* entry = id && special_tokens ? FindMember(*special_tokens, *id) : nullptr;
    const rapidjson::Value* ids = entry ? FindMember(*entry, "ids") : nullptr;
    if (!ids || !ids->IsArray()) return absl::InvalidArgumentError("TemplateProcessing piece without ids");
    for (const auto& i : ids->GetArray()) {
      if (!i.IsInt() || i.GetInt() < 0) return absl::InvalidArgumentError("TemplateProcessing id is not an id");
      (seen_sequence ? t.suffix : t.prefix).push_back(i.GetInt());
      (seen_sequence ? t.suffix_types : t.prefix_types).push_back(type_id);
    }
  }
  return absl::OkStatus();
}

// BertProcessing / RobertaProcessing: {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}.
absl::Status ParseClsSep(const rapidjson::Value& pp, Template& t) {
  auto id_of = [&](std::string_view key) -> std::optional<int32_t> {
    const rapidjson::Value* v = FindMember(pp, key);
    if (!v || !v->IsArray() || v->Size() != 2 || !(*v)[1].IsInt() || (*v)[1].GetInt() < 0) return std::nullopt;
    return (*v)[1].GetInt();
  };
  auto cls = id_of("cls"), sep = id_of("sep");
  if (!cls || !sep) return absl::InvalidArgumentError("BertProcessing needs \"cls\" and \"sep\" as [token, id]");
  t.prefix = {*cls};
  t.prefix_types = {0};
  t.suffix = {*sep};
  t.suffix_types = {0};
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::filesystem::path& dir) {
  ASSIGN_OR_RETURN(std::string tokenizer_json, ReadFileToString(dir / "tokenizer.json"));
  std::string config = ReadFileToString(dir / "tokenizer_config.json").value_or("");
  std::string generation = ReadFileToString(dir / "generation_config.json").value_or("");
  auto tokenizer = FromJson(tokenizer_json, config, generation);
  if (!tokenizer.ok()) {
    return absl::InvalidArgumentError(StrCat(dir.string(), ": ", tokenizer.status().message()));
  }
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(std::string_view tokenizer_json,
                                                               std::string_view tokenizer_config_json,
                                                               std::string_view generation_config_json) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  RETURN_IF_ERROR(t->ParseTokenizerJson(tokenizer_json));
  if (!tokenizer_config_json.empty()) RETURN_IF_ERROR(t->ParseTokenizerConfig(tokenizer_config_json));
  if (!generation_config_json.empty()) RETURN_IF_ERROR(t->ParseGenerationConfig(generation_config_json));
  return t;
}

absl::Status Tokenizer::ParseTokenizerJson(std::string_view text) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(text, "tokenizer.json", doc));
  const rapidjson::Value* model = FindMember(doc, "model");
  if (!model) return absl::InvalidArgumentError("tokenizer.json: no \"model\"");
  if (GetString(*model, "type") == "WordPiece") {
    ASSIGN_OR_RETURN(WordPieceModel wordpiece, WordPieceModel::FromJson(*model));
    wordpiece_ = std::move(wordpiece);
  } else {
    ASSIGN_OR_RETURN(bpe_, BpeModel::FromJson(*model));
  }
  ASSIGN_OR_RETURN(normalizer_, Normalizer::FromJson(FindMember(doc, "normalizer")));
  ASSIGN_OR_RETURN(pre_tokenizer_, PreTokenizer::FromJson(FindMember(doc, "pre_tokenizer")));
  if (const rapidjson::Value* added = FindMember(doc, "added_tokens"); added && added->IsArray()) {
    for (const auto& a : added->GetArray()) {
      AddedToken token;
      const int64_t id = GetInt(a, "id").value_or(-1);
      token.content = GetString(a, "content").value_or("");
      if (id > Vocabulary::kMaxId) {
        return absl::InvalidArgumentError(
            StrCat("added token '", token.content, "' has id ", id, ", outside 0..", Vocabulary::kMaxId));
      }
      token.id = static_cast<int32_t>(id);
      token.special = GetBool(a, "special").value_or(false);
      token.lstrip = GetBool(a, "lstrip").value_or(false);
      token.rstrip = GetBool(a, "rstrip").value_or(false);
      if (token.id < 0 || token.content.empty()) return absl::InvalidArgumentError("malformed added token");
      added_.push_back(std::move(token));
    }
  }
  std::stable_sort(added_.begin(), added_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  if (const rapidjson::Value* pp = FindMember(doc, "post_processor")) {
    std::vector<const rapidjson::Value*> processors{pp};
    if (GetString(*pp, "type") == "Sequence") {
      processors.clear();
      if (const rapidjson::Value* list = FindMember(*pp, "processors"); list && list->IsArray()) {
        for (const auto& p : list->GetArray()) processors.push_back(&p);
      }
    }
    for (const rapidjson::Value* p : processors) {
      const std::string type = GetString(*p, "type").value_or("");
      Template t;
      if (type == "TemplateProcessing") {
        RETURN_IF_ERROR(ParseTemplate(*p, t, FindMember(*p, "special_tokens")));
      } else if (type == "BertProcessing" || type == "RobertaProcessing") {
        RETURN_IF_ERROR(ParseClsSep(*p, t));
      } else {
        continue;  // ByteLevel post-processing (offsets only) and the like
      }
      prefix_ids_ = std::move(t.prefix), suffix_ids_ = std::move(t.suffix);
      prefix_type_ids_ = std::move(t.prefix_types), suffix_type_ids_ = std::move(t.suffix_types);
      sequence_type_id_ = t.sequence_type;
      has_template_ = true;
    }
  }
  if (const rapidjson::Value* padding = FindMember(doc, "padding")) {
    if (auto pad_id = GetInt(*padding, "pad_id"); pad_id && *pad_id >= 0 && *pad_id <= INT32_MAX) {
      pad_id_ = static_cast<int32_t>(*pad_id);
    }
  }
  RETURN_IF_ERROR(ParseDecoder(FindMember(doc, "decoder")));
  BuildTokenBytes();
  for (const AddedToken& a : added_) added_first_byte_[static_cast<uint8_t>(a.content[0])] = true;
  ComputeMaxBytesPerToken();
  const bool cuttable = normalizer_.maps_characters_independently() &&
                        pre_tokenizer_.cut_points() != PreTokenizer::CutPoints::kNowhere;
  window_bytes_ = cuttable ? size_t{64} << 10 : 0;
  return absl::OkStatus();
}

void Tokenizer::ComputeMaxBytesPerToken() {
  max_bytes_per_token_.reset();
  if (wordpiece_ || pre_tokenizer_.drops_text() || !bpe_.EncodesEveryCharacter(pre_tokenizer_.byte_level())) return;
  const std::optional<double> shrink = normalizer_.max_shrink();
  if (!shrink) return;
  size_t added = 0;
  for (const AddedToken& a : added_) {
    if (a.lstrip || a.rstrip) return;  // absorbs any run of whitespace
    added = std::max(added, a.content.size());
  }
  // An id stands for a vocabulary entry (a piece's bytes, which hold at least the
  // normalised bytes they came from: the byte alphabet and "▁" only grow text), one byte
  // (byte fallback) or one character (the unknown token, up to 4 bytes).
  const double model = static_cast<double>(std::max<size_t>(bpe_.max_token_bytes(), 4));
  max_bytes_per_token_ = std::max(added, static_cast<size_t>(std::ceil(model * *shrink)));
}

absl::Status Tokenizer::ParseDecoder(const void* raw) {
  const auto* json = static_cast<const rapidjson::Value*>(raw);
  if (!json || json->IsNull()) {
    decode_byte_level_ = pre_tokenizer_.byte_level();
    return absl::OkStatus();
  }
  std::vector<const rapidjson::Value*> steps{json};
  if (GetString(*json, "type") == "Sequence") {
    steps.clear();
    if (const rapidjson::Value* list = FindMember(*json, "decoders"); list && list->IsArray()) {
      for (const auto& d : list->GetArray()) steps.push_back(&d);
    }
  }
  for (const rapidjson::Value* d : steps) {
    const std::string type = GetString(*d, "type").value_or("");
    if (type == "ByteLevel") {
      decode_byte_level_ = true;
    } else if (type == "ByteFallback") {
      decode_byte_fallback_ = true;
    } else if (type == "Fuse") {
    } else if (type == "Replace") {
      const rapidjson::Value* pattern = FindMember(*d, "pattern");
      auto from = pattern ? GetString(*pattern, "String") : std::nullopt;
      if (!from) return absl::InvalidArgumentError("decoder Replace supports String patterns only");
      decode_replacements_.emplace_back(*from, GetString(*d, "content").value_or(""));
    } else if (type == "Strip") {
      if (GetInt(*d, "start").value_or(0) > 0) decode_strip_leading_space_ = true;
    } else if (type == "WordPiece") {
      // Tokens are words joined by spaces unless they carry the prefix ("##ing").
      decode_wordpiece_prefix_ = GetString(*d, "prefix").value_or("##");
      decode_wordpiece_ = true;
      decode_strip_leading_space_ = true;
      decode_wordpiece_cleanup_ = GetBool(*d, "cleanup").value_or(true);
    } else if (type == "Metaspace") {
      decode_replacements_.emplace_back(GetString(*d, "replacement").value_or("\xE2\x96\x81"), " ");
      const std::string scheme = GetString(*d, "prepend_scheme").value_or(
          GetBool(*d, "add_prefix_space").value_or(true) ? "always" : "never");
      decode_strip_leading_space_ = scheme != "never";
      decode_byte_fallback_ = true;
    } else {
      return absl::InvalidArgumentError(StrCat("decoder type '", type, "' is not supported"));
    }
  }
  return absl::OkStatus();
}

int32_t Tokenizer::ModelVocabSize() const { return wordpiece_ ? wordpiece_->vocab_size() : bpe_.vocab_size(); }

std::string_view Tokenizer::ModelIdToToken(int32_t id) const {
  return wordpiece_ ? wordpiece_->IdToToken(id) : bpe_.IdToToken(id);
}

void Tokenizer::BuildTokenBytes() {
  int32_t size = ModelVocabSize();
  for (const auto& a : added_) size = std::max(size, a.id + 1);
  // Packed in id order: an added token's content replaces the model's string for its id
  // (the last added token of an id wins).
  std::vector<int32_t> added_at(size, -1);
  for (size_t i = 0; i < added_.size(); ++i) added_at[added_[i].id] = static_cast<int32_t>(i);
  token_bytes_ = PackedStrings();
  special_.assign(size, false);
  std::string bytes;
  for (int32_t id = 0; id < size; ++id) {
    bytes.clear();
    if (added_at[id] >= 0) {
      const AddedToken& a = added_[added_at[id]];
      if (decode_wordpiece_) bytes = " ";
      bytes += a.content;
      special_[id] = a.special;
      token_bytes_.Append(bytes);
      continue;
    }
    if (id >= ModelVocabSize()) {
      token_bytes_.Append("");
      continue;
    }
    const std::string_view token = ModelIdToToken(id);
    if (decode_wordpiece_) {
      if (!decode_wordpiece_prefix_.empty() && token.starts_with(decode_wordpiece_prefix_)) {
        bytes = token.substr(decode_wordpiece_prefix_.size());
      } else {
        bytes.assign(" ").append(token);
      }
    } else if (decode_byte_level_) {
      for (char32_t c : DecodeUtf8(token)) {
        const int b = UnicodeToByte(c);
        if (b >= 0) bytes.push_back(static_cast<char>(b));
        else AppendUtf8(c, bytes);
      }
    } else if (int b = decode_byte_fallback_ ? bpe_.ByteFallbackValue(id) : -1; b >= 0) {
      bytes.push_back(static_cast<char>(b));
    } else {
      bytes = token;
      for (const auto& [from, to] : decode_replacements_) {
        std::string out;
        size_t pos = 0;
        for (size_t hit; (hit = bytes.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
          out.append(bytes, pos, hit - pos);
          out += to;
        }
        out.append(bytes, pos);
        bytes = std::move(out);
      }
    }
    token_bytes_.Append(bytes);
  }
  token_bytes_.ShrinkToFit();
}

absl::Status Tokenizer::ParseTokenizerConfig(std::string_view text) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(text, "tokenizer_config.json", doc));
  bos_token_ = TokenContent(FindMember(doc, "bos_token"));
  eos_token_ = TokenContent(FindMember(doc, "eos_token"));
  add_bos_ = GetBool(doc, "add_bos_token").value_or(false);
  add_eos_ = GetBool(doc, "add_eos_token").value_or(false);
  if (const rapidjson::Value* ct = FindMember(doc, "chat_template")) {
    if (ct->IsString()) chat_template_ = AsView(*ct);
    if (ct->IsArray()) {
      for (const auto& entry : ct->GetArray()) {
        if (GetString(entry, "name") == "default") chat_template_ = GetString(entry, "template").value_or("");
        if (GetString(entry, "name") == "tool_use") chat_template_tool_use_ = GetString(entry, "template").value_or("");
      }
    }
  }
  if (!bos_token_.empty()) bos_id_ = TokenToId(bos_token_);
  if (!eos_token_.empty()) {
    if (auto id = TokenToId(eos_token_)) eos_ids_.push_back(*id);
  }
  return absl::OkStatus();
}

absl::Status Tokenizer::ParseGenerationConfig(std::string_view text) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ParseJson(text, "generation_config.json", doc));
  if (auto bos = GetInt(doc, "bos_token_id")) bos_id_ = static_cast<int32_t>(*bos);
  if (const rapidjson::Value* eos = FindMember(doc, "eos_token_id")) {
    std::vector<int32_t> ids;
    if (eos->IsInt()) ids.push_back(eos->GetInt());
    if (eos->IsArray()) {
      for (const auto& e : eos->GetArray()) {
        if (e.IsInt()) ids.push_back(e.GetInt());
      }
    }
    for (int32_t id : ids) {
      if (std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
    }
  }
  return absl::OkStatus();
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  for (const auto& a : added_) {
    if (a.content == token) return a.id;
  }
  return wordpiece_ ? wordpiece_->TokenToId(token) : bpe_.TokenToId(token);
}

std::string_view Tokenizer::TokenBytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return token_bytes_[id];
}

bool Tokenizer::IsSpecial(int32_t id) const { return id >= 0 && id < vocab_size() && special_[id]; }

bool Tokenizer::ReachesBudget(size_t bytes, size_t ids, size_t stop_at) const {
  if (!max_bytes_per_token_ || ids >= stop_at) return ids >= stop_at;
  // `bytes` give at least ceil(bytes / K) ids: reaching stop_at - ids of them.
  size_t most_without;
  if (__builtin_mul_overflow(*max_bytes_per_token_, stop_at - ids - 1, &most_without)) return false;
  return bytes > most_without;
}

bool Tokenizer::EncodeSegment(std::string_view text, bool first, std::vector<int32_t>& ids, size_t stop_at,
                              bool length_bound) const {
  if (text.empty()) return true;
  if (length_bound && ReachesBudget(text.size(), ids.size(), stop_at)) return false;
  if (window_bytes_ == 0 || text.size() <= window_bytes_ || stop_at == SIZE_MAX) {
    return EncodeWindow(text, first, ids, stop_at);
  }
  // Cut where pieces end whatever is around them: the windows give the same pieces.
  for (size_t start = 0; start < text.size();) {
    const size_t end = pre_tokenizer_.NextCut(text, std::min(start + window_bytes_, text.size()));
    if (!EncodeWindow(text.substr(start, end - start), first && start == 0, ids, stop_at)) return false;
    start = end;
  }
  return true;
}

bool Tokenizer::EncodeWindow(std::string_view text, bool first, std::vector<int32_t>& ids, size_t stop_at) const {
  const std::string normalized = normalizer_.Normalize(text);
  for (const std::string& piece : pre_tokenizer_.Split(normalized, first)) {
    if (ids.size() >= stop_at) return false;
    if (wordpiece_) wordpiece_->Encode(piece, ids);
    else bpe_.Encode(piece, ids);
  }
  return true;
}

bool Tokenizer::EncodeContent(std::string_view text, std::vector<int32_t>& ids, size_t stop_at,
                              bool length_bound) const {
  size_t segment_start = 0;
  bool first = true;
  for (size_t i = 0; i < text.size();) {
    // The segment being scanned is at least i - segment_start bytes long.
    if (length_bound && ReachesBudget(i - segment_start, ids.size(), stop_at)) return false;
    const AddedToken* match = nullptr;
    if (added_first_byte_[static_cast<uint8_t>(text[i])]) {
      for (const auto& a : added_) {
        if (text.compare(i, a.content.size(), a.content) == 0) {
          match = &a;  // longest first
          break;
        }
      }
    }
    if (!match) {
      ++i;
      continue;
    }
    size_t segment_end = i;
    if (match->lstrip) {
      while (segment_end > segment_start && IsSpaceByte(text[segment_end - 1])) --segment_end;
    }
    if (!EncodeSegment(text.substr(segment_start, segment_end - segment_start), first, ids, stop_at, length_bound)) {
      return false;
    }
    first = false;
    if (ids.size() >= stop_at) return false;
    ids.push_back(match->id);
    i += match->content.size();
    if (match->rstrip) {
      while (i < text.size() && IsSpaceByte(text[i])) ++i;
    }
    segment_start = i;
  }
  return EncodeSegment(text.substr(segment_start), first, ids, stop_at, length_bound);
}

void Tokenizer::SpecialTokens(std::vector<int32_t>& prefix, std::vector<int32_t>& suffix) const {
  if (has_template_) {
    prefix = prefix_ids_;
    suffix = suffix_ids_;
    return;
  }
  if (add_bos_ && bos_id_) prefix.push_back(*bos_id_);
  if (add_eos_ && !eos_ids_.empty()) suffix.push_back(eos_ids_.front());
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> content;
  EncodeContent(text, content, SIZE_MAX, /*length_bound=*/false);
  if (!add_special_tokens) return content;
  std::vector<int32_t> ids, suffix;
  SpecialTokens(ids, suffix);
  ids.insert(ids.end(), content.begin(), content.end());
  ids.insert(ids.end(), suffix.begin(), suffix.end());
  return ids;
}

std::optional<std::vector<int32_t>> Tokenizer::EncodeWithin(std::string_view text, bool add_special_tokens,
                                                            size_t max_ids) const {
  std::vector<int32_t> ids, suffix;
  if (add_special_tokens) SpecialTokens(ids, suffix);
  if (ids.size() + suffix.size() > max_ids) return std::nullopt;
  const size_t room = std::min(max_ids - ids.size() - suffix.size(), SIZE_MAX - 1);
  // The whole text's length first: one comparison refuses a prompt of any size.
  if (ReachesBudget(text.size(), 0, room + 1)) return std::nullopt;
  const size_t prefix = ids.size();
  if (!EncodeContent(text, ids, prefix + room + 1, /*length_bound=*/true) || ids.size() - prefix > room) {
    return std::nullopt;
  }
  ids.insert(ids.end(), suffix.begin(), suffix.end());
  return ids;
}

size_t Tokenizer::num_special_tokens(bool add_special_tokens) const {
  if (!add_special_tokens) return 0;
  std::vector<int32_t> prefix, suffix;
  SpecialTokens(prefix, suffix);
  return prefix.size() + suffix.size();
}

Encoding Tokenizer::EncodeTruncated(std::string_view text, bool add_special_tokens, size_t max_length) const {
  std::vector<int32_t> prefix, suffix, prefix_types, suffix_types;
  if (add_special_tokens) {
    SpecialTokens(prefix, suffix);
    if (has_template_) prefix_types = prefix_type_ids_, suffix_types = suffix_type_ids_;
  }
  prefix_types.resize(prefix.size(), 0);
  suffix_types.resize(suffix.size(), 0);
  const size_t specials = prefix.size() + suffix.size();
  const size_t room = max_length > specials ? max_length - specials : 0;
  // The first `room` ids are final once reached: later text cannot change them.
  std::vector<int32_t> content;
  EncodeContent(text, content, room, /*length_bound=*/false);
  if (content.size() > room) content.resize(room);
  Encoding out;
  out.ids = std::move(prefix);
  out.ids.insert(out.ids.end(), content.begin(), content.end());
  out.ids.insert(out.ids.end(), suffix.begin(), suffix.end());
  out.type_ids = std::move(prefix_types);
  out.type_ids.resize(out.type_ids.size() + content.size(), has_template_ && add_special_tokens ? sequence_type_id_ : 0);
  out.type_ids.insert(out.type_ids.end(), suffix_types.begin(), suffix_types.end());
  return out;
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (skip_special_tokens && IsSpecial(id)) continue;
    bytes.append(TokenBytes(id));
  }
  if (decode_strip_leading_space_ && !bytes.empty() && bytes[0] == ' ') bytes.erase(0, 1);
  if (decode_wordpiece_cleanup_) bytes = CleanUpTokenization(bytes);
  return SanitizeUtf8(bytes);
}

}  // namespace infera::text

#include "text/normalizer.h"

#include <algorithm>

#include "common/status.h"
#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/unicode.h"

namespace infera::text {

absl::Status Normalizer::Parse(const rapidjson::Value& v, std::vector<Step>& steps) {
  const std::string type = GetString(v, "type").value_or("");
  if (type == "Sequence") {
    const rapidjson::Value* list = FindMember(v, "normalizers");
    if (!list || !list->IsArray()) return absl::InvalidArgumentError("normalizer Sequence without a list");
    for (const auto& item : list->GetArray()) RETURN_IF_ERROR(Parse(item, steps));
  } else if (type == "Prepend") {
    steps.push_back({Step::kPrepend, GetString(v, "prepend").value_or(""), ""});
  } else if (type == "Replace") {
    const rapidjson::Value* pattern = FindMember(v, "pattern");
    auto from = pattern ? GetString(*pattern, "String") : std::nullopt;
    if (!from) return absl::InvalidArgumentError("normalizer Replace supports String patterns only");
    steps.push_back({Step::kReplace, *from, GetString(v, "content").value_or("")});
  } else if (type == "Lowercase") {
    steps.push_back({Step::kLowercase, "", ""});
  } else if (type == "NFD") {
    steps.push_back({Step::kNfd, "", ""});
  } else if (type == "StripAccents") {
    steps.push_back({Step::kStripAccents, "", ""});
  } else if (type == "BertNormalizer") {
    Step step{Step::kBert, "", ""};
    step.clean_text = GetBool(v, "clean_text").value_or(true);
    step.handle_chinese_chars = GetBool(v, "handle_chinese_chars").value_or(true);
    step.lowercase = GetBool(v, "lowercase").value_or(true);
    step.strip_accents = GetBool(v, "strip_accents").value_or(step.lowercase);
    steps.push_back(std::move(step));
  } else if (type == "NFC") {
    // Identity; see the header's IMPORTANT note.
  } else {
    return absl::InvalidArgumentError(StrCat("normalizer type '", type, "' is not supported"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Normalizer> Normalizer::FromJson(const rapidjson::Value* json) {
  Normalizer n;
  if (json == nullptr || json->IsNull()) return n;
  RETURN_IF_ERROR(Parse(*json, n.steps_));
  return n;
}

std::optional<double> Normalizer::max_shrink() const {
  double shrink = 1.0;
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::kPrepend:
        break;
      case Step::kReplace:
        if (step.a.empty()) break;
        if (step.b.empty()) return std::nullopt;
        shrink *= std::max(1.0, static_cast<double>(step.a.size()) / static_cast<double>(step.b.size()));
        break;
      case Step::kLowercase:
        shrink *= kLowercaseMaxShrink;
        break;
      case Step::kNfd:
        shrink *= kNfdMaxShrink;
        break;
      case Step::kStripAccents:
      case Step::kBert:
        return std::nullopt;
    }
  }
  return shrink;
}

bool Normalizer::maps_characters_independently() const {
  return std::none_of(steps_.begin(), steps_.end(),
                      [](const Step& step) { return step.kind == Step::kPrepend || step.kind == Step::kReplace; });
}

std::string Normalizer::Normalize(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::kPrepend:
        if (!s.empty()) s = step.a + s;
        break;
      case Step::kReplace: {
        if (step.a.empty()) break;
        std::string out;
        size_t pos = 0;
        for (size_t hit; (hit = s.find(step.a, pos)) != std::string::npos; pos = hit + step.a.size()) {
          out.append(s, pos, hit - pos);
          out += step.b;
        }
        out.append(s, pos);
        s = std::move(out);
        break;
      }
      case Step::kLowercase: {
        std::u32string out;
        for (char32_t c : DecodeUtf8(s)) AppendLowercase(c, out);
        s = EncodeUtf8(out);
        break;
      }
      case Step::kNfd: {
        std::u32string out;
        for (char32_t c : DecodeUtf8(s)) AppendCanonicalDecomposition(c, out);
        s = EncodeUtf8(out);
        break;
      }
      case Step::kStripAccents: {
        std::u32string out;
        for (char32_t c : DecodeUtf8(s)) {
          if (!IsNonspacingMark(c)) out.push_back(c);
        }
        s = EncodeUtf8(out);
        break;
      }
      case Step::kBert:
        s = ApplyBert(step, s);
        break;
    }
  }
  return s;
}

std::string Normalizer::ApplyBert(const Step& step, std::string_view text) {
  // ASCII fast path (most English input): no accents, no CJK, one byte per character.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
      if (step.clean_text) {
        const bool kept_control = c == '\t' || c == '\n' || c == '\r';
        if ((c < 0x20 && !kept_control) || c == 0x7F) continue;  // category Cc
        if (kept_control) c = ' ';
      }
      if (step.lowercase && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      out.push_back(c);
    }
    return out;
  }
  std::u32string s = DecodeUtf8(text);
  std::u32string out;
  out.reserve(s.size());
  if (step.clean_text) {
    for (char32_t c : s) {
      const bool kept_control = c == '\t' || c == '\n' || c == '\r';
      if (c == 0 || c == 0xFFFD || (!kept_control && IsOtherCategory(c))) continue;
      out.push_back(IsWhitespace(c) ? U' ' : c);
    }
    s.swap(out);
    out.clear();
  }
  if (step.handle_chinese_chars) {
    for (char32_t c : s) {
      if (IsCjkIdeograph(c)) {
        out.push_back(U' ');
        out.push_back(c);
        out.push_back(U' ');
      } else {
        out.push_back(c);
      }
    }
    s.swap(out);
    out.clear();
  }
  if (step.strip_accents) {
    std::u32string decomposed;
    for (char32_t c : s) AppendCanonicalDecomposition(c, decomposed);
    for (char32_t c : decomposed) {
      if (!IsNonspacingMark(c)) out.push_back(c);
    }
    s.swap(out);
    out.clear();
  }
  if (step.lowercase) {
    for (char32_t c : s) AppendLowercase(c, out);
    s.swap(out);
  }
  return EncodeUtf8(s);
}

}  // namespace infera::text

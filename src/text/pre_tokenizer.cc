#include "text/pre_tokenizer.h"

#include <algorithm>

#include "common/status.h"
#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/unicode.h"

namespace infera::text {
namespace {

constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool IsOther(char32_t c) { return !IsWhitespace(c) && !IsLetter(c) && !IsNumber(c); }
bool IsNewline(char32_t c) { return c == '\r' || c == '\n'; }

// 's 't 're 've 'm 'll 'd at i; returns the match length or 0.
size_t Contraction(const std::u32string& s, size_t i, bool ignore_case) {
  if (s[i] != '\'' || i + 1 >= s.size()) return 0;
  auto lower = [&](size_t k) -> char32_t {
    if (k >= s.size()) return 0;
    char32_t c = s[k];
    return ignore_case && c >= 'A' && c <= 'Z' ? c + 32 : c;
  };
  const char32_t a = lower(i + 1), b = lower(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

size_t RunOf(const std::u32string& s, size_t i, bool (*pred)(char32_t)) {
  size_t j = i;
  while (j < s.size() && pred(s[j])) ++j;
  return j - i;
}

// \s+(?!\S)|\s+ at a whitespace character.
size_t Whitespace(const std::u32string& s, size_t i) {
  const size_t run = RunOf(s, i, IsWhitespace);
  if (i + run == s.size() || run == 1) return run;
  return run - 1;  // leave the last space to prefix the next word
}

size_t MatchGpt2(const std::u32string& s, size_t i) {
  if (size_t n = Contraction(s, i, false)) return n;
  const size_t sp = (s[i] == ' ' && i + 1 < s.size()) ? 1 : 0;
  const char32_t c = s[i + sp];
  if (IsLetter(c)) return sp + RunOf(s, i + sp, IsLetter);
  if (IsNumber(c)) return sp + RunOf(s, i + sp, IsNumber);
  if (IsOther(c)) return sp + RunOf(s, i + sp, IsOther);
  return Whitespace(s, i);
}

size_t MatchCl100k(const std::u32string& s, size_t i, size_t max_digits) {
  if (size_t n = Contraction(s, i, true)) return n;
  const char32_t c = s[i];
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (IsLetter(c)) return RunOf(s, i, IsLetter);
  if (!IsNewline(c) && !IsNumber(c) && i + 1 < s.size() && IsLetter(s[i + 1])) {
    return 1 + RunOf(s, i + 1, IsLetter);
  }
  if (IsNumber(c)) return std::min(max_digits, RunOf(s, i, IsNumber));
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  const size_t sp = (c == ' ' && i + 1 < s.size() && IsOther(s[i + 1])) ? 1 : 0;
  if (IsOther(s[i + sp])) {
    size_t n = sp + RunOf(s, i + sp, IsOther);
    return n + RunOf(s, i + n, IsNewline);
  }
  // \s*[\r\n]+ : up to the last newline inside the whitespace run.
  const size_t run = RunOf(s, i, IsWhitespace);
  for (size_t k = run; k > 0; --k) {
    if (IsNewline(s[i + k - 1])) return k;
  }
  return Whitespace(s, i);
}

}  // namespace

std::vector<std::string> SplitByPattern(std::string_view text, SplitPattern pattern) {
  const std::u32string s = DecodeUtf8(text);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < s.size();) {
    size_t n = pattern == SplitPattern::kGpt2     ? MatchGpt2(s, i)
               : pattern == SplitPattern::kCl100k ? MatchCl100k(s, i, 3)
                                                  : MatchCl100k(s, i, 1);
    if (n == 0) n = 1;  // unreachable for these patterns; guarantees progress
    pieces.push_back(EncodeUtf8(std::u32string_view(s).substr(i, n)));
    i += n;
  }
  return pieces;
}

struct PreTokenizer::Step {
  enum Kind { kSplit, kByteLevel, kMetaspace, kDigits, kBert, kWhitespaceSplit } kind = kSplit;
  SplitPattern pattern = SplitPattern::kGpt2;
  bool add_prefix_space = false;
  bool use_regex = true;
  std::string replacement = "\xE2\x96\x81";  // ▁
  std::string prepend_scheme = "always";
  bool split = true;
  bool individual_digits = false;
};

namespace {

using Step = PreTokenizer::Step;

absl::Status ParseStep(const rapidjson::Value& v, std::vector<std::shared_ptr<const Step>>& steps) {
  const std::string type = GetString(v, "type").value_or("");
  if (type == "Sequence") {
    const rapidjson::Value* list = FindMember(v, "pretokenizers");
    if (!list || !list->IsArray()) return absl::InvalidArgumentError("pre_tokenizer Sequence without a list");
    for (const auto& item : list->GetArray()) RETURN_IF_ERROR(ParseStep(item, steps));
    return absl::OkStatus();
  }
  auto step = std::make_shared<Step>();
  if (type == "ByteLevel") {
    step->kind = Step::kByteLevel;
    step->add_prefix_space = GetBool(v, "add_prefix_space").value_or(false);
    step->use_regex = GetBool(v, "use_regex").value_or(true);
  } else if (type == "Split") {
    const rapidjson::Value* pattern = FindMember(v, "pattern");
    std::optional<std::string> regex = pattern ? GetString(*pattern, "Regex") : std::nullopt;
    const std::string behavior = GetString(v, "behavior").value_or("");
    if (!regex || behavior != "Isolated" || GetBool(v, "invert").value_or(false)) {
      return absl::InvalidArgumentError(
          "pre_tokenizer Split is supported with a Regex pattern and behavior Isolated only");
    }
    if (*regex == kGpt2Pattern) step->pattern = SplitPattern::kGpt2;
    else if (*regex == kCl100kPattern) step->pattern = SplitPattern::kCl100k;
    else if (*regex == kQwen2Pattern) step->pattern = SplitPattern::kQwen2;
    else {
      return absl::InvalidArgumentError(StrCat("pre_tokenizer Split pattern '", *regex,
                                               "' is not one of the supported GPT-2 / Llama-3 / Qwen2 patterns"));
    }
  } else if (type == "Metaspace") {
    step->kind = Step::kMetaspace;
    step->replacement = GetString(v, "replacement").value_or("\xE2\x96\x81");
    step->prepend_scheme = GetString(v, "prepend_scheme")
                               .value_or(GetBool(v, "add_prefix_space").value_or(true) ? "always" : "never");
    step->split = GetBool(v, "split").value_or(true);
  } else if (type == "BertPreTokenizer") {
    step->kind = Step::kBert;
  } else if (type == "WhitespaceSplit") {
    step->kind = Step::kWhitespaceSplit;
  } else if (type == "Digits") {
    step->kind = Step::kDigits;
    step->individual_digits = GetBool(v, "individual_digits").value_or(false);
  } else {
    return absl::InvalidArgumentError(StrCat("pre_tokenizer type '", type, "' is not supported"));
  }
  steps.push_back(std::move(step));
  return absl::OkStatus();
}

std::string ToByteAlphabet(std::string_view piece) {
  std::string out;
  for (unsigned char b : piece) AppendUtf8(ByteToUnicode(b), out);
  return out;
}

void ApplyMetaspace(const Step& step, bool first_segment, std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  for (size_t p = 0; p < pieces.size(); ++p) {
    std::string text;
    const std::string& in = pieces[p];
    for (char ch : in) {
      if (ch == ' ') text += step.replacement;
      else text.push_back(ch);
    }
    const bool prepend = step.prepend_scheme == "always" ||
                         (step.prepend_scheme == "first" && first_segment && p == 0);
    if (prepend && !text.starts_with(step.replacement)) text = step.replacement + text;
    if (!step.split) {
      out.push_back(std::move(text));
      continue;
    }
    // Split before every replacement character (MergedWithNext).
    size_t start = 0;
    for (size_t pos = text.find(step.replacement, 1); pos != std::string::npos;
         pos = text.find(step.replacement, pos + 1)) {
      out.push_back(text.substr(start, pos - start));
      start = pos;
    }
    if (start < text.size()) out.push_back(text.substr(start));
  }
  pieces = std::move(out);
}

// BERT's punctuation: ASCII punctuation (Rust's is_ascii_punctuation, which includes
// symbols such as $ + < = > ^ ` |) or Unicode category P*.
bool IsBertPunctuation(char32_t c) {
  if (c < 0x80) return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
                       (c >= 0x7B && c <= 0x7E);
  return IsPunctuation(c);
}

// Whitespace runs removed; with `isolate_punctuation` every BERT punctuation character
// becomes a piece of its own.
void SplitWhitespace(std::string_view piece, bool isolate_punctuation, std::vector<std::string>& out) {
  std::u32string cur;
  for (char32_t c : DecodeUtf8(piece)) {
    if (IsWhitespace(c)) {
      if (!cur.empty()) out.push_back(EncodeUtf8(cur)), cur.clear();
    } else if (isolate_punctuation && IsBertPunctuation(c)) {
      if (!cur.empty()) out.push_back(EncodeUtf8(cur)), cur.clear();
      out.push_back(EncodeUtf8(std::u32string(1, c)));
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(EncodeUtf8(cur));
}

// See PreTokenizer::CutPoints. Digits only splits at digit boundaries, so the first
// step that splits elsewhere decides; every step must work on each piece alone.
PreTokenizer::CutPoints CutPointsOf(const std::vector<std::shared_ptr<const Step>>& steps) {
  using CutPoints = PreTokenizer::CutPoints;
  CutPoints cuts = CutPoints::kNowhere;
  for (const auto& step : steps) {
    const bool drops_whitespace = step->kind == Step::kBert || step->kind == Step::kWhitespaceSplit;
    const bool regex = step->kind == Step::kSplit || (step->kind == Step::kByteLevel && step->use_regex);
    if (step->kind == Step::kMetaspace) return CutPoints::kNowhere;  // its prefix depends on the place
    if (cuts == CutPoints::kNowhere) {
      if (drops_whitespace) cuts = CutPoints::kAtWhitespace;
      else if (regex) cuts = CutPoints::kBeforeSpacedLetter;
      else if (step->kind == Step::kByteLevel) return CutPoints::kNowhere;  // one piece, mapped
    } else if (cuts == CutPoints::kAtWhitespace && step->kind == Step::kByteLevel) {
      return CutPoints::kNowhere;  // its prefix space depends on the place
    }
  }
  return cuts;
}

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

size_t PreTokenizer::NextCut(std::string_view text, size_t from) const {
  switch (cut_points_) {
    case CutPoints::kNowhere:
      return text.size();
    case CutPoints::kAtWhitespace: {
      const size_t at = text.find_first_of(" \t\n\r", from);
      return at == std::string_view::npos ? text.size() : at;
    }
    case CutPoints::kBeforeSpacedLetter:
      for (size_t at = text.find(' ', std::max<size_t>(from, 1)); at != std::string_view::npos && at + 1 < text.size();
           at = text.find(' ', at + 1)) {
        if (IsAsciiLetter(text[at - 1]) && IsAsciiLetter(text[at + 1])) return at;
      }
      return text.size();
  }
  return text.size();
}

absl::StatusOr<PreTokenizer> PreTokenizer::FromJson(const rapidjson::Value* json) {
  PreTokenizer pt;
  if (json == nullptr || json->IsNull()) return pt;
  RETURN_IF_ERROR(ParseStep(*json, pt.steps_));
  for (const auto& s : pt.steps_) {
    pt.byte_level_ = pt.byte_level_ || s->kind == Step::kByteLevel;
    pt.drops_text_ = pt.drops_text_ || s->kind == Step::kBert || s->kind == Step::kWhitespaceSplit;
  }
  pt.cut_points_ = CutPointsOf(pt.steps_);
  return pt;
}

std::vector<std::string> PreTokenizer::Split(std::string_view text, bool first_segment) const {
  std::vector<std::string> pieces{std::string(text)};
  for (const auto& step : steps_) {
    std::vector<std::string> out;
    switch (step->kind) {
      case Step::kSplit:
        for (const auto& p : pieces) {
          for (auto& m : SplitByPattern(p, step->pattern)) out.push_back(std::move(m));
        }
        break;
      case Step::kByteLevel:
        for (size_t i = 0; i < pieces.size(); ++i) {
          std::string p = pieces[i];
          if (step->add_prefix_space && i == 0 && first_segment && !p.empty() && p[0] != ' ') p = " " + p;
          if (step->use_regex) {
            for (auto& m : SplitByPattern(p, SplitPattern::kGpt2)) out.push_back(ToByteAlphabet(m));
          } else {
            out.push_back(ToByteAlphabet(p));
          }
        }
        break;
      case Step::kMetaspace:
        out = pieces;
        ApplyMetaspace(*step, first_segment, out);
        break;
      case Step::kBert:
      case Step::kWhitespaceSplit:
        for (const auto& p : pieces) SplitWhitespace(p, step->kind == Step::kBert, out);
        break;
      case Step::kDigits:
        for (const auto& p : pieces) {
          const std::u32string s = DecodeUtf8(p);
          std::u32string cur;
          for (char32_t c : s) {
            const bool boundary = !cur.empty() && (IsNumber(c) != IsNumber(cur.back()) ||
                                                   (step->individual_digits && IsNumber(c)));
            if (boundary) out.push_back(EncodeUtf8(cur)), cur.clear();
            cur.push_back(c);
          }
          if (!cur.empty()) out.push_back(EncodeUtf8(cur));
        }
        break;
    }
    pieces = std::move(out);
  }
  std::erase_if(pieces, [](const std::string& p) { return p.empty(); });
  return pieces;
}

}  // namespace infera::text

#include "guided/gbnf_text.h"

#include <cstdio>

#include "api/sampling_params.h"
#include "common/str_cat.h"
#include "common/string_escape.h"

namespace infera::guided {
namespace {

std::string Hex(uint32_t c) {
  char buf[16];
  if (c <= 0xFF) {
    std::snprintf(buf, sizeof(buf), "\\x%02X", c);
  } else if (c <= 0xFFFF) {
    std::snprintf(buf, sizeof(buf), "\\u%04X", c);
  } else {
    std::snprintf(buf, sizeof(buf), "\\U%08X", c);
  }
  return buf;
}

std::string ClassChar(uint32_t c) {
  if (c < 0x20 || c >= 0x7F || c == '[' || c == ']' || c == '-' || c == '^' || c == '\\') {
    return Hex(c);
  }
  return std::string(1, static_cast<char>(c));
}

// Whether `e` is one GBNF term: a rule name, literal, class or group — followed by one
// quantifier when `quantified` allows it.
bool IsOneTerm(std::string_view e, bool quantified = false) {
  if (e.empty()) return false;
  if (quantified) {
    if (e.back() == '?' || e.back() == '*' || e.back() == '+') {
      return IsOneTerm(e.substr(0, e.size() - 1));
    }
    if (e.back() == '}') {
      size_t open = e.rfind('{');
      if (open != std::string_view::npos && open > 0 &&
          e.substr(open).find_first_not_of("{},0123456789") == std::string_view::npos) {
        return IsOneTerm(e.substr(0, open));
      }
    }
  }
  // A rule name.
  bool word = true;
  for (char c : e) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) word = false;
  }
  if (word) return true;
  // One literal, class or group: the closing delimiter at the end must match the
  // opening one at the front.
  char open = e.front();
  char close = open == '"' ? '"' : open == '[' ? ']' : open == '(' ? ')' : 0;
  if (close == 0 || e.back() != close || e.size() < 2) return false;
  int depth = 0;
  bool in_literal = false, in_class = false;
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    if (c == '\\') {
      ++i;
      continue;
    }
    if (in_literal) {
      if (c == '"') in_literal = false;
    } else if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '"') {
      in_literal = true;
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    }
    bool closed = !in_literal && !in_class && depth == 0;
    if (closed && i + 1 < e.size()) return false;  // the first term ends before the end
  }
  return true;
}

}  // namespace

std::string Utf8Encode(uint32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

std::vector<uint32_t> Utf8Decode(std::string_view text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    auto b = static_cast<unsigned char>(text[i]);
    int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n && i + k < text.size(); ++k) {
      c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    out.push_back(c);
    i += n;
  }
  return out;
}

std::string GbnfLiteral(std::string_view text) {
  std::string out = "\"";
  AppendEscaped(out, text, kGbnfEscapes);
  out += "\"";
  return out;
}

std::string GbnfClass(const CodePointSet& set) {
  std::string out = "[";
  for (const auto& [lo, hi] : set.ranges()) {
    out += ClassChar(lo);
    if (hi == lo) continue;
    if (hi > lo + 1) out += "-";
    out += ClassChar(hi);
  }
  out += "]";
  return out;
}

std::string GbnfGroup(std::string_view expr) {
  if (IsOneTerm(expr)) return std::string(expr);
  return StrCat("(", expr, ")");
}

std::string GbnfSequenceItem(std::string_view expr) {
  if (IsOneTerm(expr, /*quantified=*/true)) return std::string(expr);
  return StrCat("(", expr, ")");
}

std::string GbnfRepeat(std::string_view expr, long min, long max) {
  std::string term = GbnfGroup(expr);
  if (min == 0 && max == 1) return term + "?";
  if (min == 0 && max < 0) return term + "*";
  if (min == 1 && max < 0) return term + "+";
  if (min == 1 && max == 1) return term;
  if (max < 0) return StrCat(term, "{", min, ",}");
  if (min == max) return StrCat(term, "{", min, "}");
  return StrCat(term, "{", min, ",", max, "}");
}

std::string GbnfRules::Reserve(std::string_view hint) {
  std::string base;
  for (char c : hint) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      base += c;
    } else if (c >= 'A' && c <= 'Z') {
      base += static_cast<char>(c - 'A' + 'a');
    } else if (!base.empty() && base.back() != '-') {
      base += '-';
    }
    if (base.size() >= 40) break;
  }
  while (!base.empty() && base.back() == '-') base.pop_back();
  if (base.empty()) base = "r";
  std::string name = base;
  int& n = used_[base];
  // A name ending in a digit could collide with a numbered one: always number those.
  if (n > 0 || name == "root" || (name.back() >= '0' && name.back() <= '9') || bodies_.count(name)) {
    do {
      name = StrCat(base, "-", ++n);
    } while (bodies_.count(name) > 0);
  } else {
    ++n;
  }
  bodies_[name];  // reserved, empty until defined
  return name;
}

void GbnfRules::Define(const std::string& name, std::string body) {
  if (!defined_[name]) order_.push_back(name);
  defined_[name] = true;
  text_bytes_ += name.size() + body.size() + 6;
  name_of_body_.emplace(body, name);
  bodies_[name] = std::move(body);
}

std::string GbnfRules::Add(std::string_view hint, std::string body) {
  auto it = name_of_body_.find(body);
  if (it != name_of_body_.end() && it->second != "root" &&
      std::string_view(it->second).substr(0, hint.size()) == hint) {
    return it->second;
  }
  std::string name = Reserve(hint);
  Define(name, std::move(body));
  return name;
}

std::string GbnfRules::Named(const std::string& key) const {
  auto it = named_.find(key);
  return it == named_.end() ? std::string() : it->second;
}

std::string GbnfRules::Text() const {
  std::string out;
  out.reserve(text_bytes_);
  auto write = [&](const std::string& name) {
    out += name;
    out += " ::= ";
    out += bodies_.at(name);
    out += "\n";
  };
  if (bodies_.count("root")) write("root");
  for (const auto& name : order_) {
    if (name != "root") write(name);
  }
  return out;
}

absl::Status GbnfRules::CheckSize(std::string_view what) const {
  if (text_bytes_ > kMaxGrammarBytes) {
    return absl::InvalidArgumentError(StrCat(what, " compiles to a grammar of more than ",
                                             kMaxGrammarBytes, " bytes (the limit)"));
  }
  return absl::OkStatus();
}

}  // namespace infera::guided

#include "jinja/lexer.h"

#include <cctype>

#include "jinja/value.h"

namespace infera::jinja {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's newline normalisation (\r\n and \r become \n), then keep_trailing_newline=False:
// one trailing newline is dropped.
std::string Normalize(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  Lexer(std::string source, const LexerOptions& options) : src_(std::move(source)), options_(options) {}

  std::vector<Token> Run() {
    while (pos_ < src_.size()) {
      size_t open = pos_;
      while (true) {
        open = src_.find('{', open);
        if (open == std::string::npos || open + 1 >= src_.size()) {
          open = std::string::npos;
          break;
        }
        const char c = src_[open + 1];
        if (c == '{' || c == '%' || c == '#') break;
        ++open;
      }
      if (open == std::string::npos) {
        Emit(Token::Type::kData, src_.substr(pos_));
        pos_ = src_.size();
        break;
      }
      const char kind = src_[open + 1];
      const char modifier = open + 2 < src_.size() ? src_[open + 2] : '\0';
      std::string data = src_.substr(pos_, open - pos_);
      const bool line_starting = pos_ == 0 || src_[pos_ - 1] == '\n';
      if (modifier == '-') {
        size_t end = data.size();
        while (end > 0 && IsSpace(data[end - 1])) --end;
        data.resize(end);
      } else if (modifier != '+' && options_.lstrip_blocks && kind != '{') {
        const size_t line_start = data.rfind('\n') + 1;  // 0 when none
        if (line_start > 0 || line_starting) {
          bool blank = line_start < data.size();
          for (size_t i = line_start; i < data.size(); ++i) blank = blank && IsSpace(data[i]);
          if (blank) data.resize(line_start);
        }
      }
      Emit(Token::Type::kData, data);
      line_ += Count(pos_, open);
      pos_ = open + 2 + (modifier == '-' || (modifier == '+' && kind != '{') ? 1 : 0);
      if (kind == '#') {
        Comment();
      } else {
        Tag(kind);
      }
    }
    tokens_.push_back({Token::Type::kEof, "", line_});
    return std::move(tokens_);
  }

 private:
  int Count(size_t from, size_t to) const {
    int n = 0;
    for (size_t i = from; i < to && i < src_.size(); ++i) n += src_[i] == '\n';
    return n;
  }

  void Emit(Token::Type type, std::string text) {
    if (type == Token::Type::kData && text.empty()) return;
    tokens_.push_back({type, std::move(text), line_});
  }

  // After a block or comment end: `-` strips all following whitespace, trim_blocks one
  // newline unless `+`.
  void AfterEnd(char modifier, bool block) {
    if (modifier == '-') {
      size_t p = pos_;
      while (p < src_.size() && IsSpace(src_[p])) ++p;
      line_ += Count(pos_, p);
      pos_ = p;
    } else if (block && modifier != '+' && options_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
  }

  void Comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) throw Error("unterminated comment (missing '#}')", line_);
    const char modifier = end > pos_ && src_[end - 1] == '-' ? '-' : '\0';
    line_ += Count(pos_, end);
    pos_ = end + 2;
    AfterEnd(modifier, true);
  }

  void Tag(char kind) {
    const bool block = kind == '%';
    const int start_line = line_;
    Emit(block ? Token::Type::kBlockBegin : Token::Type::kVarBegin, "");
    int depth = 0;  // open (, [, { inside the tag: a '}' there is no tag end
    while (true) {
      while (pos_ < src_.size() && IsSpace(src_[pos_])) {
        if (src_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (pos_ >= src_.size()) {
        throw Error(std::string("unterminated ") + (block ? "block tag (missing '%}')" : "expression (missing '}}')"),
                    start_line);
      }
      const std::string_view rest = std::string_view(src_).substr(pos_);
      const std::string_view close = block ? "%}" : "}}";
      if (depth == 0) {
        for (char modifier : {'-', '+', '\0'}) {
          if (modifier == '+' && !block) continue;
          const size_t skip = modifier ? 1 : 0;
          if (rest.size() >= skip + 2 && (skip == 0 || rest[0] == modifier) && rest.substr(skip, 2) == close) {
            pos_ += skip + 2;
            Emit(block ? Token::Type::kBlockEnd : Token::Type::kVarEnd, "");
            AfterEnd(modifier, block);
            return;
          }
        }
      }
      const char c = rest[0];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t n = 1;
        while (n < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '_')) ++n;
        Emit(Token::Type::kName, std::string(rest.substr(0, n)));
        pos_ += n;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        Number(rest);
      } else if (c == '\'' || c == '"') {
        String(rest);
      } else {
        static constexpr std::string_view kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (std::string_view two : kTwo) {
          if (rest.substr(0, 2) == two) op = std::string(two);
        }
        if (op.empty()) {
          if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) == std::string_view::npos) {
            throw Error(std::string("unexpected character '") + c + "' in a tag", line_);
          }
          op = std::string(1, c);
        }
        if (op == "(" || op == "[" || op == "{") ++depth;
        if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
        Emit(Token::Type::kOperator, op);
        pos_ += op.size();
      }
    }
  }

  void Number(std::string_view rest) {
    size_t n = 0;
    bool is_float = false;
    auto digits = [&] {
      while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '_')) ++n;
    };
    digits();
    if (n + 1 < rest.size() && rest[n] == '.' && std::isdigit(static_cast<unsigned char>(rest[n + 1]))) {
      is_float = true;
      ++n;
      digits();
    }
    if (n < rest.size() && (rest[n] == 'e' || rest[n] == 'E')) {
      size_t m = n + 1;
      if (m < rest.size() && (rest[m] == '+' || rest[m] == '-')) ++m;
      if (m < rest.size() && std::isdigit(static_cast<unsigned char>(rest[m]))) {
        is_float = true;
        n = m;
        digits();
      }
    }
    std::string text;
    for (char c : rest.substr(0, n)) {
      if (c != '_') text += c;
    }
    Emit(is_float ? Token::Type::kFloat : Token::Type::kInt, text);
    pos_ += n;
  }

  // Python string escapes (what Jinja2's lexer decodes with unicode-escape).
  void String(std::string_view rest) {
    const char quote = rest[0];
    std::string out;
    size_t i = 1;
    while (true) {
      if (i >= rest.size()) throw Error("unterminated string literal", line_);
      const char c = rest[i];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= rest.size()) throw Error("unterminated string literal", line_);
      const char e = rest[i + 1];
      i += 2;
      auto hex = [&](size_t len) {
        if (i + len > rest.size()) throw Error("truncated \\x/\\u escape in a string literal", line_);
        uint32_t cp = 0;
        for (size_t k = 0; k < len; ++k) {
          const char h = rest[i + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) throw Error("bad \\x/\\u escape in a string literal", line_);
          cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        i += len;
        if (cp > 0x10FFFF) throw Error("\\U escape out of range in a string literal", line_);
        AppendUtf8(out, cp);
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'a': out += '\a'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': ++line_; break;  // line continuation
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = e - '0';
            for (int k = 0; k < 2 && i < rest.size() && rest[i] >= '0' && rest[i] <= '7'; ++k) cp = cp * 8 + (rest[i++] - '0');
            AppendUtf8(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    Emit(Token::Type::kString, out);
    pos_ += i + 1;
  }

  std::string src_;
  LexerOptions options_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view source, const LexerOptions& options) {
  return Lexer(Normalize(source), options).Run();
}

}  // namespace infera::jinja

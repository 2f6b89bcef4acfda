// Lexer: template text -> tokens, with Jinja2's whitespace control as Hugging Face
// configures it (trim_blocks, lstrip_blocks, keep_trailing_newline off; `-` and `+` tag
// modifiers). Comments are dropped here. docs/jinja.md.
#ifndef INFERA_JINJA_LEXER_H_
#define INFERA_JINJA_LEXER_H_

#include <string>
#include <string_view>
#include <vector>

namespace infera::jinja {

struct Token {
  enum class Type { kData, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOperator, kEof };
  Type type;
  std::string text;  // data, name, operator, the decoded string, the number's digits
  int line;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws Error (with the line) for an unterminated tag, comment or string, or a character
// that is no Jinja token.
std::vector<Token> Tokenize(std::string_view source, const LexerOptions& options = {});

}  // namespace infera::jinja

#endif  // INFERA_JINJA_LEXER_H_

// Parser: tokens -> syntax tree (ast.h), by recursive descent with Jinja2's operator
// precedence. A construct it does not implement is an Error naming it and its line.
// Nesting of expressions and blocks is bounded (kMaxNesting) so that a hostile template
// cannot exhaust the stack. docs/jinja.md.
#ifndef INFERA_JINJA_PARSER_H_
#define INFERA_JINJA_PARSER_H_

#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace infera::jinja {

inline constexpr int kMaxNesting = 128;

// Throws Error.
Body Parse(const std::vector<Token>& tokens);

}  // namespace infera::jinja

#endif  // INFERA_JINJA_PARSER_H_

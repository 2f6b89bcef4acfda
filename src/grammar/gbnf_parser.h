// ParseGbnf: GBNF text (llama.cpp's grammar notation) → the byte-level Grammar IR
// (grammar.h).
//
// The notation:
//   root ::= "{" ws pair ("," ws pair)* "}"     # a rule; `root` is where matching starts
//   name ::= [a-zA-Z_] [a-zA-Z0-9_-]*          # classes: ranges, ^ negation, escapes
//   ws   ::= [ \t\n]{0,20}                     # x* x+ x? x{m} x{m,} x{m,n} x{,n}
//   any  ::= . | "\u00e9" | "\x41"             # . is any character; | alternation
// String literals and classes take the escapes \n \r \t \\ \" \' \[ \] \- \^ \/,
// \xHH, \uHHHH and \UHHHHHHHH (code points, written as UTF-8; llama.cpp's meaning of
// \xHH); `#` starts a comment to the end of the line. Rule names are [a-zA-Z0-9_-]+.
// A rule's alternatives may continue on the next lines: a rule ends where the next
// `name ::=` starts (llama.cpp needs parentheses for that; every grammar it accepts is
// accepted here with the same meaning).
//
// Errors are InvalidArgument "grammar: line L, column C: <problem>": an undefined or
// twice-defined rule, no `root`, a bad escape, an unterminated literal or class, a
// repetition bound past kMaxRepetition, a grammar that expands past kMaxRules /
// kMaxElements, a left-recursive rule. The cost is linear in the text and the
// expansion, which the caps bound.
#ifndef INFERA_GRAMMAR_GBNF_PARSER_H_
#define INFERA_GRAMMAR_GBNF_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "grammar/grammar.h"

namespace infera::grammar {

absl::StatusOr<Grammar> ParseGbnf(std::string_view text);

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_GBNF_PARSER_H_

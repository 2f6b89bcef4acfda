// Grammars the grammar tests share.
#ifndef INFERA_GRAMMAR_TEST_GRAMMARS_H_
#define INFERA_GRAMMAR_TEST_GRAMMARS_H_

namespace infera::grammar {

// llama.cpp's grammars/json.gbnf.
inline constexpr char kJsonGbnf[] = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)";

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_TEST_GRAMMARS_H_

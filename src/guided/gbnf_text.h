// Writing GBNF (llama.cpp's grammar notation): quoted literals, character classes,
// counted repetitions, and GbnfRules — the named rules of one grammar, `root` first.
//
// The escapes written are the ones llama.cpp's parser knows (\" \\ \n \r \t \xHH
// \uHHHH \UHHHHHHHH): every byte below 0x20, every class metacharacter ([ ] - ^ \) and
// every non-ASCII code point inside a class is written as a hex escape, so no text a
// client sends can change the grammar's structure. Literals keep non-ASCII text as UTF-8.
//
// Thread-compatible.
#ifndef INFERA_GUIDED_GBNF_TEXT_H_
#define INFERA_GUIDED_GBNF_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "guided/code_point_set.h"

namespace infera::guided {

// `text` (UTF-8) as a GBNF string literal, quotes included.
std::string GbnfLiteral(std::string_view text);
// The set as a GBNF character class, brackets included. An empty set is written as a
// class no code point matches... there is none in GBNF, so the caller must not pass one.
std::string GbnfClass(const CodePointSet& set);
// `expr` repeated min..max times (max < 0: unbounded), in the shortest notation
// (`x?`, `x*`, `x+`, `x{m,n}`); `expr` must be a single GBNF term (a rule name, a
// literal, a class or a parenthesized group).
std::string GbnfRepeat(std::string_view expr, long min, long max);
// `expr` wrapped in parentheses unless it already is one term (what a quantifier takes).
std::string GbnfGroup(std::string_view expr);
// `expr` wrapped in parentheses unless it is one term, quantified or not (what a
// sequence takes).
std::string GbnfSequenceItem(std::string_view expr);
// UTF-8 of one code point.
std::string Utf8Encode(uint32_t code_point);
// Decodes `text` (must be valid UTF-8) into code points.
std::vector<uint32_t> Utf8Decode(std::string_view text);

// The rules of one grammar. Names are made of [a-z0-9-] (what llama.cpp accepts); a
// rule is added once per name, `root` is written first.
class GbnfRules {
 public:
  // A new, unused rule name derived from `hint` (sanitized, suffixed with a number when
  // taken). The rule must then be Define()d.
  std::string Reserve(std::string_view hint);
  // Sets the body of a reserved (or the `root`) rule.
  void Define(const std::string& name, std::string body);
  // Reserve + Define; returns the name. A body already defined under a name that
  // starts with `hint` is reused (primitive rules shared across a schema).
  std::string Add(std::string_view hint, std::string body);
  bool Has(const std::string& name) const { return bodies_.count(name) > 0; }
  // A memo from a caller's key (a shared primitive like "json string", a $ref) to the
  // rule that was made for it: "" when none yet.
  std::string Named(const std::string& key) const;
  void Name(const std::string& key, const std::string& rule) { named_[key] = rule; }
  // The size the grammar's text will have.
  size_t text_bytes() const { return text_bytes_; }
  // The grammar's text: `root ::= ...` then every other rule in the order defined.
  std::string Text() const;
  // InvalidArgument naming `what` when the text exceeds kMaxGrammarBytes.
  absl::Status CheckSize(std::string_view what) const;

 private:
  std::map<std::string, std::string> bodies_;
  std::map<std::string, std::string> name_of_body_;
  std::map<std::string, std::string> named_;
  std::map<std::string, bool> defined_;
  std::vector<std::string> order_;
  std::map<std::string, int> used_;
  size_t text_bytes_ = 0;
};

}  // namespace infera::guided

#endif  // INFERA_GUIDED_GBNF_TEXT_H_

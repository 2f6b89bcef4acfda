// The regular-expression subset guided decoding supports, parsed into a tree
// (docs/structured_output.md lists it): literals and escapes, classes [...] [^...] with
// ranges, \d \w \s and their negations, `.`, groups (...) (?:...) (?P<name>...),
// alternation, the quantifiers * + ? {m} {m,} {m,n} (lazy forms too: the language is the
// same); ^ and $ only at the very start and end. Everything else — backreferences,
// lookarounds, word boundaries, inline flags, possessive quantifiers, Unicode properties
// — is InvalidArgument naming it, as are repetitions and nestings over the bounds of
// guided_limits.h.
//
// Character semantics follow Python's `re` on str patterns (what vLLM users test with):
// \d \w \s are the ASCII members of Python's Unicode classes (a subset, so every match
// here is a match there), and the negated forms (\D, [^\w], ...) stay within ASCII for
// the same reason.
//
// Thread-safe (pure function).
#ifndef INFERA_GUIDED_REGEX_PARSER_H_
#define INFERA_GUIDED_REGEX_PARSER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "guided/code_point_set.h"

namespace infera::guided {

struct RegexNode {
  enum class Kind { kEmpty, kChars, kConcat, kAlternation, kRepeat };
  Kind kind = Kind::kEmpty;
  CodePointSet chars;               // kChars: one code point of this set
  std::vector<RegexNode> children;  // kConcat, kAlternation; kRepeat: one child
  long min = 0, max = 0;            // kRepeat; max < 0: unbounded
};

struct ParsedRegex {
  RegexNode root;
  bool anchored_start = false;  // began with ^
  bool anchored_end = false;    // ended with $
};

absl::StatusOr<ParsedRegex> ParseRegex(std::string_view pattern);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_REGEX_PARSER_H_

// The bounds every guided-decoding compiler enforces (docs/structured_output.md,
// "Bounds"): what a hostile schema, regex or choice list can make the server build is
// limited before the grammar reaches the engine, each limit with its own error.
#ifndef INFERA_GUIDED_GUIDED_LIMITS_H_
#define INFERA_GUIDED_GUIDED_LIMITS_H_

#include <cstddef>

namespace infera::guided {

// Nesting of schemas inside schemas (properties, items, anyOf, ...), counted while
// compiling, refs included.
inline constexpr int kMaxSchemaDepth = 64;
// $ref expansions in progress at once (a chain of refs to refs to ...).
inline constexpr int kMaxRefDepth = 64;
// Values in one enum.
inline constexpr size_t kMaxEnumValues = 1024;
// Properties over the whole schema.
inline constexpr size_t kMaxTotalProperties = 2048;
// A property name's length (the extra-key grammar walks a trie of the names).
inline constexpr size_t kMaxPropertyNameBytes = 1024;
// Branches of one anyOf / oneOf.
inline constexpr size_t kMaxAlternatives = 256;
// A counted repetition: maxLength, maxItems, regex {m,n}. The engine expands counted
// repetitions into rules, so these bound its work too.
inline constexpr long kMaxRepetition = 1000;
// A regex's size once its counted repetitions are written out ((a{100}){100} counts
// 10,000 items), as the engine expands them.
inline constexpr double kMaxRegexExpansion = 20000;
// A regex's length in bytes.
inline constexpr size_t kMaxRegexBytes = 16 * 1024;
// Nesting of groups in a regex.
inline constexpr int kMaxRegexDepth = 64;
// guided_choice: how many strings, and the longest one.
inline constexpr size_t kMaxChoices = 1024;
inline constexpr size_t kMaxChoiceBytes = 4096;
// |minimum| and |maximum| of integer bounds (the digit grammars work on int64).
inline constexpr long long kMaxAbsBound = 1'000'000'000'000'000'000LL;  // 1e18

}  // namespace infera::guided

#endif  // INFERA_GUIDED_GUIDED_LIMITS_H_

// Grammar: the IR of a GBNF grammar, over bytes (gbnf_parser.h builds it).
//
// A pushdown automaton's program, laid out as llama.cpp's grammar is: a flat array of
// elements; each rule is a list of alternatives; an alternative is a run of elements in
// that array ended by a kEnd element. An element is a byte set (one byte out of a set:
// string literals become one element per byte, character classes their UTF-8 byte
// sequences, utf8_ranges.h) or a reference to a rule. Groups, repetitions and
// multi-byte character classes become synthetic rules ("name_N", as llama.cpp names
// them), so every element is one of the two kinds and the matcher
// (grammar_matcher.h) works one byte at a time.
//
// Invariants the parser guarantees (CheckGrammar): every referenced rule is defined,
// the root exists, no rule is left-recursive (also through rules that can match the
// empty string: the matcher expands the left edge eagerly and would not terminate), and
// the sizes are under the caps below.
//
// Thread-safe: immutable after construction.
#ifndef INFERA_GRAMMAR_GRAMMAR_H_
#define INFERA_GRAMMAR_GRAMMAR_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace infera::grammar {

// Caps on what one grammar may expand to (hostile input: {m,n} repetition copies its
// item). A grammar past them is refused with InvalidArgument.
inline constexpr int32_t kMaxRules = 1 << 16;
inline constexpr int32_t kMaxElements = 1 << 20;
inline constexpr int32_t kMaxRepetition = 10000;  // the largest m or n in {m,n}
inline constexpr int32_t kMaxByteSets = 1 << 16;

enum class ElementType : uint8_t { kEnd, kByteSet, kRuleRef };

struct Element {
  ElementType type = ElementType::kEnd;
  int32_t value = 0;  // byte set index or rule id
};

// 256 bits: which bytes an element accepts.
struct ByteSet {
  std::array<uint64_t, 4> bits{};
  bool Has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  void Add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void AddRange(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) Add(static_cast<uint8_t>(b));
  }
  bool operator==(const ByteSet&) const = default;
};

struct Grammar {
  std::vector<Element> elements;
  std::vector<ByteSet> byte_sets;
  // rules[id] = the positions in `elements` where its alternatives start.
  std::vector<std::vector<int32_t>> rules;
  std::vector<std::string> rule_names;
  int32_t root = 0;
};

// The rules that can match the empty string (fixpoint over the alternatives).
std::vector<bool> NullableRules(const Grammar& g);

// InvalidArgument naming a left-recursive rule and its cycle, else OK.
absl::Status CheckNoLeftRecursion(const Grammar& g);

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_GRAMMAR_H_

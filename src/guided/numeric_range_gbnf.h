// Numeric ranges as GBNF: the canonical decimal integers (no leading zeros, no "-0")
// between two bounds — JSON schema's minimum / maximum / exclusive* on integers — and
// plain decimal numbers (`-?int(.frac)?`, no exponent) between two integer bounds, for
// numbers. Written digit position by digit position (as llama.cpp's
// json-schema-to-grammar does), so the expression grows with the number of digits, not
// with the width of the range.
//
// Thread-safe (pure functions).
#ifndef INFERA_GUIDED_NUMERIC_RANGE_GBNF_H_
#define INFERA_GUIDED_NUMERIC_RANGE_GBNF_H_

#include <cstdint>
#include <optional>
#include <string>

namespace infera::guided {

// An expression for the integers in [lo, hi] (a missing bound: unbounded); "" when the
// range is empty.
std::string IntegerRangeGbnf(std::optional<int64_t> lo, std::optional<int64_t> hi);

// One bound of a number range: an integer, inclusive or exclusive.
struct NumberBound {
  int64_t value = 0;
  bool exclusive = false;
};

// An expression for the decimal numbers x (written without an exponent) with lo <= x
// (lo < x when exclusive) and x <= hi (<); "" when there are none.
std::string NumberRangeGbnf(std::optional<NumberBound> lo, std::optional<NumberBound> hi);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_NUMERIC_RANGE_GBNF_H_

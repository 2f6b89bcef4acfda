#include "tools/bench/range_spec.h"

#include <charconv>
#include <cmath>

#include "common/str_cat.h"

namespace infera::bench {
namespace {

bool ParseNumber(std::string_view text, double* value) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*value);
}

std::string FormatNumber(double value) { return StrCat(value); }

}  // namespace

std::vector<double> RangeSpec::Levels() const {
  std::vector<double> levels;
  const double limit = end * (1 + 1e-9);
  for (int i = 0; i < kMaxRangeLevels; ++i) {
    // Each level from the start (not by accumulation), so long additive sweeps do not
    // drift: start + i * step, start * step^i.
    const double level = step_kind == StepKind::kAdd ? start + i * step : start * std::pow(step, i);
    if (level > limit) break;
    levels.push_back(std::abs(level - end) <= end * 1e-9 ? end : level);
  }
  return levels;
}

std::string RangeSpec::ToString() const {
  if (start == end) return FormatNumber(start);
  return StrCat(FormatNumber(start), ":", FormatNumber(end), ":",
                step_kind == StepKind::kMultiply ? "x" : "", FormatNumber(step));
}

absl::StatusOr<RangeSpec> ParseRangeSpec(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t colon = text.find(':', begin);
    parts.push_back(text.substr(begin, colon == std::string_view::npos ? colon : colon - begin));
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  if (parts.size() > 3) {
    return absl::InvalidArgumentError(StrCat("'", text, "' is not START[:END[:STEP]]"));
  }
  RangeSpec range;
  if (!ParseNumber(parts[0], &range.start) || range.start <= 0) {
    return absl::InvalidArgumentError(StrCat("'", text, "': START must be a number > 0"));
  }
  range.end = range.start;
  if (parts.size() >= 2 && (!ParseNumber(parts[1], &range.end) || range.end < range.start)) {
    return absl::InvalidArgumentError(StrCat("'", text, "': END must be a number >= START"));
  }
  if (parts.size() == 3) {
    std::string_view step = parts[2];
    if (!step.empty() && (step[0] == 'x' || step[0] == 'X' || step[0] == '*')) {
      range.step_kind = RangeSpec::StepKind::kMultiply;
      step.remove_prefix(1);
    } else if (!step.empty() && step[0] == '+') {
      step.remove_prefix(1);
    }
    if (!ParseNumber(step, &range.step)) {
      return absl::InvalidArgumentError(
          StrCat("'", text, "': STEP must be N, +N (add) or xN (multiply)"));
    }
    if (range.step_kind == RangeSpec::StepKind::kMultiply ? range.step <= 1 : range.step <= 0) {
      return absl::InvalidArgumentError(StrCat(
          "'", text, "': ", range.step_kind == RangeSpec::StepKind::kMultiply
                                ? "a factor STEP must be > 1"
                                : "an additive STEP must be > 0"));
    }
  }
  // Count the levels without materialising an absurd sweep.
  const double count = range.step_kind == RangeSpec::StepKind::kAdd
                           ? (range.end - range.start) / range.step + 1
                           : std::log(range.end / range.start) / std::log(range.step) + 1;
  if (count > kMaxRangeLevels) {
    return absl::InvalidArgumentError(
        StrCat("'", text, "' has more than ", kMaxRangeLevels, " levels"));
  }
  return range;
}

}  // namespace infera::bench

#include "tools/analyze/objective.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/str_cat.h"

namespace infera::analyze {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// A finite number > 0, optionally followed by `unit` (spaces allowed before it).
absl::StatusOr<double> ParsePositive(std::string_view text, std::string_view unit, std::string_view what) {
  text = Trim(text);
  if (!unit.empty() && text.size() >= unit.size() && text.substr(text.size() - unit.size()) == unit) {
    text = Trim(text.substr(0, text.size() - unit.size()));
  }
  if (text.empty()) return absl::InvalidArgumentError(StrCat(what, ": a number is missing"));
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) {
    return absl::InvalidArgumentError(StrCat(what, ": '", copy, "' is not a number",
                                             unit.empty() ? "" : StrCat(" (optionally followed by ", unit, ")")));
  }
  if (!std::isfinite(value) || value <= 0) {
    return absl::InvalidArgumentError(StrCat(what, ": ", copy, " must be a finite number > 0"));
  }
  return value;
}

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  return buffer;
}

constexpr char kGrammar[] = "expected 'max-throughput:p99<=X[ms]' or 'min-latency:rate>=Y[req/s]'";

}  // namespace

std::string Objective::ToString() const {
  if (kind == Kind::kMaxThroughput) {
    return StrCat("max-throughput:p", Number(percentile), "<=", Number(latency_limit_ms), "ms");
  }
  return StrCat("min-latency:rate>=", Number(min_rate));
}

absl::StatusOr<Objective> ParseObjective(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.size() > 200) return absl::InvalidArgumentError(StrCat("objective: too long; ", kGrammar));
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(StrCat("objective '", s, "': ", kGrammar));
  }
  const std::string_view goal = Trim(s.substr(0, colon));
  std::string_view rest = Trim(s.substr(colon + 1));
  Objective o;
  if (goal == "max-throughput") {
    o.kind = Objective::Kind::kMaxThroughput;
    if (!ConsumePrefix(rest, "p")) {
      return absl::InvalidArgumentError(
          StrCat("objective '", s, "': max-throughput needs a latency bound like p99<=20ms"));
    }
    const size_t op = rest.find("<=");
    if (op == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("objective '", s, "': max-throughput needs '<=' (p99<=20ms)"));
    }
    const std::string_view pct = Trim(rest.substr(0, op));
    if (pct != "50" && pct != "90" && pct != "95" && pct != "99") {
      return absl::InvalidArgumentError(
          StrCat("objective '", s, "': unknown latency metric 'p", pct, "' (p50, p90, p95 or p99)"));
    }
    o.percentile = std::atof(std::string(pct).c_str());
    auto limit = ParsePositive(rest.substr(op + 2), "ms", StrCat("objective '", s, "': latency bound"));
    if (!limit.ok()) return limit.status();
    o.latency_limit_ms = *limit;
    return o;
  }
  if (goal == "min-latency") {
    o.kind = Objective::Kind::kMinLatency;
    if (!ConsumePrefix(rest, "rate")) {
      return absl::InvalidArgumentError(
          StrCat("objective '", s, "': min-latency needs a rate bound like rate>=200"));
    }
    rest = Trim(rest);
    if (!ConsumePrefix(rest, ">=")) {
      return absl::InvalidArgumentError(StrCat("objective '", s, "': min-latency needs '>=' (rate>=200)"));
    }
    auto rate = ParsePositive(rest, "req/s", StrCat("objective '", s, "': rate"));
    if (!rate.ok()) return rate.status();
    if (*rate > 1e7) return absl::InvalidArgumentError(StrCat("objective '", s, "': rate above 1e7 req/s"));
    o.min_rate = *rate;
    return o;
  }
  return absl::InvalidArgumentError(StrCat("objective '", s, "': unknown goal '", goal, "'; ", kGrammar));
}

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kMet:
      return "met";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kNotMet:
      break;
  }
  return "not met";
}

double Spread::RelativePct() const {
  if (n < 2 || median == 0 || !std::isfinite(max) || !std::isfinite(min)) return 0;
  return (max - min) / std::fabs(median) * 100;
}

Spread SpreadOf(std::vector<double> values) {
  Spread s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  const size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  return s;
}

Verdict JudgeAtLeast(const Spread& m, double bound) {
  if (m.n == 0 || !(m.median >= bound)) return Verdict::kNotMet;
  return m.min >= bound ? Verdict::kMet : Verdict::kWithinNoise;
}

Verdict JudgeAtMost(const Spread& m, double bound) {
  if (m.n == 0 || !(m.median <= bound)) return Verdict::kNotMet;
  return m.max <= bound ? Verdict::kMet : Verdict::kWithinNoise;
}

double PointResult::SpreadPct(const Objective& objective) const {
  return objective.kind == Objective::Kind::kMaxThroughput ? throughput_spread.RelativePct()
                                                           : latency_spread.RelativePct();
}

namespace {

// Met and within noise score the objective's own figure; not met the best-effort one.
bool HigherIsBetter(const Objective& objective, Verdict verdict) {
  return (objective.kind == Objective::Kind::kMaxThroughput) == (verdict != Verdict::kNotMet);
}

}  // namespace

bool Better(const Objective& objective, const PointResult& a, const PointResult& b) {
  if (a.loaded != b.loaded) return a.loaded;
  if (!a.loaded) return false;
  if (a.verdict != b.verdict) return a.verdict > b.verdict;
  // Met: throughput up (max-throughput) or latency down (min-latency). Unmet: latency
  // down (max-throughput) or throughput up (min-latency).
  const bool higher_is_better = HigherIsBetter(objective, a.verdict);
  return higher_is_better ? a.score > b.score : a.score < b.score;
}

double GainPercent(const Objective& objective, const PointResult& a, const PointResult& b) {
  if (a.loaded != b.loaded || a.verdict != b.verdict) {
    const bool a_first = a.loaded != b.loaded ? a.loaded : a.verdict > b.verdict;
    return a_first ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  if (!a.loaded) return 0;
  const bool higher_is_better = HigherIsBetter(objective, a.verdict);
  if (b.score <= 0) return a.score > 0 && higher_is_better ? std::numeric_limits<double>::infinity() : 0;
  const double change = (a.score - b.score) / b.score * 100;
  return higher_is_better ? change : -change;
}

}  // namespace infera::analyze

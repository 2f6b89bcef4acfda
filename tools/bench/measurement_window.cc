#include "tools/bench/measurement_window.h"

namespace infera::bench {

std::optional<MeasurementMode> ParseMeasurementMode(std::string_view name) {
  if (name == "time_windows") return MeasurementMode::kTimeWindows;
  if (name == "count_windows") return MeasurementMode::kCountWindows;
  return std::nullopt;
}

std::string_view MeasurementModeName(MeasurementMode mode) {
  return mode == MeasurementMode::kTimeWindows ? "time_windows" : "count_windows";
}

bool WindowComplete(const WindowRule& rule, int64_t elapsed_ms, int64_t completed) {
  if (elapsed_ms < rule.min_ms) return false;
  return rule.mode == MeasurementMode::kTimeWindows || completed >= rule.request_count;
}

}  // namespace infera::bench

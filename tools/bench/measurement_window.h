// MeasurementWindow: when one measurement window of `infera bench` ends, in
// perf_analyzer's two --measurement-mode's.
//
//   time_windows   the window lasts --measurement-interval (default 2000 ms).
//   count_windows  the window lasts at least its minimum (--measurement-interval when
//                  given, else 1000 ms: perf_analyzer starts these windows at 1 s) and
//                  then grows until --measurement-request-count requests (default 50)
//                  completed in it, so a slow model still gets enough samples per window.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_BENCH_MEASUREMENT_WINDOW_H_
#define INFERA_TOOLS_BENCH_MEASUREMENT_WINDOW_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace infera::bench {

enum class MeasurementMode { kTimeWindows, kCountWindows };

std::optional<MeasurementMode> ParseMeasurementMode(std::string_view name);
std::string_view MeasurementModeName(MeasurementMode mode);

struct WindowRule {
  MeasurementMode mode = MeasurementMode::kTimeWindows;
  int64_t min_ms = 2000;        // the window's length (time) or its minimum (count)
  int64_t request_count = 50;   // count_windows: completions needed
};

// Whether a window that began `elapsed_ms` ago, with `completed` requests completed in
// it, is over.
bool WindowComplete(const WindowRule& rule, int64_t elapsed_ms, int64_t completed);

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_MEASUREMENT_WINDOW_H_

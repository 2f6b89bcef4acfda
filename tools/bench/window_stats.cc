#include "tools/bench/window_stats.h"

#include <algorithm>

namespace infera::bench {

double WindowStats::Throughput() const {
  const double seconds = duration_s();
  return seconds > 0 ? static_cast<double>(ok) / seconds : 0;
}

void WindowStats::Merge(const WindowStats& other) {
  if (start_ns == 0 && end_ns == 0) {
    start_ns = other.start_ns;
    end_ns = other.end_ns;
  } else {
    start_ns = std::min(start_ns, other.start_ns);
    end_ns = std::max(end_ns, other.end_ns);
  }
  sent += other.sent;
  ok += other.ok;
  errors += other.errors;
  dropped += other.dropped;
  output_tokens += other.output_tokens;
  for (const auto& [kind, count] : other.error_counts) {
    ErrorCount& mine = error_counts[kind];
    if (mine.count == 0) mine.example = count.example;
    mine.count += count.count;
  }
  latency.Merge(other.latency);
  send_lag.Merge(other.send_lag);
  ttft.Merge(other.ttft);
  tpot.Merge(other.tpot);
}

}  // namespace infera::bench

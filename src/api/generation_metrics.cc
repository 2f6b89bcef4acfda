#include "api/generation_metrics.h"

#include <algorithm>

namespace infera {

Histogram Histogram::WithBounds(std::vector<double> bounds) {
  Histogram h;
  h.bounds = std::move(bounds);
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

void Histogram::Observe(double value) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin());
  ++counts[i];
  sum += value;
  ++count;
}

double Histogram::Quantile(double q) const {
  if (count == 0) return 0;
  const double target = q * static_cast<double>(count);
  double seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (seen + static_cast<double>(counts[i]) >= target && counts[i] > 0) {
      const double lo = i == 0 ? 0 : bounds[i - 1];
      const double hi = i < bounds.size() ? bounds[i] : lo;
      return lo + (hi - lo) * (target - seen) / static_cast<double>(counts[i]);
    }
    seen += static_cast<double>(counts[i]);
  }
  return bounds.empty() ? 0 : bounds.back();
}

}  // namespace infera

// The search of `infera analyze`: coordinate descent over the dimensions (dimensions.h),
// one dimension at a time in order, each walked by its strategy, with early stop when a
// step breaks the SLO or `patience` + 1 steps in a row do not improve the objective by at
// least `min_gain_pct`. Why this search: docs/analyze.md.
//
// The measurement is a function, so the strategy is tested with a fake one
// (search_test.cc) and driven by real bench sweeps in `infera analyze`. A point is
// measured at most once (points are identified by DescribePoint).
//
// Thread-compatible; runs on the calling thread.
#ifndef INFERA_TOOLS_ANALYZE_SEARCH_H_
#define INFERA_TOOLS_ANALYZE_SEARCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/analyze/dimensions.h"
#include "tools/analyze/objective.h"

namespace infera::analyze {

struct SearchOptions {
  double min_gain_pct = 5;
  int max_points = 40;
  // Greedy dimensions: values tried past one that did not help before stopping.
  int patience = 1;
};

struct MeasuredPoint {
  ConfigPoint point;
  std::string label;      // DescribePoint
  std::string dimension;  // the dimension being searched when it was measured ("start" first)
  PointResult result;
};

struct SearchResult {
  std::vector<MeasuredPoint> measured;
  int best = -1;            // index into `measured`; -1 when nothing was measured
  int64_t full_grid = 0;    // distinct points of the full grid of the active dimensions
  std::string stop_reason;  // empty: the search completed
};

using MeasureFn = std::function<PointResult(const ConfigPoint&)>;
// Polled between points; true ends the search (Ctrl-C, a dead server).
using StopFn = std::function<bool()>;

// The candidate lists of `dimensions` for `context` (empty lists dropped).
std::vector<std::pair<const Dimension*, std::vector<std::string>>> ActiveDimensions(
    const std::vector<Dimension>& dimensions, const SearchContext& context);

// Distinct points (by DescribePoint) of the full grid of the active dimensions.
int64_t FullGridSize(const std::vector<Dimension>& dimensions, const SearchContext& context);

SearchResult RunSearch(const std::vector<Dimension>& dimensions, const SearchContext& context,
                       const Objective& objective, const SearchOptions& options, const MeasureFn& measure,
                       const StopFn& stop);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_SEARCH_H_

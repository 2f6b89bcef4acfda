#include "tools/analyze/search.h"

#include <map>
#include <optional>
#include <set>

#include "common/str_cat.h"

namespace infera::analyze {
namespace {

class Searcher {
 public:
  Searcher(const std::vector<Dimension>& dimensions, const Objective& objective, const SearchOptions& options,
           const MeasureFn& measure, const StopFn& stop, SearchResult* result)
      : dimensions_(dimensions), objective_(objective), options_(options), measure_(measure), stop_(stop),
        result_(result) {}

  // The result of `point` (measured now, or earlier); nullopt when the search must end.
  std::optional<PointResult> Measure(const ConfigPoint& point, const std::string& dimension) {
    const std::string label = DescribePoint(point, dimensions_);
    if (auto it = seen_.find(label); it != seen_.end()) return result_->measured[it->second].result;
    if (!result_->stop_reason.empty()) return std::nullopt;
    if (stop_ && stop_()) {
      result_->stop_reason = "stopped";
      return std::nullopt;
    }
    if (static_cast<int>(result_->measured.size()) >= options_.max_points) {
      result_->stop_reason = StrCat("--max-points ", options_.max_points, " reached");
      return std::nullopt;
    }
    MeasuredPoint m{point, label, dimension, measure_(point)};
    seen_[label] = static_cast<int>(result_->measured.size());
    result_->measured.push_back(m);
    const int index = static_cast<int>(result_->measured.size()) - 1;
    if (result_->best < 0 || Better(objective_, m.result, result_->measured[result_->best].result)) {
      result_->best = index;
    }
    return m.result;
  }

  // True when `candidate` is worth moving to from `current`.
  bool Helps(const PointResult& candidate, const PointResult& current) const {
    return Better(objective_, candidate, current) &&
           GainPercent(objective_, candidate, current) >= options_.min_gain_pct;
  }

  // Walks one dimension from `*current` (whose result is `*current_result`); moves both
  // to the best value found. False when the search must end.
  bool Walk(const Dimension& d, const std::vector<std::string>& values, ConfigPoint* current,
            PointResult* current_result) {
    size_t start = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i] == (*current)[d.name]) start = i;
    }
    auto at = [&](size_t i) {
      ConfigPoint p = *current;
      p[d.name] = values[i];
      return p;
    };
    switch (d.strategy) {
      case SearchStrategy::kGreedyAscending: {
        int misses = 0;
        for (size_t i = start + 1; i < values.size(); ++i) {
          const ConfigPoint p = at(i);
          auto r = Measure(p, d.name);
          if (!r) return false;
          if (!r->loaded) continue;  // a refused combination: recorded, skipped
          if (current_result->met && !r->met) break;  // broke the SLO: larger values will not mend it
          if (!Helps(*r, *current_result)) {
            // Stopped helping; look `patience` steps further (a plateau, or noise)
            // before giving up on the dimension.
            if (++misses > options_.patience) break;
            continue;
          }
          misses = 0;
          *current = p;
          *current_result = *r;
        }
        return true;
      }
      case SearchStrategy::kExhaustive: {
        const ConfigPoint from = *current;
        for (size_t i = 0; i < values.size(); ++i) {
          if (i == start) continue;
          ConfigPoint p = from;
          p[d.name] = values[i];
          auto r = Measure(p, d.name);
          if (!r) return false;
          if (Helps(*r, *current_result)) {
            *current = p;
            *current_result = *r;
          }
        }
        return true;
      }
      case SearchStrategy::kBisect: {
        // Bisection on the slope, for a unimodal objective over the (sorted) list:
        // compare mid with mid + 1; if the next step helps by >= min gain the best is
        // above mid, else at or below it. Each step halves [lo, hi]; a flat stretch
        // counts as not helping, so the smaller value (less added latency) wins.
        std::map<size_t, PointResult> r;
        r[start] = *current_result;
        auto get = [&](size_t i) -> std::optional<PointResult> {
          if (auto it = r.find(i); it != r.end()) return it->second;
          auto m = Measure(at(i), d.name);
          if (m) r[i] = *m;
          return m;
        };
        size_t lo = start, hi = values.size() - 1;
        while (lo < hi) {
          const size_t mid = lo + (hi - lo) / 2;
          auto here = get(mid);
          if (!here) return false;
          auto next = get(mid + 1);
          if (!next) return false;
          if (Helps(*next, *here)) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        if (lo != start && Helps(r[lo], *current_result)) {
          *current = at(lo);
          *current_result = r[lo];
        }
        return true;
      }
    }
    return true;
  }

 private:
  const std::vector<Dimension>& dimensions_;
  const Objective& objective_;
  const SearchOptions& options_;
  const MeasureFn& measure_;
  const StopFn& stop_;
  SearchResult* result_;
  std::map<std::string, int> seen_;  // label -> index in measured
};

}  // namespace

std::vector<std::pair<const Dimension*, std::vector<std::string>>> ActiveDimensions(
    const std::vector<Dimension>& dimensions, const SearchContext& context) {
  std::vector<std::pair<const Dimension*, std::vector<std::string>>> active;
  for (const Dimension& d : dimensions) {
    std::vector<std::string> values = d.candidates(context);
    if (!values.empty()) active.emplace_back(&d, std::move(values));
  }
  return active;
}

int64_t FullGridSize(const std::vector<Dimension>& dimensions, const SearchContext& context) {
  const auto active = ActiveDimensions(dimensions, context);
  std::set<std::string> distinct;
  constexpr size_t kCap = 1'000'000;
  std::vector<size_t> index(active.size(), 0);
  while (distinct.size() < kCap) {
    ConfigPoint p;
    for (size_t i = 0; i < active.size(); ++i) p[active[i].first->name] = active[i].second[index[i]];
    distinct.insert(DescribePoint(p, dimensions));
    size_t k = 0;
    while (k < active.size() && ++index[k] == active[k].second.size()) index[k++] = 0;
    if (k == active.size()) break;
  }
  return static_cast<int64_t>(distinct.size());
}

SearchResult RunSearch(const std::vector<Dimension>& dimensions, const SearchContext& context,
                       const Objective& objective, const SearchOptions& options, const MeasureFn& measure,
                       const StopFn& stop) {
  SearchResult result;
  result.full_grid = FullGridSize(dimensions, context);
  const auto active = ActiveDimensions(dimensions, context);
  ConfigPoint current;
  for (const auto& [d, values] : active) current[d->name] = values.front();
  Searcher searcher(dimensions, objective, options, measure, stop, &result);
  auto first = searcher.Measure(current, "start");
  if (!first) return result;
  PointResult current_result = *first;
  for (const auto& [d, values] : active) {
    if (!d->applies(current)) continue;
    if (!searcher.Walk(*d, values, &current, &current_result)) break;
  }
  return result;
}

}  // namespace infera::analyze

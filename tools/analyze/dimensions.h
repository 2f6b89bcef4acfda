// The search space of `infera analyze` as data: one Dimension per configuration knob.
// Adding a knob is one entry in Dimensions() (dimensions.cc): its name, how its
// candidate values are found for a model, which search strategy walks them, when it
// matters, and how it edits an inference::ModelConfig.
//
//   instances        instance_group count: 1 .. cores               greedy ascending
//   batch            off, then dynamic batching with                   greedy ascending
//                    preferred_batch_size = 2, 4, 8, ... <= the model's max_batch_size
//                    (and max_batch_size = the same, only with --allow-api-change)
//   queue_delay_us   dynamic_batching.max_queue_delay_microseconds:    bisection
//                    0, 100, 200, 400, ... <= --max-queue-delay-us (only with batching on)
//   precision        the pytorch backend's PRECISION parameter         exhaustive
//                    (pytorch_libtorch models, values from --precisions)
//
// What clients may send is never narrowed unless asked: without allow_api_change the
// model's max_batch_size (and its inputs) are kept, and ApplyPoint refuses a config that
// would lower or change them (NarrowsApi), whatever a dimension does.
//
// Thread-safe (immutable data, pure functions).
#ifndef INFERA_TOOLS_ANALYZE_DIMENSIONS_H_
#define INFERA_TOOLS_ANALYZE_DIMENSIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera::analyze {

// Dimension name -> chosen value (text, e.g. "2", "off", "bf16").
using ConfigPoint = std::map<std::string, std::string>;

enum class SearchStrategy {
  kGreedyAscending,  // step up the list while each step helps by >= min gain
                     // (a refused load is skipped, the next value tried)
  kBisect,           // bisection over the (sorted) list's indices
  kExhaustive,       // every value (categorical)
};

// How a point may edit the config.
struct ApplyRules {
  // --allow-api-change: the batch dimension also lowers max_batch_size to its value
  // (clients sending more rows are then refused).
  bool allow_api_change = false;
};

// What the candidate lists depend on.
struct SearchContext {
  int cores = 1;
  int64_t model_max_batch_size = 0;  // the model's own; 0: no batching dimension
  std::string platform;              // e.g. "pytorch_libtorch"; backend name when no platform
  int64_t max_queue_delay_us = 2000;
  std::vector<std::string> precisions;  // empty: the precision dimension is off
};

struct Dimension {
  std::string name;
  SearchStrategy strategy;
  // Candidates in order; the first is the starting value. Empty: off for this model.
  std::function<std::vector<std::string>(const SearchContext&)> candidates;
  // Whether the dimension matters at `point` (queue delay needs batching on).
  std::function<bool(const ConfigPoint&)> applies;
  // Sets `value` in `config`.
  std::function<absl::Status(const std::string& value, const ApplyRules& rules, inference::ModelConfig& config)>
      apply;
};

// The dimensions, in search order.
const std::vector<Dimension>& Dimensions();

// Names of the known dimensions, comma-separated (for error messages).
std::string DimensionNames();

// Names accepted for a dimension besides its own ("max_batch", the old name of batch).
// Returns the dimension's name; `name` itself when it is no alias.
std::string CanonicalDimensionName(const std::string& name);

// Why `config` accepts fewer requests than `base` (max_batch_size lowered, inputs
// changed), or empty when it accepts at least the same.
std::string NarrowsApi(const inference::ModelConfig& base, const inference::ModelConfig& config);

// `base` with every applicable dimension of `point` applied (in Dimensions() order).
// InvalidArgument for an unknown dimension name or a malformed value; FailedPrecondition
// when the result would narrow the API and `rules` do not allow it.
absl::StatusOr<inference::ModelConfig> ApplyPoint(const inference::ModelConfig& base,
                                                  const ConfigPoint& point,
                                                  const std::vector<Dimension>& dimensions,
                                                  const ApplyRules& rules = {});

// "instances=2 batch=8 queue_delay_us=100": the applicable values, in order; the
// identity of a point (two points with the same description load the same config).
std::string DescribePoint(const ConfigPoint& point, const std::vector<Dimension>& dimensions);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_DIMENSIONS_H_

#include "tools/analyze/dimensions.h"

#include <algorithm>
#include <charconv>

#include "common/str_cat.h"

namespace infera::analyze {
namespace {

constexpr char kPytorchPlatform[] = "pytorch_libtorch";
constexpr char kPrecisionKey[] = "PRECISION";
constexpr char kValidatePrecisionKey[] = "VALIDATE_PRECISION";

absl::StatusOr<int64_t> ParseInt(const std::string& name, const std::string& value, int64_t low, int64_t high) {
  int64_t v = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (error != std::errc() || end != value.data() + value.size() || v < low || v > high) {
    return absl::InvalidArgumentError(
        StrCat("dimension ", name, ": '", value, "' is not an integer in [", low, ", ", high, "]"));
  }
  return v;
}

bool BatchingOn(const ConfigPoint& point) {
  auto it = point.find("batch");
  return it != point.end() && it->second != "off";
}

std::vector<Dimension> MakeDimensions() {
  std::vector<Dimension> d;
  d.push_back({"instances", SearchStrategy::kGreedyAscending,
               [](const SearchContext& c) {
                 std::vector<std::string> v;
                 for (int i = 1; i <= std::max(1, c.cores); ++i) v.push_back(std::to_string(i));
                 return v;
               },
               [](const ConfigPoint&) { return true; },
               [](const std::string& value, const ApplyRules&, inference::ModelConfig& config) -> absl::Status {
                 auto n = ParseInt("instances", value, 1, 1024);
                 if (!n.ok()) return n.status();
                 if (config.instance_group_size() == 0) {
                   config.add_instance_group()->set_kind(inference::ModelInstanceGroup::KIND_CPU);
                 }
                 while (config.instance_group_size() > 1) config.mutable_instance_group()->RemoveLast();
                 config.mutable_instance_group(0)->set_count(static_cast<int32_t>(*n));
                 return absl::OkStatus();
               }});
  d.push_back({"batch", SearchStrategy::kGreedyAscending,
               [](const SearchContext& c) {
                 std::vector<std::string> v;
                 if (c.model_max_batch_size <= 0) return v;
                 v.push_back("off");
                 int64_t b = 2;
                 for (; b <= c.model_max_batch_size; b *= 2) v.push_back(std::to_string(b));
                 // The model's own maximum is a candidate too when it is no power of two.
                 if (b / 2 != c.model_max_batch_size && c.model_max_batch_size > 1) {
                   v.push_back(std::to_string(c.model_max_batch_size));
                 }
                 return v;
               },
               [](const ConfigPoint&) { return true; },
               [](const std::string& value, const ApplyRules& rules, inference::ModelConfig& config) -> absl::Status {
                 if (value == "off") {
                   config.clear_dynamic_batching();
                   return absl::OkStatus();
                 }
                 auto n = ParseInt("batch", value, 1, 1 << 20);
                 if (!n.ok()) return n.status();
                 // The batch the batcher aims for; the largest accepted stays the model's
                 // unless the API may change.
                 if (rules.allow_api_change || *n > config.max_batch_size()) {
                   config.set_max_batch_size(static_cast<int32_t>(*n));
                 }
                 auto* batching = config.mutable_dynamic_batching();
                 batching->clear_preferred_batch_size();
                 batching->add_preferred_batch_size(static_cast<int32_t>(*n));
                 return absl::OkStatus();
               }});
  d.push_back({"queue_delay_us", SearchStrategy::kBisect,
               [](const SearchContext& c) {
                 std::vector<std::string> v;
                 if (c.model_max_batch_size <= 0) return v;
                 v.push_back("0");
                 for (int64_t us = 100; us <= c.max_queue_delay_us; us *= 2) v.push_back(std::to_string(us));
                 return v;
               },
               BatchingOn,
               [](const std::string& value, const ApplyRules&, inference::ModelConfig& config) -> absl::Status {
                 auto us = ParseInt("queue_delay_us", value, 0, 10'000'000);
                 if (!us.ok()) return us.status();
                 config.mutable_dynamic_batching()->set_max_queue_delay_microseconds(static_cast<uint64_t>(*us));
                 return absl::OkStatus();
               }});
  d.push_back({"precision", SearchStrategy::kExhaustive,
               [](const SearchContext& c) {
                 return c.platform == kPytorchPlatform ? c.precisions : std::vector<std::string>{};
               },
               [](const ConfigPoint&) { return true; },
               [](const std::string& value, const ApplyRules&, inference::ModelConfig& config) -> absl::Status {
                 if (value.empty()) return absl::InvalidArgumentError("dimension precision: empty value");
                 (*config.mutable_parameters())[kPrecisionKey].set_string_value(value);
                 // A reduced precision is compared with fp32 at load: below the backend's
                 // accuracy floors the load fails and the point is recorded as refused.
                 if (value != "fp32") (*config.mutable_parameters())[kValidatePrecisionKey].set_string_value("true");
                 return absl::OkStatus();
               }});
  return d;
}

}  // namespace

const std::vector<Dimension>& Dimensions() {
  static const std::vector<Dimension>* const kDimensions = new std::vector<Dimension>(MakeDimensions());
  return *kDimensions;
}

std::string DimensionNames() {
  std::vector<std::string> names;
  for (const Dimension& d : Dimensions()) names.push_back(d.name);
  return StrJoin(names, ", ");
}

std::string CanonicalDimensionName(const std::string& name) { return name == "max_batch" ? "batch" : name; }

std::string NarrowsApi(const inference::ModelConfig& base, const inference::ModelConfig& config) {
  if (config.max_batch_size() < base.max_batch_size()) {
    return StrCat("max_batch_size ", base.max_batch_size(), " -> ", config.max_batch_size(), ": clients sending more than ",
                  std::max<int64_t>(1, config.max_batch_size()), " rows would be refused");
  }
  if (config.input_size() != base.input_size()) return "the inputs would change";
  for (int i = 0; i < base.input_size(); ++i) {
    if (config.input(i).SerializeAsString() != base.input(i).SerializeAsString()) {
      return StrCat("input '", base.input(i).name(), "' would change");
    }
  }
  return "";
}

absl::StatusOr<inference::ModelConfig> ApplyPoint(const inference::ModelConfig& base, const ConfigPoint& point,
                                                  const std::vector<Dimension>& dimensions, const ApplyRules& rules) {
  for (const auto& [name, value] : point) {
    const bool known = std::any_of(dimensions.begin(), dimensions.end(),
                                   [&name = name](const Dimension& d) { return d.name == name; });
    if (!known) {
      return absl::InvalidArgumentError(StrCat("unknown dimension '", name, "' (known: ", DimensionNames(), ")"));
    }
  }
  inference::ModelConfig config = base;
  for (const Dimension& d : dimensions) {
    auto it = point.find(d.name);
    if (it == point.end() || !d.applies(point)) continue;
    if (absl::Status s = d.apply(it->second, rules, config); !s.ok()) return s;
  }
  if (!rules.allow_api_change) {
    if (std::string why = NarrowsApi(base, config); !why.empty()) {
      return absl::FailedPreconditionError(StrCat("refused to narrow the API (", why, "); --allow-api-change allows it"));
    }
  }
  return config;
}

std::string DescribePoint(const ConfigPoint& point, const std::vector<Dimension>& dimensions) {
  std::vector<std::string> parts;
  for (const Dimension& d : dimensions) {
    auto it = point.find(d.name);
    if (it == point.end() || !d.applies(point)) continue;
    parts.push_back(StrCat(d.name, "=", it->second));
  }
  return StrJoin(parts, " ");
}

}  // namespace infera::analyze

#include "tools/analyze/analyze_options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "common/str_cat.h"
#include "tools/analyze/dimensions.h"

namespace infera::analyze {
namespace {

constexpr char kPrecisions[] = "fp32, bf16, fp16, int8_dynamic";

absl::StatusOr<double> ParseNumber(const std::string& flag, const std::string& value, double low, double high) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < low || v > high) {
    return absl::InvalidArgumentError(StrCat(flag, ": '", value, "' is not a number in [", low, ", ", high, "]"));
  }
  return v;
}

absl::StatusOr<int64_t> ParseInteger(const std::string& flag, const std::string& value, int64_t low, int64_t high) {
  auto v = ParseNumber(flag, value, static_cast<double>(low), static_cast<double>(high));
  if (!v.ok()) return v.status();
  if (*v != std::floor(*v)) return absl::InvalidArgumentError(StrCat(flag, ": '", value, "' is not an integer"));
  return static_cast<int64_t>(*v);
}

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const size_t end = comma == std::string::npos ? value.size() : comma;
    out.push_back(value.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string AnalyzeHelpText() {
  return
      "Usage: infera analyze --model-repository DIR -m MODEL --objective OBJECTIVE [flags]\n\n"
      "Finds the model configuration that best meets OBJECTIVE: starts its own server (explicit\n"
      "model control, loopback, ephemeral ports), loads MODEL under a series of configurations\n"
      "(instances x dynamic batching x queue delay [x precision]) chosen by coordinate descent,\n"
      "measures each --repeats times with the bench engine, and writes to --out: config.pbtxt (the\n"
      "model's own file with only the changed fields edited, comments kept), report.md (medians,\n"
      "spreads, what changed) and latency_throughput.svg (docs/analyze.md).\n\n"
      "It never narrows what clients may send: max_batch_size and the inputs stay the model's\n"
      "unless --allow-api-change is given.\n\n"
      "Objectives:\n"
      "  max-throughput:p99<=X[ms]  highest throughput with P99 <= X ms (p50/p90/p95 too)\n"
      "  min-latency:rate>=Y        lowest P99 while serving >= Y req/s\n"
      "A bound is met only when every measurement of a point meets it; \"within noise\" when only\n"
      "the median does.\n\n"
      "Flags:\n"
      "  --model-repository DIR    the model repository (required)\n"
      "  -m, --model-name MODEL    the model (required)\n"
      "  --objective OBJECTIVE     (required)\n"
      "  --out DIR                 output folder (default analyze-MODEL)\n"
      "  --time-per-point S        time of one measurement of a configuration (default 3)\n"
      "  --repeats N               measurements per configuration, 1-20 (default 3); the report\n"
      "                            gives their median and spread and warns above 10 %\n"
      "  --max-points N            configurations measured at most (default 40)\n"
      "  --concurrency RANGE       closed-loop sweep per configuration, max-throughput objectives\n"
      "                            (default 1:16:x2; bench's RANGE syntax)\n"
      "  --min-gain PCT            a step must improve the objective by PCT % to be taken\n"
      "                            (default 5)\n"
      "  --patience N              values tried past one that did not help before a dimension\n"
      "                            stops (default 1)\n"
      "  --max-queue-delay-us US   largest queue delay tried (default 2000)\n"
      "  --max-instances N         largest instance count tried (default: cores)\n"
      "  --dimensions LIST         dimensions searched (default all:\n"
      "                            " + DimensionNames() + ")\n"
      "  --allow-api-change        let the batch dimension lower max_batch_size too (clients\n"
      "                            sending more rows are then refused; the report says so)\n"
      "  --precisions LIST         pytorch PRECISION values to try (fp32, bf16, fp16,\n"
      "                            int8_dynamic; default fp32,bf16,int8_dynamic; non-fp32 points\n"
      "                            load with VALIDATE_PRECISION, so one below the backend's\n"
      "                            accuracy floors is refused, not measured)\n"
      "  --binary PATH             the infera binary to serve with (default this one)\n"
      "  --baseline                also measure the model's own config.pbtxt first (row 0)\n";
}

absl::StatusOr<AnalyzeOptions> ParseAnalyzeOptions(const std::vector<std::string>& args) {
  AnalyzeOptions o;
  o.concurrency.start = 1;
  o.concurrency.end = 16;
  o.concurrency.step_kind = bench::RangeSpec::StepKind::kMultiply;
  o.concurrency.step = 2;
  bool objective_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (flag == "-h" || flag == "--help") {
      o.help = true;
      continue;
    }
    if ((flag == "--baseline" || flag == "--allow-api-change") && !has_value) {
      (flag == "--baseline" ? o.baseline : o.allow_api_change) = true;
      continue;
    }
    if (flag == "--baseline" || flag == "--allow-api-change") {
      return absl::InvalidArgumentError(StrCat(flag, " takes no value"));
    }
    static const char* const kWithValue[] = {"--model-repository", "--repository", "-m", "--model-name", "--model",
                                             "--objective", "--out", "--time-per-point", "--repeats", "--max-points", "--concurrency", "--min-gain", "--patience",
                                             "--max-queue-delay-us", "--max-instances", "--dimensions",
                                             "--precisions", "--binary"};
    if (std::find(std::begin(kWithValue), std::end(kWithValue), flag) == std::end(kWithValue)) {
      return absl::InvalidArgumentError(StrCat("unknown flag '", flag, "'"));
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(StrCat(flag, " needs a value"));
      value = args[++i];
    }
    if (flag == "--model-repository" || flag == "--repository") {
      o.repository = value;
    } else if (flag == "-m" || flag == "--model-name" || flag == "--model") {
      o.model = value;
    } else if (flag == "--objective") {
      auto objective = ParseObjective(value);
      if (!objective.ok()) return objective.status();
      o.objective = *objective;
      objective_given = true;
    } else if (flag == "--out") {
      o.out = value;
    } else if (flag == "--time-per-point") {
      auto v = ParseNumber(flag, value, 0.2, 600);
      if (!v.ok()) return v.status();
      o.time_per_point_s = *v;
    } else if (flag == "--repeats") {
      auto v = ParseInteger(flag, value, 1, 20);
      if (!v.ok()) return v.status();
      o.repeats = static_cast<int>(*v);
    } else if (flag == "--max-points") {
      auto v = ParseInteger(flag, value, 1, 1000);
      if (!v.ok()) return v.status();
      o.max_points = static_cast<int>(*v);
    } else if (flag == "--concurrency") {
      auto range = bench::ParseRangeSpec(value);
      if (!range.ok()) return absl::InvalidArgumentError(StrCat("--concurrency: ", range.status().message()));
      if (range->Levels().size() > 16 || range->end > 4096) {
        return absl::InvalidArgumentError("--concurrency: at most 16 levels, each <= 4096");
      }
      o.concurrency = *range;
    } else if (flag == "--min-gain") {
      auto v = ParseNumber(flag, value, 0, 1000);
      if (!v.ok()) return v.status();
      o.min_gain_pct = *v;
    } else if (flag == "--patience") {
      auto v = ParseInteger(flag, value, 0, 10);
      if (!v.ok()) return v.status();
      o.patience = static_cast<int>(*v);
    } else if (flag == "--max-queue-delay-us") {
      auto v = ParseInteger(flag, value, 100, 10'000'000);
      if (!v.ok()) return v.status();
      o.max_queue_delay_us = *v;
    } else if (flag == "--max-instances") {
      auto v = ParseInteger(flag, value, 1, 256);
      if (!v.ok()) return v.status();
      o.max_instances = static_cast<int>(*v);
    } else if (flag == "--dimensions") {
      o.dimensions = SplitList(value);
      for (std::string& d : o.dimensions) {
        d = CanonicalDimensionName(d);
        const auto& all = Dimensions();
        if (std::none_of(all.begin(), all.end(), [&d](const Dimension& x) { return x.name == d; })) {
          return absl::InvalidArgumentError(
              StrCat("--dimensions: unknown dimension '", d, "' (known: ", DimensionNames(), ")"));
        }
      }
    } else if (flag == "--precisions") {
      o.precisions = SplitList(value);
      for (const std::string& p : o.precisions) {
        if (p != "fp32" && p != "bf16" && p != "fp16" && p != "int8_dynamic") {
          return absl::InvalidArgumentError(StrCat("--precisions: unknown precision '", p, "' (", kPrecisions, ")"));
        }
      }
    } else if (flag == "--binary") {
      o.binary = value;
    }
  }
  if (o.help) return o;
  if (o.repository.empty()) return absl::InvalidArgumentError("--model-repository DIR is required");
  if (o.model.empty()) return absl::InvalidArgumentError("-m/--model-name MODEL is required");
  if (o.model.find('/') != std::string::npos || o.model == "." || o.model == "..") {
    return absl::InvalidArgumentError(StrCat("-m: '", o.model, "' is not a model directory name"));
  }
  if (!objective_given) {
    return absl::InvalidArgumentError("--objective is required ('max-throughput:p99<=X ms' or 'min-latency:rate>=Y')");
  }
  if (o.out.empty()) o.out = StrCat("analyze-", o.model);
  return o;
}

}  // namespace infera::analyze

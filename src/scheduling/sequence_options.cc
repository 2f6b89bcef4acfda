#include "scheduling/sequence_options.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/status.h"
#include "common/str_cat.h"
#include "repository/config_limits.h"

namespace infera {
namespace {

using Control = inference::ModelSequenceBatching::Control;

absl::Status Error(std::string_view field, std::string_view message) {
  return absl::InvalidArgumentError(StrCat("sequence_batching.", field, ": ", message));
}

std::string_view KindName(Control::Kind kind) {
  switch (kind) {
    case Control::CONTROL_SEQUENCE_START: return "CONTROL_SEQUENCE_START";
    case Control::CONTROL_SEQUENCE_READY: return "CONTROL_SEQUENCE_READY";
    case Control::CONTROL_SEQUENCE_END: return "CONTROL_SEQUENCE_END";
    case Control::CONTROL_SEQUENCE_CORRID: return "CONTROL_SEQUENCE_CORRID";
    default: return "unknown";
  }
}

// START/READY/END: exactly one of the three value lists, with exactly two values.
absl::Status ParseFlagControl(const std::string& field, const Control& c, SequenceControl& out) {
  const int lists = (c.int32_false_true_size() > 0) + (c.fp32_false_true_size() > 0) +
                    (c.bool_false_true_size() > 0);
  if (lists != 1) {
    return Error(field, StrCat(KindName(c.kind()),
                               " needs exactly one of int32_false_true, fp32_false_true, bool_false_true"));
  }
  if (c.data_type() != inference::TYPE_INVALID) {
    return Error(field, StrCat(KindName(c.kind()), " takes its type from the *_false_true list, not data_type"));
  }
  auto two = [&](int n) -> absl::Status {
    if (n != 2) return Error(field, StrCat(KindName(c.kind()), " needs 2 values [false, true], got ", n));
    return absl::OkStatus();
  };
  if (c.int32_false_true_size() > 0) {
    RETURN_IF_ERROR(two(c.int32_false_true_size()));
    out.dtype = DataType::kInt32;
    out.false_value = c.int32_false_true(0);
    out.true_value = c.int32_false_true(1);
  } else if (c.fp32_false_true_size() > 0) {
    RETURN_IF_ERROR(two(c.fp32_false_true_size()));
    out.dtype = DataType::kFp32;
    out.false_value = c.fp32_false_true(0);
    out.true_value = c.fp32_false_true(1);
  } else {
    RETURN_IF_ERROR(two(c.bool_false_true_size()));
    out.dtype = DataType::kBool;
    out.false_value = c.bool_false_true(0) ? 1 : 0;
    out.true_value = c.bool_false_true(1) ? 1 : 0;
  }
  return absl::OkStatus();
}

absl::Status ParseCorrelationControl(const std::string& field, const Control& c, SequenceControl& out) {
  if (c.int32_false_true_size() + c.fp32_false_true_size() + c.bool_false_true_size() > 0) {
    return Error(field, "CONTROL_SEQUENCE_CORRID takes data_type, not *_false_true values");
  }
  switch (c.data_type()) {
    case inference::TYPE_UINT64: out.dtype = DataType::kUint64; break;
    case inference::TYPE_INT64: out.dtype = DataType::kInt64; break;
    case inference::TYPE_UINT32: out.dtype = DataType::kUint32; break;
    case inference::TYPE_INT32: out.dtype = DataType::kInt32; break;
    case inference::TYPE_STRING: out.dtype = DataType::kBytes; break;
    default:
      return Error(field, StrCat("CONTROL_SEQUENCE_CORRID data_type must be TYPE_UINT64, TYPE_INT64, "
                                 "TYPE_UINT32, TYPE_INT32 or TYPE_STRING, got ",
                                 inference::DataType_Name(c.data_type())));
  }
  return absl::OkStatus();
}

absl::Status ParseControls(const inference::ModelConfig& config, SequenceBatchingOptions& options) {
  std::set<std::string> input_names;
  for (const auto& input : config.input()) input_names.insert(input.name());
  std::set<std::string> names;
  std::set<int> kinds;
  const auto& inputs = config.sequence_batching().control_input();
  for (int i = 0; i < inputs.size(); ++i) {
    const auto& input = inputs[i];
    const std::string field = StrCat("control_input[", i, "]");
    if (input.name().empty() || input.name().size() > 256) {
      return Error(field, "name must be 1 to 256 characters");
    }
    if (input_names.count(input.name()) > 0) {
      return Error(field, StrCat("'", input.name(), "' is also a config input (the batcher supplies it)"));
    }
    if (!names.insert(input.name()).second) {
      return Error(field, StrCat("'", input.name(), "' is named twice"));
    }
    if (input.control_size() != 1) {
      return Error(field, StrCat("'", input.name(), "' needs exactly one control, has ", input.control_size()));
    }
    const Control& c = input.control(0);
    if (!kinds.insert(c.kind()).second) {
      return Error(field, StrCat(KindName(c.kind()), " is given twice"));
    }
    SequenceControl control;
    control.input_name = input.name();
    switch (c.kind()) {
      case Control::CONTROL_SEQUENCE_START: control.kind = SequenceControl::Kind::kStart; break;
      case Control::CONTROL_SEQUENCE_READY: control.kind = SequenceControl::Kind::kReady; break;
      case Control::CONTROL_SEQUENCE_END: control.kind = SequenceControl::Kind::kEnd; break;
      case Control::CONTROL_SEQUENCE_CORRID: control.kind = SequenceControl::Kind::kCorrelationId; break;
      default: return Error(field, StrCat("unknown control kind ", static_cast<int>(c.kind())));
    }
    if (control.kind == SequenceControl::Kind::kCorrelationId) {
      RETURN_IF_ERROR(ParseCorrelationControl(field, c, control));
      options.correlation_id_dtype = control.dtype;
    } else {
      RETURN_IF_ERROR(ParseFlagControl(field, c, control));
    }
    options.controls.push_back(std::move(control));
  }
  return absl::OkStatus();
}

absl::Status ParseOldest(const inference::ModelConfig& config, SequenceBatchingOptions& options) {
  const auto& oldest = config.sequence_batching().oldest();
  if (oldest.max_candidate_sequences() < 1 || oldest.max_candidate_sequences() > kMaxBatchSize) {
    return Error("oldest.max_candidate_sequences",
                 StrCat(oldest.max_candidate_sequences(), " must be 1 to ", kMaxBatchSize));
  }
  const int64_t rows = std::max(1, config.max_batch_size());
  for (int i = 0; i < oldest.preferred_batch_size_size(); ++i) {
    const int32_t size = oldest.preferred_batch_size(i);
    if (size < 1 || size > rows) {
      return Error(StrCat("oldest.preferred_batch_size[", i, "]"),
                   StrCat(size, " must be 1 to max_batch_size (", rows, ")"));
    }
  }
  if (oldest.max_queue_delay_microseconds() > kMaxQueueDelayMicros) {
    return Error("oldest.max_queue_delay_microseconds",
                 StrCat(oldest.max_queue_delay_microseconds(), " is more than the limit of ", kMaxQueueDelayMicros));
  }
  if (oldest.preserve_ordering()) return Error("oldest.preserve_ordering", "is not supported");
  options.strategy = SequenceBatchingOptions::Strategy::kOldest;
  options.slots_per_instance = oldest.max_candidate_sequences();
  options.max_batch_rows = rows;
  options.max_queue_delay = std::chrono::microseconds(oldest.max_queue_delay_microseconds());
  options.preferred_rows.assign(oldest.preferred_batch_size().begin(), oldest.preferred_batch_size().end());
  std::sort(options.preferred_rows.begin(), options.preferred_rows.end());
  return absl::OkStatus();
}

absl::Status ParseDirect(const inference::ModelConfig& config, SequenceBatchingOptions& options) {
  const auto& direct = config.sequence_batching().direct();
  if (direct.max_queue_delay_microseconds() > kMaxQueueDelayMicros) {
    return Error("direct.max_queue_delay_microseconds",
                 StrCat(direct.max_queue_delay_microseconds(), " is more than the limit of ", kMaxQueueDelayMicros));
  }
  const float utilization = direct.minimum_slot_utilization();
  if (!(utilization >= 0.0F && utilization <= 1.0F)) {
    return Error("direct.minimum_slot_utilization", StrCat(utilization, " must be 0 to 1"));
  }
  options.max_queue_delay = std::chrono::microseconds(direct.max_queue_delay_microseconds());
  // The small epsilon keeps 0.5 × 4 at 2 rows despite float rounding.
  options.min_ready_rows =
      static_cast<int>(std::ceil(static_cast<double>(utilization) * options.slots_per_instance - 1e-6));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SequenceBatchingOptions> SequenceBatchingOptionsFromConfig(const inference::ModelConfig& config,
                                                                          size_t default_max_queue_size) {
  if (!config.has_sequence_batching()) return absl::InvalidArgumentError("no sequence_batching in the config");
  const auto& batching = config.sequence_batching();
  SequenceBatchingOptions options;
  options.model_name = config.name();
  options.batched = config.max_batch_size() > 0;
  options.slots_per_instance = std::max(1, config.max_batch_size());
  options.max_batch_rows = options.slots_per_instance;
  options.max_backlog_requests = std::max<size_t>(1, default_max_queue_size);
  if (batching.max_sequence_idle_microseconds() > kMaxTimeoutMicros) {
    return Error("max_sequence_idle_microseconds",
                 StrCat(batching.max_sequence_idle_microseconds(), " is more than the limit of ", kMaxTimeoutMicros));
  }
  if (batching.max_sequence_idle_microseconds() > 0) {
    options.max_idle = std::chrono::microseconds(batching.max_sequence_idle_microseconds());
  }
  if (config.model_transaction_policy().decoupled()) {
    return absl::InvalidArgumentError(
        "sequence_batching: a decoupled model cannot be a sequence model (not supported)");
  }
  RETURN_IF_ERROR(ParseControls(config, options));
  if (batching.has_oldest()) RETURN_IF_ERROR(ParseOldest(config, options));
  if (batching.has_direct()) RETURN_IF_ERROR(ParseDirect(config, options));
  return options;
}

}  // namespace infera

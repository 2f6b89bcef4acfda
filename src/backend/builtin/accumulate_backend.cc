// accumulate: the demo stateful model of the sequence batcher (docs/sequence_batching.md).
//
// One INT32 input and one INT32 output, dims [1] or [-1]; sequence_batching with START
// and READY controls (direct strategy). Row i of a batch is sequence slot i (the direct
// strategy's contract), so each instance keeps one running sum per slot: START resets
// it, every READY row adds all its input elements, and each output element is the sum so
// far (the output has the input's shape: Triton's qa sequence models, whose variable-size
// checks expect a row of n equal values v to add n·v); rows that are not READY (idle
// slots) leave the state alone and answer 0.
//
// With the oldest strategy rows are not slots: the sums are keyed by the CORRID control
// (TYPE_UINT64 or TYPE_INT64), dropped at END, and at most max_candidate_sequences are
// kept per instance — past that the least recently used goes, a sequence the batcher
// released for idleness (its next request must carry START, which resets it anyway).
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using Control = inference::ModelSequenceBatching::Control;

struct ControlSpec {
  std::string name;
  double false_value = 0;
};

// The control_input of `kind`, if the config has one.
std::optional<ControlSpec> FindControl(const inference::ModelConfig& config, Control::Kind kind) {
  for (const auto& input : config.sequence_batching().control_input()) {
    for (const auto& c : input.control()) {
      if (c.kind() != kind) continue;
      ControlSpec spec{input.name(), 0};
      if (c.int32_false_true_size() > 0) spec.false_value = c.int32_false_true(0);
      if (c.fp32_false_true_size() > 0) spec.false_value = c.fp32_false_true(0);
      if (c.bool_false_true_size() > 0) spec.false_value = c.bool_false_true(0) ? 1 : 0;
      return spec;
    }
  }
  return std::nullopt;
}

bool HasNumericCorrelationId(const inference::ModelConfig& config) {
  for (const auto& input : config.sequence_batching().control_input()) {
    for (const auto& c : input.control()) {
      if (c.kind() == Control::CONTROL_SEQUENCE_CORRID &&
          (c.data_type() == inference::TYPE_UINT64 || c.data_type() == inference::TYPE_INT64)) {
        return true;
      }
    }
  }
  return false;
}

const Tensor* Find(const std::vector<Tensor>& inputs, const std::string& name) {
  for (const Tensor& t : inputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Row `row` of a control tensor (INT32, FP32 or BOOL) differs from its false value.
bool FlagAt(const Tensor& t, int64_t row, double false_value) {
  double value = 0;
  if (t.dtype == DataType::kBool) {
    value = t.data.data()[row] != 0 ? 1 : 0;
  } else if (t.dtype == DataType::kFp32) {
    float f;
    std::memcpy(&f, t.data.data() + row * 4, 4);
    value = f;
  } else {
    int32_t i;
    std::memcpy(&i, t.data.data() + row * 4, 4);
    value = i;
  }
  return value != false_value;
}

class AccumulateInstance : public ModelInstance {
 public:
  AccumulateInstance(const inference::ModelConfig& config, ControlSpec start, ControlSpec ready,
                     std::optional<ControlSpec> end, std::optional<ControlSpec> corrid)
      : batched_(config.max_batch_size() > 0),
        input_(config.input(0).name()),
        output_(config.output(0).name()),
        start_(std::move(start)),
        ready_(std::move(ready)),
        end_(std::move(end)),
        corrid_(config.sequence_batching().has_oldest() ? std::move(corrid) : std::nullopt),
        slots_(std::max(1, config.max_batch_size())),
        max_sequences_(std::max(1, config.sequence_batching().oldest().max_candidate_sequences())),
        sums_(slots_, 0) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext&) override {
    const Tensor* input = Find(inputs, input_);
    const Tensor* start = Find(inputs, start_.name);
    const Tensor* ready = Find(inputs, ready_.name);
    const Tensor* end = end_ ? Find(inputs, end_->name) : nullptr;
    const Tensor* corrid = corrid_ ? Find(inputs, corrid_->name) : nullptr;
    if (input == nullptr || start == nullptr || ready == nullptr || (end_ && end == nullptr) ||
        (corrid_ && corrid == nullptr)) {
      return absl::InvalidArgumentError(StrCat("accumulate needs inputs '", input_, "', '", start_.name, "' and '",
                                               ready_.name, "' (is the model served by the sequence batcher?)"));
    }
    const int64_t rows = batched_ ? input->shape.at(0) : 1;
    auto holds_rows = [rows](const Tensor& control) {
      return control.data.size() >= static_cast<size_t>(rows) * (control.dtype == DataType::kBool ? 1 : 4);
    };
    const size_t elements = input->data.size() / 4;  // the batcher batches equal shapes only
    if (rows < 1 || rows > static_cast<int64_t>(slots_) || elements == 0 || elements % rows != 0 ||
        input->data.size() % 4 != 0 || !holds_rows(*start) || !holds_rows(*ready) || (end && !holds_rows(*end)) ||
        (corrid && corrid->data.size() < static_cast<size_t>(rows) * 8)) {
      return absl::InvalidArgumentError(StrCat("accumulate: a batch of ", rows, " rows does not fit its ", slots_,
                                               " slots and its controls"));
    }
    const size_t per_row = elements / rows;
    uint8_t* out = nullptr;
    Tensor output{output_, DataType::kInt32, input->shape, Buffer::Allocate(elements * 4, &out)};
    absl::MutexLock lock(&mu_);
    for (int64_t row = 0; row < rows; ++row) {
      int32_t value = 0;
      if (FlagAt(*ready, row, ready_.false_value)) {
        const bool starts = FlagAt(*start, row, start_.false_value);
        uint64_t key = 0;
        int32_t* sum = &sums_[row];
        if (corrid != nullptr) {
          std::memcpy(&key, corrid->data.data() + row * 8, 8);
          Keyed& keyed = by_corrid_[key];
          keyed.used = ++uses_;
          sum = &keyed.sum;
        }
        if (starts) *sum = 0;
        for (size_t e = 0; e < per_row; ++e) {
          int32_t x;
          std::memcpy(&x, input->data.data() + (row * per_row + e) * 4, 4);
          // Wraps as the int32 arithmetic of Triton's qa models; never undefined.
          *sum = static_cast<int32_t>(static_cast<uint32_t>(*sum) + static_cast<uint32_t>(x));
        }
        value = *sum;
        if (corrid != nullptr && end != nullptr && FlagAt(*end, row, end_->false_value)) by_corrid_.erase(key);
      }
      for (size_t e = 0; e < per_row; ++e) std::memcpy(out + (row * per_row + e) * 4, &value, 4);
    }
    while (by_corrid_.size() > max_sequences_) {
      auto least = std::min_element(by_corrid_.begin(), by_corrid_.end(),
                                    [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
      by_corrid_.erase(least);
    }
    return std::vector<Tensor>{std::move(output)};
  }

 private:
  struct Keyed {
    int32_t sum = 0;
    uint64_t used = 0;  // the last execution that touched it (uses_)
  };

  const bool batched_;
  const std::string input_;
  const std::string output_;
  const ControlSpec start_;
  const ControlSpec ready_;
  const std::optional<ControlSpec> end_;
  const std::optional<ControlSpec> corrid_;  // oldest only
  const size_t slots_;
  const size_t max_sequences_;  // oldest: max_candidate_sequences
  absl::Mutex mu_;  // one worker calls Execute; the lock only documents the state's owner
  std::vector<int32_t> sums_ ABSL_GUARDED_BY(mu_);  // direct: per slot
  std::map<uint64_t, Keyed> by_corrid_ ABSL_GUARDED_BY(mu_);  // oldest: per sequence
  uint64_t uses_ ABSL_GUARDED_BY(mu_) = 0;
};

class AccumulateModel : public LoadedModel {
 public:
  explicit AccumulateModel(const inference::ModelConfig& config) : config_(config) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<AccumulateInstance>(config_, *FindControl(config_, Control::CONTROL_SEQUENCE_START),
                                                *FindControl(config_, Control::CONTROL_SEQUENCE_READY),
                                                FindControl(config_, Control::CONTROL_SEQUENCE_END),
                                                FindControl(config_, Control::CONTROL_SEQUENCE_CORRID));
  }

 private:
  const inference::ModelConfig& config_;
};

class AccumulateBackend : public Backend {
 public:
  std::string_view name() const override { return "accumulate"; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    auto dims_one = [](const auto& tensor) {
      return tensor.dims_size() == 1 && (tensor.dims(0) == 1 || tensor.dims(0) == -1);
    };
    if (config.input_size() != 1 || config.output_size() != 1 || config.input(0).data_type() != inference::TYPE_INT32 ||
        config.output(0).data_type() != inference::TYPE_INT32 || !dims_one(config.input(0)) ||
        !dims_one(config.output(0))) {
      return absl::InvalidArgumentError("accumulate: needs one TYPE_INT32 input and one TYPE_INT32 output, dims [1] or [-1]");
    }
    if (!config.has_sequence_batching()) {
      return absl::InvalidArgumentError("accumulate: needs sequence_batching");
    }
    if (config.sequence_batching().has_oldest() && !HasNumericCorrelationId(config)) {
      return absl::InvalidArgumentError(
          "accumulate: the oldest strategy needs a CONTROL_SEQUENCE_CORRID control of TYPE_UINT64 or TYPE_INT64 "
          "(its rows are not slots: the sums are kept per correlation id)");
    }
    if (!FindControl(config, Control::CONTROL_SEQUENCE_START) || !FindControl(config, Control::CONTROL_SEQUENCE_READY)) {
      return absl::InvalidArgumentError(
          "accumulate: sequence_batching needs CONTROL_SEQUENCE_START and CONTROL_SEQUENCE_READY control inputs");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    return std::make_unique<AccumulateModel>(*context.config);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateAccumulateBackend() { return std::make_unique<AccumulateBackend>(); }

}  // namespace infera

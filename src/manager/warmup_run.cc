#include "manager/warmup_run.h"

#include <memory>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "manager/output_check.h"

namespace infera {
namespace {

// A decoupled warm-up sample's responses, waited for on the loading thread: each checked
// against the config, the first failure kept. Thread-safe.
class WarmupSink final : public ResponseSink {
 public:
  WarmupSink(const inference::ModelConfig& config, int64_t rows) : config_(config), rows_(rows) {}
  absl::Status Send(std::vector<Tensor> outputs, bool final) override {
    absl::Status checked = CheckOutputSubset(config_, rows_, outputs);
    absl::MutexLock lock(&mu_);
    if (status_.ok()) status_ = checked;
    done_ = done_ || final || !checked.ok();
    return checked;
  }
  void Finish(absl::Status status) override {
    absl::MutexLock lock(&mu_);
    if (status_.ok()) status_ = std::move(status);
    done_ = true;
  }
  void SetGenerationTimings(const GenerationTimings&) override {}
  bool IsStopped() const override { return false; }
  // Waits for the final response; its first failure, or OK.
  absl::Status Wait() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&done_));
    return status_;
  }

 private:
  const inference::ModelConfig& config_;
  const int64_t rows_;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// One warm-up sample on a decoupled instance: every response it sends, until the final.
absl::Status WarmDecoupled(const inference::ModelConfig& config, const InferRequest& sample, int64_t rows,
                           ModelInstance& instance) {
  auto sink = std::make_shared<WarmupSink>(config, config.max_batch_size() > 0 ? rows : 0);
  std::vector<ModelInstance::DecoupledRequest> requests;
  requests.push_back({sample.inputs, RequestContext{&sample.parameters, nullptr, std::nullopt, rows},
                      ResponseSender(sink)});
  instance.ExecuteDecoupled(std::move(requests));
  return sink->Wait();
}

}  // namespace

absl::Status RunWarmupSamples(const inference::ModelConfig& config, bool decoupled,
                          const std::vector<InferRequest>& samples, const std::vector<int64_t>& rows,
                          ModelInstance& instance, size_t* failed_sample) {
  for (size_t s = 0; s < samples.size(); ++s) {
    *failed_sample = s;
    if (decoupled) {
      absl::Status answered = WarmDecoupled(config, samples[s], rows[s], instance);
      if (!answered.ok()) return absl::InternalError(StrCat(samples[s].id, " failed: ", answered.message()));
      continue;
    }
    // Not on the instance's worker (--cpu-placement pinned tells them apart).
    auto outputs = instance.Execute(samples[s].inputs, ExecutionContext::Warmup());
    if (!outputs.ok()) {
      return absl::InternalError(StrCat(samples[s].id, " failed: ", outputs.status().message()));
    }
    RETURN_IF_ERROR(CheckOutputs(config, config.max_batch_size() > 0 ? rows[s] : 0, *outputs));
  }
  return absl::OkStatus();
}

}  // namespace infera

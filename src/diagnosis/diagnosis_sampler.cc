#include "diagnosis/diagnosis_sampler.h"

#include <cstdlib>
#include <set>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera::diagnosis {

DiagnosisSampler::DiagnosisSampler(const ModelManager& manager, Options options)
    : manager_(manager), options_(std::move(options)) {
  if (options_.start_thread) thread_ = std::thread([this] { Loop(); });
}

DiagnosisSampler::~DiagnosisSampler() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void DiagnosisSampler::Loop() {
  while (true) {
    SampleAll();
    if (options_.after_pass) options_.after_pass();
    absl::MutexLock lock(&mu_);
    const bool* stop = &stop_;
    mu_.AwaitWithTimeout(absl::Condition(stop), absl::FromChrono(options_.period));
    if (stop_) return;
  }
}

ModelFacts DiagnosisSampler::FactsOf(const ModelVersionSnapshot& version) {
  const inference::ModelConfig& config = *version.config;
  ModelFacts facts;
  facts.max_batch_size = config.max_batch_size();
  facts.dynamic_batching = config.has_dynamic_batching();
  if (facts.dynamic_batching) facts.max_queue_delay_us = config.dynamic_batching().max_queue_delay_microseconds();
  facts.llm = config.backend() == "llm";
  if (facts.llm) {
    auto parameter = [&](const char* key) -> std::string {
      auto it = config.parameters().find(key);
      return it == config.parameters().end() ? "" : it->second.string_value();
    };
    facts.max_num_batched_tokens = std::atoll(parameter("max_num_batched_tokens").c_str());
    facts.kv_cache_memory = parameter("kv_cache_memory_bytes");
    facts.kv_cache_dtype = parameter("kv_cache_dtype");
    facts.prefix_caching = parameter("enable_prefix_caching") != "false";  // on by default
  }
  for (const auto& step : config.ensemble_scheduling().step()) {
    facts.ensemble_steps.push_back({step.model_name(), step.model_version()});
  }
  return facts;
}

DiagnosisSample DiagnosisSampler::Sample(const ModelVersionSnapshot& version) {
  DiagnosisSample sample;
  sample.time = version.taken;
  sample.stats = version.statistics;
  sample.load = version.load;
  sample.in_flight = version.in_flight;
  sample.llm = version.generation;
  return sample;
}

void DiagnosisSampler::Append(const Key& key, std::chrono::steady_clock::time_point created,
                              DiagnosisSample sample) {
  Ring& ring = rings_[key];
  if (ring.samples.empty() || ring.created != created) {
    ring.samples.clear();
    ring.created = created;
    DiagnosisSample zero;  // the counters at creation
    zero.time = created;
    ring.samples.push_back(std::move(zero));
  }
  ring.samples.push_back(std::move(sample));
  while (ring.samples.size() > options_.depth) ring.samples.pop_front();
}

void DiagnosisSampler::SampleAll() {
  auto versions = manager_.Snapshots("", std::nullopt);
  if (!versions.ok()) return;
  std::vector<std::pair<Key, std::pair<std::chrono::steady_clock::time_point, DiagnosisSample>>> taken;
  taken.reserve(versions->size());
  for (const ModelVersionSnapshot& version : *versions) {
    taken.push_back({Key(version.name, version.version), {version.created, Sample(version)}});
  }
  absl::MutexLock lock(&mu_);
  std::set<Key> seen;
  for (auto& [key, entry] : taken) {
    seen.insert(key);
    Append(key, entry.first, std::move(entry.second));
  }
  for (auto it = rings_.begin(); it != rings_.end();) {
    it = seen.count(it->first) ? std::next(it) : rings_.erase(it);
  }
}

absl::StatusOr<DiagnosisSampler::Answer> DiagnosisSampler::Diagnose(const std::string& name,
                                                                    std::optional<int64_t> version,
                                                                    int window_seconds) const {
  return DiagnoseAt(name, version, window_seconds, 0);
}

absl::StatusOr<DiagnosisSampler::Answer> DiagnosisSampler::DiagnoseAt(const std::string& name,
                                                                      std::optional<int64_t> version,
                                                                      int window_seconds, int depth) const {
  if (window_seconds < 1 || window_seconds > kMaxWindowSeconds) {
    return absl::InvalidArgumentError(
        StrCat("window must be 1..", kMaxWindowSeconds, " seconds, got ", window_seconds));
  }
  // The version an unversioned infer would get, and a snapshot of it (no handle kept).
  ASSIGN_OR_RETURN(ModelHandle model, manager_.GetModelVersion(name, version));
  const ModelVersionSnapshot snapshot = model->Snapshot();
  model.reset();
  const DiagnosisSample fresh = Sample(snapshot);
  const auto created = snapshot.created;
  const ModelFacts facts = FactsOf(snapshot);
  Answer answer;
  answer.model = snapshot.name;
  answer.version = snapshot.version;
  const auto window_start = fresh.time - std::chrono::seconds(window_seconds);
  {
    absl::MutexLock lock(&mu_);
    auto it = rings_.find(Key(answer.model, answer.version));
    const DiagnosisSample* older = nullptr;
    std::vector<const DiagnosisSample*> between;  // the ring's samples after `older`
    if (it != rings_.end() && it->second.created == created) {
      for (const DiagnosisSample& sample : it->second.samples) {
        if (older != nullptr) {
          between.push_back(&sample);
        } else if (sample.time >= window_start) {
          older = &sample;
        }
      }
      if (older == nullptr) older = &it->second.samples.back();  // all older than the window
    }
    // Not sampled yet (loaded since the last pass): its whole life, from zero counters.
    answer.window = Summarize(older, fresh, created, facts, between);
  }
  if (facts.ensemble_steps.empty() || depth >= kMaxEnsembleDepth) {
    answer.diagnosis = ::infera::diagnosis::Diagnose(answer.window);
    return answer;
  }
  // An ensemble does no work of its own: judged by its slowest step (by mean latency
  // over the same window), each step diagnosed as a model of its own.
  std::vector<StepVerdict> steps;
  std::vector<Diagnosis> diagnoses;
  std::set<std::pair<std::string, int64_t>> seen;
  for (const ModelFacts::Step& step : facts.ensemble_steps) {
    if (!seen.insert({step.model, step.version}).second) continue;
    const std::optional<int64_t> step_version =
        step.version > 0 ? std::optional<int64_t>(step.version) : std::nullopt;
    absl::StatusOr<Answer> inner = DiagnoseAt(step.model, step_version, window_seconds, depth + 1);
    if (!inner.ok()) continue;  // unloaded since: judged without it
    steps.push_back({inner->model, inner->version, inner->window.requests, inner->window.mean_latency_us,
                     inner->diagnosis.bottleneck_class});
    diagnoses.push_back(std::move(inner->diagnosis));
  }
  size_t slowest = steps.size();
  for (size_t i = 0; i < steps.size(); ++i) {
    if (slowest == steps.size() || steps[i].mean_latency_us > steps[slowest].mean_latency_us) slowest = i;
  }
  static const Diagnosis kNone;
  const Diagnosis& verdict = slowest < diagnoses.size() ? diagnoses[slowest] : kNone;
  answer.diagnosis = DiagnoseEnsemble(answer.window, std::move(steps), slowest, verdict);
  return answer;
}

}  // namespace infera::diagnosis

#include "diagnosis/diagnosis_sampler.h"

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
    absl::MutexLock lock(&mu_);
    const bool* stop = &stop_;
    mu_.AwaitWithTimeout(absl::Condition(stop), absl::FromChrono(options_.period));
    if (stop_) return;
  }
}

ModelFacts DiagnosisSampler::FactsOf(const ModelVersion& version) {
  const inference::ModelConfig& config = version.config();
  ModelFacts facts;
  facts.max_batch_size = config.max_batch_size();
  facts.dynamic_batching = config.has_dynamic_batching();
  if (facts.dynamic_batching) facts.max_queue_delay_us = config.dynamic_batching().max_queue_delay_microseconds();
  facts.llm = config.backend() == "llm";
  return facts;
}

DiagnosisSample DiagnosisSampler::Sample(const ModelVersion& version) const {
  DiagnosisSample sample;
  sample.time = std::chrono::steady_clock::now();
  sample.stats = version.statistics().Snapshot();
  sample.load = version.CumulativeLoad();
  if (options_.llm_probe) sample.llm = options_.llm_probe(version);
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
  auto versions = manager_.VersionsForStatistics("", std::nullopt);
  if (!versions.ok()) return;
  std::vector<std::pair<Key, std::pair<std::chrono::steady_clock::time_point, DiagnosisSample>>> taken;
  taken.reserve(versions->size());
  for (const std::shared_ptr<ModelVersion>& version : *versions) {
    taken.push_back({Key(version->name(), version->version()),
                     {version->statistics().created(), Sample(*version)}});
  }
  versions->clear();  // let go of the versions before taking the lock
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
  if (window_seconds < 1 || window_seconds > kMaxWindowSeconds) {
    return absl::InvalidArgumentError(
        StrCat("window must be 1..", kMaxWindowSeconds, " seconds, got ", window_seconds));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> model, manager_.GetModelVersion(name, version));
  const DiagnosisSample fresh = Sample(*model);
  const auto created = model->statistics().created();
  const ModelFacts facts = FactsOf(*model);
  Answer answer;
  answer.model = model->name();
  answer.version = model->version();
  model.reset();  // the counted handle: not held while waiting for the lock
  const auto window_start = fresh.time - std::chrono::seconds(window_seconds);
  {
    absl::MutexLock lock(&mu_);
    auto it = rings_.find(Key(answer.model, answer.version));
    const DiagnosisSample* older = nullptr;
    if (it != rings_.end() && it->second.created == created) {
      for (const DiagnosisSample& sample : it->second.samples) {
        if (sample.time >= window_start) {
          older = &sample;
          break;
        }
      }
      if (older == nullptr) older = &it->second.samples.back();  // all older than the window
    }
    // Not sampled yet (loaded since the last pass): its whole life, from zero counters.
    answer.window = older ? Summarize(older, fresh, created, facts) : Summarize(nullptr, fresh, created, facts);
  }
  answer.diagnosis = ::infera::diagnosis::Diagnose(answer.window);
  return answer;
}

}  // namespace infera::diagnosis

#include "manager/model_version.h"

#include <algorithm>
#include <chrono>

#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/completion_batch.h"
#include "common/str_cat.h"
#include "manager/decoupled_response_sink.h"
#include "manager/output_check.h"
#include "manager/request_validator.h"
#include "manager/warmup.h"
#include "manager/warmup_run.h"
#include "repository/model_config_util.h"
#include "scheduling/batch_assembler.h"
#include "scheduling/dynamic_batcher.h"
#include "scheduling/scheduling_options.h"
#include "scheduling/sequence_batcher.h"
#include "scheduling/sequence_options.h"

namespace infera {
namespace {

using SteadyClock = std::chrono::steady_clock;


// Runs `tasks` through `run_parallel`, or in order when it is unset.
void RunTasks(const std::function<void(std::vector<std::function<void()>>)>& run_parallel,
              std::vector<std::function<void()>> tasks) {
  if (run_parallel && tasks.size() > 1) {
    run_parallel(std::move(tasks));
  } else {
    for (auto& task : tasks) task();
  }
}

// The LoadedModel of a composite version: it has no instance of its own.
class NoInstancesModel : public LoadedModel {
 public:
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return absl::FailedPreconditionError("a composite model (ensemble) has no instances");
  }
};

}  // namespace

struct ModelVersion::BatchExecution {
  SteadyClock::time_point start, input_done, infer_done, end;
  int64_t rows = 0;  // the execution's total rows
  absl::Status status;  // why the execution failed; OK when it ran
  // Each request's outputs, in request order: a lone request's pass through in `single`
  // (no scatter, no per-request vector), several requests' are in `per_request`.
  std::vector<Tensor> single;
  std::vector<std::vector<Tensor>> per_request;
  std::vector<Tensor>& outputs(size_t request) { return per_request.empty() ? single : per_request[request]; }
};

ModelVersion::BatchExecution ModelVersion::ExecuteBatch(ModelInstance& instance, ScheduledRequests& requests) const {
  BatchExecution e;
  e.start = SteadyClock::now();
  ExecutionContext context;
  for (const auto& r : requests) {
    e.rows += r->batch_size;
    context.Add(RequestContext{&r->request.parameters, r->request.cancellation, r->deadline, r->batch_size,
                               r->request.token_meter});
  }
  absl::StatusOr<std::vector<Tensor>> outputs = GatherBatchInputs(requests);
  e.input_done = SteadyClock::now();
  if (outputs.ok()) outputs = instance.Execute(std::move(*outputs), context);
  e.infer_done = SteadyClock::now();
  if (outputs.ok()) {
    absl::Status checked = CheckOutputs(*config_, config_->max_batch_size() > 0 ? e.rows : 0, *outputs);
    // Outputs that break the config are the model's fault (backend.h), whatever code
    // the check used: never a request's, so never a reason to rerun the batch.
    if (!checked.ok()) outputs = absl::InternalError(checked.message());
  }
  if (!outputs.ok()) {
    e.status = outputs.status();
  } else if (requests.size() == 1) {
    e.single = std::move(*outputs);
  } else {
    std::vector<int64_t> batch_sizes;
    batch_sizes.reserve(requests.size());
    for (const auto& r : requests) batch_sizes.push_back(r->batch_size);
    absl::StatusOr<std::vector<std::vector<Tensor>>> scattered =
        ScatterBatchOutputs(std::move(*outputs), batch_sizes);
    if (scattered.ok()) {
      e.per_request = std::move(*scattered);
    } else {
      e.status = scattered.status();
    }
  }
  e.end = SteadyClock::now();
  return e;
}

ModelVersion::ModelVersion(Options options)
    : config_(std::move(options.config)),
      version_(options.version),
      statistics_(config_->max_batch_size(),
                  options.metrics ? options.metrics->ForModel(config_->name(), options.version) : nullptr) {}

ModelVersion::~ModelVersion() {
  if (scheduler_) scheduler_->Shutdown();  // join workers before their model goes away
  scheduler_.reset();
  loaded_.reset();
}

void ModelVersion::Shutdown(absl::Time deadline) { scheduler_->Shutdown(deadline); }

// The control block of a counted handle.
class ModelVersion::Handle {
 public:
  explicit Handle(std::shared_ptr<ModelVersion> version)
      : version_(std::move(version)), count_(version_->handles_) {
    absl::MutexLock lock(&count_->mu);
    ++count_->count;
  }
  ~Handle() {
    // The reference goes first: whoever sees the count reach zero holds the last one.
    version_.reset();
    absl::MutexLock lock(&count_->mu);
    --count_->count;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ModelVersion* get() const { return version_.get(); }

 private:
  std::shared_ptr<ModelVersion> version_;
  const std::shared_ptr<HandleCount> count_;
};

ModelHandle ModelVersion::AcquireHandle(const std::shared_ptr<ModelVersion>& version) {
  auto handle = std::make_shared<Handle>(version);
  ModelVersion* raw = handle->get();
  return ModelHandle(std::shared_ptr<ModelVersion>(std::move(handle), raw));
}

int64_t ModelVersion::NumHandles() const {
  absl::MutexLock lock(&handles_->mu);
  return handles_->count;
}

bool ModelVersion::AwaitNoHandles(absl::Time deadline) const {
  HandleCount& h = *handles_;
  absl::MutexLock lock(&h.mu);
  return h.mu.AwaitWithDeadline(
      absl::Condition(+[](HandleCount* c) ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->count == 0; }, &h), deadline);
}

void ModelVersion::CancelOutstandingWork() {
  // Decoupled senders see it through IsStopped() and end their requests Cancelled.
  work_cancelled_.store(true, std::memory_order_release);
  loaded_->CancelOutstandingWork();
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::NewWithLabels(const Options& options) {
  std::shared_ptr<ModelVersion> version(new ModelVersion(options));
  auto labels = LoadOutputLabels(*options.config, options.model_dir);
  if (!labels.ok()) {
    return absl::Status(labels.status().code(), StrCat("model '", options.config->name(), "' version ",
                                                       options.version, ": ", labels.status().message()));
  }
  version->labels_ = std::move(*labels);
  return version;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::Load(Options options) {
  return Load(std::move(options), LoadHooks());
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::Load(Options options, const LoadHooks& hooks) {
  const std::string where = StrCat("model '", options.config->name(), "' version ", options.version);
  // Decoupled: the config says so (its backend must answer that way), or the backend's
  // models always are (an LLM) — and then the served config says so too, as Triton's
  // clients read it to choose a streaming call.
  bool decoupled = options.config->model_transaction_policy().decoupled();
  if (decoupled && !options.backend->SupportsDecoupled()) {
    return absl::InvalidArgumentError(StrCat(where, ": model_transaction_policy.decoupled is true but backend '",
                                             options.backend->name(), "' answers each request once"));
  }
  if (options.backend->AlwaysDecoupled() && !decoupled) {
    auto served = std::make_shared<inference::ModelConfig>(*options.config);
    served->mutable_model_transaction_policy()->set_decoupled(true);
    options.config = std::move(served);
    decoupled = true;
  }
  if (decoupled && options.config->has_dynamic_batching() && options.config->dynamic_batching().preserve_ordering()) {
    return absl::InvalidArgumentError(StrCat(where, ": dynamic_batching.preserve_ordering cannot order the "
                                             "responses of a decoupled model (several per request)"));
  }
  const inference::ModelConfig& config = *options.config;
  ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> version, NewWithLabels(options));
  version->decoupled_ = decoupled;
  version->cache_ = CacheFor(options, decoupled);
  version->PrepareCacheMetrics();

  ModelLoadContext context{options.config.get(), options.version, options.model_dir,
                           options.model_dir / std::to_string(options.version), options.metrics,
                           hooks.timings};
  const auto load_start = std::chrono::steady_clock::now();
  auto loaded = options.backend->Load(context);
  if (hooks.timings != nullptr) hooks.timings->backend_load = std::chrono::steady_clock::now() - load_start;
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(), StrCat(where, ": ", loaded.status().message()));
  }
  version->loaded_ = std::move(*loaded);

  int num_instances = 0;
  for (const auto& group : config.instance_group()) num_instances += group.count();
  LoadTimings ignored_timings;
  LoadTimings& timings = hooks.timings != nullptr ? *hooks.timings : ignored_timings;
  timings.instances.assign(num_instances, {});
  timings.instance_threads = hooks.run_parallel ? std::clamp(hooks.parallel_threads, 1, std::max(1, num_instances)) : 1;
  // Creation, then warm-up, each phase over all instances at once (run_parallel) or in
  // order; the error reported is the one the sequential order meets first.
  std::vector<std::unique_ptr<ModelInstance>> instances(num_instances);
  std::vector<absl::Status> created(num_instances);
  {
    std::vector<std::function<void()>> tasks;
    for (int i = 0; i < num_instances; ++i) {
      tasks.push_back([&, i] {
        ScopedLoadTimer timer(&timings.instances[i].create);
        InstanceOptions instance_options{i, StrCat(config.name(), "_", i), std::max(1, options.default_intra_op_threads)};
        auto instance = version->loaded_->CreateInstance(instance_options);
        if (instance.ok()) {
          instances[i] = std::move(*instance);
        } else {
          created[i] = instance.status();
        }
      });
    }
    RunTasks(hooks.run_parallel, std::move(tasks));
  }
  for (int i = 0; i < num_instances; ++i) {
    if (!created[i].ok()) {
      return absl::Status(created[i].code(), StrCat(where, ": instance ", i, ": ", created[i].message()));
    }
  }
  absl::StatusOr<std::vector<InferRequest>> built = BuildWarmupRequests(config, options.model_dir);
  if (!built.ok()) return absl::Status(built.status().code(), StrCat(where, ": ", built.status().message()));
  std::vector<InferRequest>& samples = *built;
  std::vector<int64_t> rows;
  for (InferRequest& sample : samples) {
    absl::StatusOr<int64_t> prepared = PrepareRequest(config, sample);
    if (!prepared.ok()) {
      return absl::InvalidArgumentError(StrCat(where, ": ", sample.id, ": ", prepared.status().message()));
    }
    rows.push_back(*prepared);
  }
  if (!samples.empty()) {
    std::vector<absl::Status> warmed(num_instances);
    std::vector<size_t> failed_sample(num_instances, 0);
    std::vector<std::function<void()>> tasks;
    for (int i = 0; i < num_instances; ++i) {
      tasks.push_back([&, i] {
        ScopedLoadTimer timer(&timings.instances[i].warmup);
        warmed[i] = RunWarmupSamples(config, decoupled, samples, rows, *instances[i], &failed_sample[i]);
      });
    }
    RunTasks(hooks.run_parallel, std::move(tasks));
    int first = -1;  // sample-major, as the sequential order runs them
    for (int i = 0; i < num_instances; ++i) {
      if (!warmed[i].ok() && (first < 0 || failed_sample[i] < failed_sample[first])) first = i;
    }
    if (first >= 0) return absl::Status(warmed[first].code(), StrCat(where, ": ", warmed[first].message()));
  }
  auto scheduling = SchedulingOptionsFromConfig(config, options.max_queue_size);
  if (!scheduling.ok()) {
    return absl::Status(scheduling.status().code(),
                        StrCat(where, ": ", scheduling.status().message()));
  }
  scheduling->run_inline = options.backend->RunsInline();
  ModelVersion* raw = version.get();
  if (config.has_sequence_batching()) {
    auto sequence = SequenceBatchingOptionsFromConfig(config, options.max_queue_size);
    if (!sequence.ok()) return absl::Status(sequence.status().code(), StrCat(where, ": ", sequence.status().message()));
    version->scheduler_ = std::make_unique<SequenceBatcher>(
        std::move(*sequence), std::move(instances),
        [raw](ModelInstance& instance, ScheduledRequests requests, CompletionBatch& completions) {
          raw->RunBatch(instance, std::move(requests), completions);
        });
    return version;
  }
  version->scheduler_ = std::make_unique<DynamicBatcher>(
      std::move(*scheduling), std::move(instances),
      [raw](ModelInstance& instance, ScheduledRequests requests, CompletionBatch& completions) {
        raw->RunBatch(instance, std::move(requests), completions);
      });
  return version;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::CreateComposite(Options options,
                                                                           std::unique_ptr<Scheduler> scheduler) {
  ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> version, NewWithLabels(options));
  version->loaded_ = std::make_unique<NoInstancesModel>();
  version->composite_ = true;
  version->cache_ = CacheFor(options, /*decoupled=*/false);
  version->PrepareCacheMetrics();
  version->scheduler_ = std::move(scheduler);
  return version;
}

absl::StatusOr<InferResponse> ModelVersion::CompleteComposite(InferResponse response,
                                                              const std::vector<RequestedOutput>& requested,
                                                              int64_t batch_size, uint64_t request_ns) {
  response.model_name = name();
  response.model_version = version_;
  response.outputs = SelectOutputs(std::move(response.outputs), requested);
  RETURN_IF_ERROR(ApplyClassification(*config_, labels_, requested, response.outputs));
  const int64_t rows = config_->max_batch_size() > 0 ? batch_size : 1;
  statistics_.RecordExecution(1, rows, 0, request_ns, 0);
  statistics_.RecordSuccess(request_ns, 0, rows);
  return response;
}

size_t ModelVersion::QueueDepth() const { return scheduler_->QueueDepth(); }

ModelVersionSnapshot ModelVersion::Snapshot() const {
  ModelVersionSnapshot s;
  s.name = name();
  s.version = version_;
  s.config = config_;
  s.taken = SteadyClock::now();
  s.created = statistics_.created();
  s.statistics = statistics_.Snapshot();
  s.latency = statistics_.latency().Snapshot();
  s.load = scheduler_->CumulativeLoad();
  s.queue_depth = scheduler_->QueueDepth();
  s.in_flight = InFlight();
  if (const TextGenerator* generator = text_generator()) s.generation = generator->Metrics();
  return s;
}
Scheduler::Load ModelVersion::CumulativeLoad() const { return scheduler_->CumulativeLoad(); }

void ModelVersion::Infer(InferRequest request, InferCallback callback) {
  absl::StatusOr<int64_t> rows = PrepareRequest(*config_, request);
  if (!rows.ok()) {
    statistics_.RecordFailure(rows.status().code(), NanosBetween(request.arrival_time, SteadyClock::now()));
    callback(rows.status(), ResponseDelivery{});
    return;
  }
  std::optional<CacheMiss> cache_miss;
  if (cache_ != nullptr) {
    bool answered = false;
    cache_miss = LookUpInCache(request, *rows, callback, answered);
    if (answered) return;  // a hit: no queue, no execution
  }
  auto scheduled = std::make_unique<ScheduledRequest>();
  const SteadyClock::time_point arrival = request.arrival_time;
  arrivals_.fetch_add(1, std::memory_order_relaxed);
  inflight_.fetch_add(1, std::memory_order_relaxed);
  scheduled->request = std::move(request);
  scheduled->batch_size = *rows;
  // Every failure after this point (rejected, timed out, cancelled, backend error) is
  // counted here, once, by reason; a decoupled model's non-final responses pass through.
  std::vector<RequestedOutput> requested;
  if (composite_) requested = scheduled->request.outputs;
  // (Only a composite version's trace needs its start: one clock read less per request.)
  const SteadyClock::time_point started = composite_ ? SteadyClock::now() : SteadyClock::time_point{};
  scheduled->callback = [this, arrival, started, requested = std::move(requested),
                         batch_size = *rows, cache_miss = std::move(cache_miss),
                         callback = std::move(callback)](absl::StatusOr<InferResponse> result,
                                                         ResponseDelivery delivery) mutable {
    if (!delivery.final) return callback(std::move(result), delivery);
    if (composite_ && result.ok()) {
      // No queue of its own: the whole pipeline is the "compute" stage of a trace.
      result->timings = {started, started, SteadyClock::now(), batch_size, 1};
      result = CompleteComposite(std::move(*result), requested, batch_size, NanosBetween(arrival, SteadyClock::now()));
    }
    if (!result.ok()) statistics_.RecordFailure(result.status().code(), NanosBetween(arrival, SteadyClock::now()));
    if (cache_miss && result.ok()) InsertIntoCache(std::move(*cache_miss), *result);
    inflight_.fetch_sub(1, std::memory_order_relaxed);
    callback(std::move(result), delivery);
  };
  scheduler_->Enqueue(std::move(scheduled));
}

void ModelVersion::RefreshMetrics() {
  ModelMetrics* metrics = statistics_.metrics();
  if (metrics == nullptr || !scheduler_) return;
  LoadSample now{SteadyClock::now(), arrivals_.load(std::memory_order_relaxed),
                 scheduler_->CumulativeLoad()};
  absl::MutexLock lock(&sample_mu_);
  const LoadSample& before = last_sample_;
  const double seconds = std::chrono::duration<double>(now.time - before.time).count();
  double busy_ratio = 0, load_ratio = 0;
  if (before.time != SteadyClock::time_point{} && seconds > 0 && now.load.num_instances > 0) {
    const double instances = static_cast<double>(now.load.num_instances);
    const double busy_seconds = (now.load.busy_ns - before.load.busy_ns) * 1e-9;
    busy_ratio = std::min(1.0, busy_seconds / (seconds * instances));
    // Mean service time per request: this interval's, or the lifetime's when nothing ran.
    const uint64_t executed = now.load.executed_requests - before.load.executed_requests;
    const double service = executed > 0 ? busy_seconds / executed
                           : now.load.executed_requests > 0
                               ? now.load.busy_ns * 1e-9 / now.load.executed_requests
                               : 0;
    const double arrival_rate = (now.arrivals - before.arrivals) / seconds;
    load_ratio = arrival_rate * service / instances;
  }
  metrics->SetLoad(static_cast<double>(scheduler_->QueueDepth()), static_cast<double>(InFlight()),
                   busy_ratio, load_ratio);
  last_sample_ = now;
}

void ModelVersion::DropStopped(ScheduledRequests& requests, ResponseDelivery delivery) {
  // A sequence model's rows are its slots: the SequenceBatcher answers cancelled requests
  // itself (a padding row takes their place), and a dropped row would shift the slots.
  if (config_->has_sequence_batching()) return;
  const SteadyClock::time_point now = SteadyClock::now();
  auto stopped = [now](const std::unique_ptr<ScheduledRequest>& r) {
    return (r->request.cancellation && r->request.cancellation->IsCancelled()) || (r->deadline && *r->deadline <= now);
  };
  if (std::none_of(requests.begin(), requests.end(), stopped)) return;  // the common case: no allocation
  ScheduledRequests live;
  live.reserve(requests.size());
  for (std::unique_ptr<ScheduledRequest>& r : requests) {
    if (!stopped(r)) {
      live.push_back(std::move(r));
    } else if (r->request.cancellation && r->request.cancellation->IsCancelled()) {
      r->callback(absl::CancelledError("request cancelled by the client"), delivery);
    } else {
      r->callback(absl::DeadlineExceededError("request timed out before it could run"), delivery);
    }
  }
  requests = std::move(live);
}

void ModelVersion::RunBatch(ModelInstance& instance, ScheduledRequests requests, CompletionBatch& completions) {
  const ResponseDelivery delivery{/*final=*/true, &completions};
  // Cancelled or expired since the queue's last sweep: answered, never executed.
  DropStopped(requests, delivery);
  if (requests.empty()) return;
  if (decoupled_) return RunDecoupled(instance, std::move(requests));
  BatchExecution batch = ExecuteBatch(instance, requests);
  // (Not for a sequence model: a row run alone would leave its slot, the model's state.)
  if (requests.size() > 1 && batch.status.code() == absl::StatusCode::kInvalidArgument &&
      !config_->has_sequence_batching()) {
    // The backend blames an input, but which request's? Run each alone so that only the
    // one at fault gets the error. The failed batch did run: it counts as an execution
    // of its size (its time was spent), but no request's compute time.
    statistics_.RecordExecution(0, batch.rows, NanosBetween(batch.start, batch.input_done),
                                NanosBetween(batch.input_done, batch.infer_done),
                                NanosBetween(batch.infer_done, batch.end));
    INFERA_LOG(VERBOSE) << "model '" << name() << "' version " << version_ << ": a batch of " << requests.size()
                        << " requests failed (" << batch.status.message()
                        << "); running each request alone";
    RunEachAlone(instance, std::move(requests), batch.start, delivery);
    return;
  }
  Complete(requests, batch, batch.start, delivery);
}

void ModelVersion::RunDecoupled(ModelInstance& instance, ScheduledRequests requests) {
  const SteadyClock::time_point started = SteadyClock::now();
  std::vector<ModelInstance::DecoupledRequest> decoupled;
  decoupled.reserve(requests.size());
  for (std::unique_ptr<ScheduledRequest>& r : requests) {
    // The sink holds a handle to this version until the request's final response.
    auto sink = std::make_shared<DecoupledResponseSink>(NewHandle(), std::move(*r), started);
    RequestContext context = sink->context();
    decoupled.push_back(ModelInstance::DecoupledRequest{sink->TakeInputs(), context, ResponseSender(std::move(sink))});
  }
  instance.ExecuteDecoupled(std::move(decoupled));
}

void ModelVersion::RunEachAlone(ModelInstance& instance, ScheduledRequests requests,
                                SteadyClock::time_point batch_start, ResponseDelivery delivery) {
  for (std::unique_ptr<ScheduledRequest>& r : requests) {
    // What the queue would have checked had the request waited for a run of its own.
    if (r->request.cancellation && r->request.cancellation->IsCancelled()) {
      r->callback(absl::CancelledError("request cancelled by the client"), delivery);
      continue;
    }
    if (r->deadline && *r->deadline <= SteadyClock::now()) {
      r->callback(absl::DeadlineExceededError(
                      "request timed out before it could run alone (its batch failed on another request's input)"),
                  delivery);
      continue;
    }
    ScheduledRequests alone;
    alone.push_back(std::move(r));
    BatchExecution execution = ExecuteBatch(instance, alone);
    Complete(alone, execution, batch_start, delivery);
  }
}

void ModelVersion::Complete(ScheduledRequests& requests, BatchExecution& execution,
                            SteadyClock::time_point left_queue, ResponseDelivery delivery) {
  if (execution.status.ok()) {
    const auto padding = std::count_if(requests.begin(), requests.end(), [](const auto& r) { return r->padding; });
    statistics_.RecordExecution(requests.size() - static_cast<size_t>(padding), execution.rows, NanosBetween(execution.start, execution.input_done),
                                NanosBetween(execution.input_done, execution.infer_done),
                                NanosBetween(execution.infer_done, execution.end));
  } else if (execution.status.code() == absl::StatusCode::kInvalidArgument) {
    // The client's fault (backend.h): the 400 says it; an error log line per bad
    // request would let any client flood the log.
    INFERA_LOG(VERBOSE) << "model '" << name() << "' version " << version_
                        << " refused a request: " << execution.status.message();
  } else {
    INFERA_LOG(ERROR) << "model '" << name() << "' version " << version_
                      << " execution failed: " << execution.status.message();
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    ScheduledRequest& r = *requests[i];
    if (r.padding) continue;  // a sequence batcher's idle slot: no request, no statistics
    if (!execution.status.ok()) {
      r.callback(execution.status, delivery);
      continue;
    }
    InferResponse response;
    response.model_name = name();
    response.model_version = version_;
    response.id = std::move(r.request.id);
    response.outputs = SelectOutputs(std::move(execution.outputs(i)), r.request.outputs);
    if (absl::Status classified = ApplyClassification(*config_, labels_, r.request.outputs, response.outputs);
        !classified.ok()) {
      r.callback(classified, delivery);
      continue;
    }
    response.timings = {r.enqueue_time, left_queue, execution.infer_done, execution.rows,
                        static_cast<int64_t>(requests.size())};
    const uint64_t request_ns = NanosBetween(r.request.arrival_time, SteadyClock::now());
    statistics_.RecordSuccess(request_ns, NanosBetween(r.enqueue_time, left_queue),
                              config_->max_batch_size() > 0 ? r.batch_size : 1);
    r.callback(std::move(response), delivery);
  }
}

}  // namespace infera

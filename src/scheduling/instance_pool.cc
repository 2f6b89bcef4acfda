#include "scheduling/instance_pool.h"

#include "common/str_cat.h"

namespace infera {

InstancePool::InstancePool(Options options, std::vector<std::unique_ptr<ModelInstance>> instances,
                           BatchRunner runner)
    : options_(std::move(options)), instances_(std::move(instances)), runner_(std::move(runner)) {
  absl::MutexLock lock(&shutdown_mu_);
  workers_.reserve(instances_.size());
  for (auto& instance : instances_) {
    workers_.emplace_back([this, raw = instance.get()] { WorkerLoop(*raw); });
  }
}

InstancePool::~InstancePool() { Shutdown(); }

void InstancePool::Shutdown() {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void InstancePool::Enqueue(std::unique_ptr<ScheduledRequest> request) {
  absl::Status rejection;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      rejection = absl::UnavailableError(
          StrCat("model '", options_.model_name, "' is unloading; retry"));
    } else if (queue_.size() >= options_.max_queue_size) {
      rejection = absl::ResourceExhaustedError(
          StrCat("model '", options_.model_name, "' queue is full (", options_.max_queue_size,
                 " requests waiting); retry later"));
    } else {
      request->enqueue_time = std::chrono::steady_clock::now();
      queue_.push_back(std::move(request));
      return;
    }
  }
  // Outside the lock: the callback may do real work (encode and post a response).
  request->callback(std::move(rejection));
}

size_t InstancePool::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void InstancePool::WorkerLoop(ModelInstance& instance) {
  while (true) {
    std::unique_ptr<ScheduledRequest> request;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](InstancePool* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping and drained
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    ScheduledRequests batch;
    batch.push_back(std::move(request));
    runner_(instance, std::move(batch));
  }
}

}  // namespace infera

// InstancePool: the default scheduler — every request runs on its own, first come
// first served, on whichever of the model's N instances is free.
//
// Each instance is driven by one worker thread that owns it; the workers share one
// bounded FIFO queue. A full queue rejects at once (ResourceExhausted) instead of letting
// latency grow without bound. Shutdown() (also run by the destructor) stops intake, lets
// the workers finish every queued request, then joins them — so unloading a version
// never drops accepted work.
//
// Thread-safe.
//
// Usage:
//   auto pool = std::make_unique<InstancePool>(options, std::move(instances), runner);
//   pool->Enqueue(std::move(request));  // callback runs on a worker thread
#ifndef INFERA_SCHEDULING_INSTANCE_POOL_H_
#define INFERA_SCHEDULING_INSTANCE_POOL_H_

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "scheduling/scheduler.h"

namespace infera {

class InstancePool : public Scheduler {
 public:
  struct Options {
    std::string model_name;      // for errors and logs
    size_t max_queue_size = 1024;  // requests waiting; >= 1
  };

  // Starts one worker thread per instance. REQUIRES: !instances.empty().
  InstancePool(Options options, std::vector<std::unique_ptr<ModelInstance>> instances,
               BatchRunner runner);
  ~InstancePool() override;

  InstancePool(const InstancePool&) = delete;
  InstancePool& operator=(const InstancePool&) = delete;

  void Enqueue(std::unique_ptr<ScheduledRequest> request) override;
  size_t QueueDepth() const override;
  void Shutdown() override;

 private:
  void WorkerLoop(ModelInstance& instance);

  const Options options_;
  std::vector<std::unique_ptr<ModelInstance>> instances_;
  BatchRunner runner_;

  mutable absl::Mutex mu_;
  std::deque<std::unique_ptr<ScheduledRequest>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex shutdown_mu_;  // serialises Shutdown(); held while joining
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace infera

#endif  // INFERA_SCHEDULING_INSTANCE_POOL_H_

// ConfigLimits: the bounds every numeric field of a model config must respect, checked
// when the config is loaded (config.pbtxt or the load API's override), so that no value
// can exhaust the machine or overflow the arithmetic that uses it. The table, with the
// reasons, is in docs/lifecycle.md ("Configuration bounds").
//
// Fixed bounds are constants; bounds that depend on the machine (cores, memory) come
// from MachineLimits, passed in so that tests can fake a machine.
//
// Thread-safe (constants and a value type).
#ifndef INFERA_REPOSITORY_CONFIG_LIMITS_H_
#define INFERA_REPOSITORY_CONFIG_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace infera {

// max_batch_size: statistics and the SLO policy keep one slot per batch size.
inline constexpr int32_t kMaxBatchSize = 1 << 16;
// version_policy.latest.num_versions (the thread budget multiplies it by instances).
inline constexpr uint32_t kMaxLatestVersions = 1024;
// Any one dimension of a declared tensor (dims, reshape, warmup dims).
inline constexpr int64_t kMaxDimension = (int64_t{1} << 31) - 1;
// Instances: per instance_group entry, and per model at least this many (see
// MachineLimits::MaxInstancesPerModel for the machine-dependent part).
inline constexpr int kMaxInstancesPerGroup = 64;
inline constexpr int kMinInstancesPerModelLimit = 64;
inline constexpr int kInstancesPerCore = 8;
// Threads one model may ask for (INTRA_OP_THREAD_COUNT, the LLM's num_threads), per core.
inline constexpr int kThreadsPerCore = 4;
// dynamic_batching.priority_levels: one queue (and its policy) per level.
inline constexpr uint64_t kMaxPriorityLevels = 256;
// Queue bounds (per level) as --max-queue-size allows.
inline constexpr uint64_t kMaxQueueSize = uint64_t{1} << 24;
// dynamic_batching.max_queue_delay_microseconds: 1 hour.
inline constexpr uint64_t kMaxQueueDelayMicros = uint64_t{3600} * 1000 * 1000;
// Queue-policy default_timeout_microseconds and a request's `timeout`: 1 day.
inline constexpr uint64_t kMaxTimeoutMicros = uint64_t{86400} * 1000 * 1000;
// model_warmup: runs (a sample's count, and the counts summed over all samples), the
// bytes of one warmup input, and of all samples together.
inline constexpr uint32_t kMaxWarmupCount = 1000;
inline constexpr int64_t kMaxWarmupInputBytes = int64_t{256} << 20;
inline constexpr int64_t kMaxWarmupTotalBytes = int64_t{1} << 30;
// Ensembles: steps per ensemble (validation and scheduling are linear in it), and the
// length of an ensemble tensor name.
inline constexpr int kMaxEnsembleSteps = 256;
inline constexpr size_t kMaxEnsembleTensorNameLength = 256;
// Ensembles nested in ensembles: the longest chain (an ensemble whose steps are plain
// models is 1 deep). Each level is a call on the requesting thread's stack, and loads
// and requests check it (ensemble/ensemble_nesting.h); Triton pipelines nest 1 or 2 deep.
inline constexpr int kMaxEnsembleDepth = 16;

// What the machine allows, for the bounds that depend on it.
struct MachineLimits {
  int num_cores = 1;                  // CPUs this process may use (AvailableCpus)
  int64_t physical_memory_bytes = 0;  // physical RAM

  // This machine, measured once.
  static const MachineLimits& Current();

  // Instances of one model, over all its instance groups: 8 per core, at least 64.
  int MaxInstancesPerModel() const;
  // Threads one model instance may ask for: 4 per core.
  int MaxThreads() const;
};

}  // namespace infera

#endif  // INFERA_REPOSITORY_CONFIG_LIMITS_H_

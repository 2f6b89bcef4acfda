// WarmupScope: marks the calling thread as running a model's warm-up (model_warmup
// samples, run by whichever thread loads the version), so that an instance can tell those
// runs from its worker's real executions.
//
// Why: `--cpu-placement pinned` pins an instance's worker thread and its intra-op team at
// the first real execution. The loader's warm-up must not count as one: with parallel
// start-up loads a version's instances may be created on one loader thread and warmed on
// another, so "not the creating thread" is not "the worker" (a loader thread was pinned
// and the worker never was).
//
// Thread-compatible: a scope belongs to the thread that created it. Scopes nest.
//
// Usage:
//   { WarmupScope warming; instance.Execute(sample_inputs); }
//   ... in an instance: if (!WarmupScope::Active()) PinWorker();
#ifndef INFERA_BACKEND_WARMUP_SCOPE_H_
#define INFERA_BACKEND_WARMUP_SCOPE_H_

namespace infera {

class WarmupScope {
 public:
  WarmupScope();
  ~WarmupScope();
  WarmupScope(const WarmupScope&) = delete;
  WarmupScope& operator=(const WarmupScope&) = delete;

  // True while a WarmupScope is alive on the calling thread.
  static bool Active();

 private:
  const bool outer_active_;
};

}  // namespace infera

#endif  // INFERA_BACKEND_WARMUP_SCOPE_H_

// ModelHandle: a request path's counted reference to a serving ModelVersion (TF Serving's
// ServableHandle). It keeps the version alive, and an unload, reload or shutdown drain
// waits (ModelVersion::AwaitNoHandles, bounded by its deadline) until every handle is
// gone before it retires the version. It is a type of its own, not a
// std::shared_ptr<ModelVersion>: the manager's ownership of a version is a different type
// that nobody else sees, and readers that only look (statistics, diagnosis, the console)
// get ModelVersionSnapshots, so whatever holds a version across a drain is visibly a
// request path holding a handle.
//
// Hold a handle exactly as long as the request uses the version: a tensor request until
// it is in the version's scheduler (the scheduler's drain then keeps the version serving
// it), a decoupled request or a generation until its final response (the version does
// that itself). A handle releases its reference to the version before it is uncounted,
// so once the count is zero the manager holds the last reference, and the version is
// never destroyed on one of its own threads.
//
// Copyable: copies share one count. Thread-compatible (like a shared_ptr): distinct
// handles may be used and destroyed on any threads concurrently.
#ifndef INFERA_MANAGER_MODEL_HANDLE_H_
#define INFERA_MANAGER_MODEL_HANDLE_H_

#include <memory>
#include <utility>

namespace infera {

class ModelVersion;

class ModelHandle {
 public:
  ModelHandle() = default;  // empty

  ModelVersion* get() const { return ref_.get(); }
  ModelVersion& operator*() const { return *ref_; }
  ModelVersion* operator->() const { return ref_.get(); }
  explicit operator bool() const { return ref_ != nullptr; }
  // Lets go of the version now (the handle is empty after).
  void reset() { ref_.reset(); }

 private:
  friend class ModelVersion;  // the only maker (ModelVersion::AcquireHandle)
  explicit ModelHandle(std::shared_ptr<ModelVersion> counted) : ref_(std::move(counted)) {}

  // An aliasing pointer whose control block owns the count (ModelVersion::Handle).
  std::shared_ptr<ModelVersion> ref_;
};

}  // namespace infera

#endif  // INFERA_MANAGER_MODEL_HANDLE_H_

// VersionChoice: the serving version of one infer request, found by a single model lookup
// before the request's body is decoded (ModelManager::ChooseVersion).
//
// Frontends must check that the model exists before reading tensors (an unknown model is
// a 404 whatever the body holds), yet canary routing needs the request's `routing_key`
// parameter, which is in the body. The choice bridges the two without a second lookup:
//   - a version asked for by number, or a model without a canary: the counted handle
//     (ModelVersion::AcquireHandle) — or the lookup's error (version unknown, not ready),
//     which the frontend reports after decoding, so a malformed body still gets its 400;
//   - a model with a canary asked for without a version: the canary controller and the
//     handles of its ready sides (and of the newest ready version, the fallback when the
//     routed side is not ready); Resolve() routes by the key, exactly once per request.
//
// Move-only; Resolve() consumes it. The handles it holds keep their versions alive (a
// drain waits for them) until it is resolved (which releases all but the chosen one) or
// destroyed: hold it only for the decode.
//
// Not thread-safe (one request's).
#ifndef INFERA_MANAGER_VERSION_CHOICE_H_
#define INFERA_MANAGER_VERSION_CHOICE_H_

#include <memory>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "manager/canary.h"
#include "manager/model_version.h"

namespace infera {

class VersionChoice {
 public:
  VersionChoice(VersionChoice&&) = default;
  VersionChoice& operator=(VersionChoice&&) = default;

  // True when Resolve() routes by its key (a canary split is pending); false when the key
  // is ignored, so the caller need not build one.
  bool needs_routing_key() const { return canary_ != nullptr; }

  // The version to serve, routed by `routing_key` when needs_routing_key() (see canary.h:
  // sticky by key, an exact spread without one). The lookup's error when there is none.
  absl::StatusOr<ModelHandle> Resolve(std::string_view routing_key) &&;

 private:
  friend class ModelManager;
  // Settled at lookup: `chosen` is the handle or the error.
  explicit VersionChoice(absl::StatusOr<ModelHandle> chosen) : chosen_(std::move(chosen)) {}
  // A pending canary split. Each side's handle is null when that side is not ready;
  // `fallback` is the newest ready version (null when none is), `none_ready` the error
  // when no side nor fallback is available.
  VersionChoice(std::shared_ptr<const CanaryController> canary, ModelHandle canary_side,
                ModelHandle baseline_side, ModelHandle fallback,
                absl::Status none_ready)
      : chosen_(std::move(none_ready)),
        canary_(std::move(canary)),
        canary_side_(std::move(canary_side)),
        baseline_side_(std::move(baseline_side)),
        fallback_(std::move(fallback)) {}

  absl::StatusOr<ModelHandle> chosen_;
  std::shared_ptr<const CanaryController> canary_;
  ModelHandle canary_side_;
  ModelHandle baseline_side_;
  ModelHandle fallback_;
};

}  // namespace infera

#endif  // INFERA_MANAGER_VERSION_CHOICE_H_

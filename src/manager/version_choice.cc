#include "manager/version_choice.h"

namespace infera {

absl::StatusOr<ModelHandle> VersionChoice::Resolve(std::string_view routing_key) && {
  // Taken out of *this, so that the handles not chosen are released on return.
  VersionChoice choice = std::move(*this);
  if (choice.canary_ == nullptr) return std::move(choice.chosen_);
  // Route() once per request: without a key it advances the exact unkeyed spread.
  ModelHandle& side = choice.canary_->Route(routing_key) ? choice.canary_side_ : choice.baseline_side_;
  if (side) return std::move(side);
  if (choice.fallback_) return std::move(choice.fallback_);
  return std::move(choice.chosen_);
}

}  // namespace infera

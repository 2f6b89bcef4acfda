// A retry hint carried on an absl::Status (as a payload), so the core can say how
// long an overloaded model needs and each transport can render it (HTTP Retry-After).
#ifndef INFERA_COMMON_RETRY_AFTER_H_
#define INFERA_COMMON_RETRY_AFTER_H_

#include <optional>

#include "absl/status/status.h"

namespace infera {

// `status` with a hint to retry after `seconds` (clamped to [1, 3600]).
absl::Status WithRetryAfter(absl::Status status, int seconds);

// The hint attached by WithRetryAfter, if any.
std::optional<int> RetryAfterSeconds(const absl::Status& status);

}  // namespace infera

#endif  // INFERA_COMMON_RETRY_AFTER_H_

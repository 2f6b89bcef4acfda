// Which versions of a model to serve, given its version_policy and the numbered
// version folders that exist.
//
// Thread-safe (pure function).
#ifndef INFERA_REPOSITORY_VERSION_POLICY_H_
#define INFERA_REPOSITORY_VERSION_POLICY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera {

// Returns the versions to serve, ascending.
//   latest { num_versions: N } — the N highest available (default N = 1);
//   all {}                     — every available version;
//   specific { versions: [..] } — exactly those; NotFound naming any that is missing.
// FailedPrecondition when the selection is empty (no version folders).
absl::StatusOr<std::vector<int64_t>> SelectVersions(const inference::ModelVersionPolicy& policy,
                                                    std::vector<int64_t> available);

}  // namespace infera

#endif  // INFERA_REPOSITORY_VERSION_POLICY_H_

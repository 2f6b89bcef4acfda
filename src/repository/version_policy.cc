#include "repository/version_policy.h"

#include <algorithm>

#include "common/str_cat.h"

namespace infera {

absl::StatusOr<std::vector<int64_t>> SelectVersions(const inference::ModelVersionPolicy& policy,
                                                    std::vector<int64_t> available) {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  std::vector<int64_t> selected;
  switch (policy.policy_choice_case()) {
    case inference::ModelVersionPolicy::kAll:
      selected = available;
      break;
    case inference::ModelVersionPolicy::kSpecific: {
      for (int64_t version : policy.specific().versions()) {
        if (!std::binary_search(available.begin(), available.end(), version)) {
          return absl::NotFoundError(
              StrCat("version_policy.specific lists version ", version,
                     " but there is no version folder '", version, "'"));
        }
        selected.push_back(version);
      }
      std::sort(selected.begin(), selected.end());
      selected.erase(std::unique(selected.begin(), selected.end()), selected.end());
      break;
    }
    case inference::ModelVersionPolicy::kLatest:
    case inference::ModelVersionPolicy::POLICY_CHOICE_NOT_SET: {
      const size_t n = policy.has_latest() && policy.latest().num_versions() > 0
                           ? policy.latest().num_versions()
                           : 1;
      const size_t first = available.size() > n ? available.size() - n : 0;
      selected.assign(available.begin() + first, available.end());
      break;
    }
  }
  if (selected.empty()) {
    return absl::FailedPreconditionError(
        "no version to serve: the model directory has no numbered version folder (e.g. '1/')");
  }
  return selected;
}

}  // namespace infera

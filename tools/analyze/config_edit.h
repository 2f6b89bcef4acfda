// The config.pbtxt `infera analyze` writes is the user's own file, edited: the fields a
// point changed (max_batch_size, dynamic_batching and its preferred_batch_size /
// max_queue_delay_microseconds, instance_group, parameters) are edited in place in the
// original text, and everything else (comments, order, layout, other fields) is kept
// byte for byte. ConfigChanges lists the same edits as "field: before -> after" for the
// report.
//
// The editor understands the text format's structure (fields, nested messages, lists,
// strings, # comments), not the schema; every result is parsed back and compared with the
// wanted config, so an edit it cannot make in place is an error, never a wrong file.
//
// Thread-safe (pure functions).
#ifndef INFERA_TOOLS_ANALYZE_CONFIG_EDIT_H_
#define INFERA_TOOLS_ANALYZE_CONFIG_EDIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera::analyze {

struct FieldChange {
  std::string field;   // e.g. "max_batch_size", "dynamic_batching.preferred_batch_size"
  std::string before;  // "absent" when the base did not set it
  std::string after;   // "absent" when removed
};

// What differs between `base` and `chosen` in the fields the dimensions edit (any other
// difference is listed as "other fields").
std::vector<FieldChange> ConfigChanges(const inference::ModelConfig& base, const inference::ModelConfig& chosen);

// `original_text` (which parses to `base`) with the fields that differ in `chosen`
// edited in place. FailedPrecondition when the result would not parse to `chosen`.
absl::StatusOr<std::string> EditConfigText(const std::string& original_text, const inference::ModelConfig& base,
                                           const inference::ModelConfig& chosen);

}  // namespace infera::analyze

#endif  // INFERA_TOOLS_ANALYZE_CONFIG_EDIT_H_

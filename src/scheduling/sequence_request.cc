#include "scheduling/sequence_request.h"

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

absl::StatusOr<bool> Flag(const Parameters& parameters, std::string_view key) {
  auto it = parameters.find(key);
  if (it == parameters.end()) return false;
  if (const bool* value = std::get_if<bool>(&it->second)) return *value;
  return absl::InvalidArgumentError(StrCat("parameter '", key, "' must be a bool"));
}

absl::Status MissingId(std::string_view model_name) {
  return absl::InvalidArgumentError(StrCat("inference request to model '", model_name,
                                           "' must specify a non-zero or non-empty correlation ID"));
}

}  // namespace

std::string SequenceIdToString(const SequenceId& id) {
  if (const uint64_t* number = std::get_if<uint64_t>(&id)) return std::to_string(*number);
  return std::get<std::string>(id);
}

absl::StatusOr<SequenceRequest> ParseSequenceRequest(const Parameters& parameters, std::string_view model_name) {
  SequenceRequest request;
  auto it = parameters.find("sequence_id");
  if (it == parameters.end()) return MissingId(model_name);
  if (const int64_t* number = std::get_if<int64_t>(&it->second)) {
    if (*number < 0) return absl::InvalidArgumentError("parameter 'sequence_id' must be an unsigned integer or a string");
    if (*number == 0) return MissingId(model_name);
    request.id = static_cast<uint64_t>(*number);
  } else if (const std::string* text = std::get_if<std::string>(&it->second)) {
    if (text->empty()) return MissingId(model_name);
    if (text->size() > 1024) return absl::InvalidArgumentError("parameter 'sequence_id' is longer than 1024 bytes");
    request.id = *text;
  } else {
    return absl::InvalidArgumentError("parameter 'sequence_id' must be an unsigned integer or a string");
  }
  ASSIGN_OR_RETURN(request.start, Flag(parameters, "sequence_start"));
  ASSIGN_OR_RETURN(request.end, Flag(parameters, "sequence_end"));
  return request;
}

}  // namespace infera

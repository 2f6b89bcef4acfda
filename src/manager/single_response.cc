#include "manager/single_response.h"

#include <optional>
#include <string>
#include <utility>

#include "common/str_cat.h"

namespace infera {

InferCallback SingleResponse(std::string_view model, InferCallback callback) {
  return [model = std::string(model), callback = std::move(callback), kept = std::optional<InferResponse>(),
          failed = false](absl::StatusOr<InferResponse> result, ResponseDelivery delivery) mutable {
    auto too_many = [&] {
      return absl::InvalidArgumentError(StrCat("model '", model, "' sent more than one response to this request; ",
                                               "use generate_stream or gRPC ModelStreamInfer to receive several"));
    };
    if (!delivery.final) {
      if (!failed && kept) failed = true;  // a second response: fail at the final call
      if (!failed) kept = *std::move(result);
      return;
    }
    if (!result.ok()) return callback(std::move(result), delivery);
    if (failed) return callback(too_many(), delivery);
    const bool empty_final = result->outputs.empty();
    if (kept && !empty_final) return callback(too_many(), delivery);
    if (kept) return callback(*std::move(kept), delivery);
    if (empty_final) {
      return callback(absl::InvalidArgumentError(StrCat("model '", model, "' ended the request without a response")),
                      delivery);
    }
    callback(std::move(result), delivery);
  };
}

}  // namespace infera

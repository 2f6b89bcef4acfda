#include "manager/single_response.h"

#include <optional>
#include <string>
#include <utility>

#include "common/str_cat.h"

namespace infera {

InferCallback SingleResponse(std::string_view model, InferCallback callback,
                             std::shared_ptr<CancellationToken> stop) {
  return [model = std::string(model), callback = std::move(callback), stop = std::move(stop),
          kept = std::optional<InferResponse>(),
          failed = false](absl::StatusOr<InferResponse> result, ResponseDelivery delivery) mutable {
    auto too_many = [&] {
      return absl::InvalidArgumentError(StrCat("model '", model, "' sent more than one response to this request; ",
                                               "use generate_stream or gRPC ModelStreamInfer to receive several"));
    };
    if (!delivery.final) {
      if (!failed && kept) {  // a second response: fail at the final call, stop the model now
        failed = true;
        if (stop) stop->Cancel();
      }
      if (!failed) kept = *std::move(result);
      return;
    }
    // After a second response the final call's own error (Cancelled: ours) says less.
    if (failed) return callback(too_many(), delivery);
    if (!result.ok()) return callback(std::move(result), delivery);
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

// SingleResponse: adapts a unary frontend's callback (KServe HTTP infer, gRPC ModelInfer)
// to a decoupled model, whose requests may be answered any number of times
// (api/infer_request.h). As Triton's `generate` does, a decoupled answer is accepted on a
// unary call when it is exactly one response — sent final, or followed by the empty final
// response; no response, or more than one, fails the request with InvalidArgument naming
// the streaming calls that take several (generate_stream, ModelStreamInfer).
//
// Only for decoupled models: a model that answers once needs no adapter (and gets none,
// so its hot path pays nothing).
//
// Thread-safe (the wrapped callback is called serially, as every InferCallback is).
#ifndef INFERA_MANAGER_SINGLE_RESPONSE_H_
#define INFERA_MANAGER_SINGLE_RESPONSE_H_

#include <memory>
#include <string_view>

#include "api/cancellation.h"
#include "api/infer_request.h"

namespace infera {

// `model` names the model in the errors. `stop` (may be null) is the request's own
// cancellation token: cancelled at the second response, so that the model stops working
// for an answer that will be refused (an LLM asked to stream over a unary call stops
// within a step instead of generating to the end).
InferCallback SingleResponse(std::string_view model, InferCallback callback,
                             std::shared_ptr<CancellationToken> stop = nullptr);

}  // namespace infera

#endif  // INFERA_MANAGER_SINGLE_RESPONSE_H_

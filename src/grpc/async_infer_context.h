// AsyncInferContext: what every async ModelInfer / ModelStreamInfer call needs from the
// server — the service to request calls from, the manager, the call options, the stream
// registry. One per server; it outlives every call (the server joins its completion-queue
// threads, which run the calls' tags, before it destroys this).
//
// AsyncInferService is the service type: the two infer methods are raw async methods
// (grpc::ByteBuffer in and out, parsed and serialised by infera), every other method is a
// typed async method served by AsyncUnaryMethod (async_unary_call.h, inference_service.h).
// No method is a callback method, so gRPC creates no callback completion queue and runs
// none of its callback-API threads.
#ifndef INFERA_GRPC_ASYNC_INFER_CONTEXT_H_
#define INFERA_GRPC_ASYNC_INFER_CONTEXT_H_

#include <cstddef>
#include <vector>

#include "api/admin_guard.h"
#include "grpc/async_unary_call.h"
#include "grpc/infer_call.h"
#include "grpc/live_calls.h"
#include "grpc_service.grpc.pb.h"
#include "manager/model_manager.h"
#include "security/api_key_store.h"

namespace infera {

class StreamRegistry;

namespace async_infer_internal {
using S = inference::GRPCInferenceService;
// The raw methods wrap the plain Service first: gRPC 1.51 turns a method async or raw
// only when it is still a sync method (RpcServiceMethod::SetServerApiType), so
// WithRawMethod_X<CallbackService> would leave X a callback method. The typed async
// methods are then added around them, one per control-plane RPC.
using Base = S::WithRawMethod_ModelInfer<S::WithRawMethod_ModelStreamInfer<S::Service>>;
using C0 = S::WithAsyncMethod_ServerLive<Base>;
using C1 = S::WithAsyncMethod_ServerReady<C0>;
using C2 = S::WithAsyncMethod_ModelReady<C1>;
using C3 = S::WithAsyncMethod_ServerMetadata<C2>;
using C4 = S::WithAsyncMethod_ModelMetadata<C3>;
using C5 = S::WithAsyncMethod_ModelConfig<C4>;
using C6 = S::WithAsyncMethod_ModelStatistics<C5>;
using C7 = S::WithAsyncMethod_RepositoryIndex<C6>;
using C8 = S::WithAsyncMethod_RepositoryModelLoad<C7>;
using C9 = S::WithAsyncMethod_RepositoryModelUnload<C8>;
using C10 = S::WithAsyncMethod_TraceSetting<C9>;
using C11 = S::WithAsyncMethod_SystemSharedMemoryStatus<C10>;
using C12 = S::WithAsyncMethod_SystemSharedMemoryRegister<C11>;
using C13 = S::WithAsyncMethod_SystemSharedMemoryUnregister<C12>;
using C14 = S::WithAsyncMethod_CudaSharedMemoryStatus<C13>;
using C15 = S::WithAsyncMethod_CudaSharedMemoryRegister<C14>;
using C16 = S::WithAsyncMethod_CudaSharedMemoryUnregister<C15>;
using C17 = S::WithAsyncMethod_LogSettings<C16>;
}  // namespace async_infer_internal

using AsyncInferService = async_infer_internal::C17;

struct AsyncInferContext {
  AsyncInferService* service = nullptr;
  const ModelManager* manager = nullptr;
  InferCallOptions infer;
  // API keys (grpc/api_key_check.h); null: keys off. Not owned; outlives the server.
  ApiKeyStore* api_keys = nullptr;
  // The restricted-API groups (api/admin_guard.h): ModelInfer and ModelStreamInfer need
  // the `inference` category's header when it is restricted. Null: no check.
  const AdminGuard* guard = nullptr;
  // Unanswered requests one ModelStreamInfer stream may have before reading pauses.
  size_t max_pending_per_stream = 256;
  // Bytes of answers a stream may have waiting to be written before a decoupled model's
  // next response ends it (RESOURCE_EXHAUSTED): its responses are not paced by the reader.
  size_t max_queued_bytes_per_stream = size_t{16} << 20;
  // Open streams, for the drain at shutdown (stream_registry.h).
  StreamRegistry* streams = nullptr;
  // Calls that arrived and are not yet deleted (live_calls.h). Not null.
  LiveCalls* live_calls = nullptr;
  // The other methods of both services (control plane, health), each requested once on
  // every queue at start. Not owned; outlive the queue threads.
  std::vector<const AsyncMethod*> methods;
};

}  // namespace infera

#endif  // INFERA_GRPC_ASYNC_INFER_CONTEXT_H_

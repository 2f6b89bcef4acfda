// OpenAI-compatible `POST /v1/embeddings` for the embedding models in the repository
// (docs/pipelines.md "OpenAI embeddings"; the body and the model shape:
// embeddings_request.h).
//
// Response: {"object": "list", "data": [{"object": "embedding", "index": i,
//            "embedding": [floats] | "base64 of little-endian float32"}], "model",
//            "usage": {"prompt_tokens", "total_tokens"}, "id", "created"}
//
// The inputs go through ModelVersion::Infer as KServe requests of up to max_batch_size
// texts each (one text each when the model does not batch), all in flight at once; the
// answer is written when the last one completes. Each is an inference request of the
// model like any other (statistics, scheduling). usage.prompt_tokens counts tokens
// when the model's config names its tokenize step in the parameter
// `openai_embedding_tokenizer` (a loaded `tokenize` model: its TokenCounter counts what
// it feeds the encoder); otherwise it is 0. Token-id inputs ([1, 2, 3]) are a 400:
// these models take text.
//
// Tracing: a sampled request gets one trace (InferTrace, protocol "openai"): parse, a
// queue and a compute span per KServe request, serialize; the answer carries its
// traceparent.
//
// Errors are OpenAI-shaped (openai_errors.h): 400 for a malformed body (naming the
// field), 404 for an unknown model or one that is not an embedding model, 503 for one
// not ready, the model's own error otherwise.
//
// Lifetime: the request holds its ModelVersion handles (the model's and the tokenize
// step's) until the answer is written.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
//
// Wiring: the server sends path "/v1/embeddings" here, before the other /v1 paths go to
// OpenAiRoutes (openai_routes.h).
#ifndef INFERA_OPENAI_EMBEDDINGS_ROUTES_H_
#define INFERA_OPENAI_EMBEDDINGS_ROUTES_H_

#include <atomic>
#include <cstdint>

#include "http/http_server.h"
#include "manager/model_manager.h"
#include "tracing/infer_trace.h"

namespace infera::openai {

class EmbeddingsRoutes {
 public:
  // `trace`: where sampled requests' traces go (both null: tracing off).
  EmbeddingsRoutes(ModelManager& manager, InferTrace::Sink trace) : manager_(manager), trace_(trace) {}

  // /v1/embeddings (the caller has matched the path; other methods than POST: 405).
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ModelManager& manager_;
  const InferTrace::Sink trace_;
  mutable std::atomic<uint64_t> next_id_{1};
};

}  // namespace infera::openai

#endif  // INFERA_OPENAI_EMBEDDINGS_ROUTES_H_

// OpenAI-compatible `POST /v1/embeddings` for the embedding models in the repository
// (docs/pipelines.md "OpenAI embeddings").
//
// An embedding model is any model (an ensemble such as text_embed, or a single model)
// whose config has exactly one input, TYPE_STRING dims [1] (the text), and exactly one
// output, TYPE_FP32 dims [D] (the embedding); the batch dimension comes on top when
// max_batch_size > 0. Nothing else needs declaring.
//
// Request:  {"model": "text_embed", "input": "a sentence" | ["s1", "s2", ...],
//            "encoding_format": "float" (default) | "base64", "dimensions": D (optional,
//            must equal the model's D), "user": ignored}
// Response: {"object": "list", "data": [{"object": "embedding", "index": i,
//            "embedding": [floats] | "base64 of little-endian float32"}], "model",
//            "usage": {"prompt_tokens", "total_tokens"}, "id", "created"}
//
// The inputs go through ModelVersion::Infer as KServe requests of up to max_batch_size
// texts each (one text each when the model does not batch), all in flight at once; the
// answer is written when the last one completes. usage.prompt_tokens counts tokens
// when the model's config names its tokenize step in the parameter
// `openai_embedding_tokenizer` (a loaded `tokenize` model: its TokenCounter counts what
// it feeds the encoder); otherwise it is 0. Token-id inputs ([1, 2, 3]) are a 400:
// these models take text.
//
// Errors are OpenAI-shaped ({"error": {"message", "type", "param", "code"}}): 400 for
// a malformed body (naming the field), 404 for an unknown model or one that is not an
// embedding model, 503 for one not ready, the model's own error otherwise.
//
// Lifetime: the request holds its ModelVersion handles (the model's and the tokenize
// step's) until the answer is written.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
//
// Wiring: the server's HTTP dispatch sends path "/v1/embeddings" here before the other
// /v1 routes (server.cc); OpenAiRoutes could equally forward it from its /v1 dispatch.
#ifndef INFERA_HTTP_EMBEDDINGS_ROUTES_H_
#define INFERA_HTTP_EMBEDDINGS_ROUTES_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "http/http_server.h"
#include "manager/model_manager.h"

namespace infera {

// A parsed embeddings request (exposed for tests and the fuzz target).
struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string> inputs;
  bool base64 = false;
  std::optional<int64_t> dimensions;
};

// Parses a POST /v1/embeddings body. InvalidArgument naming the field.
absl::StatusOr<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body);

// D when `config` is an embedding model (see above), else NotFound saying why.
absl::StatusOr<int64_t> EmbeddingDimension(const inference::ModelConfig& config);

class EmbeddingsRoutes {
 public:
  explicit EmbeddingsRoutes(ModelManager& manager) : manager_(manager) {}

  // /v1/embeddings (the caller has matched the path; other methods than POST: 405).
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  ModelManager& manager_;
  mutable std::atomic<uint64_t> next_id_{1};
};

}  // namespace infera

#endif  // INFERA_HTTP_EMBEDDINGS_ROUTES_H_

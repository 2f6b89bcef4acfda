// The OpenAI `POST /v1/embeddings` body, and what makes a model an embedding model
// (docs/pipelines.md "OpenAI embeddings"). Pure functions; the route is
// embeddings_routes.h.
//
// Request:  {"model": "text_embed", "input": "a sentence" | ["s1", "s2", ...],
//            "encoding_format": "float" (default) | "base64", "dimensions": D (optional,
//            must equal the model's D), "user": ignored}; at most kMaxEmbeddingInputs
//            inputs.
//
// An embedding model is any model (an ensemble such as text_embed, or a single model)
// whose config has exactly one input, TYPE_STRING dims [1] (the text), and exactly one
// output, TYPE_FP32 dims [D] (the embedding); the batch dimension comes on top when
// max_batch_size > 0. Nothing else needs declaring.
//
// Thread-safe (pure functions).
#ifndef INFERA_OPENAI_EMBEDDINGS_REQUEST_H_
#define INFERA_OPENAI_EMBEDDINGS_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model_config.pb.h"

namespace infera::openai {

// OpenAI's limit on the number of inputs in one request.
inline constexpr size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingsRequest {
  std::string model;
  std::vector<std::string> inputs;
  // `input` was token ids (a list of integers, or of integer lists): valid OpenAI, but
  // the models served here take text, so the route refuses it after finding the model
  // (a model that is no embedding model at all is the more useful answer).
  bool token_ids = false;
  bool base64 = false;
  std::optional<int64_t> dimensions;
};

// InvalidArgument naming the field.
absl::StatusOr<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body);

// D when `config` is an embedding model (see above), else NotFound saying why.
absl::StatusOr<int64_t> EmbeddingDimension(const inference::ModelConfig& config);

}  // namespace infera::openai

#endif  // INFERA_OPENAI_EMBEDDINGS_REQUEST_H_

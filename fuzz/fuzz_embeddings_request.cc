// Fuzz target: the OpenAI POST /v1/embeddings body parser (openai/embeddings_request.h).
// Input: the request body. Invariants beyond "no crash": a parsed request names a model
// and has either between 1 and 2048 text inputs or token-id inputs (and then no text).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "openai/embeddings_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = infera::openai::ParseEmbeddingsRequest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  if (parsed->model.empty() || parsed->inputs.size() > 2048) std::abort();
  if (parsed->token_ids ? !parsed->inputs.empty() : parsed->inputs.empty()) std::abort();
  return 0;
}

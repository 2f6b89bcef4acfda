// Fuzz target: the OpenAI POST /v1/embeddings body parser (http/embeddings_routes.h).
// Input: the request body. Invariants beyond "no crash": a parsed request names a model
// and has between 1 and 2048 inputs.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/embeddings_routes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = infera::ParseEmbeddingsRequest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (parsed.ok() && (parsed->model.empty() || parsed->inputs.empty() || parsed->inputs.size() > 2048)) std::abort();
  return 0;
}

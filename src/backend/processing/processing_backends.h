// Processing backends (docs/pipelines.md): the C++ work around a model — decoding,
// tokenising, post-processing — as ordinary backends, so each is a model in the
// repository (its own config, instances, batching, statistics) and a step of an
// ensemble. None includes LibTorch; they run on the scheduler's worker threads
// (UsesIntraOpThreads() and RunsInline() false).
#ifndef INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
#define INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "backend/backend.h"

namespace infera {

// --- tokenize (tokenize_backend.cc) ---
// UTF-8 text (BYTES [1]) → input_ids / attention_mask / token_type_ids (INT64 [L]) with
// a Hugging Face tokenizer.json (WordPiece or BPE), truncated and padded to
// `max_length` = L. Contract: docs/pipelines.md "tokenize".
std::unique_ptr<Backend> CreateTokenizeBackend();

// What a loaded `tokenize` model offers besides Infer(): the number of tokens it feeds
// the next step for `text` (special tokens included, at most max_length), for the
// OpenAI embeddings usage counts (http/embeddings_routes.h). Reach it by
// dynamic_cast<const TokenCounter*>(&version->loaded_model()).
//
// Thread-safe (const; the tokenizer is immutable).
class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual size_t CountTokens(std::string_view text) const = 0;
};

}  // namespace infera

#endif  // INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_

// TokenCounter: the capability of a loaded `tokenize` model to count the tokens it feeds
// the next step for a text (special tokens included, at most its max_length), for the
// OpenAI embeddings usage counts (openai/embeddings_routes.h). Found with the typed query
// LoadedModel::token_counter() / ModelVersion::token_counter() (null: not a tokenizer).
//
// Thread-safe (const; the tokenizer is immutable).
#ifndef INFERA_BACKEND_TOKEN_COUNTER_H_
#define INFERA_BACKEND_TOKEN_COUNTER_H_

#include <cstddef>
#include <string_view>

namespace infera {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual size_t CountTokens(std::string_view text) const = 0;
};

}  // namespace infera

#endif  // INFERA_BACKEND_TOKEN_COUNTER_H_

// TokenMeter: where the LLM tokens a request spends are charged — an API key's
// tokens-per-minute quota and usage counters (security/api_key_store.h,
// docs/api_keys.md). A transport sets it on the InferRequest of a request its key
// admitted; ModelVersion hands it to the backend in the RequestContext, an ensemble to its
// steps; a text generator charges each generation once, as it ends — finished, stopped,
// aborted or failed alike, since the tokens were computed either way.
//
// Implementations are thread-safe (generations end on the LLM's output thread).
#ifndef INFERA_API_TOKEN_METER_H_
#define INFERA_API_TOKEN_METER_H_

#include <cstdint>

namespace infera {

class TokenMeter {
 public:
  virtual ~TokenMeter() = default;
  virtual void Charge(int64_t prompt_tokens, int64_t completion_tokens) = 0;
};

}  // namespace infera

#endif  // INFERA_API_TOKEN_METER_H_

// The TokenMeter (api/token_meter.h) of an admitted API key: the LLM tokens a KServe,
// Triton generate or gRPC request spends are charged to the key's tokens-per-minute bucket
// and its usage counters, as the OpenAI routes charge theirs (ChargeGrantTokens).
//
// Thread-safe (ChargeGrantTokens is).
#ifndef INFERA_SECURITY_API_KEY_METER_H_
#define INFERA_SECURITY_API_KEY_METER_H_

#include <memory>

#include "api/token_meter.h"
#include "security/api_key_store.h"

namespace infera {

// Null for a null grant (API keys off, or an open route): nothing to charge.
std::shared_ptr<TokenMeter> ApiKeyTokenMeter(ApiKeyGrantPtr grant);

}  // namespace infera

#endif  // INFERA_SECURITY_API_KEY_METER_H_

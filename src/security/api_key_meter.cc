#include "security/api_key_meter.h"

#include <algorithm>
#include <utility>

namespace infera {
namespace {

class GrantTokenMeter final : public TokenMeter {
 public:
  explicit GrantTokenMeter(ApiKeyGrantPtr grant) : grant_(std::move(grant)) {}
  void Charge(int64_t prompt_tokens, int64_t completion_tokens) override {
    ChargeGrantTokens(grant_, static_cast<uint64_t>(std::max<int64_t>(prompt_tokens, 0)),
                      static_cast<uint64_t>(std::max<int64_t>(completion_tokens, 0)));
  }

 private:
  const ApiKeyGrantPtr grant_;
};

}  // namespace

std::shared_ptr<TokenMeter> ApiKeyTokenMeter(ApiKeyGrantPtr grant) {
  if (grant == nullptr) return nullptr;
  return std::make_shared<GrantTokenMeter>(std::move(grant));
}

}  // namespace infera

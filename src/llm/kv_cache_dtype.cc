#include "llm/kv_cache_dtype.h"

namespace infera::llm {

const char* KvCacheDtypeName(KvCacheDtype dtype) {
  switch (dtype) {
    case KvCacheDtype::kFloat32: return "fp32";
    case KvCacheDtype::kBFloat16: return "bf16";
    case KvCacheDtype::kFloat16: return "fp16";
  }
  return "?";
}

std::optional<KvCacheDtype> ParseKvCacheDtype(std::string_view text) {
  if (text == "fp32") return KvCacheDtype::kFloat32;
  if (text == "bf16") return KvCacheDtype::kBFloat16;
  if (text == "fp16") return KvCacheDtype::kFloat16;
  return std::nullopt;
}

int64_t KvCacheElementSize(KvCacheDtype dtype) { return dtype == KvCacheDtype::kFloat32 ? 4 : 2; }

}  // namespace infera::llm

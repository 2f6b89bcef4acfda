// KvCacheDtype: the element type of the paged KV cache (model parameter
// `kv_cache_dtype`, docs/llm.md "KV-cache dtype"): fp32, bf16 or fp16. Compute is fp32;
// 16-bit caches are narrowed on write and widened on read (cpu_kernels.h).
//
// The element conversions are api/float16.h's (round to nearest even, NaN stays NaN,
// fp16 overflow → ±inf, subnormals exact), the reference the vector kernels are tested
// against.
//
// Thread-safe: pure functions.
#ifndef INFERA_LLM_KV_CACHE_DTYPE_H_
#define INFERA_LLM_KV_CACHE_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace infera::llm {

enum class KvCacheDtype { kFloat32, kBFloat16, kFloat16 };

// The parameter's default (measured in docs/llm.md, "KV-cache dtype").
inline constexpr KvCacheDtype kDefaultKvCacheDtype = KvCacheDtype::kFloat16;

// "fp32", "bf16", "fp16" (the parameter's values).
const char* KvCacheDtypeName(KvCacheDtype dtype);
// The parameter's values; nullopt for anything else.
std::optional<KvCacheDtype> ParseKvCacheDtype(std::string_view text);
// Bytes per element: 4 or 2.
int64_t KvCacheElementSize(KvCacheDtype dtype);

}  // namespace infera::llm

#endif  // INFERA_LLM_KV_CACHE_DTYPE_H_

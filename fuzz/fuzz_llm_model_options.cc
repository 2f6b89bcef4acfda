// Fuzz target: the `llm` backend's engine options (llm/llm_model_options.h) from
// config.pbtxt parameters — every key's value parser (integers, booleans, byte sizes,
// fractions, scheduling_policy, matmul_kernel, kv_cache_dtype).
//
// Input: lines "key=value" (any bytes); each becomes a string parameter. A config that
// parses must hold values inside the documented bounds, and the KV budget derived from
// it must be positive and at most the bound it was checked against.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "llm/llm_model_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using infera::llm::KvCacheDtype;
  using infera::llm::LlmModelOptions;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  inference::ModelConfig config;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      (*config.mutable_parameters())[std::string(line.substr(0, eq))].set_string_value(std::string(line.substr(eq + 1)));
    }
    infera::llm::ParseByteSize(line);  // must not crash on anything
    pos = end + 1;
  }
  const infera::MachineLimits machine{/*num_cores=*/4, /*physical_memory_bytes=*/int64_t{16} << 30};
  auto options = LlmModelOptions::FromConfig(config, machine);
  if (!options.ok()) {
    if (options.status().message().empty()) std::abort();  // errors name the parameter
    return 0;
  }
  const LlmModelOptions& o = *options;
  if (o.max_num_seqs < 1 || o.max_num_seqs > 4096) std::abort();
  if (o.block_size < 1 || o.block_size > 1024) std::abort();
  if (o.num_threads < 0 || o.num_threads > machine.MaxThreads()) std::abort();
  if (o.kv_cache_dtype != KvCacheDtype::kFloat32 && o.kv_cache_dtype != KvCacheDtype::kBFloat16 &&
      o.kv_cache_dtype != KvCacheDtype::kFloat16) {
    std::abort();
  }
  const int64_t budget = o.KvCacheBytes(machine.physical_memory_bytes);
  if (budget <= 0 && !(o.kv_cache_memory_fraction && *o.kv_cache_memory_fraction * (16.0 * (1 << 30)) < 1)) {
    std::abort();
  }
  if (budget > machine.physical_memory_bytes) std::abort();
  return 0;
}

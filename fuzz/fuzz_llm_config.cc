// Fuzz target: an LLM's config.json (llm/llama_config.h) — every architecture's fields,
// per-layer windows, rope scaling (linear, llama3, longrope) and the derived values.
//
// Input: the bytes of a config.json. A config that parses must have sizes inside their
// bounds, one window per layer, and rope tables of head_dim / 2 finite-or-inf floats
// computed without crashing; an error must name something.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "llm/llama_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using infera::llm::LlamaConfig;
  auto config = LlamaConfig::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!config.ok()) {
    if (config.status().message().empty()) std::abort();
    return 0;
  }
  const LlamaConfig& c = *config;
  if (c.num_layers < 1 || c.num_layers > 4096 || c.head_dim < 2 || c.head_dim > 4096) std::abort();
  if (c.num_heads % c.num_kv_heads != 0) std::abort();
  if (static_cast<int64_t>(c.layer_window.size()) != c.num_layers) std::abort();
  for (int64_t l = 0; l < c.num_layers; ++l) {
    if (c.layer_window[l] < 0) std::abort();
    (void)c.UsesLocalRope(l);
  }
  if (c.RopeInverseFrequencies().size() != static_cast<size_t>(c.head_dim / 2)) std::abort();
  if (c.rope_local_theta > 0 && c.RopeInverseFrequencies(true).size() != static_cast<size_t>(c.head_dim / 2)) {
    std::abort();
  }
  (void)c.AttentionScale();
  return 0;
}

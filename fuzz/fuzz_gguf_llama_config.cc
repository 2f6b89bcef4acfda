// Fuzz target: a GGUF file's architecture metadata (llm/gguf_llama_config.h,
// LlamaConfigFromGguf), the part of the GGUF loader that reads `<arch>.*` keys.
//
// Input: a GGUF file's bytes (GgufFile::FromBytes, as the loader's mapped file). When
// the file parses and its config is accepted, the config's invariants must hold: head
// counts divide, the window table has one entry per layer, and the rope tables compute.
#include <cstdint>
#include <cstdlib>

#include "gguf/gguf_file.h"
#include "llm/gguf_llama_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = infera::gguf::GgufFile::FromBytes(data, size, "fuzz.gguf");
  if (!file.ok()) return 0;
  auto config = infera::llm::LlamaConfigFromGguf(**file);
  if (!config.ok()) return 0;
  const infera::llm::LlamaConfig& c = *config;
  if (c.num_heads % c.num_kv_heads != 0 || c.head_dim % 2 != 0) std::abort();
  if (static_cast<int64_t>(c.layer_window.size()) != c.num_layers) std::abort();
  if (c.RopeInverseFrequencies().size() != static_cast<size_t>(c.head_dim / 2)) std::abort();
  return 0;
}

// Fuzz target: a Hugging Face tokenizer's files as `infera llm convert` turns them into
// GGUF `tokenizer.ggml.*` keys (llm/convert/hf_tokenizer_keys.h, AddTokenizerKeysFromJson).
//
// Input: tokenizer.json, then optionally a NUL byte and tokenizer_config.json, then a NUL
// byte and generation_config.json. Any input is an error or keys; when keys were added
// and the tokenizer is a BPE one, the vocabulary key is among them.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "llm/convert/gguf_writer.h"
#include "llm/convert/hf_tokenizer_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view parts[3];
  for (int i = 0; i < 3; ++i) {
    const size_t nul = i < 2 ? input.find('\0') : std::string_view::npos;
    parts[i] = input.substr(0, nul);
    if (nul == std::string_view::npos) break;
    input.remove_prefix(nul + 1);
  }
  infera::llm::convert::GgufWriter w;
  const auto status = infera::llm::convert::AddTokenizerKeysFromJson(parts[0], parts[1], parts[2], "fuzz", w);
  if (status.ok() && !w.HasKey("tokenizer.ggml.tokens")) std::abort();
  return 0;
}

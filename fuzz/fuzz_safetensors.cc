// Fuzz target: `.safetensors` files (llm/safetensors.h): the 8-byte header length, the
// JSON header, dtypes, shapes and data offsets, against a memory-mapped file.
//
// Input: the file's bytes. They are written to an in-memory file (memfd) that
// SafetensorsFile::Open maps like a file on disk; every tensor view it returns is then
// read end to end, so a view outside the mapping is an ASan (or SIGSEGV) report, and its
// byte count is checked against its shape and dtype.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "llm/safetensors.h"
#include "memfd_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static infera::fuzz::MemfdInput input("fuzz.safetensors");
  const std::string& path = input.Write(data, size);
  auto file = infera::llm::SafetensorsFile::Open(path);
  if (!file.ok()) return 0;
  volatile uint8_t sink = 0;
  for (const auto& [name, view] : (*file)->tensors()) {
    for (size_t i = 0; i < view.num_bytes; ++i) sink ^= view.data[i];
    const int64_t elements = view.NumElements();
    if (elements < 0 ||
        static_cast<uint64_t>(elements) * infera::llm::WeightTypeSize(view.dtype) != view.num_bytes) {
      std::abort();  // the contract: a view's bytes are exactly its shape times its dtype
    }
  }
  (void)sink;
  return 0;
}

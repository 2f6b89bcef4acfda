// Fuzz target: GGUF model files (gguf/gguf_file.h): header, typed metadata (strings,
// arrays, nested arrays), tensor infos, alignment and offsets, against a memory-mapped
// file; then the tokenizer built from its `tokenizer.ggml.*` metadata
// (gguf/gguf_tokenizer.h).
//
// Input: the file's bytes, written to an in-memory file (memfd) that GgufFile::Open
// maps like a file on disk. Every tensor view is read end to end (a view outside the
// mapping is an ASan or SIGSEGV report) and its byte count checked against its dims
// and type; every metadata value is walked; when the metadata holds a tokenizer that
// loads, it encodes and decodes a short text.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_tokenizer.h"
#include "memfd_input.h"

namespace {
size_t Walk(const infera::gguf::GgufValue& value) {
  using infera::gguf::GgufValueType;
  if (value.type() == GgufValueType::kString) return value.AsString().size();
  if (value.type() != GgufValueType::kArray) return 1;
  size_t n = 0;
  if (value.element_type() == GgufValueType::kString || value.element_type() == GgufValueType::kArray) {
    if (value.items().size() != value.size()) std::abort();
    for (const auto& item : value.items()) n += Walk(item);
  } else {
    for (uint64_t i = 0; i < value.size(); ++i) n += value.ScalarAt(i).AsUint() & 1;
  }
  return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static infera::fuzz::MemfdInput input("fuzz.gguf");
  const std::string& path = input.Write(data, size);
  auto file = infera::gguf::GgufFile::Open(path);
  if (!file.ok()) return 0;
  volatile uint8_t sink = 0;
  for (const auto& tensor : (*file)->tensors()) {
    for (uint64_t i = 0; i < tensor.num_bytes; ++i) sink ^= tensor.data[i];
    const auto& info = infera::gguf::GgmlTypeInfoOf(tensor.type);
    const int64_t elements = tensor.NumElements();
    if (elements < 0 || elements % info.block_size != 0 ||
        static_cast<uint64_t>(elements / info.block_size) * info.type_size != tensor.num_bytes ||
        tensor.file_offset % (*file)->alignment() != 0) {
      std::abort();  // the contract: a view's bytes are exactly its dims times its type, aligned
    }
  }
  size_t walked = 0;
  for (const std::string& key : (*file)->metadata().keys()) walked += Walk(*(*file)->metadata().Find(key));
  (void)walked;
  auto tokenizer = infera::gguf::LoadGgufTokenizer((*file)->metadata(), path);
  if (tokenizer.ok()) {
    const std::vector<int32_t> ids = (*tokenizer)->Encode("Hello wörld <s> 🎉  x", true);
    (void)(*tokenizer)->Decode(ids, false);
  }
  (void)sink;
  return 0;
}

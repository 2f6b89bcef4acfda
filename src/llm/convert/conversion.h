// The two conversions of `infera llm convert` (docs/llm.md, "infera llm convert"):
//   SafetensorsToGguf  a Hugging Face folder (config.json, *.safetensors, tokenizer files)
//                      -> one GGUF v3 file
//   GgufToSafetensors  a GGUF file -> a Hugging Face folder (config.json, tokenizer.json,
//                      tokenizer_config.json, generation_config.json, model.safetensors)
// Both stream: the source is memory-mapped and each output tensor is produced row by row
// into the output file, so memory holds one row (or one norm vector) at a time, not a
// second copy of the model. Both check everything before writing (every tensor present
// with its shape, no tensor without a mapping, every type convertible) and read their
// output back with the server's own readers before it replaces anything (AtomicFile):
// a fact the target format could not carry is an InvalidArgument naming it.
//
// Thread-safe (no shared state); one conversion per output path.
#ifndef INFERA_LLM_CONVERT_CONVERSION_H_
#define INFERA_LLM_CONVERT_CONVERSION_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace infera::llm::convert {

struct ConversionOptions {
  std::filesystem::path input, output;
  std::optional<std::string> type;  // --type; nullopt: the default (output_types.h)
  bool overwrite = false;           // --force
  std::string name;                 // --name: GGUF general.name (default: the folder's name)
};

struct ConversionSummary {
  std::string architecture;
  size_t tensors = 0;
  uint64_t output_bytes = 0;
  std::vector<std::string> notes;  // e.g. which quantised types were dequantised
};

absl::StatusOr<ConversionSummary> SafetensorsToGguf(const ConversionOptions& options);
absl::StatusOr<ConversionSummary> GgufToSafetensors(const ConversionOptions& options);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_CONVERSION_H_

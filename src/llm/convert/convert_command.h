// `infera llm convert`: the command line of the conversions in conversion.h.
//
//   infera llm convert --input DIR --output FILE.gguf [--type T] [--name NAME] [--force]
//   infera llm convert --input FILE.gguf --output DIR [--type f32|f16|bf16] [--force]
//
// The direction follows --input: a directory is a Hugging Face checkpoint, a file a GGUF.
// --help prints the usage (exit 0); a bad flag prints one line
// "infera llm convert: <problem>" (exit 2); a conversion that fails prints one line
// naming the problem (exit 1) and leaves no partial output.
#ifndef INFERA_LLM_CONVERT_CONVERT_COMMAND_H_
#define INFERA_LLM_CONVERT_CONVERT_COMMAND_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llm/convert/conversion.h"

namespace infera::llm::convert {

struct ConvertFlags {
  ConversionOptions options;
  bool help = false;
};

// Parses the flags after `infera llm convert`. InvalidArgument naming the problem.
absl::StatusOr<ConvertFlags> ParseConvertFlags(const std::vector<std::string>& args);
std::string ConvertHelpText();

int RunConvertCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace infera::llm::convert

#endif  // INFERA_LLM_CONVERT_CONVERT_COMMAND_H_

// Fuzz target: config.pbtxt loading (repository/model_config_loader.h): protobuf text
// format parsing against proto/model_config.proto, then validation and defaults, and the
// sequence_batching options a sequence model's scheduler derives.
//
// Input: the text of a config.pbtxt. A config that parses and validates is checked once
// more after a round trip through the text format: validation must accept its own output.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <google/protobuf/text_format.h>

#include "repository/model_config_loader.h"
#include "scheduling/sequence_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = infera::ParseModelConfig(text, "fuzz/config.pbtxt");
  if (!config.ok()) return 0;
  if (!infera::ValidateModelConfig("fuzz/config.pbtxt", "model", *config).ok()) return 0;
  // sequence_batching is checked when the model loads (scheduling/sequence_options.h).
  if (config->has_sequence_batching()) (void)infera::SequenceBatchingOptionsFromConfig(*config, 16);
  std::string printed;
  if (!google::protobuf::TextFormat::PrintToString(*config, &printed)) std::abort();
  auto again = infera::ParseModelConfig(printed, "fuzz/printed.pbtxt");
  if (!again.ok()) std::abort();
  if (!infera::ValidateModelConfig("fuzz/printed.pbtxt", "model", *again).ok()) std::abort();
  return 0;
}

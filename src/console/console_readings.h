// ReadConsoleModels: what the console stream shows of each model, read from the
// ModelManager: every repository index row (state, error, canary) and, for READY
// versions, their statistics, latency histogram, queue depth and instance groups.
// LLM engine figures come through `read_llm` (the server wires it to the `llm`
// backend, which the console does not link); may be empty.
//
// Thread-safe (reads the manager's thread-safe accessors).
#ifndef INFERA_CONSOLE_CONSOLE_READINGS_H_
#define INFERA_CONSOLE_CONSOLE_READINGS_H_

#include <functional>
#include <optional>
#include <vector>

#include "console/console_snapshot.h"
#include "llm/llm_metrics.h"
#include "manager/model_manager.h"
#include "manager/model_version.h"

namespace infera {

using LlmMetricsReader = std::function<std::optional<llm::LlmMetricsSnapshot>(const ModelVersion&)>;

std::vector<ConsoleModelReading> ReadConsoleModels(const ModelManager& manager, const LlmMetricsReader& read_llm);

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_READINGS_H_

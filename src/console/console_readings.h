// ReadConsoleModels: what the console stream shows of each model, read from the
// ModelManager: every repository index row (state, error, canary) and, for READY
// versions, their statistics, latency histogram, queue depth, instance groups and — for
// an LLM — its engine's figures, all from ModelManager::Snapshots (no version is held).
//
// Thread-safe (reads the manager's thread-safe accessors).
#ifndef INFERA_CONSOLE_CONSOLE_READINGS_H_
#define INFERA_CONSOLE_CONSOLE_READINGS_H_

#include <functional>
#include <optional>
#include <vector>

#include "console/console_snapshot.h"
#include "manager/model_manager.h"

namespace infera {

std::vector<ConsoleModelReading> ReadConsoleModels(const ModelManager& manager);

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_READINGS_H_

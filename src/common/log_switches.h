// Triton's logging extension on top of logging.h: an on/off switch per severity
// (`log_error`, `log_warning`, `log_info`, independent of each other, as Triton's are) and
// Triton's ISO8601 line format (`2026-12-06T19:28:43Z I file.cc:42] text`).
//
// The threshold of logging.h still filters at the log site (one relaxed atomic load); a
// message whose severity is switched off is dropped when it would be written, so turning
// a severity off costs only the formatting of its (rare) messages. VERBOSE has no switch:
// the threshold (log_verbose_level) governs it.
//
// Thread-safe: process-wide atomics, safe to change at run time.
#ifndef INFERA_COMMON_LOG_SWITCHES_H_
#define INFERA_COMMON_LOG_SWITCHES_H_

#include "common/logging.h"

namespace infera {

// kError, kWarning or kInfo (kVerbose is ignored: always on under the threshold).
void SetSeverityEnabled(LogLevel level, bool enabled);
bool SeverityEnabled(LogLevel level);

// With LogFormat::kText: Triton's ISO8601 prefix instead of the default one. Ignored by
// the JSON format (its timestamps are ISO 8601 already).
void SetIso8601Timestamps(bool on);
bool Iso8601Timestamps();

}  // namespace infera

#endif  // INFERA_COMMON_LOG_SWITCHES_H_

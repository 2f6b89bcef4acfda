// DiagnosisJson: the answer of GET /v2/models/{m}/diagnosis (docs/diagnosis.md has the
// contract; the web console renders it): the diagnosis plus the window's figures.
//
// Thread-safe (a pure function).
#ifndef INFERA_DIAGNOSIS_DIAGNOSIS_JSON_H_
#define INFERA_DIAGNOSIS_DIAGNOSIS_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "diagnosis/diagnosis_rules.h"
#include "diagnosis/window_summary.h"

namespace infera::diagnosis {

std::string DiagnosisJson(std::string_view model, int64_t version, const WindowSummary& window,
                          const Diagnosis& diagnosis);

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_DIAGNOSIS_JSON_H_

// The text report `infera diagnose` prints for a server's diagnosis JSON
// (GET /v2/models/{m}/diagnosis, docs/diagnosis.md). Its own library (JSON in, text out,
// no client code) so that fuzz_diagnosis links only this.
//
// Thread-safe (a pure function).
#ifndef INFERA_TOOLS_DIAGNOSE_DIAGNOSIS_TABLE_H_
#define INFERA_TOOLS_DIAGNOSE_DIAGNOSIS_TABLE_H_

#include <string>

#include "absl/status/statusor.h"

namespace infera::diagnose {

// The diagnosis JSON as a readable report; InvalidArgument when it is not a diagnosis.
absl::StatusOr<std::string> RenderDiagnosisTable(const std::string& json);

}  // namespace infera::diagnose

#endif  // INFERA_TOOLS_DIAGNOSE_DIAGNOSIS_TABLE_H_

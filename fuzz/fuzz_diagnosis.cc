// Fuzz target: the diagnosis' parsers of untrusted text — the route's query string
// (diagnosis/diagnosis_routes.h ParseWindowQuery) and `infera diagnose`'s rendering of
// whatever a server answered (tools/diagnose RenderDiagnosisTable).
//
// Input: the bytes as a query string and as a JSON answer. Oracle besides ASan/UBSan:
// an accepted window is within 1..kMaxWindowSeconds; a rendered table is non-empty.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "diagnosis/diagnosis_routes.h"
#include "tools/diagnose/diagnosis_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<int> window = infera::diagnosis::ParseWindowQuery(text);
  if (window.ok() && (*window < 1 || *window > infera::diagnosis::kMaxWindowSeconds)) std::abort();
  absl::StatusOr<std::string> table = infera::diagnose::RenderDiagnosisTable(text);
  if (table.ok() && table->empty()) std::abort();
  return 0;
}

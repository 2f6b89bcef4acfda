// DiagnosisRoutes: GET /v2/models/{m}[/versions/{v}]/diagnosis[?window=SECONDS]
// (docs/diagnosis.md): the bottleneck diagnosis of a model version as JSON.
//
// `window`: whole seconds, 1..300, default 60; any other query parameter, a repeated
// `window` or a bad value is a 400 naming it. Unknown model or version: the status the
// other model endpoints answer (404 with Triton's wording); a wrong method: 405.
//
// Thread-safe.
#ifndef INFERA_DIAGNOSIS_DIAGNOSIS_ROUTES_H_
#define INFERA_DIAGNOSIS_DIAGNOSIS_ROUTES_H_

#include <string_view>

#include "diagnosis/diagnosis_sampler.h"
#include "http/http_message.h"

namespace infera::diagnosis {

// The window a request's query string asks for (the part after '?', may be empty):
// kDefaultWindowSeconds when absent; InvalidArgument naming the parameter otherwise.
absl::StatusOr<int> ParseWindowQuery(std::string_view query);

class DiagnosisRoutes {
 public:
  // `sampler` outlives the routes.
  explicit DiagnosisRoutes(const DiagnosisSampler& sampler) : sampler_(sampler) {}

  // True for /v2/models/{m}/diagnosis and /v2/models/{m}/versions/{v}/diagnosis.
  static bool Matches(std::string_view path);

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  const DiagnosisSampler& sampler_;
};

}  // namespace infera::diagnosis

#endif  // INFERA_DIAGNOSIS_DIAGNOSIS_ROUTES_H_

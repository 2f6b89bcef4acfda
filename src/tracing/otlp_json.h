// Spans as an OTLP/HTTP JSON export request (ExportTraceServiceRequest): hex trace and
// span ids, nanosecond timestamps as strings, SERVER kind for a request's root span.
//
// Thread-safe (pure function).
#ifndef INFERA_TRACING_OTLP_JSON_H_
#define INFERA_TRACING_OTLP_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "tracing/trace_context.h"

namespace infera {

std::string SpansToOtlpJson(const std::vector<SpanRecord>& spans, std::string_view service_name,
                            std::string_view service_version);

}  // namespace infera

#endif  // INFERA_TRACING_OTLP_JSON_H_

// W3C Trace Context (`traceparent`) parsing and formatting, and span records.
//
//   traceparent: 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>
//
// Thread-safe (value types and pure functions).
#ifndef INFERA_TRACING_TRACE_CONTEXT_H_
#define INFERA_TRACING_TRACE_CONTEXT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infera {

using TraceId = std::array<uint8_t, 16>;
using SpanId = std::array<uint8_t, 8>;

struct TraceContext {
  TraceId trace_id{};
  SpanId span_id{};  // the caller's span: our root span's parent
  bool sampled = false;
};

// nullopt for anything that is not a valid version-00 traceparent (all-zero ids,
// bad hex, wrong lengths); a bad header is ignored, never an error for the request.
std::optional<TraceContext> ParseTraceparent(std::string_view header);
std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled);

std::string ToHex(const uint8_t* bytes, size_t size);
template <size_t N>
std::string ToHex(const std::array<uint8_t, N>& id) {
  return ToHex(id.data(), N);
}

// Random non-zero ids (thread-local generator).
TraceId NewTraceId();
SpanId NewSpanId();

// One finished span, ready for export.
struct SpanRecord {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent_span_id;
  std::string name;
  bool server_kind = false;  // the request's root span (SERVER); children are INTERNAL
  uint64_t start_unix_ns = 0;
  uint64_t end_unix_ns = 0;
  std::vector<std::pair<std::string, std::string>> string_attributes;
  std::vector<std::pair<std::string, int64_t>> int_attributes;
  std::optional<std::string> error;  // status ERROR with this message
};

}  // namespace infera

#endif  // INFERA_TRACING_TRACE_CONTEXT_H_

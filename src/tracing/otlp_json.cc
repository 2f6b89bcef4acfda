#include "tracing/otlp_json.h"

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void StringAttribute(Writer& w, std::string_view key, std::string_view value) {
  w.StartObject();
  w.Key("key");
  String(w, key);
  w.Key("value");
  w.StartObject();
  w.Key("stringValue");
  String(w, value);
  w.EndObject();
  w.EndObject();
}

void WriteSpan(Writer& w, const SpanRecord& span) {
  w.StartObject();
  w.Key("traceId");
  String(w, ToHex(span.trace_id));
  w.Key("spanId");
  String(w, ToHex(span.span_id));
  if (span.parent_span_id) {
    w.Key("parentSpanId");
    String(w, ToHex(*span.parent_span_id));
  }
  w.Key("name");
  String(w, span.name);
  w.Key("kind");
  w.Int(span.server_kind ? 2 : 1);  // SPAN_KIND_SERVER : SPAN_KIND_INTERNAL
  w.Key("startTimeUnixNano");
  String(w, std::to_string(span.start_unix_ns));
  w.Key("endTimeUnixNano");
  String(w, std::to_string(span.end_unix_ns));
  w.Key("attributes");
  w.StartArray();
  for (const auto& [key, value] : span.string_attributes) StringAttribute(w, key, value);
  for (const auto& [key, value] : span.int_attributes) {
    w.StartObject();
    w.Key("key");
    String(w, key);
    w.Key("value");
    w.StartObject();
    w.Key("intValue");
    String(w, std::to_string(value));  // int64 is a string in OTLP JSON
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("status");
  w.StartObject();
  if (span.error) {
    w.Key("code");
    w.Int(2);  // STATUS_CODE_ERROR
    w.Key("message");
    String(w, *span.error);
  }
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string SpansToOtlpJson(const std::vector<SpanRecord>& spans, std::string_view service_name,
                            std::string_view service_version) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("resourceSpans");
  w.StartArray();
  w.StartObject();
  w.Key("resource");
  w.StartObject();
  w.Key("attributes");
  w.StartArray();
  StringAttribute(w, "service.name", service_name);
  StringAttribute(w, "service.version", service_version);
  w.EndArray();
  w.EndObject();
  w.Key("scopeSpans");
  w.StartArray();
  w.StartObject();
  w.Key("scope");
  w.StartObject();
  w.Key("name");
  w.String("infera");
  w.EndObject();
  w.Key("spans");
  w.StartArray();
  for (const SpanRecord& span : spans) WriteSpan(w, span);
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace infera

// WriteString: a string_view as a JSON string on any rapidjson writer (Writer,
// PrettyWriter; any output stream). rapidjson's own String() takes a pointer and a
// SizeType length; this is the one place that converts, so every JSON producer in the
// server (codec, HTTP routes, OpenAI protocol, proto_json, bench payloads) escapes
// strings the same way, embedded NULs included.
//
// Thread-safe (a pure function of its arguments).
#ifndef INFERA_COMMON_JSON_WRITER_H_
#define INFERA_COMMON_JSON_WRITER_H_

#include <string_view>

#include "rapidjson/rapidjson.h"

namespace infera {

template <typename Writer>
void WriteString(Writer& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

}  // namespace infera

#endif  // INFERA_COMMON_JSON_WRITER_H_

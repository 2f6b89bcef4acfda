#include "common/json_reader.h"

#include "common/str_cat.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace infera {
namespace {

// Validating the encoding keeps invalid UTF-8 out of every string the server reads, so
// none can reach a JSON response or error body that echoes it.
// Default number precision (within 3 ULP), not kParseFullPrecisionFlag: RapidJSON 1.1.0's
// full-precision strtod reads outside its power-of-ten table for a number such as
// 0.<370 zeros>88 — a SIGSEGV from one unauthenticated request body (found by
// fuzz_openai_protocol; docs/reliability.md).
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

// Forwards SAX events to the Document, refusing to open a container past `max_depth`.
class DepthLimitedHandler {
 public:
  DepthLimitedHandler(rapidjson::Document& doc, int max_depth) : doc_(doc), max_depth_(max_depth) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned i) { return doc_.Uint(i); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t i) { return doc_.Uint64(i); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return Enter() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) { --depth_; return doc_.EndObject(members); }
  bool StartArray() { return Enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) { --depth_; return doc_.EndArray(elements); }

  bool too_deep() const { return too_deep_; }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  rapidjson::Document& doc_;
  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

}  // namespace

absl::Status ReadJson(std::string_view text, std::string_view what, rapidjson::Document& doc,
                      const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(StrCat(what, ": JSON text of ", text.size(),
                                             " bytes exceeds the limit of ", limits.max_bytes,
                                             " bytes"));
  }
  rapidjson::MemoryStream stream(text.data(), text.size());
  rapidjson::Reader reader;
  rapidjson::ParseResult result;
  DepthLimitedHandler handler(doc, limits.max_depth);
  // Populate() moves the parsed root into `doc` only when the generator succeeds, and
  // clears rapidjson's value stack either way.
  auto generator = [&](rapidjson::Document& d) {
    (void)d;  // `handler` already forwards to `doc`
    result = reader.Parse<kParseFlags>(stream, handler);
    return !result.IsError();
  };
  doc.SetNull();
  doc.Populate(generator);
  if (handler.too_deep()) {
    return absl::InvalidArgumentError(StrCat(what, ": JSON nests deeper than the limit of ",
                                             limits.max_depth, " levels (at byte offset ",
                                             result.Offset(), ")"));
  }
  if (result.IsError()) {
    return absl::InvalidArgumentError(StrCat(what, ": invalid JSON at byte offset ", result.Offset(),
                                             ": ", rapidjson::GetParseError_En(result.Code())));
  }
  if (stream.Tell() != text.size()) {  // MemoryStream reads a NUL byte as the end
    return absl::InvalidArgumentError(
        StrCat(what, ": invalid JSON at byte offset ", stream.Tell(), ": NUL byte in the JSON text"));
  }
  return absl::OkStatus();
}

}  // namespace infera

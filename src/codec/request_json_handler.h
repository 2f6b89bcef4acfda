// RequestJsonHandler: the rapidjson SAX handler behind DecodeInferRequest.
//
// It walks the KServe v2 infer request object as rapidjson reports it and fills an
// InferRequest directly: tensor data elements are converted as they stream past into the
// input's buffer (no DOM, no per-element allocation). Keys may come in any order; when
// "data" precedes "datatype" the elements are kept as token views into the body and
// converted when the input object ends.
//
// It expects the parse flags DecodeInferRequest uses: kParseInsituFlag (token views stay
// valid in the body), kParseNumbersAsStringsFlag (numbers arrive as text, see
// json_element.h) and kParseNanAndInfFlag. Every problem with the request's content stops
// the parse (an event returns false) and is kept in status(); rapidjson then reports
// kParseErrorTermination, which the caller replaces with status().
//
// What it does not do: the binary section. An input whose parameters carry
// "binary_data_size" gets no data here; binary_data_sizes() tells the caller which
// inputs take how many bytes from the binary section.
//
// Not thread-safe; one per decoding call.
#ifndef INFERA_CODEC_REQUEST_JSON_HANDLER_H_
#define INFERA_CODEC_REQUEST_JSON_HANDLER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "api/infer_request.h"
#include "codec/growable_buffer.h"
#include "codec/json_element.h"
#include "common/json_reader.h"
#include "rapidjson/reader.h"

namespace infera {

// ShapeToString for error messages: a hostile shape can have a million dimensions, so
// only the first 16 are shown ("[1,1,...] (rank 1000000)").
std::string ShapeForMessage(const Shape& shape);

class RequestJsonHandler
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, RequestJsonHandler> {
 public:
  // Deepest nesting of JSON objects and arrays accepted anywhere in the request: the
  // server-wide JSON limit (common/json_reader.h), Triton's 100.
  static constexpr int kMaxDepth = kMaxJsonDepth;

  // Fills `*request` (which must outlive the handler). `max_elements` bounds each input's
  // element count; `json_size` (bytes of JSON text) bounds up-front reservations.
  RequestJsonHandler(InferRequest* request, size_t max_elements, size_t json_size);

  // rapidjson SAX events.
  bool Null() { return OnScalar(JsonToken{{}, JsonTokenKind::kNull, false}); }
  bool Bool(bool b) { return OnScalar(JsonToken{{}, JsonTokenKind::kBool, b}); }
  bool RawNumber(const char* str, rapidjson::SizeType length, bool /*copy*/) {
    return OnScalar(JsonToken{{str, length}, JsonTokenKind::kNumber, false});
  }
  bool String(const char* str, rapidjson::SizeType length, bool /*copy*/) {
    return OnScalar(JsonToken{{str, length}, JsonTokenKind::kString, false});
  }
  bool Key(const char* str, rapidjson::SizeType length, bool copy);
  bool StartObject();
  bool EndObject(rapidjson::SizeType member_count);
  bool StartArray();
  bool EndArray(rapidjson::SizeType element_count);
  // Typed number events; not produced under kParseNumbersAsStringsFlag.
  bool Default() { return Fail("internal error: unexpected JSON number event"); }

  // The reason an event returned false; OK when none did.
  const absl::Status& status() const { return status_; }
  // True once the root object has ended and passed the request-level checks.
  bool done() const { return state_ == State::kDone; }
  // One entry per input, in order: the input's binary_data_size, or nullopt when its
  // data came from JSON.
  absl::Span<const std::optional<uint64_t>> binary_data_sizes() const { return binary_data_sizes_; }

 private:
  enum class State : uint8_t {
    kStart,    // before the root value
    kRequest,  // in the root object
    kParams,   // in a "parameters" object
    kInputs,   // in the "inputs" array
    kInput,    // in one input object
    kShape,    // in an input's "shape" array
    kData,     // in an input's "data" (nested) arrays
    kOutputs,  // in the "outputs" array
    kOutput,   // in one output object
    kValue,    // after a key: the next value belongs to `value_owner_`
    kSkip,     // inside the value of a key this codec does not know
    kDone,
  };
  enum class Field : uint8_t {
    kUnknown,
    kId,
    kParameters,
    kInputs,
    kOutputs,
    kName,
    kShape,
    kDatatype,
    kData
  };
  enum class Event : uint8_t { kScalar, kObject, kArray };

  static constexpr uint32_t Bit(Field field) { return 1u << static_cast<uint32_t>(field); }
  static std::string_view KindName(JsonTokenKind kind);
  static std::string_view EventName(Event event, const JsonToken* token);
  bool Fail(std::string message);
  // Data elements (the hot path) go straight to DataElement; everything else to Scalar.
  bool OnScalar(const JsonToken& token) {
    return state_ == State::kData ? DataElement(token) : Scalar(token);
  }
  bool Scalar(const JsonToken& token);
  bool Value(Event event, const JsonToken* token);
  bool RequestValue(Event event, const JsonToken* token);
  bool InputValue(Event event, const JsonToken* token);
  bool OutputValue(Event event, const JsonToken* token);
  bool ParamValue(Event event, const JsonToken* token);
  bool BeginParams(Event event, Parameters* target);
  bool SkipValue(Event event);
  bool EndSkipped();

  void BeginInput();
  bool ShapeDim(const JsonToken& token);
  bool EndShape();
  bool BeginData(Event event);
  bool DataElement(const JsonToken& token);
  bool FailTooManyElements();
  bool FailElement(int64_t index, ElementError error, const JsonToken& token);
  bool ConvertStaged();
  bool FinishInput();
  bool FinishOutput();
  bool FinishRequest();

  std::string InputLabel() const;
  std::string OutputLabel() const;
  std::string ParamLabel() const;

  InferRequest* const request_;
  const size_t max_elements_;
  const size_t json_size_;
  absl::Status status_;

  State state_ = State::kStart;
  State value_owner_ = State::kRequest;
  Field field_ = Field::kUnknown;
  int depth_ = 0;
  uint32_t request_keys_ = 0;  // bit per Field seen, to reject duplicate keys
  uint32_t input_keys_ = 0;
  uint32_t output_keys_ = 0;

  // "parameters" objects.
  Parameters* params_ = nullptr;
  State params_owner_ = State::kRequest;
  std::string_view param_key_;

  // Skipping unknown values.
  State skip_return_ = State::kRequest;
  int skip_depth_ = 0;

  // The input being parsed.
  Parameters input_params_;
  GrowableBuffer data_;
  std::vector<JsonToken> staged_;  // data seen before "datatype"
  bool staging_ = false;
  int64_t num_elements_ = 0;        // data elements seen so far
  int64_t expected_elements_ = -1;  // from "shape"; -1 until the shape has ended
  int64_t element_limit_ = 0;       // the most data elements this input may have
  int data_depth_ = 0;

  // Inline for the usual few inputs: no allocation per request.
  absl::InlinedVector<std::optional<uint64_t>, 4> binary_data_sizes_;
};

}  // namespace infera

#endif  // INFERA_CODEC_REQUEST_JSON_HANDLER_H_

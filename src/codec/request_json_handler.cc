#include "codec/request_json_handler.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "api/tensor.h"
#include "common/str_cat.h"

namespace infera {

std::string ShapeForMessage(const Shape& shape) {
  constexpr size_t kMaxShown = 16;
  if (shape.size() <= kMaxShown) return ShapeToString(shape);
  const Shape head(shape.begin(), shape.begin() + kMaxShown);
  return StrCat("[", StrJoin(head, ","), ",...] (rank ", shape.size(), ")");
}

std::string_view RequestJsonHandler::KindName(JsonTokenKind kind) {
  switch (kind) {
    case JsonTokenKind::kNull: return "null";
    case JsonTokenKind::kBool: return "a boolean";
    case JsonTokenKind::kNumber: return "a number";
    case JsonTokenKind::kString: return "a string";
  }
  return "";
}

std::string_view RequestJsonHandler::EventName(Event event, const JsonToken* token) {
  if (token != nullptr) return KindName(token->kind);
  return event == Event::kObject ? "an object" : "an array";
}

RequestJsonHandler::RequestJsonHandler(InferRequest* request, size_t max_elements, size_t json_size)
    : request_(request), max_elements_(max_elements), json_size_(json_size) {}

bool RequestJsonHandler::Fail(std::string message) {
  status_ = absl::InvalidArgumentError(std::move(message));
  return false;
}

std::string RequestJsonHandler::InputLabel() const {
  const Tensor& input = request_->inputs.back();
  if (!input.name.empty()) return StrCat("input '", input.name, "'");
  return StrCat("inputs[", request_->inputs.size() - 1, "]");
}

std::string RequestJsonHandler::OutputLabel() const {
  const RequestedOutput& output = request_->outputs.back();
  if (!output.name.empty()) return StrCat("output '", output.name, "'");
  return StrCat("outputs[", request_->outputs.size() - 1, "]");
}

std::string RequestJsonHandler::ParamLabel() const {
  switch (params_owner_) {
    case State::kInput: return StrCat("parameter '", param_key_, "' of ", InputLabel());
    case State::kOutput: return StrCat("parameter '", param_key_, "' of ", OutputLabel());
    default: return StrCat("request parameter '", param_key_, "'");
  }
}

// ---- events -------------------------------------------------------------------------

bool RequestJsonHandler::Scalar(const JsonToken& token) {
  switch (state_) {
    case State::kValue: return Value(Event::kScalar, &token);
    case State::kShape: return ShapeDim(token);
    case State::kSkip: return true;
    case State::kInputs:
      return Fail(StrCat("inputs[", request_->inputs.size(), "] must be an object, got ",
                         KindName(token.kind)));
    case State::kOutputs:
      return Fail(StrCat("outputs[", request_->outputs.size(), "] must be an object, got ",
                         KindName(token.kind)));
    default: return Fail(StrCat("request body must be a JSON object, got ", KindName(token.kind)));
  }
}

bool RequestJsonHandler::Key(const char* str, rapidjson::SizeType length, bool /*copy*/) {
  const std::string_view key(str, length);
  uint32_t* seen = nullptr;
  switch (state_) {
    case State::kSkip: return true;
    case State::kParams:
      param_key_ = key;
      value_owner_ = State::kParams;
      state_ = State::kValue;
      return true;
    case State::kRequest:
      seen = &request_keys_;
      field_ = key == "inputs"       ? Field::kInputs
               : key == "outputs"    ? Field::kOutputs
               : key == "id"         ? Field::kId
               : key == "parameters" ? Field::kParameters
                                     : Field::kUnknown;
      break;
    case State::kInput:
      seen = &input_keys_;
      field_ = key == "data"         ? Field::kData
               : key == "name"       ? Field::kName
               : key == "shape"      ? Field::kShape
               : key == "datatype"   ? Field::kDatatype
               : key == "parameters" ? Field::kParameters
                                     : Field::kUnknown;
      break;
    case State::kOutput:
      seen = &output_keys_;
      field_ = key == "name"         ? Field::kName
               : key == "parameters" ? Field::kParameters
                                     : Field::kUnknown;
      break;
    default: return Fail(StrCat("internal error: unexpected key '", key, "'"));
  }
  if (field_ != Field::kUnknown) {
    if (*seen & Bit(field_)) {
      const std::string where = state_ == State::kInput    ? InputLabel()
                                : state_ == State::kOutput ? OutputLabel()
                                                           : std::string("the request");
      return Fail(StrCat("duplicate key '", key, "' in ", where));
    }
    *seen |= Bit(field_);
  }
  value_owner_ = state_;
  state_ = State::kValue;
  return true;
}

bool RequestJsonHandler::StartObject() {
  if (++depth_ > kMaxDepth) return Fail(StrCat("JSON nesting depth exceeds maximum allowed limit (", kMaxDepth, "): at most ", kMaxDepth, " levels"));
  switch (state_) {
    case State::kStart: state_ = State::kRequest; return true;
    case State::kValue: return Value(Event::kObject, nullptr);
    case State::kSkip: ++skip_depth_; return true;
    case State::kInputs: BeginInput(); return true;
    case State::kOutputs:
      request_->outputs.emplace_back();
      output_keys_ = 0;
      state_ = State::kOutput;
      return true;
    case State::kData:
      return Fail(StrCat("'data' of ", InputLabel(), " may hold only values and arrays; ",
                         "element ", num_elements_, " is an object"));
    default:  // kShape
      return Fail(StrCat("'shape' of ", InputLabel(),
                         " must be an array of non-negative integers, found an object"));
  }
}

bool RequestJsonHandler::StartArray() {
  if (++depth_ > kMaxDepth) return Fail(StrCat("JSON nesting depth exceeds maximum allowed limit (", kMaxDepth, "): at most ", kMaxDepth, " levels"));
  switch (state_) {
    case State::kData: ++data_depth_; return true;
    case State::kValue: return Value(Event::kArray, nullptr);
    case State::kSkip: ++skip_depth_; return true;
    case State::kInputs:
      return Fail(StrCat("inputs[", request_->inputs.size(), "] must be an object, got an array"));
    case State::kOutputs:
      return Fail(
          StrCat("outputs[", request_->outputs.size(), "] must be an object, got an array"));
    case State::kShape:
      return Fail(StrCat("'shape' of ", InputLabel(),
                         " must be an array of non-negative integers, found a nested array"));
    default: return Fail("request body must be a JSON object, got an array");
  }
}

bool RequestJsonHandler::EndObject(rapidjson::SizeType /*member_count*/) {
  --depth_;
  switch (state_) {
    case State::kSkip: return EndSkipped();
    case State::kParams: state_ = params_owner_; return true;
    case State::kInput: state_ = State::kInputs; return FinishInput();
    case State::kOutput: state_ = State::kOutputs; return FinishOutput();
    case State::kRequest: return FinishRequest();
    default: return Fail("internal error: unexpected end of object");
  }
}

bool RequestJsonHandler::EndArray(rapidjson::SizeType /*element_count*/) {
  --depth_;
  switch (state_) {
    case State::kData:
      if (--data_depth_ == 0) state_ = State::kInput;
      return true;
    case State::kShape: return EndShape();
    case State::kSkip: return EndSkipped();
    case State::kInputs:
      if (request_->inputs.empty()) return Fail("'inputs' must be a non-empty array");
      state_ = State::kRequest;
      return true;
    case State::kOutputs: state_ = State::kRequest; return true;
    default: return Fail("internal error: unexpected end of array");
  }
}

// ---- values of known keys -------------------------------------------------------------

bool RequestJsonHandler::Value(Event event, const JsonToken* token) {
  state_ = value_owner_;  // a scalar value returns to its object; containers change it
  switch (value_owner_) {
    case State::kRequest: return RequestValue(event, token);
    case State::kInput: return InputValue(event, token);
    case State::kOutput: return OutputValue(event, token);
    case State::kParams: return ParamValue(event, token);
    default: return Fail("internal error: value without an owner");
  }
}

bool RequestJsonHandler::RequestValue(Event event, const JsonToken* token) {
  switch (field_) {
    case Field::kId:
      if (token == nullptr || token->kind != JsonTokenKind::kString) {
        return Fail(StrCat("'id' must be a string, got ", EventName(event, token)));
      }
      request_->id.assign(token->text);
      return true;
    case Field::kParameters: return BeginParams(event, &request_->parameters);
    case Field::kInputs:
      if (event != Event::kArray) {
        return Fail(StrCat("'inputs' must be an array of objects, got ", EventName(event, token)));
      }
      request_->inputs.reserve(4);  // most models take a few inputs
      state_ = State::kInputs;
      return true;
    case Field::kOutputs:
      if (event != Event::kArray) {
        return Fail(StrCat("'outputs' must be an array of objects, got ", EventName(event, token)));
      }
      state_ = State::kOutputs;
      return true;
    default: return SkipValue(event);
  }
}

bool RequestJsonHandler::OutputValue(Event event, const JsonToken* token) {
  RequestedOutput& output = request_->outputs.back();
  switch (field_) {
    case Field::kName:
      if (token == nullptr || token->kind != JsonTokenKind::kString) {
        return Fail(StrCat("'name' of ", OutputLabel(), " must be a string, got ",
                           EventName(event, token)));
      }
      output.name.assign(token->text);
      return true;
    case Field::kParameters: return BeginParams(event, &output.parameters);
    default: return SkipValue(event);
  }
}

bool RequestJsonHandler::BeginParams(Event event, Parameters* target) {
  params_owner_ = value_owner_;
  if (event != Event::kObject) {
    const std::string owner = params_owner_ == State::kInput    ? InputLabel()
                              : params_owner_ == State::kOutput ? OutputLabel()
                                                                : std::string("the request");
    return Fail(StrCat("'parameters' of ", owner, " must be an object"));
  }
  params_ = target;
  state_ = State::kParams;
  return true;
}

bool RequestJsonHandler::ParamValue(Event event, const JsonToken* token) {
  if (token == nullptr || token->kind == JsonTokenKind::kNull) {
    return Fail(
        StrCat(ParamLabel(), " must be a bool, number or string, not ", EventName(event, token)));
  }
  ParameterValue value;
  switch (token->kind) {
    case JsonTokenKind::kBool: value = token->bool_value; break;
    case JsonTokenKind::kString: value = std::string(token->text); break;
    default: {  // kNumber
      int64_t i;
      double d;
      if (ParseJsonInt64(token->text, &i)) {
        value = i;
      } else if (token->text.find_first_of(".eEIN") != std::string_view::npos &&
                 ParseJsonDouble(token->text, &d)) {
        value = d;
      } else {
        return Fail(StrCat(ParamLabel(), " is out of range: ", token->text));
      }
    }
  }
  if (!params_->emplace(std::string(param_key_), std::move(value)).second) {
    return Fail(StrCat("duplicate ", ParamLabel()));
  }
  return true;
}

bool RequestJsonHandler::SkipValue(Event event) {
  if (event == Event::kScalar) return true;
  skip_return_ = value_owner_;
  skip_depth_ = 1;
  state_ = State::kSkip;
  return true;
}

bool RequestJsonHandler::EndSkipped() {
  if (--skip_depth_ == 0) state_ = skip_return_;
  return true;
}

// ---- request-level checks -------------------------------------------------------------

bool RequestJsonHandler::FinishOutput() {
  const RequestedOutput& output = request_->outputs.back();
  if (output.name.empty()) {
    return Fail(StrCat(OutputLabel(), (output_keys_ & Bit(Field::kName)) ? " has an empty name"
                                                                         : " is missing 'name'"));
  }
  auto it = output.parameters.find("binary_data");
  if (it != output.parameters.end() && !std::holds_alternative<bool>(it->second)) {
    return Fail(StrCat("parameter 'binary_data' of ", OutputLabel(), " must be a bool"));
  }
  return true;
}

bool RequestJsonHandler::FinishRequest() {
  if (!(request_keys_ & Bit(Field::kInputs))) return Fail("request is missing 'inputs'");
  auto it = request_->parameters.find("binary_data_output");
  if (it != request_->parameters.end() && !std::holds_alternative<bool>(it->second)) {
    return Fail("request parameter 'binary_data_output' must be a bool");
  }
  // Duplicate names: sort views of them (requests have few tensors; no hashing needed,
  // and up to 8 names need no allocation).
  absl::InlinedVector<std::string_view, 8> names;
  auto find_duplicate = [&names]() -> std::string_view {
    std::sort(names.begin(), names.end());
    auto dup = std::adjacent_find(names.begin(), names.end());
    return dup == names.end() ? std::string_view() : *dup;
  };
  for (const Tensor& input : request_->inputs) names.push_back(input.name);
  if (std::string_view dup = find_duplicate(); !dup.empty()) {
    return Fail(StrCat("input '", dup, "' already exists in request"));
  }
  names.clear();
  for (const RequestedOutput& output : request_->outputs) names.push_back(output.name);
  if (std::string_view dup = find_duplicate(); !dup.empty()) {
    return Fail(StrCat("output '", dup, "' already exists in request"));
  }
  state_ = State::kDone;
  return true;
}

}  // namespace infera

// RequestJsonHandler, second half: one input object ("name", "datatype", "shape",
// "parameters", "data"). The data path here is the hot loop of JSON request decoding.
#include <algorithm>
#include <utility>

#include "api/tensor.h"
#include "codec/request_json_handler.h"
#include "common/str_cat.h"

namespace infera {

void RequestJsonHandler::BeginInput() {
  // Room for a few inputs at once: one allocation instead of one per growth step.
  if (request_->inputs.capacity() == 0) request_->inputs.reserve(4);
  request_->inputs.emplace_back();
  input_keys_ = 0;
  input_params_.clear();
  data_ = GrowableBuffer();
  staged_.clear();
  staging_ = false;
  num_elements_ = 0;
  expected_elements_ = -1;
  data_depth_ = 0;
  state_ = State::kInput;
}

bool RequestJsonHandler::InputValue(Event event, const JsonToken* token) {
  Tensor& input = request_->inputs.back();
  switch (field_) {
    case Field::kName:
      if (token == nullptr || token->kind != JsonTokenKind::kString) {
        return Fail(
            StrCat("'name' of ", InputLabel(), " must be a string, got ", EventName(event, token)));
      }
      if (token->text.empty()) return Fail(StrCat(InputLabel(), " has an empty name"));
      input.name.assign(token->text);
      return true;
    case Field::kDatatype: {
      if (token == nullptr || token->kind != JsonTokenKind::kString) {
        return Fail(StrCat("'datatype' of ", InputLabel(), " must be a string, got ",
                           EventName(event, token)));
      }
      std::optional<DataType> dtype = ParseDataTypeName(token->text);
      if (!dtype) {
        return Fail(StrCat(InputLabel(), " has unknown datatype '", token->text, "'"));
      }
      input.dtype = *dtype;
      return true;
    }
    case Field::kShape:
      if (event != Event::kArray) {
        return Fail(StrCat("'shape' of ", InputLabel(),
                           " must be an array of non-negative integers, got ",
                           EventName(event, token)));
      }
      state_ = State::kShape;
      return true;
    case Field::kParameters: return BeginParams(event, &input_params_);
    case Field::kData: return BeginData(event);
    default: return SkipValue(event);
  }
}

bool RequestJsonHandler::ShapeDim(const JsonToken& token) {
  int64_t dim;
  if (token.kind != JsonTokenKind::kNumber || !ParseJsonInt64(token.text, &dim) || dim < 0) {
    const std::string_view shown =
        token.kind == JsonTokenKind::kNumber ? token.text : KindName(token.kind);
    return Fail(StrCat("'shape' of ", InputLabel(), " must be an array of non-negative ",
                       "integers; element ", request_->inputs.back().shape.size(), " is ",
                       shown.substr(0, 32)));
  }
  Shape& shape = request_->inputs.back().shape;
  if (shape.empty()) shape.reserve(4);  // one allocation for the usual rank 1-4
  shape.push_back(dim);
  return true;
}

bool RequestJsonHandler::EndShape() {
  state_ = State::kInput;
  const Shape& shape = request_->inputs.back().shape;
  std::optional<int64_t> count = ElementCount(shape);
  if (!count) {
    // Triton's text first (its qa matches it), then infera's.
    return Fail(StrCat("invalid shape for ", InputLabel(), ": shape ", ShapeForMessage(shape),
                       " causes total element count to exceed maximum size of ", INT64_MAX,
                       " (more elements than int64 can count)"));
  }
  if (static_cast<uint64_t>(*count) > max_elements_) {
    return Fail(StrCat("shape ", ShapeForMessage(shape), " of ", InputLabel(), " has ", *count,
                       " elements, more than the limit of ", max_elements_));
  }
  expected_elements_ = *count;  // data seen before the shape is checked in FinishInput
  return true;
}

bool RequestJsonHandler::BeginData(Event event) {
  if (event != Event::kArray) {
    return Fail(
        StrCat("'data' of ", InputLabel(), " must be an array, got ", EventName(event, nullptr)));
  }
  state_ = State::kData;
  data_depth_ = 1;
  element_limit_ = expected_elements_ >= 0
                       ? expected_elements_
                       : static_cast<int64_t>(std::min<uint64_t>(max_elements_, INT64_MAX));
  const DataType dtype = request_->inputs.back().dtype;
  staging_ = dtype == DataType::kInvalid;  // "datatype" comes later: convert at the end
  if (staging_ || expected_elements_ < 0) return true;
  // Reserve the exact size once. Each JSON element takes at least two bytes ("1,"), so
  // a shape the body cannot fill does not get to allocate for it.
  const size_t count = std::min(static_cast<size_t>(expected_elements_), json_size_ / 2 + 1);
  const size_t element_size = DataTypeByteSize(dtype);
  data_.Reserve(element_size != 0 ? count * element_size : count * 12);
  return true;
}

bool RequestJsonHandler::DataElement(const JsonToken& token) {
  if (num_elements_ >= element_limit_) [[unlikely]] {
    return FailTooManyElements();
  }
  const int64_t index = num_elements_++;
  if (staging_) {
    staged_.push_back(token);
    return true;
  }
  const DataType dtype = request_->inputs.back().dtype;
  const ElementError error = AppendJsonElement(dtype, token, data_);
  if (error != ElementError::kNone) [[unlikely]] {
    return FailElement(index, error, token);
  }
  return true;
}

bool RequestJsonHandler::FailTooManyElements() {
  if (expected_elements_ >= 0) {
    return Fail(StrCat(InputLabel(), " has more data elements than its shape ",
                       ShapeForMessage(request_->inputs.back().shape), " holds (",
                       expected_elements_, ")"));
  }
  return Fail(StrCat(InputLabel(), " has more than ", max_elements_, " data elements"));
}

bool RequestJsonHandler::FailElement(int64_t index, ElementError error, const JsonToken& token) {
  return Fail(StrCat(InputLabel(), " data element ", index, ": ",
                     DescribeElementError(error, request_->inputs.back().dtype, token)));
}

bool RequestJsonHandler::ConvertStaged() {
  const DataType dtype = request_->inputs.back().dtype;
  const size_t element_size = DataTypeByteSize(dtype);
  data_.Reserve(staged_.size() * (element_size != 0 ? element_size : 12));
  for (size_t i = 0; i < staged_.size(); ++i) {
    const ElementError error = AppendJsonElement(dtype, staged_[i], data_);
    if (error != ElementError::kNone) {
      return FailElement(static_cast<int64_t>(i), error, staged_[i]);
    }
  }
  staged_.clear();
  return true;
}

bool RequestJsonHandler::FinishInput() {
  Tensor& input = request_->inputs.back();
  for (auto [field, key] :
       {std::pair{Field::kName, "name"}, std::pair{Field::kDatatype, "datatype"},
        std::pair{Field::kShape, "shape"}}) {
    if (!(input_keys_ & Bit(field))) return Fail(StrCat(InputLabel(), " is missing '", key, "'"));
  }
  const bool has_data = input_keys_ & Bit(Field::kData);
  if (input_params_.count("shared_memory_region") > 0) {
    // Data from a shared-memory region: kept for shm/shared_memory_binding.h to resolve.
    if (has_data || input_params_.count("binary_data_size") > 0) {
      return Fail(StrCat(InputLabel(),
                         " has a shared_memory_region parameter and also 'data' or binary_data_size"));
    }
    request_->input_parameters.resize(request_->inputs.size());
    request_->input_parameters.back() = std::move(input_params_);
    binary_data_sizes_.push_back(std::nullopt);
    return true;
  }
  auto it = input_params_.find("binary_data_size");
  if (it != input_params_.end()) {
    const int64_t* size = std::get_if<int64_t>(&it->second);
    if (size == nullptr || *size < 0) {
      return Fail(StrCat("parameter 'binary_data_size' of ", InputLabel(),
                         " must be a non-negative integer"));
    }
    if (has_data) {
      return Fail(StrCat(InputLabel(), " has both 'data' and a binary_data_size parameter"));
    }
    binary_data_sizes_.push_back(static_cast<uint64_t>(*size));
    return true;
  }
  if (!has_data) {
    return Fail(StrCat(InputLabel(), " is missing 'data' (and has no binary_data_size or ",
                       "shared_memory_region parameter)"));
  }
  if (staging_ && !ConvertStaged()) return false;
  if (num_elements_ != expected_elements_) {
    return Fail(StrCat(InputLabel(), " has ", num_elements_, " data elements but shape ",
                       ShapeForMessage(input.shape), " needs ", expected_elements_));
  }
  input.data = std::move(data_).Finish();
  binary_data_sizes_.push_back(std::nullopt);
  return true;
}

}  // namespace infera

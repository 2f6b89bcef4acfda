#include "scheduling/sequence_controls.h"

#include <cstring>
#include <string>

namespace infera {
namespace {

template <typename T>
Buffer Scalar(T value) {
  return Buffer::Copy(&value, sizeof(value));
}

Buffer FlagValue(const SequenceControl& control, bool flag) {
  const double value = flag ? control.true_value : control.false_value;
  switch (control.dtype) {
    case DataType::kBool: return Scalar<uint8_t>(value != 0 ? 1 : 0);
    case DataType::kFp32: return Scalar<float>(static_cast<float>(value));
    default: return Scalar<int32_t>(static_cast<int32_t>(value));
  }
}

Buffer CorrelationValue(const SequenceControl& control, const SequenceRequest* sequence) {
  if (control.dtype == DataType::kBytes) {
    std::string bytes;
    const std::string* text = sequence != nullptr ? std::get_if<std::string>(&sequence->id) : nullptr;
    AppendBytesElement(bytes, text != nullptr ? *text : std::string());
    return Buffer::FromString(std::move(bytes));
  }
  const uint64_t* number = sequence != nullptr ? std::get_if<uint64_t>(&sequence->id) : nullptr;
  const uint64_t id = number != nullptr ? *number : 0;
  switch (control.dtype) {
    case DataType::kUint64: return Scalar<uint64_t>(id);
    case DataType::kInt64: return Scalar<int64_t>(static_cast<int64_t>(id));
    case DataType::kUint32: return Scalar<uint32_t>(static_cast<uint32_t>(id));
    default: return Scalar<int32_t>(static_cast<int32_t>(id));
  }
}

}  // namespace

void AppendSequenceControls(const std::vector<SequenceControl>& controls, bool batched,
                            const SequenceRequest* sequence, std::vector<Tensor>& inputs) {
  for (const SequenceControl& control : controls) {
    Tensor t;
    t.name = control.input_name;
    t.dtype = control.dtype;
    t.shape = batched ? Shape{1, 1} : Shape{1};
    switch (control.kind) {
      case SequenceControl::Kind::kStart: t.data = FlagValue(control, sequence != nullptr && sequence->start); break;
      case SequenceControl::Kind::kEnd: t.data = FlagValue(control, sequence != nullptr && sequence->end); break;
      case SequenceControl::Kind::kReady: t.data = FlagValue(control, sequence != nullptr); break;
      case SequenceControl::Kind::kCorrelationId: t.data = CorrelationValue(control, sequence); break;
    }
    inputs.push_back(std::move(t));
  }
}

std::unique_ptr<ScheduledRequest> MakePaddingRequest(const ScheduledRequest& like) {
  auto padding = std::make_unique<ScheduledRequest>();
  padding->padding = true;
  padding->batch_size = like.batch_size;
  padding->request.model_name = like.request.model_name;
  padding->enqueue_time = like.enqueue_time;
  for (const Tensor& input : like.request.inputs) {
    Tensor zero;
    zero.name = input.name;
    zero.dtype = input.dtype;
    zero.shape = input.shape;
    const int64_t elements = ElementCount(input.shape).value_or(0);
    // BYTES: `elements` empty elements, each a zero 4-byte length prefix.
    const size_t bytes = input.dtype == DataType::kBytes ? static_cast<size_t>(elements) * 4
                                                         : static_cast<size_t>(elements) * DataTypeByteSize(input.dtype);
    uint8_t* data = nullptr;
    zero.data = Buffer::Allocate(bytes, &data);
    if (bytes > 0) std::memset(data, 0, bytes);
    padding->request.inputs.push_back(std::move(zero));
  }
  padding->callback = [](absl::StatusOr<InferResponse>, ResponseDelivery) {};
  return padding;
}

bool SameInputShapes(const ScheduledRequest& a, const ScheduledRequest& b) {
  if (a.request.inputs.size() != b.request.inputs.size()) return false;
  for (size_t i = 0; i < a.request.inputs.size(); ++i) {
    const Tensor& x = a.request.inputs[i];
    const Tensor& y = b.request.inputs[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape) return false;
  }
  return true;
}

}  // namespace infera

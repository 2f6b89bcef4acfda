// Tensors the LLM's tensor-interface tests build (tensor_request_test,
// llm_tensor_instance_test): Triton's vLLM-backend inputs, BYTES and BOOL.
#ifndef INFERA_LLM_TEST_TENSORS_H_
#define INFERA_LLM_TEST_TENSORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/tensor.h"

namespace infera::llm {

// A BYTES tensor of `elements`; `shape` defaults to [number of elements].
inline Tensor Bytes(std::string name, const std::vector<std::string>& elements, Shape shape = {}) {
  std::string data;
  for (const std::string& e : elements) AppendBytesElement(data, e);
  Tensor t;
  t.name = std::move(name);
  t.dtype = DataType::kBytes;
  t.shape = shape.empty() ? Shape{static_cast<int64_t>(elements.size())} : std::move(shape);
  t.data = Buffer::FromString(std::move(data));
  return t;
}

// A BOOL tensor of shape [1].
inline Tensor Bool(std::string name, bool value) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = DataType::kBool;
  t.shape = {1};
  t.data = Buffer::FromString(std::string(1, value ? '\1' : '\0'));
  return t;
}

}  // namespace infera::llm

#endif  // INFERA_LLM_TEST_TENSORS_H_

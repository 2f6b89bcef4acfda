// Helpers shared by the codec's unit tests (test-only; not part of infera_codec).
#ifndef INFERA_CODEC_CODEC_TEST_UTIL_H_
#define INFERA_CODEC_CODEC_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "api/tensor.h"
#include "rapidjson/document.h"

namespace infera {
namespace testing_util {

// The elements of a fixed-size tensor.
template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> values(tensor.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.data.data(), values.size() * sizeof(T));
  return values;
}

// The bytes of a vector of fixed-size elements.
template <typename T>
std::string Bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

inline Tensor MakeTensor(std::string name, DataType dtype, Shape shape, std::string bytes) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = Buffer::FromString(std::move(bytes));
  return t;
}

// The elements of a BYTES tensor.
inline std::vector<std::string> BytesValues(const Tensor& tensor) {
  std::vector<std::string> out;
  auto elements = SplitBytesElements(tensor.data.AsStringView());
  if (elements.ok()) {
    for (std::string_view e : *elements) out.emplace_back(e);
  }
  return out;
}

inline std::string SerializeBytes(const std::vector<std::string>& elements) {
  std::string out;
  for (const std::string& e : elements) AppendBytesElement(out, e);
  return out;
}

// Parses JSON the way a strict client would (NaN/Infinity allowed, full precision).
inline rapidjson::Document ParseJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(json.data(),
                                                                                 json.size());
  return doc;
}

}  // namespace testing_util
}  // namespace infera

#endif  // INFERA_CODEC_CODEC_TEST_UTIL_H_

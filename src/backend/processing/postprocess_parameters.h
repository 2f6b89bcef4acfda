// Config helpers shared by the post-processing backends (classify, detect_postprocess,
// pool): typed reads of Triton-style string parameters, tensor declaration lookups and
// numeric element access. Every error is InvalidArgument starting with "<backend>: " and
// naming the parameter or tensor, so a bad config is a load error that says what to fix.
//
// Thread-safe (pure functions).
#ifndef INFERA_BACKEND_PROCESSING_POSTPROCESS_PARAMETERS_H_
#define INFERA_BACKEND_PROCESSING_POSTPROCESS_PARAMETERS_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/data_type.h"
#include "api/float16.h"
#include "model_config.pb.h"

namespace infera::processing {

// "true" / "false" (exactly); `fallback` when the parameter is absent.
absl::StatusOr<bool> BoolParameter(const inference::ModelConfig& config, std::string_view backend,
                                   std::string_view key, bool fallback);

// A finite decimal number in [min, max]; `fallback` when absent.
absl::StatusOr<double> NumberParameter(const inference::ModelConfig& config,
                                       std::string_view backend, std::string_view key,
                                       double fallback, double min, double max);

// A decimal integer in [min, max]; nullopt when absent.
absl::StatusOr<std::optional<int64_t>> IntegerParameter(const inference::ModelConfig& config,
                                                        std::string_view backend,
                                                        std::string_view key, int64_t min,
                                                        int64_t max);

// One of `allowed`; `allowed[0]` when absent.
absl::StatusOr<std::string> ChoiceParameter(const inference::ModelConfig& config,
                                            std::string_view backend, std::string_view key,
                                            const std::vector<std::string_view>& allowed);

// Checks that every output the config declares is one of `known`, none twice, and that
// there is at least one. Returns, per entry of `known`, the output's index in the config
// (-1: not declared).
absl::StatusOr<std::vector<int>> IndexOutputs(const inference::ModelConfig& config,
                                              std::string_view backend,
                                              const std::vector<std::string_view>& known);

// Checks a declared tensor's datatype and dims: `type` (TYPE_INVALID: any), `dims`
// element -1 in `expected` means "any fixed size >= 1" and -2 "any, -1 allowed".
absl::Status CheckTensor(std::string_view backend, std::string_view kind, std::string_view name,
                         inference::DataType type,
                         const google::protobuf::RepeatedField<int64_t>& dims,
                         const std::vector<inference::DataType>& allowed_types,
                         const std::vector<int64_t>& expected_dims);

// Value of element `i` of a numeric row (any dtype but BYTES / BOOL / INVALID) as a
// double; the bytes may be unaligned.
inline double ElementAsDouble(DataType type, const uint8_t* data, size_t i) {
  auto load = [&](auto value) {
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return value;
  };
  switch (type) {
    case DataType::kUint8:
      return load(uint8_t{});
    case DataType::kUint16:
      return load(uint16_t{});
    case DataType::kUint32:
      return load(uint32_t{});
    case DataType::kUint64:
      return static_cast<double>(load(uint64_t{}));
    case DataType::kInt8:
      return load(int8_t{});
    case DataType::kInt16:
      return load(int16_t{});
    case DataType::kInt32:
      return load(int32_t{});
    case DataType::kInt64:
      return static_cast<double>(load(int64_t{}));
    case DataType::kFp16:
      return HalfToFloat(load(uint16_t{}));
    case DataType::kBf16:
      return Bf16ToFloat(load(uint16_t{}));
    case DataType::kFp32:
      return load(float{});
    case DataType::kFp64:
      return load(double{});
    default:
      return 0;
  }
}

}  // namespace infera::processing

#endif  // INFERA_BACKEND_PROCESSING_POSTPROCESS_PARAMETERS_H_

// Request/response parameters: the KServe v2 `parameters` object (and the gRPC
// InferParameter oneof). Values are bool, int64, double or string.
#ifndef INFERA_API_PARAMETERS_H_
#define INFERA_API_PARAMETERS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>

namespace infera {

using ParameterValue = std::variant<bool, int64_t, double, std::string>;
// Ordered so that encoded responses are deterministic.
using Parameters = std::map<std::string, ParameterValue, std::less<>>;

// Typed lookups; nullopt when absent or of another type (an int64 is accepted where a
// double is asked for).
std::optional<bool> GetBoolParameter(const Parameters& params, std::string_view key);
std::optional<int64_t> GetIntParameter(const Parameters& params, std::string_view key);
std::optional<double> GetDoubleParameter(const Parameters& params, std::string_view key);
std::optional<std::string> GetStringParameter(const Parameters& params, std::string_view key);

}  // namespace infera

#endif  // INFERA_API_PARAMETERS_H_

#include "api/parameters.h"

namespace infera {
namespace {
template <typename T>
std::optional<T> Get(const Parameters& params, std::string_view key) {
  auto it = params.find(key);
  if (it == params.end()) return std::nullopt;
  if (const T* value = std::get_if<T>(&it->second)) return *value;
  return std::nullopt;
}
}  // namespace

std::optional<bool> GetBoolParameter(const Parameters& params, std::string_view key) {
  return Get<bool>(params, key);
}
std::optional<int64_t> GetIntParameter(const Parameters& params, std::string_view key) {
  return Get<int64_t>(params, key);
}
std::optional<double> GetDoubleParameter(const Parameters& params, std::string_view key) {
  if (auto d = Get<double>(params, key)) return d;
  if (auto i = Get<int64_t>(params, key)) return static_cast<double>(*i);
  return std::nullopt;
}
std::optional<std::string> GetStringParameter(const Parameters& params, std::string_view key) {
  return Get<std::string>(params, key);
}

}  // namespace infera

#include "manager/response_cache_key.h"

#include <cstring>
#include <type_traits>
#include <variant>

#include "absl/hash/hash.h"

namespace infera {
namespace {

void AppendU64(std::string& out, uint64_t value) {
  char bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  out.append(bytes, sizeof(value));
}

void AppendField(std::string& out, std::string_view field) {
  AppendU64(out, field.size());
  out.append(field.data(), field.size());
}

// Parameters in map order (sorted by name), each name, type tag and value.
template <typename Neutral>
void AppendParameters(std::string& out, const Parameters& parameters, Neutral neutral) {
  size_t kept = 0;
  for (const auto& [name, value] : parameters) kept += neutral(name) ? 0 : 1;
  AppendU64(out, kept);
  for (const auto& [name, value] : parameters) {
    if (neutral(name)) continue;
    AppendField(out, name);
    AppendU64(out, value.index());
    std::visit(
        [&out](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            AppendField(out, v);
          } else if constexpr (std::is_same_v<T, double>) {
            uint64_t bits = 0;
            std::memcpy(&bits, &v, sizeof(bits));
            AppendU64(out, bits);
          } else {
            AppendU64(out, static_cast<uint64_t>(v));
          }
        },
        value);
  }
}

}  // namespace

uint64_t DefaultCacheKeyHash(std::string_view bytes) { return absl::Hash<std::string_view>{}(bytes); }

bool IsCacheNeutralRequestParameter(std::string_view name) {
  return name == "priority" || name == "timeout" || name == "binary_data_output" || name == "routing_key";
}

bool IsCacheNeutralOutputParameter(std::string_view name) {
  return name == "binary_data" || name.substr(0, 14) == "shared_memory_";
}

ResponseCacheKey ResponseCacheKey::ForRequest(std::string_view model, int64_t version, const InferRequest& request,
                                              const CacheKeyHash& hash) {
  size_t size = 64 + model.size();
  for (const Tensor& input : request.inputs) size += 32 + input.name.size() + 8 * input.shape.size() + input.data.size();
  std::string out;
  out.reserve(size);
  AppendField(out, model);
  AppendU64(out, static_cast<uint64_t>(version));
  AppendU64(out, request.inputs.size());
  for (const Tensor& input : request.inputs) {
    AppendField(out, input.name);
    AppendU64(out, static_cast<uint64_t>(input.dtype));
    AppendU64(out, input.shape.size());
    for (int64_t dim : input.shape) AppendU64(out, static_cast<uint64_t>(dim));
    AppendField(out, input.data.AsStringView());
  }
  AppendU64(out, request.outputs.size());
  for (const RequestedOutput& output : request.outputs) {
    AppendField(out, output.name);
    AppendParameters(out, output.parameters, IsCacheNeutralOutputParameter);
  }
  AppendParameters(out, request.parameters, IsCacheNeutralRequestParameter);
  const uint64_t h = hash(out);
  return ResponseCacheKey(std::move(out), h);
}

ResponseCacheKey ResponseCacheKey::FromBytes(std::string bytes, const CacheKeyHash& hash) {
  const uint64_t h = hash(bytes);
  return ResponseCacheKey(std::move(bytes), h);
}

}  // namespace infera

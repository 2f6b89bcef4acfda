// The KServe / Triton protocol extensions infera implements, as both frontends report
// them in server metadata (HTTP GET /v2, gRPC ServerMetadata). One list, so the two
// can never disagree; add a name only when the extension works on both transports.
#ifndef INFERA_API_SERVER_EXTENSIONS_H_
#define INFERA_API_SERVER_EXTENSIONS_H_

#include <array>
#include <string_view>

namespace infera {

inline constexpr std::array<std::string_view, 9> kServerExtensions = {
    "binary_tensor_data", "parameters", "model_configuration", "model_repository",
    "statistics", "logging", "classification", "trace", "system_shared_memory"};

}  // namespace infera

#endif  // INFERA_API_SERVER_EXTENSIONS_H_

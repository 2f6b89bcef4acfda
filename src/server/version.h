#ifndef INFERA_SERVER_VERSION_H_
#define INFERA_SERVER_VERSION_H_

#include <string_view>

namespace infera {
inline constexpr std::string_view kInferaVersion = "0.1.0";
}

#endif  // INFERA_SERVER_VERSION_H_

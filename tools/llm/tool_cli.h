// The command-line convention the LLM tools share with `infera` (docs/llm.md "Tools"):
// --help / -h prints the tool's usage on stdout and exits 0; a bad flag or value prints
// one line naming the problem and a pointer to --help on stderr and exits 2 (never the
// whole usage, which would scroll the error away). Header-only: each tool is one file.
#ifndef INFERA_TOOLS_LLM_TOOL_CLI_H_
#define INFERA_TOOLS_LLM_TOOL_CLI_H_

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace infera::llm_tools {

inline bool IsHelpFlag(std::string_view arg) { return arg == "--help" || arg == "-h"; }

// Prints `usage` and exits 0 when any argument asks for help (before anything else is
// checked, so `tool --help` works whatever else is on the line).
inline void HandleHelp(int argc, char** argv, std::string_view usage) {
  for (int i = 1; i < argc; ++i) {
    if (IsHelpFlag(argv[i])) {
      std::cout << usage;
      std::exit(0);
    }
  }
}

[[noreturn]] inline void FlagError(std::string_view tool, std::string_view problem) {
  std::cerr << tool << ": " << problem << "\nsee '" << tool << " --help'\n";
  std::exit(2);
}

// `value` as an integer in [min, max], else FlagError naming `flag`.
inline int64_t IntegerFlag(std::string_view tool, std::string_view flag, const std::string& value, int64_t min,
                           int64_t max) {
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || n < min || n > max) {
    FlagError(tool, std::string(flag) + ": '" + value + "' is not an integer in [" + std::to_string(min) + ", " +
                        std::to_string(max) + "]");
  }
  return n;
}

}  // namespace infera::llm_tools

#endif  // INFERA_TOOLS_LLM_TOOL_CLI_H_

#include "common/process_uptime.h"

#include <time.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace infera {

std::optional<uint64_t> StartTimeTicksFromStat(std::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1);
  // After ')': field 3 (state) onwards; start time is field 22, the 20th of these.
  for (int field = 3; field <= 22; ++field) {
    const size_t begin = rest.find_first_not_of(' ');
    if (begin == std::string_view::npos) return std::nullopt;
    rest = rest.substr(begin);
    const size_t end = std::min(rest.find(' '), rest.size());
    if (field == 22) {
      std::string_view text = rest.substr(0, end);
      if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
      uint64_t ticks = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), ticks);
      if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
      return ticks;
    }
    rest = rest.substr(end);
  }
  return std::nullopt;
}

std::optional<std::chrono::duration<double>> ProcessUptime() {
  std::ifstream in("/proc/self/stat");
  if (!in) return std::nullopt;
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::optional<uint64_t> ticks = StartTimeTicksFromStat(stat);
  const long hz = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (!ticks || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return std::nullopt;
  const double since_boot = static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
  return std::chrono::duration<double>(since_boot - static_cast<double>(*ticks) / static_cast<double>(hz));
}

}  // namespace infera

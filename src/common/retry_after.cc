#include "common/retry_after.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "absl/strings/cord.h"

namespace infera {
namespace {
constexpr char kPayloadUrl[] = "type.infera.dev/retry-after-seconds";
}

absl::Status WithRetryAfter(absl::Status status, int seconds) {
  status.SetPayload(kPayloadUrl, absl::Cord(std::to_string(std::clamp(seconds, 1, 3600))));
  return status;
}

std::optional<int> RetryAfterSeconds(const absl::Status& status) {
  auto payload = status.GetPayload(kPayloadUrl);  // absl::optional in this abseil
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  int seconds = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return seconds;
}

}  // namespace infera

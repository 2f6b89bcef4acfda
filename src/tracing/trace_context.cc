#include "tracing/trace_context.h"

#include <algorithm>
#include <random>

namespace infera {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // W3C requires lower-case hex
}

template <size_t N>
bool ParseHex(std::string_view text, std::array<uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    const int hi = Hex(text[2 * i]), lo = Hex(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return std::any_of(out.begin(), out.end(), [](uint8_t b) { return b != 0; });
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

template <size_t N>
std::array<uint8_t, N> RandomId() {
  std::array<uint8_t, N> id{};
  do {
    for (size_t i = 0; i < N; i += 8) {
      const uint64_t r = Rng()();
      for (size_t j = 0; j < 8 && i + j < N; ++j) id[i + j] = static_cast<uint8_t>(r >> (8 * j));
    }
  } while (std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; }));
  return id;
}

}  // namespace

std::optional<TraceContext> ParseTraceparent(std::string_view header) {
  // version(2) - trace-id(32) - parent-id(16) - flags(2)
  if (header.size() != 55 || header.substr(0, 3) != "00-" || header[35] != '-' || header[52] != '-') {
    return std::nullopt;
  }
  TraceContext context;
  std::array<uint8_t, 1> flags{};
  if (!ParseHex(header.substr(3, 32), context.trace_id) ||
      !ParseHex(header.substr(36, 16), context.span_id)) {
    return std::nullopt;
  }
  const int hi = Hex(header[53]), lo = Hex(header[54]);
  if (hi < 0 || lo < 0) return std::nullopt;
  flags[0] = static_cast<uint8_t>(hi * 16 + lo);
  context.sampled = (flags[0] & 1) != 0;
  return context;
}

std::string ToHex(const uint8_t* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled) {
  return "00-" + ToHex(trace_id) + "-" + ToHex(span_id) + (sampled ? "-01" : "-00");
}

TraceId NewTraceId() { return RandomId<16>(); }
SpanId NewSpanId() { return RandomId<8>(); }

}  // namespace infera

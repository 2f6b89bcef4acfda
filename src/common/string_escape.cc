#include "common/string_escape.h"

#include <cstdint>
#include <cstdio>

namespace infera {
namespace {

void AppendNumeric(std::string& out, unsigned char c, EscapeStyle::Numeric numeric) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), numeric == EscapeStyle::Numeric::kHex ? "\\x%02X" : "\\u%04x", c);
  out += buf;
}

// The length of the well-formed-looking sequence at text[i] (a lead byte and its
// continuation bytes), or 0 when text[i] does not start one.
size_t SequenceLength(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// text[i, i + n) (a sequence SequenceLength found) as \uxxxx, a surrogate pair above U+FFFF.
void AppendUnicodeEscape(std::string& out, std::string_view sequence) {
  const auto lead = static_cast<unsigned char>(sequence[0]);
  uint32_t v = lead & (sequence.size() == 2 ? 0x1F : sequence.size() == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < sequence.size(); ++k) v = (v << 6) | (static_cast<unsigned char>(sequence[k]) & 0x3F);
  char buf[16];
  if (v >= 0x10000) {
    v -= 0x10000;
    std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
  } else {
    std::snprintf(buf, sizeof(buf), "\\u%04x", v);
  }
  out += buf;
}

}  // namespace

void AppendEscaped(std::string& out, std::string_view text, const EscapeStyle& style) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b':
        if (style.short_backspace_formfeed) {
          out += "\\b";
          continue;
        }
        break;
      case '\f':
        if (style.short_backspace_formfeed) {
          out += "\\f";
          continue;
        }
        break;
      default: break;
    }
    if (c < 0x20 || (c == 0x7F && style.escape_del)) {
      AppendNumeric(out, c, style.numeric);
    } else if (c >= 0x80 && style.ascii_only) {
      if (const size_t n = SequenceLength(text, i); n > 0) {
        AppendUnicodeEscape(out, text.substr(i, n));
        i += n - 1;
      } else {
        out += ch;
      }
    } else {
      out += ch;
    }
  }
}

}  // namespace infera

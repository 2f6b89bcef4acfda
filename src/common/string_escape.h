// AppendEscaped: text as the body of a double-quoted string in the backslash syntax that
// JSON and GBNF (llama.cpp's grammar notation) share — \" \\ \n \r \t, and every other
// control byte as a numeric escape — in one of the styles the server writes:
//
//   kJsonEscapes          JSON log lines (common/logging.cc): controls as \u00xx; bytes
//                         from 0x7F up as they are (the caller makes the text UTF-8).
//   PythonJsonEscapes(a)  Python's json.dumps (Jinja's tojson, jinja/json.cc): \b and \f
//                         short too; with ensure_ascii `a`, DEL and every code point past
//                         U+007F as \uxxxx (UTF-16 surrogate pairs above U+FFFF).
//   kGbnfEscapes          GBNF literals (guided/gbnf_text.cc): controls and DEL as \xXX.
//
// Bytes that do not start a well-formed sequence pass through as they are (under
// ensure_ascii too): each style escapes the ASCII it names whatever surrounds it.
//
// Thread-safe (pure function).
#ifndef INFERA_COMMON_STRING_ESCAPE_H_
#define INFERA_COMMON_STRING_ESCAPE_H_

#include <string>
#include <string_view>

namespace infera {

struct EscapeStyle {
  // How a control byte without a short form is written: \u00xx (JSON, lower-case hex)
  // or \xXX (GBNF, upper-case hex).
  enum class Numeric { kUnicode, kHex };
  Numeric numeric = Numeric::kUnicode;
  bool short_backspace_formfeed = false;  // \b \f rather than the numeric form
  bool escape_del = false;                // 0x7F in the numeric form
  bool ascii_only = false;                // code points past U+007F as \uxxxx (JSON only)
};

inline constexpr EscapeStyle kJsonEscapes{};
constexpr EscapeStyle PythonJsonEscapes(bool ensure_ascii) {
  return {EscapeStyle::Numeric::kUnicode, true, ensure_ascii, ensure_ascii};
}
inline constexpr EscapeStyle kGbnfEscapes{EscapeStyle::Numeric::kHex, false, true, false};

// Appends `text` escaped in `style`, without the quotes.
void AppendEscaped(std::string& out, std::string_view text, const EscapeStyle& style);

}  // namespace infera

#endif  // INFERA_COMMON_STRING_ESCAPE_H_

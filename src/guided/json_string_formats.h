// JSON schema `format` values enforced as GBNF (the inside of the string literal): each
// a subset of what the format allows, never more — so every output passes a strict
// format checker (Python jsonschema's FormatChecker):
//   date       YYYY-MM-DD, year 1000-9999, days valid for the month (no 02-29: the leap
//              years are not tracked)
//   time       HH:MM:SS, optional .fraction (1-9 digits), then Z or ±HH:MM (RFC 3339)
//   date-time  date "T" time
//   uuid       8-4-4-4-12 hex digits
//   email      dot-atom local part @ a domain of dot-separated LDH labels (RFC 5321)
//   ipv4       four dotted decimal octets 0-255, no leading zeros
// Any other format is refused by the caller (""), never ignored.
//
// Thread-safe (pure function).
#ifndef INFERA_GUIDED_JSON_STRING_FORMATS_H_
#define INFERA_GUIDED_JSON_STRING_FORMATS_H_

#include <string>
#include <string_view>

namespace infera::guided {

// The expression for the characters between the quotes, or "" for an unsupported format.
std::string StringFormatGbnf(std::string_view format);

}  // namespace infera::guided

#endif  // INFERA_GUIDED_JSON_STRING_FORMATS_H_

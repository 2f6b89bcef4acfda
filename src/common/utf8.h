// UTF-8 validation for BYTES elements the response encoder may write as JSON strings,
// and repair of client text that is echoed into JSON (error bodies, JSON log lines).
//
// JSON text must be UTF-8, but a BYTES tensor holds arbitrary bytes; the encoder checks
// each element and falls back to the binary encoding when one is not valid UTF-8.
// Thread-safe (pure function).
#ifndef INFERA_COMMON_UTF8_H_
#define INFERA_COMMON_UTF8_H_

#include <string>
#include <string_view>

namespace infera {

// True when `text` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences. NUL bytes are valid.
bool IsValidUtf8(std::string_view text);

// `text` with every byte that does not belong to a well-formed sequence replaced by
// U+FFFD, so it can go into JSON text (error messages echo client bytes: URL paths,
// model names). Valid text comes back unchanged.
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace infera

#endif  // INFERA_COMMON_UTF8_H_

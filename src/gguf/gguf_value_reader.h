// ReadGgufString / ReadGgufValue: decode one metadata string or typed value at a
// ByteCursor, within the bounds the rest of the file allows.
//
// Bounds: a string's length, and an array's count times the least bytes one element
// takes (its scalar size; 8 for a string's length; 12 for a nested array's type and
// count), must fit in the bytes left, so a hostile count fails before anything is
// allocated for it; arrays nest at most kMaxArrayNesting deep. A bool must be 0 or 1.
//
// Thread-safe (pure functions of their arguments).
#ifndef INFERA_GGUF_GGUF_VALUE_READER_H_
#define INFERA_GGUF_GGUF_VALUE_READER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "gguf/byte_cursor.h"
#include "gguf/gguf_value.h"

namespace infera::gguf {

// A uint64 length and that many bytes. `field` names it in errors.
absl::StatusOr<std::string_view> ReadGgufString(ByteCursor& cursor, std::string_view field);
// A uint32 value type and a value of it.
absl::StatusOr<GgufValue> ReadGgufTypedValue(ByteCursor& cursor, std::string_view field);

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGUF_VALUE_READER_H_

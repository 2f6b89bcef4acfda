#include "gguf/gguf_value_reader.h"

#include <vector>

#include "common/status.h"
#include "gguf/gguf_file.h"

namespace infera::gguf {
namespace {

absl::StatusOr<GgufValueType> ReadValueType(ByteCursor& cursor, std::string_view field) {
  const size_t at = cursor.pos();
  ASSIGN_OR_RETURN(uint32_t raw, cursor.Read<uint32_t>(field));
  if (raw > kMaxGgufValueType) {
    return absl::InvalidArgumentError(
        StrCat(cursor.where(), ": ", field, " at byte ", at, ": unknown value type ", raw));
  }
  return static_cast<GgufValueType>(raw);
}

absl::StatusOr<GgufValue> ReadValue(ByteCursor& cursor, GgufValueType type, std::string_view field, int depth);

absl::StatusOr<GgufValue> ReadArray(ByteCursor& cursor, std::string_view field, int depth) {
  if (depth >= kMaxArrayNesting) {
    return cursor.Error(field, StrCat("arrays nest deeper than ", kMaxArrayNesting, " levels"));
  }
  ASSIGN_OR_RETURN(GgufValueType element_type, ReadValueType(cursor, StrCat(field, " element type")));
  const size_t count_at = cursor.pos();
  ASSIGN_OR_RETURN(uint64_t count, cursor.Read<uint64_t>(StrCat(field, " element count")));
  const uint64_t min_element_bytes = element_type == GgufValueType::kString  ? 8
                                     : element_type == GgufValueType::kArray ? 12
                                                                             : GgufScalarSize(element_type);
  if (count > cursor.remaining() / min_element_bytes) {
    return absl::InvalidArgumentError(StrCat(cursor.where(), ": ", field, " at byte ", count_at, ": ", count,
                                             " elements of ", GgufValueTypeName(element_type),
                                             " cannot fit in the ", cursor.remaining(), " bytes left"));
  }
  if (element_type != GgufValueType::kString && element_type != GgufValueType::kArray) {
    const size_t at = cursor.pos();
    ASSIGN_OR_RETURN(const uint8_t* bytes, cursor.Take(count * min_element_bytes, field));
    if (element_type == GgufValueType::kBool) {
      for (uint64_t i = 0; i < count; ++i) {
        if (bytes[i] > 1) {
          return absl::InvalidArgumentError(StrCat(cursor.where(), ": ", field, " element ", i, " at byte ",
                                                   at + i, ": bool value ", int{bytes[i]}, " is not 0 or 1"));
        }
      }
    }
    return GgufValue::ScalarArray(element_type, count, bytes);
  }
  std::vector<GgufValue> items;
  items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(GgufValue item, ReadValue(cursor, element_type, field, depth + 1));
    items.push_back(std::move(item));
  }
  return GgufValue::ItemArray(element_type, std::move(items));
}

absl::StatusOr<GgufValue> ReadValue(ByteCursor& cursor, GgufValueType type, std::string_view field, int depth) {
  switch (type) {
    case GgufValueType::kString: {
      ASSIGN_OR_RETURN(std::string_view text, ReadGgufString(cursor, field));
      return GgufValue::String(text);
    }
    case GgufValueType::kArray: return ReadArray(cursor, field, depth);
    default: {
      const size_t at = cursor.pos();
      ASSIGN_OR_RETURN(const uint8_t* bytes, cursor.Take(GgufScalarSize(type), field));
      if (type == GgufValueType::kBool && *bytes > 1) {
        return absl::InvalidArgumentError(StrCat(cursor.where(), ": ", field, " at byte ", at, ": bool value ",
                                                 int{*bytes}, " is not 0 or 1"));
      }
      return GgufValue::Scalar(type, bytes);
    }
  }
}

}  // namespace

absl::StatusOr<std::string_view> ReadGgufString(ByteCursor& cursor, std::string_view field) {
  const size_t at = cursor.pos();
  ASSIGN_OR_RETURN(uint64_t length, cursor.Read<uint64_t>(StrCat(field, " length")));
  if (length > cursor.remaining()) {
    return absl::InvalidArgumentError(StrCat(cursor.where(), ": ", field, " at byte ", at, ": string length ",
                                             length, " runs past the end of the file (", cursor.remaining(),
                                             " bytes left)"));
  }
  ASSIGN_OR_RETURN(const uint8_t* bytes, cursor.Take(length, field));
  return std::string_view(reinterpret_cast<const char*>(bytes), static_cast<size_t>(length));
}

absl::StatusOr<GgufValue> ReadGgufTypedValue(ByteCursor& cursor, std::string_view field) {
  ASSIGN_OR_RETURN(GgufValueType type, ReadValueType(cursor, StrCat(field, " value type")));
  return ReadValue(cursor, type, field, 0);
}

}  // namespace infera::gguf

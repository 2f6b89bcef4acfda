// GgufMetadata: the key/value metadata of a GGUF file, with typed getters.
//
// Getters return NotFound naming the key when it is absent, and InvalidArgument naming
// the key, the type the file has and the type asked for when it is of another type.
// Integer getters accept every integer type whose value fits the result; GetFloat
// accepts float32 and float64. Strings and arrays of numbers are views into the file's
// bytes (see gguf_value.h): valid while the GgufFile lives.
//
// Thread-safe after construction (const).
//
// Usage:
//   ASSIGN_OR_RETURN(std::string_view arch, metadata.GetString("general.architecture"));
//   ASSIGN_OR_RETURN(uint64_t layers, metadata.GetUint(StrCat(arch, ".block_count")));
#ifndef INFERA_GGUF_GGUF_METADATA_H_
#define INFERA_GGUF_GGUF_METADATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gguf/gguf_value.h"

namespace infera::gguf {

class GgufMetadata {
 public:
  // False when `key` is already present (the parser refuses duplicate keys).
  bool Insert(std::string_view key, GgufValue value);

  bool Has(std::string_view key) const { return values_.count(key) > 0; }
  const GgufValue* Find(std::string_view key) const;
  // Keys in file order.
  const std::vector<std::string>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

  absl::StatusOr<std::string_view> GetString(std::string_view key) const;
  absl::StatusOr<int64_t> GetInt(std::string_view key) const;
  absl::StatusOr<uint64_t> GetUint(std::string_view key) const;
  absl::StatusOr<double> GetFloat(std::string_view key) const;
  absl::StatusOr<bool> GetBool(std::string_view key) const;
  // Arrays: every element must be of the asked-for class (string / integer / float).
  absl::StatusOr<std::vector<std::string_view>> GetStringArray(std::string_view key) const;
  absl::StatusOr<std::vector<int64_t>> GetIntArray(std::string_view key) const;
  absl::StatusOr<std::vector<float>> GetFloatArray(std::string_view key) const;
  // The raw value of an array (any element type, nested arrays included).
  absl::StatusOr<const GgufValue*> GetArray(std::string_view key) const;

 private:
  absl::StatusOr<const GgufValue*> Get(std::string_view key) const;
  std::map<std::string, GgufValue, std::less<>> values_;
  std::vector<std::string> keys_;
};

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGUF_METADATA_H_

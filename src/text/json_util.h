// Small helpers over RapidJSON for reading Hugging Face JSON files (config.json,
// tokenizer.json, ...) and OpenAI request bodies.
//
// Thread-safe (pure functions).
#ifndef INFERA_TEXT_JSON_UTIL_H_
#define INFERA_TEXT_JSON_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace infera::text {

// Reads a whole file. NotFound / Internal naming the path.
absl::StatusOr<std::string> ReadFileToString(const std::filesystem::path& path);

// Parses `text` into `doc` through the server's one JSON reader (common/json_reader.h:
// nesting and size limits, iterative parse); InvalidArgument naming `what` and the
// offset or the exceeded limit on error.
absl::Status ParseJson(std::string_view text, std::string_view what, rapidjson::Document& doc);

// Member lookups: nullopt when absent, null or of another type.
const rapidjson::Value* FindMember(const rapidjson::Value& obj, std::string_view key);
std::optional<std::string> GetString(const rapidjson::Value& obj, std::string_view key);
std::optional<int64_t> GetInt(const rapidjson::Value& obj, std::string_view key);
std::optional<double> GetDouble(const rapidjson::Value& obj, std::string_view key);
std::optional<bool> GetBool(const rapidjson::Value& obj, std::string_view key);

inline std::string_view AsView(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

}  // namespace infera::text

#endif  // INFERA_TEXT_JSON_UTIL_H_

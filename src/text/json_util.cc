#include "text/json_util.h"

#include <fstream>
#include <sstream>

#include "common/json_reader.h"
#include "common/str_cat.h"

namespace infera::text {

absl::StatusOr<std::string> ReadFileToString(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot open ", path.string()));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return absl::InternalError(StrCat("cannot read ", path.string()));
  return std::move(out).str();
}

absl::Status ParseJson(std::string_view text, std::string_view what, rapidjson::Document& doc) {
  return ReadJson(text, what, doc);
}

const rapidjson::Value* FindMember(const rapidjson::Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

std::optional<std::string> GetString(const rapidjson::Value& obj, std::string_view key) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v || !v->IsString()) return std::nullopt;
  return std::string(AsView(*v));
}

std::optional<int64_t> GetInt(const rapidjson::Value& obj, std::string_view key) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::optional<double> GetDouble(const rapidjson::Value& obj, std::string_view key) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v || !v->IsNumber()) return std::nullopt;
  return v->GetDouble();
}

std::optional<bool> GetBool(const rapidjson::Value& obj, std::string_view key) {
  const rapidjson::Value* v = FindMember(obj, key);
  if (!v || !v->IsBool()) return std::nullopt;
  return v->GetBool();
}

}  // namespace infera::text

#include "llm/json_util.h"

#include <fstream>
#include <sstream>

#include "common/str_cat.h"
#include "rapidjson/error/en.h"

namespace infera::llm {

absl::StatusOr<std::string> ReadFileToString(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot open ", path.string()));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return absl::InternalError(StrCat("cannot read ", path.string()));
  return std::move(out).str();
}

absl::Status ParseJson(std::string_view text, std::string_view what, rapidjson::Document& doc) {
  // Default precision, not kParseFullPrecisionFlag: RapidJSON 1.1.0's full-precision
  // strtod reads outside its power-of-ten table for a number such as 0.<370 zeros>88
  // (SIGSEGV from one /v1/completions body; found by fuzz_openai_protocol).
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(StrCat(what, ": invalid JSON at offset ", doc.GetErrorOffset(),
                                             ": ", rapidjson::GetParseError_En(doc.GetParseError())));
  }
  return absl::OkStatus();
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

}  // namespace infera::llm

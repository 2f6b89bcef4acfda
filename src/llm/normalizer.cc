#include "llm/normalizer.h"

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/json_util.h"

namespace infera::llm {

absl::Status Normalizer::Parse(const rapidjson::Value& v, std::vector<Step>& steps) {
  const std::string type = GetString(v, "type").value_or("");
  if (type == "Sequence") {
    const rapidjson::Value* list = FindMember(v, "normalizers");
    if (!list || !list->IsArray()) return absl::InvalidArgumentError("normalizer Sequence without a list");
    for (const auto& item : list->GetArray()) RETURN_IF_ERROR(Parse(item, steps));
  } else if (type == "Prepend") {
    steps.push_back({Step::kPrepend, GetString(v, "prepend").value_or(""), ""});
  } else if (type == "Replace") {
    const rapidjson::Value* pattern = FindMember(v, "pattern");
    auto from = pattern ? GetString(*pattern, "String") : std::nullopt;
    if (!from) return absl::InvalidArgumentError("normalizer Replace supports String patterns only");
    steps.push_back({Step::kReplace, *from, GetString(v, "content").value_or("")});
  } else if (type == "Lowercase") {
    steps.push_back({Step::kLowercase, "", ""});
  } else if (type == "NFC") {
    // Identity; see the header's IMPORTANT note.
  } else {
    return absl::InvalidArgumentError(StrCat("normalizer type '", type, "' is not supported"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Normalizer> Normalizer::FromJson(const rapidjson::Value* json) {
  Normalizer n;
  if (json == nullptr || json->IsNull()) return n;
  RETURN_IF_ERROR(Parse(*json, n.steps_));
  return n;
}

std::string Normalizer::Normalize(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::kPrepend:
        if (!s.empty()) s = step.a + s;
        break;
      case Step::kReplace: {
        if (step.a.empty()) break;
        std::string out;
        size_t pos = 0;
        for (size_t hit; (hit = s.find(step.a, pos)) != std::string::npos; pos = hit + step.a.size()) {
          out.append(s, pos, hit - pos);
          out += step.b;
        }
        out.append(s, pos);
        s = std::move(out);
        break;
      }
      case Step::kLowercase:
        for (char& c : s) {
          if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        }
        break;
    }
  }
  return s;
}

}  // namespace infera::llm

#include "tools/bench/sse_token_counter.h"

#include "rapidjson/document.h"

namespace infera::bench {
namespace {

bool NonEmptyString(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return false;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString() && it->value.GetStringLength() > 0;
}

}  // namespace

void SseTokenCounter::Reset() { *this = SseTokenCounter(); }

void SseTokenCounter::Feed(std::string_view data, int64_t now_ns) {
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(data);
      return;
    }
    std::string_view line = data.substr(0, nl);
    data.remove_prefix(nl + 1);
    if (!partial_.empty()) {
      partial_.append(line);
      const std::string whole = std::move(partial_);
      partial_.clear();
      OnLine(whole, now_ns);
    } else {
      OnLine(line, now_ns);
    }
  }
}

void SseTokenCounter::OnLine(std::string_view line, int64_t now_ns) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.substr(0, 5) != "data:") return;  // comments, event names, blank separators
  line.remove_prefix(5);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line == "[DONE]") {
    done_ = true;
    return;
  }
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return;
  if (doc.HasMember("error")) {
    const auto& e = doc["error"];
    error_ = e.IsObject() && e.HasMember("message") && e["message"].IsString() ? e["message"].GetString()
                                                                              : "error event";
  }
  if (doc.HasMember("choices") && doc["choices"].IsArray() && !doc["choices"].Empty()) {
    const auto& choice = doc["choices"][0];
    const bool token = NonEmptyString(choice, "text") ||
                       (choice.IsObject() && choice.HasMember("delta") && NonEmptyString(choice["delta"], "content"));
    if (token) {
      if (token_events_++ == 0) first_token_ns_ = now_ns;
    }
  }
  if (doc.HasMember("usage") && doc["usage"].IsObject() && doc["usage"].HasMember("completion_tokens") &&
      doc["usage"]["completion_tokens"].IsInt64()) {
    usage_tokens_ = doc["usage"]["completion_tokens"].GetInt64();
  }
}

}  // namespace infera::bench

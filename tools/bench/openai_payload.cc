#include "tools/bench/openai_payload.h"

#include <random>

#include "common/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::bench {
namespace {

constexpr const char* kWords[] = {"the", "of", "and", "to", "in", "a", "is", "that", "for", "it",
                                  "as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
                                  "or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
                                  "you", "were", "their", "one", "all", "we", "can", "her", "has", "there"};

std::string Body(const OpenAiRequestOptions& o, std::mt19937_64& rng) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("model");
  w.String(o.model.c_str(), static_cast<rapidjson::SizeType>(o.model.size()));
  if (o.chat) {
    std::uniform_int_distribution<size_t> word(0, sizeof(kWords) / sizeof(kWords[0]) - 1);
    std::string text;
    for (int64_t i = 0; i < o.input_tokens; ++i) text += StrCat(i ? " " : "", kWords[word(rng)]);
    w.Key("messages");
    w.StartArray();
    w.StartObject();
    w.Key("role");
    w.String("user");
    w.Key("content");
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    w.EndObject();
    w.EndArray();
  } else {
    std::uniform_int_distribution<int64_t> id(o.id_low, std::max(o.id_low, o.id_high - 1));
    w.Key("prompt");
    w.StartArray();
    for (int64_t i = 0; i < o.input_tokens; ++i) w.Int64(id(rng));
    w.EndArray();
  }
  w.Key("max_tokens");
  w.Int64(o.output_tokens);
  w.Key("ignore_eos");
  w.Bool(true);
  w.Key("temperature");
  w.Int(0);
  w.Key("stream");
  w.Bool(true);
  w.Key("stream_options");
  w.StartObject();
  w.Key("include_usage");
  w.Bool(true);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

std::vector<std::string> MakeOpenAiHttpRequests(const OpenAiRequestOptions& options, int count, uint64_t seed) {
  std::vector<std::string> requests;
  std::mt19937_64 rng(seed);
  const char* path = options.chat ? "/v1/chat/completions" : "/v1/completions";
  for (int i = 0; i < count; ++i) {
    const std::string body = Body(options, rng);
    requests.push_back(StrCat("POST ", path, " HTTP/1.1\r\nHost: ", options.host,
                              "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ",
                              body.size(), "\r\n\r\n", body));
  }
  return requests;
}

}  // namespace infera::bench

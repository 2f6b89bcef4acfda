// llm_tokenize: encodes and decodes with a model folder's tokenizer, for tests.
//
//   llm_tokenize DIR [--no-special]   reads one JSON string per stdin line, prints one
//                                      line per input: {"ids": [...], "decoded": "..."}
#include <iostream>
#include <string>

#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/tokenizer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

int main(int argc, char** argv) {
  using namespace infera::text;
  if (argc < 2) {
    std::cerr << "usage: llm_tokenize DIR [--no-special]\n";
    return 2;
  }
  const bool special = !(argc > 2 && std::string(argv[2]) == "--no-special");
  auto tokenizer = Tokenizer::Load(argv[1]);
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status() << "\n";
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    rapidjson::Document doc;
    if (!ParseJson(line, "input", doc).ok() || !doc.IsString()) {
      std::cerr << "each line must be a JSON string\n";
      return 1;
    }
    std::vector<int32_t> ids = (*tokenizer)->Encode(AsView(doc), special);
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("ids");
    w.StartArray();
    for (int32_t id : ids) w.Int(id);
    w.EndArray();
    const std::string decoded = (*tokenizer)->Decode(ids, false);
    w.Key("decoded");
    w.String(decoded.data(), static_cast<rapidjson::SizeType>(decoded.size()));
    w.EndObject();
    std::cout << buffer.GetString() << "\n";
  }
  return 0;
}

// llm_tokenize: encodes and decodes with a model folder's tokenizer, for tests and for
// timing hostile prompts (docs/llm.md "Prompt length").
//
//   llm_tokenize DIR [--no-special] [--max-ids N | --truncate N]
//       reads one JSON string per stdin line, prints one line per input:
//       {"ids": [...], "decoded": "...", "seconds": s} — with --max-ids, Encode within a
//       budget of N ids ({"ids": null} past it); with --truncate, the first N ids.
//       "seconds" is the encoding's wall time.
#include <chrono>
#include <iostream>
#include <optional>
#include <string>

#include "common/str_cat.h"
#include "text/json_util.h"
#include "text/tokenizer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tools/llm/tool_cli.h"

namespace {

constexpr char kUsage[] =
    "Usage: llm_tokenize DIR [--no-special] [--max-ids N | --truncate N]\n"
    "\n"
    "Encodes and decodes with the tokenizer of the model folder DIR. Reads one JSON string\n"
    "per stdin line and prints one line per input:\n"
    "  {\"ids\": [...], \"decoded\": \"...\", \"seconds\": s}   (seconds: the encoding's wall time)\n"
    "\n"
    "Flags:\n"
    "  --no-special    encode without the tokenizer's special tokens\n"
    "  --max-ids N     encode within a budget of N ids ({\"ids\": null} past it)\n"
    "  --truncate N    keep the first N ids\n"
    "  -h, --help      show this help\n";

constexpr char kTool[] = "llm_tokenize";

}  // namespace

int main(int argc, char** argv) {
  using namespace infera::text;
  using infera::llm_tools::FlagError;
  using infera::llm_tools::IntegerFlag;
  infera::llm_tools::HandleHelp(argc, argv, kUsage);
  if (argc < 2 || std::string_view(argv[1]).starts_with("--")) FlagError(kTool, "the model folder DIR comes first");
  bool special = true;
  std::optional<size_t> max_ids, truncate;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-special") {
      special = false;
    } else if (arg == "--max-ids" || arg == "--truncate") {
      if (i + 1 >= argc) FlagError(kTool, arg + " needs a value");
      const auto n = static_cast<size_t>(IntegerFlag(kTool, arg, argv[++i], 0, int64_t{1} << 40));
      (arg == "--max-ids" ? max_ids : truncate) = n;
    } else {
      FlagError(kTool, "unknown argument " + arg);
    }
  }
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
    const auto start = std::chrono::steady_clock::now();
    std::optional<std::vector<int32_t>> ids;
    if (max_ids) ids = (*tokenizer)->EncodeWithin(AsView(doc), special, *max_ids);
    else if (truncate) ids = (*tokenizer)->EncodeTruncated(AsView(doc), special, *truncate).ids;
    else ids = (*tokenizer)->Encode(AsView(doc), special);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("seconds");
    w.Double(seconds);
    w.Key("ids");
    if (!ids) {
      w.Null();
      w.EndObject();
      std::cout << buffer.GetString() << "\n";
      continue;
    }
    w.StartArray();
    for (int32_t id : *ids) w.Int(id);
    w.EndArray();
    const std::string decoded = (*tokenizer)->Decode(*ids, false);
    w.Key("decoded");
    w.String(decoded.data(), static_cast<rapidjson::SizeType>(decoded.size()));
    w.EndObject();
    std::cout << buffer.GetString() << "\n";
  }
  return 0;
}

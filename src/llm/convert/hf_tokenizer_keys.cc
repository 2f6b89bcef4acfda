#include "llm/convert/hf_tokenizer_keys.h"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/json_reader.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "gguf/gguf_tokenizer.h"
#include "rapidjson/document.h"

namespace infera::llm::convert {
namespace {

using gguf::GgufTokenType;

// An absent file ("") is an empty object (the two optional files).
absl::Status ParseObject(std::string_view text, const std::string& what, rapidjson::Document& doc) {
  if (text.empty()) {
    doc.SetObject();
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(ReadJson(text, what, doc));
  if (!doc.IsObject()) return absl::InvalidArgumentError(StrCat(what, " is not a JSON object"));
  return absl::OkStatus();
}

// The file's text; "" when absent and not `required`.
absl::StatusOr<std::string> ReadText(const std::filesystem::path& path, bool required) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (required) return absl::InvalidArgumentError(StrCat(path.string(), " is missing"));
    return std::string();
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Str(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

const rapidjson::Value* Member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

std::optional<std::string> StringMember(const rapidjson::Value& v, const char* key) {
  const rapidjson::Value* m = Member(v, key);
  if (m && m->IsString()) return Str(*m);
  return std::nullopt;
}

// Flattens a "Sequence" of pre-tokenizers / normalizers.
void Steps(const rapidjson::Value* node, const char* list_key, std::vector<const rapidjson::Value*>& out) {
  if (node == nullptr || !node->IsObject()) return;
  if (StringMember(*node, "type") == "Sequence") {
    if (const rapidjson::Value* list = Member(*node, list_key); list && list->IsArray()) {
      for (const rapidjson::Value& child : list->GetArray()) Steps(&child, list_key, out);
    }
    return;
  }
  out.push_back(node);
}

// A token's text in tokenizer_config ("<s>" or {"content": "<s>", ...}).
std::optional<std::string> TokenContent(const rapidjson::Value& config, const char* key) {
  const rapidjson::Value* v = Member(config, key);
  if (v == nullptr) return std::nullopt;
  if (v->IsString()) return Str(*v);
  return StringMember(*v, "content");
}

}  // namespace

absl::Status AddTokenizerKeys(const std::filesystem::path& dir, GgufWriter& w) {
  ASSIGN_OR_RETURN(std::string tok, ReadText(dir / "tokenizer.json", true));
  ASSIGN_OR_RETURN(std::string config, ReadText(dir / "tokenizer_config.json", false));
  ASSIGN_OR_RETURN(std::string generation, ReadText(dir / "generation_config.json", false));
  if (tok.empty()) return absl::InvalidArgumentError(StrCat((dir / "tokenizer.json").string(), " is empty"));
  RETURN_IF_ERROR(AddTokenizerKeysFromJson(tok, config, generation, (dir / "tokenizer.json").string(), w));
  // Newer checkpoints keep the template beside tokenizer_config.json.
  if (!w.HasKey("tokenizer.chat_template")) {
    ASSIGN_OR_RETURN(std::string jinja, ReadText(dir / "chat_template.jinja", false));
    if (!jinja.empty()) w.AddString("tokenizer.chat_template", jinja);
  }
  return absl::OkStatus();
}

absl::Status AddTokenizerKeysFromJson(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                      std::string_view generation_config_json, std::string_view where_view,
                                      GgufWriter& w) {
  const std::string where(where_view);
  rapidjson::Document tok, config, generation;
  RETURN_IF_ERROR(ParseObject(tokenizer_json, where, tok));
  RETURN_IF_ERROR(ParseObject(tokenizer_config_json, "tokenizer_config.json", config));
  RETURN_IF_ERROR(ParseObject(generation_config_json, "generation_config.json", generation));
  auto error = [&](std::string_view what) { return absl::InvalidArgumentError(StrCat(where, ": ", what)); };
  const rapidjson::Value* model = Member(tok, "model");
  if (model == nullptr || !model->IsObject()) return error("\"model\" is missing");
  const std::string type = StringMember(*model, "type").value_or("BPE");
  if (type != "BPE") return error(StrCat("tokenizer model '", type, "' has no GGUF form here (BPE only)"));

  std::vector<const rapidjson::Value*> pre_steps, normalizers;
  Steps(Member(tok, "pre_tokenizer"), "pretokenizers", pre_steps);
  Steps(Member(tok, "normalizer"), "normalizers", normalizers);
  bool spm = false;
  if (const rapidjson::Value* bf = Member(*model, "byte_fallback"); bf && bf->IsBool() && bf->GetBool()) spm = true;
  for (const rapidjson::Value* s : pre_steps) spm = spm || StringMember(*s, "type") == "Metaspace";
  for (const rapidjson::Value* s : normalizers) {
    const std::optional<std::string> t = StringMember(*s, "type");
    spm = spm || t == "Prepend" || t == "Replace";
  }

  // Vocabulary and added tokens by id.
  const rapidjson::Value* vocab = Member(*model, "vocab");
  if (vocab == nullptr || !vocab->IsObject()) return error("\"model.vocab\" is missing");
  std::map<int64_t, std::string> by_id;
  std::map<int64_t, bool> added;  // id -> special
  for (const auto& m : vocab->GetObject()) {
    if (!m.value.IsInt64() || m.value.GetInt64() < 0) return error(StrCat("vocab entry '", Str(m.name), "' has a bad id"));
    by_id[m.value.GetInt64()] = Str(m.name);
  }
  if (const rapidjson::Value* list = Member(tok, "added_tokens"); list && list->IsArray()) {
    for (const rapidjson::Value& a : list->GetArray()) {
      const rapidjson::Value* id = Member(a, "id");
      const std::optional<std::string> content = StringMember(a, "content");
      if (!id || !id->IsInt64() || id->GetInt64() < 0 || !content) return error("an added token has no id or content");
      by_id[id->GetInt64()] = *content;
      const rapidjson::Value* special = Member(a, "special");
      added[id->GetInt64()] = special && special->IsBool() && special->GetBool();
    }
  }
  if (by_id.empty()) return error("the vocabulary is empty");
  const int64_t size = by_id.rbegin()->first + 1;
  if (size > (int64_t{1} << 24)) return error(StrCat("token id ", size - 1, " is too large"));
  std::vector<std::string> tokens(static_cast<size_t>(size));
  std::vector<int32_t> types(static_cast<size_t>(size), static_cast<int32_t>(GgufTokenType::kNormal));
  std::vector<bool> present(static_cast<size_t>(size), false);
  for (const auto& [id, text] : by_id) {
    tokens[id] = text;
    present[id] = true;
  }
  std::map<std::string, int64_t> ids;  // the lowest id of each text
  for (int64_t i = 0; i < size; ++i) {
    if (!present[i]) {
      tokens[i] = StrCat("[PAD", i, "]");
      types[i] = static_cast<int32_t>(GgufTokenType::kUnused);
    } else if (spm && tokens[i].size() == 6 && tokens[i].rfind("<0x", 0) == 0 && tokens[i].back() == '>') {
      types[i] = static_cast<int32_t>(GgufTokenType::kByte);
    }
    ids.emplace(tokens[i], i);
  }
  for (const auto& [id, special] : added) {
    types[id] = static_cast<int32_t>(special ? GgufTokenType::kControl : GgufTokenType::kUserDefined);
  }
  if (const std::optional<std::string> unk = StringMember(*model, "unk_token"); unk && ids.count(*unk)) {
    types[ids[*unk]] = static_cast<int32_t>(GgufTokenType::kUnknown);
    w.AddUint32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(ids[*unk]));
  }

  std::vector<std::string> merges;
  if (const rapidjson::Value* list = Member(*model, "merges"); list && list->IsArray()) {
    for (const rapidjson::Value& m : list->GetArray()) {
      if (m.IsString()) {
        merges.push_back(Str(m));
      } else if (m.IsArray() && m.Size() == 2 && m[0].IsString() && m[1].IsString()) {
        merges.push_back(StrCat(Str(m[0]), " ", Str(m[1])));
      } else {
        return error("a merge is neither \"a b\" nor [a, b]");
      }
    }
  }
  w.AddString("tokenizer.ggml.model", spm ? "llama" : "gpt2");
  w.AddStringArray("tokenizer.ggml.tokens", tokens);
  w.AddInt32Array("tokenizer.ggml.token_type", types);
  if (spm) {
    std::map<std::string, size_t> rank;
    for (size_t r = 0; r < merges.size(); ++r) {
      const size_t space = merges[r].find(' ');
      if (space == std::string::npos) return error(StrCat("merge '", merges[r], "' has no space"));
      rank.emplace(merges[r].substr(0, space) + merges[r].substr(space + 1), r);
    }
    std::vector<float> scores(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      auto it = rank.find(tokens[i]);
      scores[i] = it != rank.end() ? -static_cast<float>(it->second) : -1e6f - static_cast<float>(i);
    }
    w.AddFloat32Array("tokenizer.ggml.scores", scores);
    bool prefix = false;
    for (const rapidjson::Value* s : normalizers) prefix = prefix || StringMember(*s, "type") == "Prepend";
    for (const rapidjson::Value* s : pre_steps) {
      prefix = prefix || (StringMember(*s, "type") == "Metaspace" &&
                          StringMember(*s, "prepend_scheme").value_or("always") != "never");
    }
    w.AddBool("tokenizer.ggml.add_space_prefix", prefix);
  } else {
    w.AddStringArray("tokenizer.ggml.merges", merges);
    std::string pre = "gpt-2";  // llama.cpp's name for the GPT-2 pre-tokenizer
    for (const rapidjson::Value* s : pre_steps) {
      if (StringMember(*s, "type") != "Split") continue;
      const rapidjson::Value* pattern = Member(*s, "pattern");
      const std::optional<std::string> regex = pattern ? StringMember(*pattern, "Regex") : std::nullopt;
      if (!regex) continue;
      if (*regex == gguf::kCl100kRegex) pre = "llama-bpe";
      else if (*regex == gguf::kQwen2Regex) pre = "qwen2";
      else return error("its Split pre-tokenizer regex has no GGUF `pre` name (gpt-2, llama-bpe, qwen2)");
    }
    w.AddString("tokenizer.ggml.pre", pre);
  }

  // Special ids, as scripts/gguf_tokenizer.py chooses them.
  std::optional<int64_t> bos;
  if (const rapidjson::Value* v = Member(generation, "bos_token_id"); v && v->IsInt64()) bos = v->GetInt64();
  const rapidjson::Value* add_bos_v = Member(config, "add_bos_token");
  bool add_bos = add_bos_v && add_bos_v->IsBool() && add_bos_v->GetBool();
  if (const rapidjson::Value* post = Member(tok, "post_processor")) {
    if (const rapidjson::Value* single = Member(*post, "single"); single && single->IsArray() && !single->Empty()) {
      if (const rapidjson::Value* st = Member((*single)[0], "SpecialToken")) {
        if (const std::optional<std::string> name = StringMember(*st, "id"); name && ids.count(*name)) {
          bos = ids[*name];
        }
        add_bos = true;
      }
    }
  }
  if (!bos) {
    if (const std::optional<std::string> t = TokenContent(config, "bos_token"); t && ids.count(*t)) bos = ids[*t];
  }
  std::vector<int64_t> ends;
  if (const rapidjson::Value* v = Member(generation, "eos_token_id")) {
    if (v->IsInt64()) ends.push_back(v->GetInt64());
    if (v->IsArray()) {
      for (const rapidjson::Value& e : v->GetArray()) {
        if (e.IsInt64()) ends.push_back(e.GetInt64());
      }
    }
  }
  if (const std::optional<std::string> t = TokenContent(config, "eos_token"); t && ids.count(*t)) {
    if (std::find(ends.begin(), ends.end(), ids[*t]) == ends.end()) ends.insert(ends.begin(), ids[*t]);
  }
  auto id_key = [&](const char* key, int64_t id) -> absl::Status {
    if (id < 0 || id >= size) return error(StrCat(key, " ", id, " is outside the vocabulary of ", size));
    w.AddUint32(key, static_cast<uint32_t>(id));
    return absl::OkStatus();
  };
  if (bos) RETURN_IF_ERROR(id_key("tokenizer.ggml.bos_token_id", *bos));
  if (!ends.empty()) RETURN_IF_ERROR(id_key("tokenizer.ggml.eos_token_id", ends[0]));
  if (ends.size() > 1) RETURN_IF_ERROR(id_key("tokenizer.ggml.eot_token_id", ends[1]));
  if (const rapidjson::Value* padding = Member(tok, "padding")) {
    if (const rapidjson::Value* pad = Member(*padding, "pad_id"); pad && pad->IsInt64()) {
      RETURN_IF_ERROR(id_key("tokenizer.ggml.padding_token_id", pad->GetInt64()));
    }
  }
  w.AddBool("tokenizer.ggml.add_bos_token", add_bos);
  const rapidjson::Value* add_eos = Member(config, "add_eos_token");
  w.AddBool("tokenizer.ggml.add_eos_token", add_eos && add_eos->IsBool() && add_eos->GetBool());

  if (const rapidjson::Value* t = Member(config, "chat_template")) {
    if (t->IsString()) {
      w.AddString("tokenizer.chat_template", Str(*t));
    } else if (t->IsArray()) {  // [{"name": "default", "template": "..."}, {"name": "tool_use", ...}]
      for (const rapidjson::Value& entry : t->GetArray()) {
        const std::optional<std::string> name = StringMember(entry, "name");
        const std::optional<std::string> text = StringMember(entry, "template");
        if (!name || !text) return error("tokenizer_config.json: a chat_template entry has no name or template");
        w.AddString(*name == "default" ? std::string("tokenizer.chat_template")
                                       : StrCat("tokenizer.chat_template.", *name),
                    *text);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace infera::llm::convert

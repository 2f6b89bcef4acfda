#include "gguf/gguf_tokenizer.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "common/utf8.h"
#include "gguf/spm_merges.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::gguf {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kSpace = "\xE2\x96\x81";  // "▁", SentencePiece's space

enum class PreFamily { kGpt2, kCl100k, kQwen2 };

absl::StatusOr<PreFamily> PreFamilyOf(std::string_view pre, std::string_view where) {
  if (pre == "default" || pre == "gpt2" || pre == "gpt-2") return PreFamily::kGpt2;
  if (pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3" || pre == "smaug-bpe") return PreFamily::kCl100k;
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return PreFamily::kQwen2;
  return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.pre '", pre,
                                           "' is not supported (supported: default, gpt-2, gpt2, llama3, llama-bpe, "
                                           "llama-v3, smaug-bpe, qwen2, deepseek-r1-qwen)"));
}

// An optional token id key: absent -> nullopt; present -> checked against the vocabulary.
absl::StatusOr<std::optional<int32_t>> OptionalTokenId(const GgufMetadata& metadata, std::string_view key,
                                                       size_t vocab_size, std::string_view where) {
  if (!metadata.Has(key)) return std::optional<int32_t>();
  absl::StatusOr<uint64_t> id = metadata.GetUint(key);
  if (!id.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", id.status().message()));
  if (*id >= vocab_size) {
    return absl::InvalidArgumentError(
        StrCat(where, ": ", key, " = ", *id, " is past the vocabulary (", vocab_size, " tokens)"));
  }
  return std::optional<int32_t>(static_cast<int32_t>(*id));
}

absl::StatusOr<bool> OptionalBool(const GgufMetadata& metadata, std::string_view key, bool fallback,
                                  std::string_view where) {
  if (!metadata.Has(key)) return fallback;
  absl::StatusOr<bool> v = metadata.GetBool(key);
  if (!v.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", v.status().message()));
  return *v;
}

void Key(JsonWriter& w, std::string_view key) { WriteString(w, key); }

void WriteStep(JsonWriter& w, std::string_view type, std::initializer_list<std::pair<std::string_view, std::string_view>> strings) {
  w.StartObject();
  Key(w, "type");
  WriteString(w, type);
  for (const auto& [k, v] : strings) {
    Key(w, k);
    WriteString(w, v);
  }
}

void WriteByteLevel(JsonWriter& w, bool use_regex) {
  WriteStep(w, "ByteLevel", {});
  Key(w, "add_prefix_space");
  w.Bool(false);
  Key(w, "use_regex");
  w.Bool(use_regex);
  w.EndObject();
}

void WriteGpt2PreTokenizer(JsonWriter& w, PreFamily family) {
  if (family == PreFamily::kGpt2) {
    WriteByteLevel(w, /*use_regex=*/true);
    return;
  }
  WriteStep(w, "Sequence", {});
  Key(w, "pretokenizers");
  w.StartArray();
  WriteStep(w, "Split", {});
  Key(w, "pattern");
  w.StartObject();
  Key(w, "Regex");
  WriteString(w, family == PreFamily::kCl100k ? kCl100kRegex : kQwen2Regex);
  w.EndObject();
  Key(w, "behavior");
  WriteString(w, "Isolated");
  Key(w, "invert");
  w.Bool(false);
  w.EndObject();
  WriteByteLevel(w, /*use_regex=*/false);
  w.EndArray();
  w.EndObject();
}

void WriteReplace(JsonWriter& w, std::string_view from, std::string_view to) {
  WriteStep(w, "Replace", {});
  Key(w, "pattern");
  w.StartObject();
  Key(w, "String");
  WriteString(w, from);
  w.EndObject();
  Key(w, "content");
  WriteString(w, to);
  w.EndObject();
}

struct Facts {
  std::vector<std::string_view> tokens;
  std::vector<int32_t> types;
  bool spm = false;
  std::optional<int32_t> bos, eos, unk, pad, eot, eom;
};

std::string WriteTokenizerJson(const Facts& f, const std::vector<std::string_view>& gpt2_merges, PreFamily family,
                               const std::vector<std::pair<std::string_view, std::string_view>>& spm_merges,
                               bool add_space_prefix) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  Key(w, "version");
  WriteString(w, "1.0");

  Key(w, "added_tokens");
  w.StartArray();
  for (size_t id = 0; id < f.tokens.size(); ++id) {
    const auto type = static_cast<GgufTokenType>(f.types[id]);
    if (type != GgufTokenType::kControl && type != GgufTokenType::kUnknown && type != GgufTokenType::kUserDefined) {
      continue;
    }
    w.StartObject();
    Key(w, "id");
    w.Int(static_cast<int>(id));
    Key(w, "content");
    WriteString(w, f.tokens[id]);
    Key(w, "special");
    w.Bool(type != GgufTokenType::kUserDefined);
    Key(w, "lstrip");
    w.Bool(false);
    Key(w, "rstrip");
    w.Bool(false);
    w.EndObject();
  }
  w.EndArray();

  if (f.pad) {
    Key(w, "padding");
    w.StartObject();
    Key(w, "pad_id");
    w.Int(*f.pad);
    Key(w, "pad_token");
    WriteString(w, f.tokens[*f.pad]);
    w.EndObject();
  }

  Key(w, "normalizer");
  if (f.spm) {
    WriteStep(w, "Sequence", {});
    Key(w, "normalizers");
    w.StartArray();
    if (add_space_prefix) {
      WriteStep(w, "Prepend", {{"prepend", kSpace}});
      w.EndObject();
    }
    WriteReplace(w, " ", kSpace);
    w.EndArray();
    w.EndObject();
  } else {
    w.Null();
  }

  Key(w, "pre_tokenizer");
  if (f.spm) {
    w.Null();
  } else {
    WriteGpt2PreTokenizer(w, family);
  }
  Key(w, "post_processor");
  w.Null();

  Key(w, "decoder");
  if (f.spm) {
    WriteStep(w, "Sequence", {});
    Key(w, "decoders");
    w.StartArray();
    WriteReplace(w, kSpace, " ");
    WriteStep(w, "ByteFallback", {});
    w.EndObject();
    WriteStep(w, "Fuse", {});
    w.EndObject();
    if (add_space_prefix) {
      WriteStep(w, "Strip", {{"content", " "}});
      Key(w, "start");
      w.Int(1);
      Key(w, "stop");
      w.Int(0);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  } else {
    WriteStep(w, "ByteLevel", {});
    w.EndObject();
  }

  Key(w, "model");
  WriteStep(w, "BPE", {});
  Key(w, "unk_token");
  if (f.unk) {
    WriteString(w, f.tokens[*f.unk]);
  } else {
    w.Null();
  }
  const bool has_byte_tokens =
      std::any_of(f.types.begin(), f.types.end(), [](int32_t t) { return t == static_cast<int32_t>(GgufTokenType::kByte); });
  Key(w, "byte_fallback");
  w.Bool(f.spm && has_byte_tokens);
  Key(w, "fuse_unk");
  w.Bool(f.spm);
  Key(w, "ignore_merges");
  w.Bool(!f.spm && family == PreFamily::kCl100k);
  Key(w, "vocab");
  w.StartObject();
  for (size_t id = 0; id < f.tokens.size(); ++id) {
    WriteString(w, f.tokens[id]);
    w.Int(static_cast<int>(id));
  }
  w.EndObject();
  Key(w, "merges");
  w.StartArray();
  if (f.spm) {
    for (const auto& [a, b] : spm_merges) {
      w.StartArray();
      WriteString(w, a);
      WriteString(w, b);
      w.EndArray();
    }
  } else {
    for (std::string_view m : gpt2_merges) WriteString(w, m);
  }
  w.EndArray();
  w.EndObject();  // model
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

absl::StatusOr<TokenizerDocuments> ConvertGgufTokenizer(const GgufMetadata& metadata, std::string_view where) {
  auto fail = [&](const absl::Status& s) { return absl::InvalidArgumentError(StrCat(where, ": ", s.message())); };
  absl::StatusOr<std::string_view> model = metadata.GetString("tokenizer.ggml.model");
  if (!model.ok()) return fail(model.status());
  Facts f;
  if (*model == "llama") {
    f.spm = true;
  } else if (*model != "gpt2") {
    return absl::InvalidArgumentError(
        StrCat(where, ": tokenizer.ggml.model '", *model, "' is not supported (supported: gpt2, llama)"));
  }
  absl::StatusOr<std::vector<std::string_view>> tokens = metadata.GetStringArray("tokenizer.ggml.tokens");
  if (!tokens.ok()) return fail(tokens.status());
  f.tokens = std::move(*tokens);
  if (f.tokens.empty()) return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.tokens is empty"));
  if (f.tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.tokens has too many entries"));
  }
  for (size_t i = 0; i < f.tokens.size(); ++i) {
    if (!IsValidUtf8(f.tokens[i])) {
      return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.tokens[", i, "] is not valid UTF-8"));
    }
  }
  if (metadata.Has("tokenizer.ggml.token_type")) {
    absl::StatusOr<std::vector<int64_t>> types = metadata.GetIntArray("tokenizer.ggml.token_type");
    if (!types.ok()) return fail(types.status());
    if (types->size() != f.tokens.size()) {
      return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.token_type has ", types->size(),
                                               " entries for ", f.tokens.size(), " tokens"));
    }
    for (size_t i = 0; i < types->size(); ++i) {
      const int64_t t = (*types)[i];
      if (t < 0 || t > static_cast<int64_t>(GgufTokenType::kByte)) {
        return absl::InvalidArgumentError(
            StrCat(where, ": tokenizer.ggml.token_type[", i, "] = ", t, " is not a token type (0-6)"));
      }
      f.types.push_back(static_cast<int32_t>(t));
    }
  } else {
    f.types.assign(f.tokens.size(), static_cast<int32_t>(GgufTokenType::kNormal));
  }
  const size_t n = f.tokens.size();
  ASSIGN_OR_RETURN(f.bos, OptionalTokenId(metadata, "tokenizer.ggml.bos_token_id", n, where));
  ASSIGN_OR_RETURN(f.eos, OptionalTokenId(metadata, "tokenizer.ggml.eos_token_id", n, where));
  ASSIGN_OR_RETURN(f.unk, OptionalTokenId(metadata, "tokenizer.ggml.unknown_token_id", n, where));
  ASSIGN_OR_RETURN(f.pad, OptionalTokenId(metadata, "tokenizer.ggml.padding_token_id", n, where));
  ASSIGN_OR_RETURN(f.eot, OptionalTokenId(metadata, "tokenizer.ggml.eot_token_id", n, where));
  ASSIGN_OR_RETURN(f.eom, OptionalTokenId(metadata, "tokenizer.ggml.eom_token_id", n, where));
  if (!f.unk) {
    for (size_t i = 0; i < n; ++i) {
      if (f.types[i] == static_cast<int32_t>(GgufTokenType::kUnknown)) {
        f.unk = static_cast<int32_t>(i);
        break;
      }
    }
  }
  ASSIGN_OR_RETURN(bool add_bos, OptionalBool(metadata, "tokenizer.ggml.add_bos_token", f.spm, where));
  ASSIGN_OR_RETURN(bool add_eos, OptionalBool(metadata, "tokenizer.ggml.add_eos_token", false, where));
  ASSIGN_OR_RETURN(bool add_space_prefix, OptionalBool(metadata, "tokenizer.ggml.add_space_prefix", true, where));
  std::string_view chat_template;
  if (metadata.Has("tokenizer.chat_template")) {
    absl::StatusOr<std::string_view> t = metadata.GetString("tokenizer.chat_template");
    if (!t.ok()) return fail(t.status());
    if (!IsValidUtf8(*t)) return absl::InvalidArgumentError(StrCat(where, ": tokenizer.chat_template is not valid UTF-8"));
    chat_template = *t;
  }
  // Named templates (llama.cpp's convert writes tokenizer_config's list form as
  // tokenizer.chat_template.<name>, e.g. tool_use): back into that list form, so they
  // reach Tokenizer::chat_template_tool_use() as a tokenizer_config.json's would.
  std::vector<std::pair<std::string_view, std::string_view>> named_templates;
  constexpr std::string_view kNamedPrefix = "tokenizer.chat_template.";
  for (const std::string& key : metadata.keys()) {
    if (key.size() <= kNamedPrefix.size() || key.compare(0, kNamedPrefix.size(), kNamedPrefix) != 0) continue;
    absl::StatusOr<std::string_view> t = metadata.GetString(key);
    if (!t.ok()) return fail(t.status());
    if (!IsValidUtf8(*t)) return absl::InvalidArgumentError(StrCat(where, ": ", key, " is not valid UTF-8"));
    named_templates.emplace_back(std::string_view(key).substr(kNamedPrefix.size()), *t);
  }

  std::vector<std::string_view> gpt2_merges;
  std::vector<std::pair<std::string_view, std::string_view>> spm_merges;
  PreFamily family = PreFamily::kGpt2;
  if (f.spm) {
    std::vector<float> scores;
    if (metadata.Has("tokenizer.ggml.scores")) {
      absl::StatusOr<std::vector<float>> s = metadata.GetFloatArray("tokenizer.ggml.scores");
      if (!s.ok()) return fail(s.status());
      if (s->size() != n) {
        return absl::InvalidArgumentError(
            StrCat(where, ": tokenizer.ggml.scores has ", s->size(), " entries for ", n, " tokens"));
      }
      scores = std::move(*s);
    }
    std::vector<bool> mergeable(n);
    for (size_t i = 0; i < n; ++i) {
      const auto t = static_cast<GgufTokenType>(f.types[i]);
      mergeable[i] = t == GgufTokenType::kNormal || t == GgufTokenType::kUserDefined;
    }
    spm_merges = SpmMergesFromScores(f.tokens, scores, mergeable);
  } else {
    if (metadata.Has("tokenizer.ggml.merges")) {
      absl::StatusOr<std::vector<std::string_view>> m = metadata.GetStringArray("tokenizer.ggml.merges");
      if (!m.ok()) return fail(m.status());
      for (size_t i = 0; i < m->size(); ++i) {
        if (!IsValidUtf8((*m)[i])) {
          return absl::InvalidArgumentError(StrCat(where, ": tokenizer.ggml.merges[", i, "] is not valid UTF-8"));
        }
      }
      gpt2_merges = std::move(*m);
    }
    if (metadata.Has("tokenizer.ggml.pre")) {
      absl::StatusOr<std::string_view> pre = metadata.GetString("tokenizer.ggml.pre");
      if (!pre.ok()) return fail(pre.status());
      ASSIGN_OR_RETURN(family, PreFamilyOf(*pre, where));
    }
  }

  TokenizerDocuments docs;
  docs.tokenizer_json = WriteTokenizerJson(f, gpt2_merges, family, spm_merges, add_space_prefix);
  {
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    if (f.bos) {
      Key(w, "bos_token");
      WriteString(w, f.tokens[*f.bos]);
    }
    if (f.eos) {
      Key(w, "eos_token");
      WriteString(w, f.tokens[*f.eos]);
    }
    Key(w, "add_bos_token");
    w.Bool(add_bos);
    Key(w, "add_eos_token");
    w.Bool(add_eos);
    if (!named_templates.empty()) {
      Key(w, "chat_template");
      w.StartArray();
      auto entry = [&](std::string_view name, std::string_view text) {
        w.StartObject();
        Key(w, "name");
        WriteString(w, name);
        Key(w, "template");
        WriteString(w, text);
        w.EndObject();
      };
      if (!chat_template.empty()) entry("default", chat_template);
      for (const auto& [name, text] : named_templates) entry(name, text);
      w.EndArray();
    } else if (!chat_template.empty()) {
      Key(w, "chat_template");
      WriteString(w, chat_template);
    }
    w.EndObject();
    docs.tokenizer_config_json.assign(buffer.GetString(), buffer.GetSize());
  }
  {
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    if (f.bos) {
      Key(w, "bos_token_id");
      w.Int(*f.bos);
    }
    Key(w, "eos_token_id");
    w.StartArray();
    std::vector<int32_t> ends;
    for (const std::optional<int32_t>& id : {f.eos, f.eot, f.eom}) {
      if (id && std::find(ends.begin(), ends.end(), *id) == ends.end()) ends.push_back(*id);
    }
    for (int32_t id : ends) w.Int(id);
    w.EndArray();
    w.EndObject();
    docs.generation_config_json.assign(buffer.GetString(), buffer.GetSize());
  }
  return docs;
}

absl::StatusOr<std::unique_ptr<text::Tokenizer>> LoadGgufTokenizer(const GgufMetadata& metadata,
                                                                    std::string_view where) {
  ASSIGN_OR_RETURN(TokenizerDocuments docs, ConvertGgufTokenizer(metadata, where));
  absl::StatusOr<std::unique_ptr<text::Tokenizer>> tokenizer =
      text::Tokenizer::FromJson(docs.tokenizer_json, docs.tokenizer_config_json, docs.generation_config_json);
  if (!tokenizer.ok()) {
    return absl::InvalidArgumentError(StrCat(where, ": tokenizer from GGUF metadata: ", tokenizer.status().message()));
  }
  return tokenizer;
}

}  // namespace infera::gguf

// The `tokenize` processing backend (contract: docs/pipelines.md "tokenize").
//
//   input  TEXT            TYPE_STRING [1]   UTF-8 text (any name)
//   output input_ids       TYPE_INT64  [L]   declare the ones the next step needs;
//          attention_mask  TYPE_INT64  [L]   each TYPE_INT64 or TYPE_INT32 (what
//          token_type_ids  TYPE_INT64  [L]   TensorRT-style encoders take)
//   parameters tokenizer (default "tokenizer.json", relative to the version directory),
//              max_length (= L, required), add_special_tokens ("true" default)
//
// The tokenizer is loaded once per model version (TokenizeModel) and shared, const, by
// every instance. Each text is encoded with truncation to max_length (special tokens
// kept) and padded to max_length with the tokenizer's pad id.
#include <charconv>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "common/utf8.h"
#include "repository/model_config_util.h"
#include "text/json_util.h"
#include "text/tokenizer.h"

namespace infera {
namespace {

constexpr std::string_view kName = "tokenize";
constexpr std::string_view kOutputNames[] = {"input_ids", "attention_mask", "token_type_ids"};
enum OutputKind { kInputIds = 0, kAttentionMask = 1, kTokenTypeIds = 2 };
// A longer sequence than any encoder takes; keeps a hostile config from sizing huge
// outputs.
constexpr int64_t kMaxLength = 65536;

struct TokenizeOptions {
  std::filesystem::path tokenizer_file;  // relative to the version directory
  int64_t max_length = 0;
  bool add_special_tokens = true;
  std::vector<OutputKind> outputs;  // config output order
  std::vector<bool> int32;          // per output: TYPE_INT32 rather than TYPE_INT64
};

absl::StatusOr<bool> BoolParameter(const inference::ModelConfig& config, std::string_view key, bool dflt) {
  std::optional<std::string> text = ConfigParameter(config, key);
  if (!text) return dflt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  return absl::InvalidArgumentError(StrCat(kName, ": parameters[", key, "] '", *text, "' is not true|false"));
}

absl::StatusOr<TokenizeOptions> ParseOptions(const inference::ModelConfig& config) {
  TokenizeOptions options;
  if (config.input_size() != 1 || config.input(0).data_type() != inference::TYPE_STRING ||
      config.input(0).dims_size() != 1 || config.input(0).dims(0) != 1) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": needs exactly one input of data_type TYPE_STRING and dims [1] (the text)"));
  }
  std::optional<std::string> max_length = ConfigParameter(config, "max_length");
  if (!max_length) return absl::InvalidArgumentError(StrCat(kName, ": parameters[max_length] is required"));
  auto [end, ec] = std::from_chars(max_length->data(), max_length->data() + max_length->size(), options.max_length);
  if (ec != std::errc() || end != max_length->data() + max_length->size() || options.max_length < 1 ||
      options.max_length > kMaxLength) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": parameters[max_length] '", *max_length, "' is not an integer in [1, ", kMaxLength, "]"));
  }
  ASSIGN_OR_RETURN(options.add_special_tokens, BoolParameter(config, "add_special_tokens", true));
  const std::string file = ConfigParameter(config, "tokenizer").value_or("tokenizer.json");
  options.tokenizer_file = std::filesystem::path(file).lexically_normal();
  if (file.empty() || options.tokenizer_file.is_absolute() || options.tokenizer_file.empty() ||
      *options.tokenizer_file.begin() == "..") {
    return absl::InvalidArgumentError(
        StrCat(kName, ": parameters[tokenizer] '", file, "' must be a file inside the version directory"));
  }
  if (config.output_size() == 0) {
    return absl::InvalidArgumentError(
        StrCat(kName, ": declares no output (input_ids, attention_mask, token_type_ids)"));
  }
  for (const auto& output : config.output()) {
    int kind = -1;
    for (int k = 0; k < 3; ++k) {
      if (output.name() == kOutputNames[k]) kind = k;
    }
    if (kind < 0) {
      return absl::InvalidArgumentError(StrCat(kName, ": output '", output.name(),
                                               "' is not one of input_ids, attention_mask, token_type_ids"));
    }
    for (OutputKind seen : options.outputs) {
      if (seen == kind) return absl::InvalidArgumentError(StrCat(kName, ": output '", output.name(), "' twice"));
    }
    const bool int32 = output.data_type() == inference::TYPE_INT32;
    if ((output.data_type() != inference::TYPE_INT64 && !int32) || output.dims_size() != 1 ||
        output.dims(0) != options.max_length) {
      return absl::InvalidArgumentError(StrCat(kName, ": output '", output.name(),
                                               "' must be TYPE_INT64 or TYPE_INT32 with dims [max_length] = [",
                                               options.max_length, "]"));
    }
    options.outputs.push_back(static_cast<OutputKind>(kind));
    options.int32.push_back(int32);
  }
  return options;
}

class TokenizeInstance : public ModelInstance {
 public:
  TokenizeInstance(const inference::ModelConfig& config, const TokenizeOptions& options,
                   std::shared_ptr<const text::Tokenizer> tokenizer, int32_t pad_id)
      : config_(config), options_(options), tokenizer_(std::move(tokenizer)), pad_id_(pad_id) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != 1) return absl::InvalidArgumentError(StrCat(kName, ": needs its one text input"));
    const Tensor& input = inputs[0];
    ASSIGN_OR_RETURN(std::vector<std::string_view> texts, SplitBytesElements(input.data.AsStringView()));
    const bool batched = config_.max_batch_size() > 0;
    const size_t batch = texts.size();
    const size_t length = static_cast<size_t>(options_.max_length);
    std::vector<uint8_t*> data(options_.outputs.size());
    std::vector<Tensor> outputs;
    for (size_t o = 0; o < options_.outputs.size(); ++o) {
      Tensor t;
      t.name = std::string(kOutputNames[options_.outputs[o]]);
      t.dtype = options_.int32[o] ? DataType::kInt32 : DataType::kInt64;
      t.shape = batched ? Shape{static_cast<int64_t>(batch), options_.max_length} : Shape{options_.max_length};
      t.data = Buffer::Allocate(batch * length * (options_.int32[o] ? sizeof(int32_t) : sizeof(int64_t)), &data[o]);
      outputs.push_back(std::move(t));
    }
    for (size_t i = 0; i < batch; ++i) {
      if (!IsValidUtf8(texts[i])) {
        return absl::InvalidArgumentError(
            StrCat(kName, ": input '", input.name, "' element ", i, " is not valid UTF-8"));
      }
      const text::Encoding encoding = tokenizer_->EncodeTruncated(texts[i], options_.add_special_tokens, length);
      for (size_t o = 0; o < options_.outputs.size(); ++o) {
        if (options_.int32[o]) {
          FillRow(options_.outputs[o], encoding, reinterpret_cast<int32_t*>(data[o]) + i * length, length);
        } else {
          FillRow(options_.outputs[o], encoding, reinterpret_cast<int64_t*>(data[o]) + i * length, length);
        }
      }
    }
    return outputs;
  }

 private:
  // One row of `kind`: the encoding, then padding, to `length`.
  template <typename T>
  void FillRow(OutputKind kind, const text::Encoding& encoding, T* row, size_t length) const {
    const size_t n = encoding.ids.size();
    for (size_t k = 0; k < length; ++k) {
      switch (kind) {
        case kInputIds: row[k] = static_cast<T>(k < n ? encoding.ids[k] : pad_id_); break;
        case kAttentionMask: row[k] = k < n ? 1 : 0; break;
        case kTokenTypeIds: row[k] = static_cast<T>(k < n ? encoding.type_ids[k] : 0); break;
      }
    }
  }

  const inference::ModelConfig& config_;
  const TokenizeOptions& options_;
  const std::shared_ptr<const text::Tokenizer> tokenizer_;
  const int32_t pad_id_;
};

// One loaded version: the tokenizer, parsed once, shared by the instances.
class TokenizeModel : public LoadedModel, public TokenCounter {
 public:
  TokenizeModel(const inference::ModelConfig& config, TokenizeOptions options,
                std::shared_ptr<const text::Tokenizer> tokenizer, int32_t pad_id)
      : config_(config), options_(std::move(options)), tokenizer_(std::move(tokenizer)), pad_id_(pad_id) {}

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<TokenizeInstance>(config_, options_, tokenizer_, pad_id_);
  }

  const TokenCounter* token_counter() const override { return this; }

  size_t CountTokens(std::string_view text) const override {
    return tokenizer_->EncodeTruncated(text, options_.add_special_tokens, static_cast<size_t>(options_.max_length))
        .ids.size();
  }

 private:
  const inference::ModelConfig& config_;
  const TokenizeOptions options_;
  const std::shared_ptr<const text::Tokenizer> tokenizer_;
  const int32_t pad_id_;
};

class TokenizeBackend : public Backend {
 public:
  std::string_view name() const override { return kName; }

  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return ParseOptions(config).status();
  }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(TokenizeOptions options, ParseOptions(*context.config));
    const std::filesystem::path path = context.version_dir / options.tokenizer_file;
    ASSIGN_OR_RETURN(std::string json, text::ReadFileToString(path));
    auto tokenizer = text::Tokenizer::FromJson(json);
    if (!tokenizer.ok()) {
      return absl::InvalidArgumentError(StrCat(kName, ": ", path.string(), ": ", tokenizer.status().message()));
    }
    const size_t specials = (*tokenizer)->num_special_tokens(options.add_special_tokens);
    if (static_cast<size_t>(options.max_length) < specials + 1) {
      return absl::InvalidArgumentError(StrCat(kName, ": parameters[max_length] ", options.max_length,
                                               " leaves no room for text after the ", specials, " special tokens"));
    }
    // The pad id: tokenizer.json padding.pad_id, else the [PAD] token, else 0.
    int32_t pad_id = (*tokenizer)->pad_token_id().value_or((*tokenizer)->TokenToId("[PAD]").value_or(0));
    std::shared_ptr<const text::Tokenizer> shared = std::move(*tokenizer);
    return std::make_unique<TokenizeModel>(*context.config, std::move(options), std::move(shared), pad_id);
  }
};

}  // namespace

std::unique_ptr<Backend> CreateTokenizeBackend() { return std::make_unique<TokenizeBackend>(); }

}  // namespace infera

#include "openai/embeddings_request.h"

#include <algorithm>

#include "common/json_reader.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "text/json_util.h"

namespace infera::openai {

absl::StatusOr<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ReadJson(body, "request body", doc));
  if (!doc.IsObject()) return absl::InvalidArgumentError("request body is not a JSON object");
  EmbeddingsRequest r;
  const rapidjson::Value* model = text::FindMember(doc, "model");
  if (!model || !model->IsString() || model->GetStringLength() == 0) {
    return absl::InvalidArgumentError("'model' is required (a string)");
  }
  r.model.assign(model->GetString(), model->GetStringLength());
  const rapidjson::Value* input = text::FindMember(doc, "input");
  if (!input) return absl::InvalidArgumentError("'input' is required");
  const rapidjson::Value& in = *input;
  auto text_of = [](const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); };
  if (in.IsString()) {
    r.inputs.push_back(text_of(in));
  } else if (in.IsArray()) {
    if (in.Empty()) return absl::InvalidArgumentError("'input' is an empty list");
    if (in.Size() > kMaxEmbeddingInputs) {
      return absl::InvalidArgumentError(StrCat("'input' has ", in.Size(), " items; the limit is ", kMaxEmbeddingInputs));
    }
    for (rapidjson::SizeType i = 0; i < in.Size(); ++i) {
      if (in[i].IsString()) {
        r.inputs.push_back(text_of(in[i]));
      } else if (in[i].IsInt64() || (in[i].IsArray() && !in[i].Empty() &&
                                       std::all_of(in[i].Begin(), in[i].End(),
                                                   [](const rapidjson::Value& id) { return id.IsInt64(); }))) {
        r.token_ids = true;
      } else {
        return absl::InvalidArgumentError(StrCat("'input[", i, "]' is not a string"));
      }
    }
  } else {
    return absl::InvalidArgumentError("'input' must be a string or a list of strings");
  }
  if (r.token_ids && !r.inputs.empty()) {
    return absl::InvalidArgumentError("'input' mixes strings and token ids");
  }
  if (const rapidjson::Value* f = text::FindMember(doc, "encoding_format"); f && !f->IsNull()) {
    const std::string format = f->IsString() ? text_of(*f) : "";
    if (format == "base64") r.base64 = true;
    else if (format != "float") return absl::InvalidArgumentError("'encoding_format' must be \"float\" or \"base64\"");
  }
  if (const rapidjson::Value* d = text::FindMember(doc, "dimensions"); d && !d->IsNull()) {
    if (!d->IsInt64() || d->GetInt64() < 1) return absl::InvalidArgumentError("'dimensions' must be a positive integer");
    r.dimensions = d->GetInt64();
  }
  return r;
}

absl::StatusOr<int64_t> EmbeddingDimension(const inference::ModelConfig& config) {
  const bool text_in = config.input_size() == 1 && config.input(0).data_type() == inference::TYPE_STRING &&
                       config.input(0).dims_size() == 1 && config.input(0).dims(0) == 1;
  const bool vector_out = config.output_size() == 1 && config.output(0).data_type() == inference::TYPE_FP32 &&
                          config.output(0).dims_size() == 1 && config.output(0).dims(0) > 0;
  if (!text_in || !vector_out) {
    return absl::NotFoundError(StrCat("model '", config.name(),
                                      "' is not an embedding model: /v1/embeddings needs a model with one "
                                      "TYPE_STRING input of dims [1] and one TYPE_FP32 output of dims [D] "
                                      "(an embedding pipeline, docs/pipelines.md)"));
  }
  return config.output(0).dims(0);
}

}  // namespace infera::openai

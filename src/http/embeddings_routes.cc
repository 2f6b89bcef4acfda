#include "http/embeddings_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "backend/token_counter.h"
#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "common/utf8.h"
#include "http/http_status.h"
#include "manager/single_response.h"
#include "llm/openai_protocol.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "repository/model_config_util.h"
#include "text/json_util.h"

namespace infera {
namespace {

// OpenAI's limit on the number of inputs in one request.
constexpr size_t kMaxInputs = 2048;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// OpenAI-shaped error, the same rendering as the other /v1 routes (llm/openai_protocol.h:
// 503 is a retryable ServiceUnavailableError), Retry-After on 429 / 503.
HttpResponse Error(int status, std::string_view message) {
  HttpResponse r{status, "application/json", llm::OpenAiErrorJson(status, message), {}};
  if (status == 429 || status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse Error(const absl::Status& status) {
  return Error(HttpStatusCode(status.code()), std::string_view(status.message().data(), status.message().size()));
}

std::string Base64(const uint8_t* data, size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t n = (uint32_t{data[i]} << 16) | (i + 1 < size ? uint32_t{data[i + 1]} << 8 : 0) |
                       (i + 2 < size ? uint32_t{data[i + 2]} : 0);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[n & 63] : '=');
  }
  return out;
}

// Everything one embeddings request shares between its in-flight KServe requests.
struct Pending {
  ModelHandle version;  // held until the answer is written
  ModelHandle tokenizer_version;
  const TokenCounter* counter = nullptr;  // in tokenizer_version's loaded model
  EmbeddingsRequest request;
  int64_t dimension = 0;
  std::string id;
  int64_t created = 0;

  absl::Mutex mu;
  std::optional<HttpResponder> responder ABSL_GUARDED_BY(mu);
  std::vector<float> embeddings ABSL_GUARDED_BY(mu);  // inputs × dimension
  size_t remaining ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
};

std::string ResponseJson(const Pending& p, const std::vector<float>& embeddings) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  w.Key("id");
  WriteString(w, p.id);
  w.Key("object");
  w.String("list");
  w.Key("created");
  w.Int64(p.created);
  w.Key("model");
  WriteString(w, p.request.model);
  w.Key("data");
  w.StartArray();
  const size_t d = static_cast<size_t>(p.dimension);
  for (size_t i = 0; i < p.request.inputs.size(); ++i) {
    const float* row = embeddings.data() + i * d;
    w.StartObject();
    w.Key("object");
    w.String("embedding");
    w.Key("index");
    w.Uint64(i);
    w.Key("embedding");
    if (p.request.base64) {
      WriteString(w, Base64(reinterpret_cast<const uint8_t*>(row), d * sizeof(float)));
    } else {
      w.StartArray();
      for (size_t k = 0; k < d; ++k) {
        if (!std::isfinite(row[k])) {
          w.Null();  // JSON has no NaN / Infinity
          continue;
        }
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), row[k]);  // shortest float round trip
        w.RawValue(buf, static_cast<size_t>(end - buf), rapidjson::kNumberType);
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  size_t tokens = 0;
  if (p.counter) {
    for (const std::string& text : p.request.inputs) tokens += p.counter->CountTokens(text);
  }
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Uint64(tokens);
  w.Key("total_tokens");
  w.Uint64(tokens);
  w.EndObject();
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

// Records one KServe request's outcome (inputs [first, first + count)); the last one
// writes the answer.
void Complete(const std::shared_ptr<Pending>& p, size_t first, size_t count, absl::StatusOr<InferResponse> result) {
  absl::Status status = result.status();
  const size_t d = static_cast<size_t>(p->dimension);
  if (status.ok()) {
    if (result->outputs.size() != 1 || result->outputs[0].dtype != DataType::kFp32 ||
        result->outputs[0].data.size() != count * d * sizeof(float)) {
      status = absl::InternalError(StrCat("model '", p->request.model, "' answered without a [", count, ", ", d,
                                          "] FP32 embedding"));
    }
  }
  std::optional<HttpResponder> responder;
  std::vector<float> embeddings;
  {
    absl::MutexLock lock(&p->mu);
    if (status.ok()) {
      std::memcpy(p->embeddings.data() + first * d, result->outputs[0].data.data(), count * d * sizeof(float));
    } else if (p->error.ok()) {
      p->error = status;
    }
    if (--p->remaining > 0) return;
    responder = std::move(p->responder);
    p->responder.reset();
    status = p->error;
    embeddings.swap(p->embeddings);
  }
  if (!status.ok()) return std::move(*responder).Send(Error(status));
  std::move(*responder).Send(HttpResponse{200, "application/json", ResponseJson(*p, embeddings), {}});
}

}  // namespace

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
    if (in.Size() > kMaxInputs) {
      return absl::InvalidArgumentError(StrCat("'input' has ", in.Size(), " items; the limit is ", kMaxInputs));
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

void EmbeddingsRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  if (request.method != "POST") return std::move(responder).Send(Error(405, "method not allowed; use POST"));
  auto parsed = ParseEmbeddingsRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(Error(parsed.status()));
  auto version = manager_.GetModelVersion(parsed->model, std::nullopt);
  if (!version.ok()) {
    if (version.status().code() == absl::StatusCode::kNotFound) {
      return std::move(responder).Send(Error(404, StrCat("The model `", parsed->model, "` does not exist.")));
    }
    return std::move(responder).Send(Error(version.status()));
  }
  const inference::ModelConfig& config = (*version)->config();
  auto dimension = EmbeddingDimension(config);
  if (!dimension.ok()) return std::move(responder).Send(Error(dimension.status()));
  if (parsed->token_ids) {
    return std::move(responder).Send(
        Error(400, StrCat("'input' as token ids is not supported: model `", parsed->model,
                          "` takes text (its tokenizer runs in the server)")));
  }
  if (parsed->dimensions && *parsed->dimensions != *dimension) {
    return std::move(responder).Send(Error(400, StrCat("'dimensions' ", *parsed->dimensions, " is not supported: model `",
                                                       parsed->model, "` has ", *dimension, " dimensions")));
  }
  auto p = std::make_shared<Pending>();
  if (auto tokenizer = ConfigParameter(config, "openai_embedding_tokenizer")) {
    auto tv = manager_.GetModelVersion(*tokenizer, std::nullopt);
    if (!tv.ok()) return std::move(responder).Send(Error(503, StrCat("tokenize model `", *tokenizer, "` of `",
                                                                     parsed->model, "`: ", tv.status().message())));
    p->counter = (*tv)->token_counter();
    if (!p->counter) {
      return std::move(responder).Send(Error(500, StrCat("parameter openai_embedding_tokenizer of `", parsed->model,
                                                         "` names `", *tokenizer, "`, not a tokenize model")));
    }
    p->tokenizer_version = std::move(*tv);
  }
  const size_t n = parsed->inputs.size();
  const bool batched = config.max_batch_size() > 0;
  const size_t chunk = batched ? static_cast<size_t>(config.max_batch_size()) : 1;
  const size_t num_requests = (n + chunk - 1) / chunk;
  p->version = *version;
  p->request = std::move(*parsed);
  p->dimension = *dimension;
  p->id = StrCat("embd-", next_id_.fetch_add(1, std::memory_order_relaxed));
  p->created = static_cast<int64_t>(std::time(nullptr));
  {
    absl::MutexLock lock(&p->mu);
    p->embeddings.assign(n * static_cast<size_t>(*dimension), 0.0f);
    p->remaining = num_requests;
  }
  std::shared_ptr<const CancellationToken> cancellation = responder.cancellation();
  {
    absl::MutexLock lock(&p->mu);
    p->responder.emplace(std::move(responder));
  }
  // Each KServe request gets its own copy of its texts: Infer() may complete (and the
  // last completion answer) before the loop ends, so nothing here reads `p` afterwards
  // except through the callbacks.
  std::vector<InferRequest> requests;
  for (size_t first = 0; first < n; first += chunk) {
    const size_t count = std::min(chunk, n - first);
    std::string bytes;
    for (size_t i = first; i < first + count; ++i) AppendBytesElement(bytes, p->request.inputs[i]);
    InferRequest r;
    r.model_name = p->request.model;
    r.model_version = p->version->version();
    r.id = p->id;
    r.arrival_time = request.received_time;
    r.cancellation = cancellation;
    Tensor t;
    t.name = config.input(0).name();
    t.dtype = DataType::kBytes;
    t.shape = batched ? Shape{static_cast<int64_t>(count), 1} : Shape{1};
    t.data = Buffer::FromString(std::move(bytes));
    r.inputs.push_back(std::move(t));
    requests.push_back(std::move(r));
  }
  ModelVersion& model = *p->version;
  for (size_t k = 0; k < requests.size(); ++k) {
    const size_t first = k * chunk, count = std::min(chunk, n - first);
    InferCallback done = [p, first, count](absl::StatusOr<InferResponse> result, ResponseDelivery) {
      Complete(p, first, count, std::move(result));
    };
    if (model.decoupled()) done = SingleResponse(model.name(), std::move(done));
    model.Infer(std::move(requests[k]), std::move(done));
  }
}

}  // namespace infera

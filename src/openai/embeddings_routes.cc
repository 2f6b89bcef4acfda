#include "openai/embeddings_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "backend/token_counter.h"
#include "common/json_writer.h"
#include "common/str_cat.h"
#include "manager/single_response.h"
#include "openai/embeddings_request.h"
#include "openai/openai_errors.h"
#include "openai/openai_trace.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "repository/model_config_util.h"
#include "security/api_key_store.h"

namespace infera::openai {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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
  ApiKeyGrantPtr api_key;  // the admitting key, charged the prompt tokens; null: keys off
  EmbeddingsRequest request;
  int64_t dimension = 0;
  std::string id;
  int64_t created = 0;

  absl::Mutex mu;
  std::optional<HttpResponder> responder ABSL_GUARDED_BY(mu);
  std::optional<InferTrace> trace ABSL_GUARDED_BY(mu);
  std::vector<float> embeddings ABSL_GUARDED_BY(mu);  // inputs × dimension
  size_t remaining ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
};

void WriteEmbedding(Writer& w, const float* row, size_t d, bool base64) {
  if (base64) return WriteString(w, Base64(reinterpret_cast<const uint8_t*>(row), d * sizeof(float)));
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

// The answer's usage: the inputs' tokens, when the model names its tokenizer (else 0).
size_t PromptTokens(const Pending& p) {
  size_t tokens = 0;
  if (p.counter) {
    for (const std::string& text : p.request.inputs) tokens += p.counter->CountTokens(text);
  }
  return tokens;
}

std::string ResponseJson(const Pending& p, const std::vector<float>& embeddings, size_t tokens) {
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
    w.StartObject();
    w.Key("object");
    w.String("embedding");
    w.Key("index");
    w.Uint64(i);
    w.Key("embedding");
    WriteEmbedding(w, embeddings.data() + i * d, d, p.request.base64);
    w.EndObject();
  }
  w.EndArray();
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
  std::optional<InferTrace> trace;
  std::vector<float> embeddings;
  {
    absl::MutexLock lock(&p->mu);
    if (result.ok() && p->trace) p->trace->Ran(result->timings);
    if (status.ok()) {
      std::memcpy(p->embeddings.data() + first * d, result->outputs[0].data.data(), count * d * sizeof(float));
    } else if (p->error.ok()) {
      p->error = status;
    }
    if (--p->remaining > 0) return;
    responder = std::move(p->responder);
    p->responder.reset();
    trace = std::move(p->trace);
    p->trace.reset();
    status = p->error;
    embeddings.swap(p->embeddings);
  }
  HttpResponse response;
  if (!status.ok()) {
    response = OpenAiErrorResponse(status);
    FinishTrace(trace, p->id, response, std::string(status.message()));
  } else {
    const auto serialize_start = std::chrono::steady_clock::now();
    const size_t tokens = PromptTokens(*p);
    response = HttpResponse{200, "application/json", ResponseJson(*p, embeddings, tokens), {}};
    // The key's usage counters and tokens-per-minute bucket, as the answer's usage says.
    ChargeGrantTokens(p->api_key, tokens, 0);
    if (trace) trace->Serialized(serialize_start, std::chrono::steady_clock::now());
    FinishTrace(trace, p->id, response);
  }
  std::move(*responder).Send(std::move(response));
}

// The KServe requests of `p`'s inputs: up to `chunk` texts each, in order.
std::vector<InferRequest> BatchRequests(const Pending& p, const inference::ModelConfig& config, size_t chunk,
                                        std::chrono::steady_clock::time_point arrival,
                                        const std::shared_ptr<const CancellationToken>& cancellation) {
  const size_t n = p.request.inputs.size();
  const bool batched = config.max_batch_size() > 0;
  std::vector<InferRequest> requests;
  for (size_t first = 0; first < n; first += chunk) {
    const size_t count = std::min(chunk, n - first);
    std::string bytes;
    for (size_t i = first; i < first + count; ++i) AppendBytesElement(bytes, p.request.inputs[i]);
    InferRequest r;
    r.model_name = p.request.model;
    r.model_version = p.version->version();
    r.id = p.id;
    r.arrival_time = arrival;
    r.cancellation = cancellation;
    Tensor t;
    t.name = config.input(0).name();
    t.dtype = DataType::kBytes;
    t.shape = batched ? Shape{static_cast<int64_t>(count), 1} : Shape{1};
    t.data = Buffer::FromString(std::move(bytes));
    r.inputs.push_back(std::move(t));
    requests.push_back(std::move(r));
  }
  return requests;
}

}  // namespace

void EmbeddingsRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  if (request.method != "POST") {
    return std::move(responder).Send(OpenAiErrorResponse(405, "method not allowed; use POST"));
  }
  auto parsed = ParseEmbeddingsRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiErrorResponse(parsed.status()));
  if (absl::Status scope = CheckGrantModel(request.api_key, parsed->model); !scope.ok()) {
    return std::move(responder).Send(OpenAiErrorResponse(scope));
  }
  std::optional<InferTrace> trace =
      InferTrace::Start(trace_, parsed->model, request.Header("traceparent"), request.received_time);
  if (trace) trace->Parsed(std::chrono::steady_clock::now());
  auto fail = [&](HttpResponse response) {  // before the request has an id
    FinishTrace(trace, "", response);
    std::move(responder).Send(std::move(response));
  };
  auto version = manager_.GetModelVersion(parsed->model, std::nullopt);
  if (!version.ok()) {
    if (version.status().code() == absl::StatusCode::kNotFound) {
      return fail(OpenAiErrorResponse(404, StrCat("The model `", parsed->model, "` does not exist.")));
    }
    return fail(OpenAiErrorResponse(version.status()));
  }
  const inference::ModelConfig& config = (*version)->config();
  auto dimension = EmbeddingDimension(config);
  if (!dimension.ok()) return fail(OpenAiErrorResponse(dimension.status()));
  if (parsed->token_ids) {
    return fail(OpenAiErrorResponse(400, StrCat("'input' as token ids is not supported: model `", parsed->model,
                                                "` takes text (its tokenizer runs in the server)")));
  }
  if (parsed->dimensions && *parsed->dimensions != *dimension) {
    return fail(OpenAiErrorResponse(400, StrCat("'dimensions' ", *parsed->dimensions, " is not supported: model `",
                                                parsed->model, "` has ", *dimension, " dimensions")));
  }
  auto p = std::make_shared<Pending>();
  if (auto tokenizer = ConfigParameter(config, "openai_embedding_tokenizer")) {
    auto tv = manager_.GetModelVersion(*tokenizer, std::nullopt);
    if (!tv.ok()) {
      return fail(OpenAiErrorResponse(
          503, StrCat("tokenize model `", *tokenizer, "` of `", parsed->model, "`: ", tv.status().message())));
    }
    p->counter = (*tv)->token_counter();
    if (!p->counter) {
      return fail(OpenAiErrorResponse(500, StrCat("parameter openai_embedding_tokenizer of `", parsed->model,
                                                  "` names `", *tokenizer, "`, not a tokenize model")));
    }
    p->tokenizer_version = std::move(*tv);
  }
  const size_t n = parsed->inputs.size();
  const size_t chunk = config.max_batch_size() > 0 ? static_cast<size_t>(config.max_batch_size()) : 1;
  p->version = *version;
  p->api_key = std::move(request.api_key);
  p->request = std::move(*parsed);
  p->dimension = *dimension;
  p->id = StrCat("embd-", next_id_.fetch_add(1, std::memory_order_relaxed));
  p->created = static_cast<int64_t>(std::time(nullptr));
  // Each KServe request gets its own copy of its texts: Infer() may complete (and the
  // last completion answer) before the loop ends, so nothing here reads `p` afterwards
  // except through the callbacks.
  std::vector<InferRequest> requests =
      BatchRequests(*p, config, chunk, request.received_time, responder.cancellation());
  {
    absl::MutexLock lock(&p->mu);
    p->embeddings.assign(n * static_cast<size_t>(*dimension), 0.0f);
    p->remaining = requests.size();
    p->responder.emplace(std::move(responder));
    p->trace = std::move(trace);
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

}  // namespace infera::openai

#include "openai/openai_routes.h"

#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <utility>

#include "backend/text_generator.h"
#include "common/str_cat.h"
#include "http/url_path.h"
#include "openai/embeddings_request.h"
#include "openai/generation_job.h"
#include "openai/generation_requests.h"
#include "openai/openai_errors.h"
#include "openai/openai_requests.h"
#include "openai/openai_trace.h"
#include "openai/response_writer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::openai {

bool OpenAiRoutes::Matches(std::string_view path) { return path == "/v1" || path.starts_with("/v1/"); }

absl::StatusOr<OpenAiRoutes::Llm> OpenAiRoutes::FindLlm(std::string_view name) const {
  auto version = manager_.GetModelVersion(name, std::nullopt);
  if (!version.ok()) {
    if (version.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(StrCat("The model `", name, "` does not exist."));
    }
    return version.status();
  }
  TextGenerator* model = (*version)->text_generator();
  if (!model) return absl::NotFoundError(StrCat("The model `", name, "` is not an LLM (backend \"llm\")."));
  return Llm{std::move(*version), model};
}

absl::StatusOr<OpenAiRoutes::ListedModel> OpenAiRoutes::DescribeModel(std::string_view name, bool ready) const {
  if (!ready) return ListedModel{std::string(name), "llm", 0, std::nullopt, false};  // an LLM loading
  auto version = manager_.GetModelVersion(name, std::nullopt);
  if (!version.ok()) {
    if (version.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(StrCat("The model `", name, "` does not exist."));
    }
    return version.status();
  }
  if (const TextGenerator* llm = (*version)->text_generator()) {
    return ListedModel{std::string(name), "llm", llm->created_unix_seconds(), llm->max_model_len(), true};
  }
  // The test /v1/embeddings applies (embeddings_request.h): the list shows what it serves.
  if (EmbeddingDimension((*version)->config()).ok()) {
    return ListedModel{std::string(name), "embedding", 0, std::nullopt, true};
  }
  return absl::NotFoundError(StrCat("The model `", name,
                                    "` is not served by the OpenAI API: it is neither an LLM (backend \"llm\") "
                                    "nor an embedding model (one TYPE_STRING input, one TYPE_FP32 output); "
                                    "use KServe v2 (/v2/models/", name, "/infer)."));
}

HttpResponse OpenAiRoutes::ListModels(std::string_view only, const ApiKeyGrantPtr& key) const {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  auto write_model = [&](const ListedModel& m) {
    w.StartObject();
    w.Key("id");
    w.String(m.name.data(), static_cast<rapidjson::SizeType>(m.name.size()));
    w.Key("object");
    w.String("model");
    w.Key("created");
    w.Int64(m.created);
    w.Key("owned_by");
    w.String("infera");
    if (m.max_model_len) {
      w.Key("max_model_len");
      w.Int64(*m.max_model_len);
    }
    w.Key("infera_kind");  // infera's field: which /v1 routes serve it
    w.String(m.kind);
    w.Key("status");  // infera's field: "ready" or "loading"
    w.String(m.ready ? "ready" : "loading");
    w.EndObject();
  };
  // The candidates by name: ready (any version serves) or an LLM still loading (its
  // config's backend is known before its versions serve).
  std::vector<std::pair<std::string, bool>> names;  // name, ready
  for (const ModelIndexEntry& entry : manager_.Index()) {
    if (!only.empty() && entry.name != only) continue;
    if (key != nullptr && !key->entry.AllowsModel(entry.name)) continue;  // the key's models only
    const bool ready = entry.state == ModelState::kReady;
    const bool loading = entry.state == ModelState::kLoading && entry.backend == "llm";
    if (!ready && !loading) continue;
    if (!names.empty() && names.back().first == entry.name) {
      names.back().second = names.back().second || ready;
    } else {
      names.emplace_back(entry.name, ready);
    }
  }
  if (!only.empty()) {
    // Neither ready nor loading: the lookup's own answer (unknown 404, unavailable 503).
    auto m = DescribeModel(only, names.empty() || names[0].second);
    if (!m.ok()) return OpenAiErrorResponse(m.status());
    write_model(*m);
    return HttpResponse{200, "application/json", std::string(b.GetString(), b.GetSize()), {}};
  }
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  for (const auto& [name, ready] : names) {
    // A model the /v1 routes do not serve (a tensor model) is left out, as is one that
    // stopped serving since the index was read.
    if (auto m = DescribeModel(name, ready); m.ok()) write_model(*m);
  }
  w.EndArray();
  w.EndObject();
  return HttpResponse{200, "application/json", std::string(b.GetString(), b.GetSize()), {}};
}

void OpenAiRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  const std::vector<std::string_view> parts = SplitPath(request.path());
  auto method_is = [&](std::string_view m) {
    if (request.method == m) return true;
    std::move(responder).Send(OpenAiErrorResponse(405, StrCat("method not allowed; use ", m)));
    return false;
  };
  if (parts.size() >= 2 && parts[1] == "models" && parts.size() <= 3) {
    if (!method_is("GET")) return;
    std::optional<std::string> id = parts.size() == 3 ? PercentDecode(parts[2]) : std::string();
    if (!id) return std::move(responder).Send(OpenAiErrorResponse(400, "malformed model id"));
    return std::move(responder).Send(ListModels(*id, request.api_key));
  }
  if (parts.size() == 2 && parts[1] == "completions") {
    if (method_is("POST")) Completions(std::move(request), std::move(responder));
    return;
  }
  if (parts.size() == 3 && parts[1] == "chat" && parts[2] == "completions") {
    if (method_is("POST")) ChatCompletions(std::move(request), std::move(responder));
    return;
  }
  std::move(responder).Send(OpenAiErrorResponse(404, StrCat("no route for ", request.path())));
}

namespace {

// The request's trace, if sampled: started when the request was read, parsed now.
std::optional<InferTrace> StartTrace(const InferTrace::Sink& sink, std::string_view model,
                                     const HttpRequest& request) {
  std::optional<InferTrace> trace = InferTrace::Start(sink, model, request.Header("traceparent"),
                                                      request.received_time);
  if (trace) trace->Parsed(std::chrono::steady_clock::now());
  return trace;
}

// Chat: how the job reads tool calls from this model's output.
void SetToolParsing(const ChatRequest& parsed, const TextGenerator& model, GenerationJob::Options& options) {
  options.tool_choice = parsed.tools.choice.mode;
  options.tool_name = parsed.tools.choice.name;
  options.tool_format = model.tool_call_format();
}
void SetToolParsing(const CompletionRequest&, const TextGenerator&, GenerationJob::Options&) {}

}  // namespace

void OpenAiRoutes::Completions(HttpRequest request, HttpResponder responder) const {
  auto parsed = ParseCompletionRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiErrorResponse(parsed.status()));
  if (absl::Status scope = CheckGrantModel(request.api_key, parsed->model); !scope.ok()) {
    return std::move(responder).Send(OpenAiErrorResponse(scope));
  }
  std::optional<InferTrace> trace = StartTrace(trace_, parsed->model, request);
  Generate(Endpoint::kCompletions, *parsed, CompletionGenerations(*parsed, request.received_time), std::move(trace),
           std::move(responder), std::move(request.api_key));
}

void OpenAiRoutes::ChatCompletions(HttpRequest request, HttpResponder responder) const {
  auto parsed = ParseChatRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiErrorResponse(parsed.status()));
  if (absl::Status scope = CheckGrantModel(request.api_key, parsed->model); !scope.ok()) {
    return std::move(responder).Send(OpenAiErrorResponse(scope));
  }
  std::optional<InferTrace> trace = StartTrace(trace_, parsed->model, request);
  Generate(Endpoint::kChat, *parsed, ChatGenerations(*parsed, request.received_time), std::move(trace),
           std::move(responder), std::move(request.api_key));
}

template <typename Parsed>
void OpenAiRoutes::Generate(Endpoint endpoint, const Parsed& parsed, std::vector<GenerationRequest> generations,
                            std::optional<InferTrace> trace, HttpResponder responder, ApiKeyGrantPtr api_key) const {
  auto llm = FindLlm(parsed.model);
  if (!llm.ok()) {
    HttpResponse response = OpenAiErrorResponse(llm.status());
    FinishTrace(trace, "", response, std::string(llm.status().message()));
    return std::move(responder).Send(std::move(response));
  }
  GenerationJob::Options options;
  options.endpoint = endpoint;
  options.id = NewResponseId(endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
  options.model = parsed.model;
  options.created = static_cast<int64_t>(std::time(nullptr));
  options.stream = parsed.stream;
  options.include_usage = parsed.include_usage;
  options.logprobs = parsed.sampling.logprobs;
  options.n = parsed.n;
  options.num_choices = generations.size();
  options.api_key = std::move(api_key);
  SetToolParsing(parsed, *llm->model, options);
  // Held through the loop below: the job lets its copy go once the answer is complete,
  // which the last Generate may bring about.
  const ModelHandle version = llm->version;
  std::shared_ptr<const CancellationToken> client = responder.cancellation();
  auto job = std::make_shared<GenerationJob>(
      std::move(options), TokenRenderer(*llm->model, parsed.return_tokens_as_token_ids), std::move(llm->version),
      std::move(trace), std::make_unique<HttpResponseWriter>(std::move(responder)), std::move(client));
  const std::shared_ptr<const CancellationToken> cancellation = job->cancellation();
  for (size_t i = 0; i < generations.size(); ++i) {
    generations[i].cancellation = cancellation;
    version->Generate(std::move(generations[i]), job->Callbacks(i));
  }
}

}  // namespace infera::openai

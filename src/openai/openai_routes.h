// OpenAI-compatible endpoints for the LLMs in the repository (models whose version has a
// text generator: backend "llm").
//
//   GET  /v1/models                 the models the /v1 routes serve: the LLMs and the
//                                   embedding models (the OpenAI model id is the model's
//                                   name; infera's field infera_kind: "llm" / "embedding")
//   GET  /v1/models/{id}
//   POST /v1/completions            prompt: a string, a list of token ids, or a batch
//                                   (list) of either; n choices per prompt
//   POST /v1/chat/completions       messages rendered with the model's chat template; n
//   (POST /v1/embeddings is EmbeddingsRoutes': embedding models, not LLMs.)
//
// GET /v1/models lists the ready LLMs and those still loading, each with infera's
// `status` field ("ready" / "loading"), and the ready embedding models. Completions for a loading model answer 503
// ServiceUnavailableError with Retry-After. Response ids are `cmpl-` / `chatcmpl-` and
// 128 random bits (NewResponseId).
//
// Request path (docs/request_path.md): parse the body (openai_requests.h) on the I/O
// thread → find the model (ModelManager::GetModelVersion; its typed capability
// ModelVersion::text_generator() says it is an LLM) → one GenerationRequest per choice
// (generation_requests.h) → ModelVersion::Generate for each, which validates, counts the
// generation in the version's statistics and holds the version until its final
// output; the model renders and tokenises the prompt off the I/O thread → the
// GenerationJob (generation_job.h) collects admissions and outputs and writes the answer:
// SSE chunks as outputs arrive (`stream: true`, `data: {chunk}\n\n` … `data: [DONE]`,
// stream_options.include_usage adds a final usage chunk), or one JSON body at the end.
// Nothing proportional to the prompt runs on the I/O thread. The client closing its
// connection cancels the request's CancellationToken; the engine drops its generations
// at its next step.
//
// Tracing: a request the trace settings sample (by the body's model and the request's
// traceparent) gets one trace (InferTrace, protocol "openai"): parse, each choice's
// generation stages, serialize (unstreamed); its answer carries the traceparent. A body
// that does not parse names no model and is not traced.
//
// Errors are OpenAI-shaped (openai_errors.h) with 400 / 404 / 405 / 429 / 503 / 500.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
#ifndef INFERA_OPENAI_OPENAI_ROUTES_H_
#define INFERA_OPENAI_OPENAI_ROUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/generation.h"
#include "http/http_server.h"
#include "manager/model_manager.h"
#include "openai/choice_rendering.h"
#include "security/api_key_store.h"
#include "tracing/infer_trace.h"

namespace infera {
class TextGenerator;
}  // namespace infera

namespace infera::openai {

class OpenAiRoutes {
 public:
  // `trace`: where sampled requests' traces go (both null: tracing off).
  OpenAiRoutes(ModelManager& manager, InferTrace::Sink trace) : manager_(manager), trace_(trace) {}

  // True for the paths this class serves ("/v1" and below).
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  struct Llm {
    ModelHandle version;              // keeps the model serving while held
    TextGenerator* model = nullptr;  // the version's text generation
  };
  absl::StatusOr<Llm> FindLlm(std::string_view name) const;
  // A model as GET /v1/models shows it.
  struct ListedModel {
    std::string name;
    const char* kind;  // infera_kind: "llm" or "embedding"
    int64_t created = 0;
    std::optional<int64_t> max_model_len;  // a ready LLM's
    bool ready = true;                     // false: an LLM still loading
  };
  // What the /v1 routes serve as `name` (`ready`: false for an LLM still loading);
  // NotFound naming why for a model they do not serve, the lookup's error otherwise.
  absl::StatusOr<ListedModel> DescribeModel(std::string_view name, bool ready) const;
  // GET /v1/models (`only` empty) or /v1/models/{only}: the LLMs and the embedding models
  // (those /v1/embeddings serves). `key`: the request's API key (null: keys off): only
  // its models are listed.
  HttpResponse ListModels(std::string_view only, const ApiKeyGrantPtr& key) const;
  void Completions(HttpRequest request, HttpResponder responder) const;
  void ChatCompletions(HttpRequest request, HttpResponder responder) const;
  // What completions and chat share once the body is parsed: the trace, the model
  // lookup, the job, and a Generate per choice. `Parsed` is a CompletionRequest or a
  // ChatRequest.
  template <typename Parsed>
  void Generate(Endpoint endpoint, const Parsed& parsed, std::vector<GenerationRequest> generations,
                std::optional<InferTrace> trace, HttpResponder responder, ApiKeyGrantPtr api_key) const;

  ModelManager& manager_;
  const InferTrace::Sink trace_;
};

}  // namespace infera::openai

#endif  // INFERA_OPENAI_OPENAI_ROUTES_H_

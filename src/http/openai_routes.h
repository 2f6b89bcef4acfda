// OpenAI-compatible endpoints for the LLMs in the repository (models with backend "llm").
//
//   GET  /v1/models                 the LLMs (the OpenAI model id is the model's name)
//   GET  /v1/models/{id}
//   POST /v1/completions            prompt: a string or a list of token ids
//   POST /v1/chat/completions       messages rendered with the model's chat template
//
// `stream: true` answers with Server-Sent Events (`data: {chunk}\n\n` ... `data: [DONE]`),
// `stream_options.include_usage` adds a final usage chunk. Errors are OpenAI-shaped:
// {"error": {"message", "type", "param", "code"}} with 400 / 404 / 429 / 503 / 500.
//
// Request path: parse (llm/openai_protocol.h) and tokenise on the I/O thread →
// LlmEngine::AddRequest → the engine thread calls back per step → each output becomes
// a chunk written through HttpStream (or, unstreamed, is collected and sent once at the
// end). The client closing its connection cancels the request's CancellationToken; the
// engine drops the request at its next step and frees its KV blocks.
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
#ifndef INFERA_HTTP_OPENAI_ROUTES_H_
#define INFERA_HTTP_OPENAI_ROUTES_H_

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/http_server.h"
#include "manager/model_manager.h"

namespace infera {

namespace llm {
class LlmModel;
}

class OpenAiRoutes {
 public:
  explicit OpenAiRoutes(ModelManager& manager) : manager_(manager) {}

  // True for the paths this class serves ("/v1" and below).
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  struct Model {
    std::shared_ptr<ModelVersion> version;  // keeps the engine alive while in use
    llm::LlmModel* llm = nullptr;
  };
  absl::StatusOr<Model> FindLlm(std::string_view name) const;
  HttpResponse ListModels(std::string_view only) const;
  void Completions(HttpRequest request, HttpResponder responder) const;
  void ChatCompletions(HttpRequest request, HttpResponder responder) const;

  ModelManager& manager_;
  mutable std::atomic<uint64_t> next_id_{1};
};

}  // namespace infera

#endif  // INFERA_HTTP_OPENAI_ROUTES_H_

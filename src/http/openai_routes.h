// OpenAI-compatible endpoints for the LLMs in the repository (models with backend "llm").
//
//   GET  /v1/models                 the LLMs (the OpenAI model id is the model's name)
//   GET  /v1/models/{id}
//   POST /v1/completions            prompt: a string, a list of token ids, or a batch
//                                   (list) of either; n choices per prompt
//   POST /v1/chat/completions       messages rendered with the model's chat template; n
//   (POST /v1/embeddings is http/embeddings_routes.h's: embedding models, not LLMs.)
//
// GET /v1/models lists the ready LLMs and those still loading, each with infera's
// `status` field ("ready" / "loading"). Completions for a loading model answer 503
// ServiceUnavailableError with Retry-After. Response ids are `cmpl-` / `chatcmpl-` and
// 128 random bits (llm::NewResponseId).
//
// Several choices (prompts × n, prompt-major: index = prompt * n + k) are separate
// generations on the engine, admitted through its queue like single requests; the
// answer (or a stream's head) waits until all are admitted, a refusal of any answers
// the error and cancels the others; streamed chunks carry their choice's index and
// `[DONE]` comes once after the last choice ends; usage is summed (prompt tokens once
// per prompt).
//
// `stream: true` answers with Server-Sent Events (`data: {chunk}\n\n` ... `data: [DONE]`),
// `stream_options.include_usage` adds a final usage chunk. Errors are OpenAI-shaped:
// {"error": {"message", "type", "param", "code"}} with 400 / 404 / 429 / 503 / 500.
//
// Request path: parse (llm/openai_protocol.h) on the I/O thread → TextGenerator::Generate
// (llm/text_generator.h), which renders and tokenises the prompt on the model's prompt
// worker and queues it on the engine → the admission and then each output arrive on
// those threads → each output becomes a chunk written through HttpStream (or, unstreamed,
// is collected and sent once at the end). Nothing proportional to the prompt runs on the
// I/O thread. The client closing its connection cancels the request's CancellationToken;
// the engine drops the request at its next step and frees its KV blocks.
//
// Lifetime: each request holds its ModelVersion handle (ModelManager::GetModelVersion)
// until its answer is complete, so a reload or unload drains it: a request admitted
// before a reload finishes on the version that admitted it. The routes know LLMs only
// through the TextGenerator interface (they link the LibTorch-free LLM core).
//
// Thread-safe: Handle() runs concurrently on every I/O thread.
#ifndef INFERA_HTTP_OPENAI_ROUTES_H_
#define INFERA_HTTP_OPENAI_ROUTES_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/http_server.h"
#include "manager/model_manager.h"

namespace infera {

class TextGenerator;

class OpenAiRoutes {
 public:
  explicit OpenAiRoutes(ModelManager& manager) : manager_(manager) {}

  // True for the paths this class serves ("/v1" and below).
  static bool Matches(std::string_view path);
  void Handle(HttpRequest request, HttpResponder responder) const;

 private:
  struct Model {
    ModelHandle version;          // keeps the model serving while held
    TextGenerator* llm = nullptr;  // the version's text generation
  };
  absl::StatusOr<Model> FindLlm(std::string_view name) const;
  HttpResponse ListModels(std::string_view only) const;
  void Completions(HttpRequest request, HttpResponder responder) const;
  void ChatCompletions(HttpRequest request, HttpResponder responder) const;

  ModelManager& manager_;
};

}  // namespace infera

#endif  // INFERA_HTTP_OPENAI_ROUTES_H_

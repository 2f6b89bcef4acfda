#include "http/openai_routes.h"

#include <ctime>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/url_path.h"
#include "llm/openai_protocol.h"
#include "llm/text_generator.h"
#include "llm/text_imports.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using llm::ChoiceDelta;
using llm::FinishReason;
using llm::RequestOutput;

HttpResponse OpenAiError(int status, std::string_view message) {
  HttpResponse r{status, "application/json", llm::OpenAiErrorJson(status, message), {}};
  if (status == 429 || status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse OpenAiError(const absl::Status& status) {
  return OpenAiError(HttpStatusCode(status.code()),
                     std::string_view(status.message().data(), status.message().size()));
}

std::string Sse(std::string_view json) { return StrCat("data: ", json, "\n\n"); }

// One generation in flight: how to answer, and what has been produced so far. Outputs
// may arrive before the admission (they come from the engine thread, the admission
// from the prompt worker), so a stream starts, and a whole answer is sent, only once
// both the admission and the outputs say so.
struct Job {
  enum class Kind { kCompletion, kChat } kind = Kind::kCompletion;
  std::string id, model;
  int64_t created = 0;
  bool stream = false, include_usage = false, logprobs = false;
  llm::TextGenerator* generator = nullptr;  // alive while `version` is held

  absl::Mutex mu;
  // The model's handle: keeps the version (and its engine) serving this request until
  // the answer is complete, so a reload or unload lets it finish on this version.
  std::shared_ptr<ModelVersion> version ABSL_GUARDED_BY(mu);
  std::optional<HttpResponder> responder ABSL_GUARDED_BY(mu);
  std::optional<HttpStream> out ABSL_GUARDED_BY(mu);
  std::vector<std::string> pending ABSL_GUARDED_BY(mu);  // chunks made before the stream started
  bool first_chunk ABSL_GUARDED_BY(mu) = true;
  bool admitted ABSL_GUARDED_BY(mu) = false;
  bool done ABSL_GUARDED_BY(mu) = false;  // the last output arrived
  std::string echo ABSL_GUARDED_BY(mu);   // completions with echo: the prompt text, sent first
  ChoiceDelta all ABSL_GUARDED_BY(mu);
  llm::Usage usage ABSL_GUARDED_BY(mu);
  absl::Status error ABSL_GUARDED_BY(mu);
  FinishReason finish_reason ABSL_GUARDED_BY(mu) = FinishReason::kNone;
  std::chrono::steady_clock::time_point arrival;  // the request was read
  double queue_seconds ABSL_GUARDED_BY(mu) = 0;

  // Counts the request in its version's statistics (Triton's statistics extension,
  // infera_requests_total{outcome}, infera_request_duration_seconds), as Infer() does for
  // KServe requests; called once, just before the answer is complete.
  void Count(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - arrival);
    if (version) {
      version->statistics().RecordRequest(status, static_cast<uint64_t>(elapsed.count()),
                                          static_cast<uint64_t>(queue_seconds * 1e9));
    }
  }

  std::string Chunk(const ChoiceDelta& delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::string json = kind == Kind::kChat ? llm::ChatChunkJson(id, created, model, delta, first_chunk)
                                           : llm::CompletionChunkJson(id, created, model, delta);
    first_chunk = false;
    return Sse(json);
  }
  void Emit(std::string chunk) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (out) out->Write(std::move(chunk));
    else pending.push_back(std::move(chunk));
  }

  // Sends what is complete once admitted and done; returns the handle to release.
  std::shared_ptr<ModelVersion> FinishIfComplete() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (!admitted || !done) return nullptr;
    Count(finish_reason == FinishReason::kError   ? error
          : finish_reason == FinishReason::kAbort ? absl::CancelledError("request cancelled")
                                                  : absl::OkStatus());
    if (stream) {
      std::move(*out).Finish();
      out.reset();
      return std::move(version);
    }
    if (finish_reason == FinishReason::kError) {
      std::move(*responder).Send(OpenAiError(error));
    } else if (finish_reason == FinishReason::kAbort) {
      std::move(*responder).Send(OpenAiError(499, "request cancelled"));
    } else {
      all.finish_reason = finish_reason;
      all.text = echo + all.text;
      std::string body = kind == Kind::kChat ? llm::ChatJson(id, created, model, all, usage)
                                             : llm::CompletionJson(id, created, model, all, usage);
      std::move(*responder).Send(HttpResponse{200, "application/json", std::move(body), {}});
    }
    responder.reset();
    return std::move(version);
  }

  // From the prompt worker (or the caller's thread when the queue refused it).
  void OnAdmitted(absl::Status status, std::string echo_text) {
    std::shared_ptr<ModelVersion> release;  // dropped after the lock
    absl::MutexLock lock(&mu);
    if (!status.ok()) {  // no output ever comes
      Count(status);
      std::move(*responder).Send(OpenAiError(status));
      responder.reset();
      release = std::move(version);
      return;
    }
    admitted = true;
    echo = std::move(echo_text);
    if (stream) {
      HttpResponse head{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
      out.emplace(std::move(*responder).StartStream(std::move(head)));
      responder.reset();
      if (!echo.empty()) {
        ChoiceDelta delta;
        delta.text = echo;
        out->Write(Chunk(delta));
      }
      for (std::string& chunk : pending) out->Write(std::move(chunk));
      pending.clear();
    }
    release = FinishIfComplete();
  }

  // From the engine thread.
  void OnOutput(RequestOutput o) {
    std::shared_ptr<ModelVersion> release;  // dropped after the lock
    absl::MutexLock lock(&mu);
    ChoiceDelta delta;
    delta.text = std::move(o.text);
    if (logprobs) {
      delta.logprobs = o.logprobs;
      for (int32_t t : o.token_ids) delta.tokens.push_back(llm::SanitizeUtf8(generator->TokenBytes(t)));
    }
    const bool last = o.finish_reason != FinishReason::kNone;
    if (last) delta.finish_reason = o.finish_reason;
    if (stream) {
      if (last && o.finish_reason == FinishReason::kError) {
        Emit(Sse(llm::OpenAiErrorJson(500, StrCat(o.error.message()))));
      } else if (!delta.text.empty() || last || !delta.logprobs.empty()) {
        Emit(Chunk(delta));
      }
      if (last && include_usage) {
        Emit(Sse(llm::UsageChunkJson(id, created, model,
                                     kind == Kind::kChat ? "chat.completion.chunk" : "text_completion",
                                     llm::Usage{o.num_prompt_tokens, o.num_output_tokens, o.num_cached_tokens})));
      }
      if (last) Emit("data: [DONE]\n\n");
    } else {
      all.text += delta.text;
      all.tokens.insert(all.tokens.end(), delta.tokens.begin(), delta.tokens.end());
      all.logprobs.insert(all.logprobs.end(), delta.logprobs.begin(), delta.logprobs.end());
    }
    if (!last) return;
    done = true;
    finish_reason = o.finish_reason;
    error = std::move(o.error);
    queue_seconds = o.queue_seconds;
    usage = llm::Usage{o.num_prompt_tokens, o.num_output_tokens, o.num_cached_tokens};
    release = FinishIfComplete();
  }
};

// A job for a parsed completion or chat request (both carry these fields), holding the
// model's handle.
template <typename ParsedRequest>
std::shared_ptr<Job> NewJob(Job::Kind kind, std::string id, const ParsedRequest& parsed,
                            std::shared_ptr<ModelVersion> version, llm::TextGenerator* generator) {
  auto job = std::make_shared<Job>();
  job->kind = kind;
  job->id = std::move(id);
  job->model = parsed.model;
  job->created = static_cast<int64_t>(std::time(nullptr));
  job->stream = parsed.stream;
  job->include_usage = parsed.include_usage;
  job->logprobs = parsed.sampling.logprobs;
  job->generator = generator;
  absl::MutexLock lock(&job->mu);
  job->version = std::move(version);
  return job;
}

// Hands `request` to the model; the job answers the client either way.
void Start(llm::TextGenerator& generator, llm::TextGenerationRequest request, std::shared_ptr<Job> job,
           HttpResponder responder) {
  request.cancellation = responder.cancellation();
  job->arrival = request.arrival_time;
  {
    absl::MutexLock lock(&job->mu);
    job->responder.emplace(std::move(responder));
  }
  generator.Generate(
      std::move(request),
      [job](absl::Status status, std::string echo) { job->OnAdmitted(std::move(status), std::move(echo)); },
      [job](RequestOutput o) { job->OnOutput(std::move(o)); });
}

}  // namespace

bool OpenAiRoutes::Matches(std::string_view path) { return path == "/v1" || path.starts_with("/v1/"); }

absl::StatusOr<OpenAiRoutes::Model> OpenAiRoutes::FindLlm(std::string_view name) const {
  auto version = manager_.GetModelVersion(name, std::nullopt);
  if (!version.ok()) {
    if (version.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(StrCat("The model `", name, "` does not exist."));
    }
    return version.status();
  }
  auto* llm = dynamic_cast<llm::TextGenerator*>(&(*version)->loaded_model());
  if (!llm) return absl::NotFoundError(StrCat("The model `", name, "` is not an LLM (backend \"llm\")."));
  return Model{std::move(*version), llm};
}

HttpResponse OpenAiRoutes::ListModels(std::string_view only) const {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  auto write_model = [&](const Model& m) {
    w.StartObject();
    w.Key("id");
    w.String(m.llm->name().c_str());
    w.Key("object");
    w.String("model");
    w.Key("created");
    w.Int64(m.llm->created_unix_seconds());
    w.Key("owned_by");
    w.String("infera");
    w.Key("max_model_len");
    w.Int64(m.llm->max_model_len());
    w.EndObject();
  };
  if (!only.empty()) {
    auto m = FindLlm(only);
    if (!m.ok()) return OpenAiError(m.status());
    write_model(*m);
    return HttpResponse{200, "application/json", std::string(b.GetString(), b.GetSize()), {}};
  }
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  std::string last;
  for (const ModelIndexEntry& entry : manager_.Index()) {
    if (entry.state != ModelState::kReady || entry.name == last) continue;
    last = entry.name;
    if (auto m = FindLlm(entry.name); m.ok()) write_model(*m);
  }
  w.EndArray();
  w.EndObject();
  return HttpResponse{200, "application/json", std::string(b.GetString(), b.GetSize()), {}};
}

void OpenAiRoutes::Handle(HttpRequest request, HttpResponder responder) const {
  const std::vector<std::string_view> parts = SplitPath(request.path());
  auto method_is = [&](std::string_view m) {
    if (request.method == m) return true;
    std::move(responder).Send(OpenAiError(405, StrCat("method not allowed; use ", m)));
    return false;
  };
  if (parts.size() >= 2 && parts[1] == "models" && parts.size() <= 3) {
    if (!method_is("GET")) return;
    std::optional<std::string> id = parts.size() == 3 ? PercentDecode(parts[2]) : std::string();
    if (!id) return std::move(responder).Send(OpenAiError(400, "malformed model id"));
    return std::move(responder).Send(ListModels(*id));
  }
  if (parts.size() == 2 && parts[1] == "completions") {
    if (method_is("POST")) Completions(std::move(request), std::move(responder));
    return;
  }
  if (parts.size() == 3 && parts[1] == "chat" && parts[2] == "completions") {
    if (method_is("POST")) ChatCompletions(std::move(request), std::move(responder));
    return;
  }
  std::move(responder).Send(OpenAiError(404, StrCat("no route for ", request.path())));
}

void OpenAiRoutes::Completions(HttpRequest request, HttpResponder responder) const {
  auto parsed = llm::ParseCompletionRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiError(parsed.status()));
  auto model = FindLlm(parsed->model);
  if (!model.ok()) return std::move(responder).Send(OpenAiError(model.status()));
  llm::TextGenerator& generator = *model->llm;
  llm::TextGenerationRequest generate;
  generate.prompt_text = std::move(parsed->prompt_text);
  generate.prompt_ids = std::move(parsed->prompt_ids);
  generate.echo = parsed->echo;
  generate.sampling = std::move(parsed->sampling);
  generate.priority = parsed->priority;
  generate.arrival_time = request.received_time;
  auto job = NewJob(Job::Kind::kCompletion, StrCat("cmpl-", next_id_.fetch_add(1)), *parsed,
                    std::move(model->version), &generator);
  Start(generator, std::move(generate), std::move(job), std::move(responder));
}

void OpenAiRoutes::ChatCompletions(HttpRequest request, HttpResponder responder) const {
  auto parsed = llm::ParseChatRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiError(parsed.status()));
  auto model = FindLlm(parsed->model);
  if (!model.ok()) return std::move(responder).Send(OpenAiError(model.status()));
  llm::TextGenerator& generator = *model->llm;
  llm::TextGenerationRequest generate;
  generate.messages = std::move(parsed->messages);
  generate.add_generation_prompt = parsed->add_generation_prompt;
  generate.sampling = std::move(parsed->sampling);
  generate.max_tokens_set = parsed->max_tokens_set;
  generate.priority = parsed->priority;
  generate.arrival_time = request.received_time;
  auto job = NewJob(Job::Kind::kChat, StrCat("chatcmpl-", next_id_.fetch_add(1)), *parsed,
                    std::move(model->version), &generator);
  Start(generator, std::move(generate), std::move(job), std::move(responder));
}

}  // namespace infera

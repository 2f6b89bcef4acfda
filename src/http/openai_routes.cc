#include "http/openai_routes.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>
#include <vector>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "common/str_cat.h"
#include "http/http_status.h"
#include "http/url_path.h"
#include "llm/openai_protocol.h"
#include "backend/text_generator.h"
#include "llm/text_imports.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using llm::ChoiceDelta;

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

// Unicode code points in valid UTF-8 `s` (what Python's len() counts: vLLM's
// text_offset unit).
int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// One request in flight: one or more choices (prompts × n), each one generation on the
// engine, and how to answer. Admissions (prompt worker) and outputs (engine thread)
// arrive in any order, so the answer (a stream's head, or the whole body) goes out only
// once every choice is admitted; the first refusal answers the error at once and
// cancels the siblings. The model handle is released only when every choice has
// settled (refused, or its last output arrived), after the answer is written.
struct Job {
  struct Choice {
    bool admitted = false;
    bool settled = false;     // refused, or the last output arrived
    bool first_chunk = true;  // chat: the first chunk carries the role
    int64_t offset = 0;       // completions: text_offset of the next token, after the echo
    std::string echo;         // completions with echo: the prompt's text, sent first
    int64_t echo_points = 0;  // its length in code points: added to the offsets on output
    ChoiceDelta all;          // unstreamed: everything so far
    llm::Usage usage;
    absl::Status error;
    FinishReason finish_reason = FinishReason::kNone;
    double queue_seconds = 0;  // the engine's queue time, from the last output
  };

  enum class Kind { kCompletion, kChat } kind = Kind::kCompletion;
  std::string id, model;
  int64_t created = 0;
  bool stream = false, include_usage = false, logprobs = false, token_ids = false;
  int n = 1;                                // choices per prompt: choice i is prompt i / n
  TextGenerator* generator = nullptr;  // alive while `version` is held
  // The client's disconnect token, and (several choices) the token the choices carry:
  // cancelled on a sibling's refusal or, at the next output, when the client is gone.
  std::shared_ptr<const CancellationToken> client;
  std::shared_ptr<CancellationToken> cancel;

  absl::Mutex mu;
  // The model's handle: keeps the version (and its engine) serving this request until
  // the answer is complete, so a reload or unload lets it finish on this version.
  ModelHandle version ABSL_GUARDED_BY(mu);
  std::optional<HttpResponder> responder ABSL_GUARDED_BY(mu);
  std::optional<HttpStream> out ABSL_GUARDED_BY(mu);
  // What came before the stream started (outputs may precede their admission, so the
  // echo's offset shift and the chat role are applied when the chunk is written).
  struct Pending {
    size_t choice = 0;
    ChoiceDelta delta;
    std::string raw;  // set: an event already rendered (an error)
  };
  std::vector<Pending> pending ABSL_GUARDED_BY(mu);
  std::vector<Choice> choices ABSL_GUARDED_BY(mu);
  size_t num_admitted ABSL_GUARDED_BY(mu) = 0;
  size_t num_settled ABSL_GUARDED_BY(mu) = 0;
  bool answered ABSL_GUARDED_BY(mu) = false;  // an error was sent: drop everything else
  bool finished ABSL_GUARDED_BY(mu) = false;  // the answer is complete, the handle released
  std::chrono::steady_clock::time_point arrival;  // the request was read

  // Renders choice `i`'s delta (its admission is known by now).
  std::string Chunk(size_t i, ChoiceDelta& delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Choice& c = choices[i];
    for (int64_t& o : delta.text_offsets) o += c.echo_points;
    std::string json = kind == Kind::kChat ? llm::ChatChunkJson(id, created, model, delta, c.first_chunk)
                                           : llm::CompletionChunkJson(id, created, model, delta);
    c.first_chunk = false;
    return Sse(json);
  }
  void EmitDelta(size_t i, ChoiceDelta delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (out) out->Write(Chunk(i, delta));
    else if (!answered) pending.push_back({i, std::move(delta), {}});
  }
  void Emit(std::string event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (out) out->Write(std::move(event));
    else if (!answered) pending.push_back({0, {}, std::move(event)});
  }

  // Usage summed over the choices; prompt (and cached) tokens once per prompt, as vLLM.
  llm::Usage TotalUsage() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    llm::Usage total;
    for (size_t i = 0; i < choices.size(); ++i) {
      if (i % n == 0) {
        total.prompt_tokens += choices[i].usage.prompt_tokens;
        total.cached_tokens += choices[i].usage.cached_tokens;
      }
      total.completion_tokens += choices[i].usage.completion_tokens;
    }
    return total;
  }

  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (answered || !responder) return;
    std::move(*responder).Send(OpenAiError(status));
    responder.reset();
    answered = true;
    pending.clear();
    if (cancel) cancel->Cancel();
  }

  // Sends what is complete once every choice has settled and (unless an error was
  // answered) been admitted — an output may arrive before its admission; returns the
  // handle to release.
  ModelHandle FinishIfComplete() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (finished || num_settled < choices.size()) return ModelHandle();
    if (answered) {
      finished = true;
      return std::move(version);
    }
    if (num_admitted < choices.size()) return ModelHandle();
    finished = true;
    if (stream) {
      if (include_usage) {
        Emit(Sse(llm::UsageChunkJson(id, created, model,
                                     kind == Kind::kChat ? "chat.completion.chunk" : "text_completion",
                                     TotalUsage())));
      }
      Emit("data: [DONE]\n\n");
      std::move(*out).Finish();
      out.reset();
      return std::move(version);
    }
    for (const Choice& c : choices) {
      if (c.finish_reason == FinishReason::kError) {
        Fail(c.error);
        return std::move(version);
      }
    }
    for (const Choice& c : choices) {
      if (c.finish_reason == FinishReason::kAbort) {
        Fail(absl::Status(absl::StatusCode::kCancelled, "request cancelled"));
        return std::move(version);
      }
    }
    std::vector<ChoiceDelta> all;
    for (Choice& c : choices) {
      c.all.finish_reason = c.finish_reason;
      c.all.text = c.echo + c.all.text;
      for (int64_t& o : c.all.text_offsets) o += c.echo_points;
      all.push_back(std::move(c.all));
    }
    const llm::Usage usage = TotalUsage();
    std::string body = kind == Kind::kChat ? llm::ChatJson(id, created, model, all, usage)
                                           : llm::CompletionJson(id, created, model, all, usage);
    std::move(*responder).Send(HttpResponse{200, "application/json", std::move(body), {}});
    responder.reset();
    return std::move(version);
  }

  // Choice `i` admitted (or refused), from the prompt worker (or the caller's thread
  // when the queue refused it).
  void OnAdmitted(size_t i, absl::Status status, std::string echo_text) {
    ModelHandle release;  // dropped after the lock
    absl::MutexLock lock(&mu);
    Choice& c = choices[i];
    if (!status.ok()) {  // no output ever comes
      c.settled = true;
      ++num_settled;
      Fail(status);
      release = FinishIfComplete();
      return;
    }
    c.admitted = true;
    ++num_admitted;
    c.echo = std::move(echo_text);
    c.echo_points = CodePoints(c.echo);
    if (stream && !answered && num_admitted == choices.size()) {
      HttpResponse head{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
      out.emplace(std::move(*responder).StartStream(std::move(head)));
      responder.reset();
      for (size_t k = 0; k < choices.size(); ++k) {
        if (choices[k].echo.empty()) continue;
        ChoiceDelta delta;
        delta.index = static_cast<int>(k);
        delta.text = choices[k].echo;
        out->Write(Chunk(k, delta));
      }
      for (Pending& p : pending) out->Write(p.raw.empty() ? Chunk(p.choice, p.delta) : std::move(p.raw));
      pending.clear();
    }
    release = FinishIfComplete();
  }

  // The token's text as the client sees it.
  std::string TokenText(int32_t token) const {
    if (token_ids) return StrCat("token_id:", token);
    return llm::SanitizeUtf8(generator->TokenBytes(token));
  }

  // Choice `i`'s output, from the engine thread.
  void OnOutput(size_t i, GenerationOutput o) {
    if (cancel && client && client->IsCancelled()) cancel->Cancel();  // the siblings stop too
    ModelHandle release;  // dropped after the lock
    absl::MutexLock lock(&mu);
    Choice& c = choices[i];
    ChoiceDelta delta;
    delta.index = static_cast<int>(i);
    delta.text = std::move(o.text);
    if (logprobs) {
      delta.logprobs = o.logprobs;
      for (size_t t = 0; t < o.token_ids.size(); ++t) {
        delta.tokens.push_back(TokenText(o.token_ids[t]));
        delta.token_bytes.emplace_back(generator->TokenBytes(o.token_ids[t]));
        delta.text_offsets.push_back(c.offset);
        c.offset += CodePoints(delta.tokens.back());
        const bool has_top = t < o.top_logprobs.size();
        if (has_top || kind == Kind::kCompletion) {
          std::vector<llm::TopToken>& top = delta.top.emplace_back();
          bool chosen_listed = false;
          if (has_top) {
            for (const TokenLogprob& alt : o.top_logprobs[t]) {
              top.push_back({TokenText(alt.token_id), std::string(generator->TokenBytes(alt.token_id)), alt.logprob});
              chosen_listed = chosen_listed || alt.token_id == o.token_ids[t];
            }
          }
          // Completions always list the sampled token too (OpenAI: "up to logprobs+1
          // elements"; vLLM the same), also with logprobs: 0.
          if (kind == Kind::kCompletion && !chosen_listed && t < o.logprobs.size()) {
            top.push_back({delta.tokens.back(), delta.token_bytes.back(), o.logprobs[t]});
          }
        }
      }
    }
    const bool last = o.finish_reason != FinishReason::kNone;
    if (last) delta.finish_reason = o.finish_reason;
    if (stream) {
      if (last && o.finish_reason == FinishReason::kError) {
        Emit(Sse(llm::OpenAiErrorJson(500, StrCat(o.error.message()))));
      } else if (!delta.text.empty() || last || !delta.logprobs.empty()) {
        EmitDelta(i, std::move(delta));
      }
    } else {
      ChoiceDelta& all = c.all;
      all.index = delta.index;
      all.text += delta.text;
      auto append = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
      append(all.tokens, delta.tokens);
      append(all.token_bytes, delta.token_bytes);
      append(all.logprobs, delta.logprobs);
      append(all.top, delta.top);
      append(all.text_offsets, delta.text_offsets);
    }
    if (!last) return;
    c.settled = true;
    ++num_settled;
    c.finish_reason = o.finish_reason;
    c.error = std::move(o.error);
    c.usage = llm::Usage{o.num_prompt_tokens, o.num_output_tokens, o.num_cached_tokens};
    c.queue_seconds = o.queue_seconds;
    release = FinishIfComplete();
  }
};

// A job of `num_choices` choices for a parsed completion or chat request (both carry
// these fields), holding the model's handle.
template <typename ParsedRequest>
std::shared_ptr<Job> NewJob(Job::Kind kind, std::string_view id_prefix, const ParsedRequest& parsed,
                            size_t num_choices, ModelHandle version, TextGenerator* generator) {
  auto job = std::make_shared<Job>();
  job->kind = kind;
  job->id = llm::NewResponseId(id_prefix);
  job->model = parsed.model;
  job->created = static_cast<int64_t>(std::time(nullptr));
  job->stream = parsed.stream;
  job->include_usage = parsed.include_usage;
  job->logprobs = parsed.sampling.logprobs;
  job->token_ids = parsed.return_tokens_as_token_ids;
  job->n = parsed.n;
  job->generator = generator;
  absl::MutexLock lock(&job->mu);
  job->choices.resize(num_choices);
  job->version = std::move(version);
  return job;
}

// Hands the choices' requests (one per choice, in index order) to the model; the job
// answers the client either way.
void Start(ModelVersion& version, std::vector<GenerationRequest> requests, std::shared_ptr<Job> job,
           HttpResponder responder) {
  job->client = responder.cancellation();
  if (!requests.empty()) job->arrival = requests.front().arrival_time;
  if (requests.size() > 1) job->cancel = std::make_shared<CancellationToken>();
  {
    absl::MutexLock lock(&job->mu);
    job->responder.emplace(std::move(responder));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    GenerationRequest& request = requests[i];
    request.cancellation = job->cancel ? std::shared_ptr<const CancellationToken>(job->cancel) : job->client;
    version.Generate(std::move(request),
                     GenerationCallbacks{[job, i](absl::Status status, std::string echo) {
                                           job->OnAdmitted(i, std::move(status), std::move(echo));
                                         },
                                         [job, i](GenerationOutput o) { job->OnOutput(i, std::move(o)); }});
  }
}

// Choice `index_in_n` of a prompt: vLLM's child seed (seed + index), so that n seeded
// choices differ yet repeat across calls.
void SeedChoice(SamplingParams& sampling, int index_in_n) {
  if (sampling.seed) sampling.seed = *sampling.seed + static_cast<uint64_t>(index_in_n);
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
  TextGenerator* llm = (*version)->text_generator();
  if (!llm) return absl::NotFoundError(StrCat("The model `", name, "` is not an LLM (backend \"llm\")."));
  return Model{std::move(*version), llm};
}

HttpResponse OpenAiRoutes::ListModels(std::string_view only) const {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  // A ready LLM (m set), or one still loading (only its name is known).
  auto write_model = [&](std::string_view name, const Model* m) {
    w.StartObject();
    w.Key("id");
    w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.Key("object");
    w.String("model");
    w.Key("created");
    w.Int64(m ? m->llm->created_unix_seconds() : 0);
    w.Key("owned_by");
    w.String("infera");
    if (m) {
      w.Key("max_model_len");
      w.Int64(m->llm->max_model_len());
    }
    w.Key("status");  // infera's field: "ready" or "loading"
    w.String(m ? "ready" : "loading");
    w.EndObject();
  };
  // The LLMs by name: ready (any version serves) or else loading.
  std::vector<std::pair<std::string, bool>> llms;  // name, ready
  for (const ModelIndexEntry& entry : manager_.Index()) {
    if (!only.empty() && entry.name != only) continue;
    const bool ready = entry.state == ModelState::kReady;
    const bool loading = entry.state == ModelState::kLoading && entry.backend == "llm";
    if (!ready && !loading) continue;
    if (!llms.empty() && llms.back().first == entry.name) {
      llms.back().second = llms.back().second || ready;
    } else {
      llms.emplace_back(entry.name, ready);
    }
  }
  if (!only.empty()) {
    if (llms.empty() || llms[0].second) {  // ready, or not an LLM at all: the usual lookup
      auto m = FindLlm(only);
      if (!m.ok()) return OpenAiError(m.status());
      write_model(only, &*m);
    } else {
      write_model(only, nullptr);
    }
    return HttpResponse{200, "application/json", std::string(b.GetString(), b.GetSize()), {}};
  }
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  for (const auto& [name, ready] : llms) {
    if (!ready) {
      write_model(name, nullptr);
    } else if (auto m = FindLlm(name); m.ok()) {
      write_model(name, &*m);
    }
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
  TextGenerator& generator = *model->llm;
  // Prompt-major, as OpenAI orders choices: index = prompt * n + k.
  std::vector<GenerationRequest> requests;
  for (const llm::Prompt& prompt : parsed->prompts) {
    for (int k = 0; k < parsed->n; ++k) {
      GenerationRequest& generate = requests.emplace_back();
      generate.prompt_text = prompt.text;
      generate.prompt_ids = prompt.ids;
      generate.echo = parsed->echo;
      generate.sampling = parsed->sampling;
      SeedChoice(generate.sampling, k);
      generate.priority = parsed->priority;
      generate.arrival_time = request.received_time;
    }
  }
  ModelVersion& version = *model->version;
  auto job = NewJob(Job::Kind::kCompletion, "cmpl-", *parsed, requests.size(), std::move(model->version),
                    &generator);
  Start(version, std::move(requests), std::move(job), std::move(responder));
}

void OpenAiRoutes::ChatCompletions(HttpRequest request, HttpResponder responder) const {
  auto parsed = llm::ParseChatRequest(request.body);
  if (!parsed.ok()) return std::move(responder).Send(OpenAiError(parsed.status()));
  auto model = FindLlm(parsed->model);
  if (!model.ok()) return std::move(responder).Send(OpenAiError(model.status()));
  TextGenerator& generator = *model->llm;
  std::vector<GenerationRequest> requests;
  for (int k = 0; k < parsed->n; ++k) {
    GenerationRequest& generate = requests.emplace_back();
    generate.messages = parsed->messages;
    generate.add_generation_prompt = parsed->add_generation_prompt;
    generate.sampling = parsed->sampling;
    SeedChoice(generate.sampling, k);
    generate.max_tokens_set = parsed->max_tokens_set;
    generate.priority = parsed->priority;
    generate.arrival_time = request.received_time;
  }
  ModelVersion& version = *model->version;
  auto job = NewJob(Job::Kind::kChat, "chatcmpl-", *parsed, requests.size(), std::move(model->version),
                    &generator);
  Start(version, std::move(requests), std::move(job), std::move(responder));
}

}  // namespace infera

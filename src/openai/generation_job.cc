#include "openai/generation_job.h"

#include <chrono>
#include <utility>

#include "common/str_cat.h"
#include "openai/openai_errors.h"
#include "openai/openai_trace.h"

namespace infera::openai {

GenerationJob::GenerationJob(Options options, TokenRenderer tokens, ModelHandle version,
                             std::optional<InferTrace> trace, std::unique_ptr<ResponseWriter> writer,
                             std::shared_ptr<const CancellationToken> client)
    : options_(std::move(options)),
      tokens_(tokens),
      client_(std::move(client)),
      // Several choices: a token of their own, cancelled with the client's (its parent)
      // or by a sibling's refusal.
      siblings_(options_.num_choices > 1 ? std::make_shared<CancellationToken>(client_) : nullptr),
      version_(std::move(version)),
      trace_(std::move(trace)),
      writer_(std::move(writer)) {
  absl::MutexLock lock(&mu_);
  choices_.resize(options_.num_choices);
  if (options_.stream && options_.endpoint == Endpoint::kChat && options_.tool_choice != ToolChoiceMode::kNone) {
    for (Choice& c : choices_) {
      c.tools = std::make_unique<ToolCallStream>(options_.tool_choice, options_.tool_format, options_.tool_name,
                                                 [] { return NewResponseId("call_"); });
    }
  }
}

void GenerationJob::SplitToolCalls(ChoiceDelta& all) const {
  if (options_.endpoint != Endpoint::kChat || options_.tool_choice == ToolChoiceMode::kNone) return;
  ToolCallStream::Piece piece = ToolCallStream::Whole(options_.tool_choice, options_.tool_format, options_.tool_name,
                                                      [] { return NewResponseId("call_"); }, all.text);
  all.text = std::move(piece.content);
  all.tool_calls = std::move(piece.calls);
  all.finished_with_tool_calls = !all.tool_calls.empty() && options_.tool_choice != ToolChoiceMode::kNamed;
}

void GenerationJob::EmitToolDeltas(size_t i, ChoiceDelta delta, bool last) {
  Choice& c = choices_[i];
  ToolCallStream::Piece piece = c.tools->Add(delta.text);
  if (last) {
    ToolCallStream::Piece rest = c.tools->Finish();
    piece.content += rest.content;
    piece.calls.insert(piece.calls.end(), rest.calls.begin(), rest.calls.end());
  }
  const std::optional<FinishReason> finish = delta.finish_reason;
  delta.text = std::move(piece.content);
  delta.finish_reason.reset();
  std::vector<ChoiceDelta> out;
  if (!delta.text.empty() || !delta.logprobs.empty()) out.push_back(std::move(delta));
  for (ToolCallDelta& call : piece.calls) {
    ChoiceDelta& d = out.emplace_back();
    d.index = static_cast<int>(i);
    d.tool_calls.push_back(std::move(call));
  }
  if (last) {
    if (out.empty()) out.emplace_back().index = static_cast<int>(i);
    out.back().finish_reason = finish;
    out.back().finished_with_tool_calls = c.tools->called() && options_.tool_choice != ToolChoiceMode::kNamed;
  }
  for (ChoiceDelta& d : out) EmitDelta(i, std::move(d));
}

std::shared_ptr<const CancellationToken> GenerationJob::cancellation() const {
  return siblings_ ? std::shared_ptr<const CancellationToken>(siblings_) : client_;
}

GenerationCallbacks GenerationJob::Callbacks(size_t choice) {
  std::shared_ptr<GenerationJob> self = shared_from_this();
  return GenerationCallbacks{
      [self, choice](absl::Status status, std::string echo) { self->OnAdmitted(choice, std::move(status), std::move(echo)); },
      [self, choice](GenerationOutput output) { self->OnOutput(choice, std::move(output)); }};
}

std::string GenerationJob::Chunk(size_t i, ChoiceDelta& delta) {
  Choice& c = choices_[i];
  for (int64_t& o : delta.text_offsets) o += c.echo_points;
  std::string json = options_.endpoint == Endpoint::kChat
                         ? ChatChunkJson(options_.id, options_.created, options_.model, delta, c.first_chunk)
                         : CompletionChunkJson(options_.id, options_.created, options_.model, delta);
  c.first_chunk = false;
  return SseEvent(json);
}

void GenerationJob::EmitDelta(size_t i, ChoiceDelta delta) {
  if (streaming_) writer_->Write(Chunk(i, delta));
  else if (!answered_) pending_.push_back({i, std::move(delta), {}});
}

void GenerationJob::Emit(std::string event) {
  if (streaming_) writer_->Write(std::move(event));
  else if (!answered_) pending_.push_back({0, {}, std::move(event)});
}

void GenerationJob::StartStream() {
  HttpResponse head{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  AddTraceparent(trace_, head);
  writer_->StartStream(std::move(head));
  streaming_ = true;
  for (size_t k = 0; k < choices_.size(); ++k) {
    if (choices_[k].echo.empty()) continue;
    ChoiceDelta delta;
    delta.index = static_cast<int>(k);
    delta.text = choices_[k].echo;
    writer_->Write(Chunk(k, delta));
  }
  for (Pending& p : pending_) writer_->Write(p.raw.empty() ? Chunk(p.choice, p.delta) : std::move(p.raw));
  pending_.clear();
}

void GenerationJob::Accumulate(Choice& c, ChoiceDelta& delta) {
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

Usage GenerationJob::TotalUsage() const {
  Usage total;
  for (size_t i = 0; i < choices_.size(); ++i) {
    if (i % static_cast<size_t>(options_.n) == 0) {
      total.prompt_tokens += choices_[i].usage.prompt_tokens;
      total.cached_tokens += choices_[i].usage.cached_tokens;
    }
    total.completion_tokens += choices_[i].usage.completion_tokens;
  }
  return total;
}

void GenerationJob::Fail(const absl::Status& status) {
  if (answered_ || streaming_ || finished_) return;
  HttpResponse response = OpenAiErrorResponse(status);
  FinishTrace(trace_, options_.id, response, std::string(status.message()));
  writer_->Send(std::move(response));
  answered_ = true;
  pending_.clear();
  if (siblings_) siblings_->Cancel();
}

void GenerationJob::EndStream() {
  if (options_.include_usage) {
    Emit(SseEvent(UsageChunkJson(options_.id, options_.created, options_.model,
                                 options_.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion",
                                 TotalUsage())));
  }
  Emit(std::string(kSseDone));
  writer_->FinishStream();
  // The head said 200; a choice that failed or was cancelled meanwhile marks the trace.
  std::optional<std::string> error;
  for (const Choice& c : choices_) {
    if (!c.error.ok() && !error) error = std::string(c.error.message());
  }
  FinishTrace(trace_, options_.id, 200, std::move(error));
}

void GenerationJob::SendBody() {
  const auto serialize_start = std::chrono::steady_clock::now();
  std::vector<ChoiceDelta> all;
  all.reserve(choices_.size());
  for (Choice& c : choices_) {
    c.all.finish_reason = c.finish_reason;
    c.all.text = c.echo + c.all.text;
    SplitToolCalls(c.all);
    for (int64_t& o : c.all.text_offsets) o += c.echo_points;
    all.push_back(std::move(c.all));
  }
  const Usage usage = TotalUsage();
  std::string body = options_.endpoint == Endpoint::kChat
                         ? ChatJson(options_.id, options_.created, options_.model, all, usage)
                         : CompletionJson(options_.id, options_.created, options_.model, all, usage);
  if (trace_) trace_->Serialized(serialize_start, std::chrono::steady_clock::now());
  HttpResponse response{200, "application/json", std::move(body), {}};
  FinishTrace(trace_, options_.id, response);
  writer_->Send(std::move(response));
}

ModelHandle GenerationJob::FinishIfComplete() {
  if (finished_ || num_settled_ < choices_.size()) return ModelHandle();
  if (!answered_ && num_admitted_ < choices_.size()) return ModelHandle();
  // Every choice has settled: the usage is final. Charged to the API key before the
  // answer goes out, so the client's next request already sees it.
  const Usage usage = TotalUsage();
  ChargeGrantTokens(options_.api_key, static_cast<uint64_t>(usage.prompt_tokens),
                    static_cast<uint64_t>(usage.completion_tokens));
  if (answered_) {
    finished_ = true;
    return std::move(version_);
  }
  if (options_.stream) {
    EndStream();
    finished_ = true;
    return std::move(version_);
  }
  for (const Choice& c : choices_) {
    if (c.finish_reason == FinishReason::kError) {
      Fail(c.error.ok() ? absl::InternalError("generation failed") : c.error);
      finished_ = true;
      return std::move(version_);
    }
  }
  for (const Choice& c : choices_) {
    if (c.finish_reason == FinishReason::kAbort) {
      Fail(absl::CancelledError("request cancelled"));
      finished_ = true;
      return std::move(version_);
    }
  }
  SendBody();
  finished_ = true;
  return std::move(version_);
}

void GenerationJob::OnAdmitted(size_t i, absl::Status status, std::string echo) {
  ModelHandle release;  // let go after the lock
  absl::MutexLock lock(&mu_);
  Choice& c = choices_[i];
  if (!status.ok()) {  // no output ever comes
    c.settled = true;
    ++num_settled_;
    Fail(status);
    release = FinishIfComplete();
    return;
  }
  c.admitted = true;
  ++num_admitted_;
  c.echo = std::move(echo);
  c.echo_points = CodePoints(c.echo);
  if (options_.stream && !answered_ && num_admitted_ == choices_.size()) StartStream();
  release = FinishIfComplete();
}

void GenerationJob::OnOutput(size_t i, GenerationOutput o) {
  ModelHandle release;  // let go after the lock
  absl::MutexLock lock(&mu_);
  Choice& c = choices_[i];
  ChoiceDelta delta = RenderOutput(o, static_cast<int>(i), options_.endpoint, options_.logprobs, tokens_, c.offset);
  const bool last = o.finish_reason != FinishReason::kNone;
  if (last) delta.finish_reason = o.finish_reason;
  if (!options_.stream) {
    Accumulate(c, delta);
  } else if (last && o.finish_reason == FinishReason::kError) {
    Emit(SseEvent(OpenAiErrorJson(500, StrCat(o.error.message()))));
  } else if (c.tools) {
    EmitToolDeltas(i, std::move(delta), last);
  } else if (!delta.text.empty() || last || !delta.logprobs.empty()) {
    EmitDelta(i, std::move(delta));
  }
  if (!last) return;
  c.settled = true;
  ++num_settled_;
  c.finish_reason = o.finish_reason;
  c.error = std::move(o.error);
  c.usage = Usage{o.num_prompt_tokens, o.num_output_tokens, o.num_cached_tokens};
  if (trace_) trace_->Generated(o.timings, static_cast<int64_t>(i));
  release = FinishIfComplete();
}

}  // namespace infera::openai

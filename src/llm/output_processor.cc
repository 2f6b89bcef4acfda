#include "llm/output_processor.h"

#include <utility>

namespace infera::llm {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

bool FlushesText(FinishReason reason) { return reason == FinishReason::kStop || reason == FinishReason::kLength; }

}  // namespace

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, LlmMetrics* metrics, AbortFn abort, Clock clock)
    : tokenizer_(tokenizer), metrics_(metrics), abort_(std::move(abort)), clock_(std::move(clock)) {}

SteadyClock::time_point OutputProcessor::Now() const { return clock_ ? clock_() : SteadyClock::now(); }

void OutputProcessor::Process(EngineStepOutput step) {
  for (NewOutputRequest& r : step.added) {
    RequestState s;
    s.callback = std::move(r.callback);
    s.text = std::make_unique<TextStream>(tokenizer_, r.sampling);
    s.logprobs = r.sampling.logprobs;
    s.num_prompt_tokens = r.num_prompt_tokens;
    s.timings.arrival = r.arrival;
    s.timings.queued = r.queued;
    requests_.emplace(r.id, std::move(s));
  }
  for (const ScheduledEvent& e : step.scheduled) {
    auto it = requests_.find(e.id);
    if (it == requests_.end()) continue;
    RequestState& s = it->second;
    s.timings.scheduled = e.time;
    s.num_cached_tokens = e.num_cached_tokens;
    s.queue_seconds = Seconds(s.timings.arrival, e.time);
  }
  for (EngineRequestOutput& o : step.outputs) {
    auto it = requests_.find(o.id);
    if (it == requests_.end()) continue;  // finished here on a stop string: discarded
    ProcessOutput(it, o, step.time);
  }
}

void OutputProcessor::ProcessOutput(RequestMap::iterator it, EngineRequestOutput& engine_output,
                                    SteadyClock::time_point step_time) {
  RequestState& s = it->second;
  FinishReason reason = engine_output.finish_reason;
  bool abort_in_engine = false;
  RequestOutput out;
  const SteadyClock::time_point start = Now();
  if (engine_output.token) {
    const SampledToken& token = *engine_output.token;
    if (s.num_output_tokens == 0) {
      s.timings.first_token = step_time;
      metrics_->RecordFirstToken(Seconds(s.timings.arrival, step_time), s.num_prompt_tokens);
    } else {
      metrics_->RecordNextToken(Seconds(s.last_token, step_time));
    }
    s.last_token = step_time;
    ++s.num_output_tokens;
    TextStream::Piece piece = s.text->Push(token.token_id);
    if (piece.stopped) {
      // The stop string wins over whatever else ended the request at the same token.
      abort_in_engine = reason == FinishReason::kNone;
      reason = FinishReason::kStop;
    }
    out.text = std::move(piece.text);
    out.token_ids.push_back(token.token_id);
    if (s.logprobs) out.logprobs.push_back(token.logprob);
    if (!token.top.empty()) out.top_logprobs.push_back(std::move(engine_output.token->top));
    if (FlushesText(reason) && !piece.stopped) out.text += s.text->Finish();
  } else if (FlushesText(reason)) {
    out.text = s.text->Finish();
  }
  s.timings.detokenize += Now() - start;
  out.num_prompt_tokens = s.num_prompt_tokens;
  out.num_output_tokens = s.num_output_tokens;
  out.num_cached_tokens = s.num_cached_tokens;
  if (reason == FinishReason::kNone) return s.callback(std::move(out));
  if (abort_in_engine) abort_(it->first);  // before the final output (see the header)
  out.finish_reason = reason;
  out.error = std::move(engine_output.error);
  Finish(it, std::move(out));
}

void OutputProcessor::Finish(RequestMap::iterator it, RequestOutput out) {
  RequestState& s = it->second;
  const SteadyClock::time_point now = Now();
  out.queue_seconds = s.queue_seconds;
  out.timings = s.timings;
  out.timings.finished = now;
  EndedRequest ended;
  ended.reason = out.finish_reason;
  ended.e2e_seconds = Seconds(s.timings.arrival, now);
  ended.prompt_tokens = s.num_prompt_tokens;
  ended.generation_tokens = s.num_output_tokens;
  if (s.num_output_tokens > 0) {
    ended.prefill_seconds = Seconds(s.timings.scheduled, s.timings.first_token);
    ended.decode_seconds = Seconds(s.timings.first_token, s.last_token);
    ended.inference_seconds = Seconds(s.timings.scheduled, s.last_token);
  }
  metrics_->RecordFinished(ended);
  OutputCallback callback = std::move(s.callback);
  requests_.erase(it);
  callback(std::move(out));
}

}  // namespace infera::llm

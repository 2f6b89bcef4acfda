#include "console/console_snapshot.h"

#include <set>
#include <utility>

#include "manager/latency_histogram.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, const char* key) { w.Key(key); }
void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}
void Num(Writer& w, const char* key, double value) {
  w.Key(key);
  w.Double(value);
}
void Int(Writer& w, const char* key, int64_t value) {
  w.Key(key);
  w.Int64(value);
}
void UInt(Writer& w, const char* key, uint64_t value) {
  w.Key(key);
  w.Uint64(value);
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Mean of a stage over an interval in ms: (ns now - ns before) / (count now - count before).
double MeanMs(const StatisticsSnapshot::Duration& now, const StatisticsSnapshot::Duration& before) {
  const uint64_t n = now.count - before.count;
  if (n == 0 || now.count < before.count) return 0;
  return static_cast<double>(now.ns - before.ns) / static_cast<double>(n) / 1e6;
}

std::vector<uint64_t> Diff(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  return LatencyHistogram::Subtract(a, b);
}

// Quantile (ms) of the LLM histogram `shape` with bucket counts `counts`.
double LlmQuantileMs(const Histogram& shape, const std::vector<uint64_t>& counts, double q) {
  Histogram h;
  h.bounds = shape.bounds;
  h.counts = counts;
  for (uint64_t c : counts) h.count += c;
  return h.Quantile(q) * 1e3;
}

void WriteCanary(Writer& w, const std::optional<CanaryStatus>& canary) {
  Key(w, "canary");
  if (!canary) {
    w.Null();
    return;
  }
  w.StartObject();
  Int(w, "canary_version", canary->canary_version);
  Int(w, "baseline_version", canary->baseline_version);
  Num(w, "weight_percent", canary->weight_percent);
  Str(w, "state", std::string(CanaryStateName(canary->state)));
  Str(w, "reason", canary->reason);
  w.EndObject();
}

}  // namespace

std::string StatsWindow::Render(std::chrono::steady_clock::time_point now, int64_t wall_ms,
                                const ConsoleServerReading& server,
                                const std::vector<ConsoleModelReading>& models) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Int(w, "time_ms", wall_ms);
  Key(w, "server");
  w.StartObject();
  Str(w, "version", server.version);
  Key(w, "ready");
  w.Bool(server.ready);
  Str(w, "control_mode", server.control_mode);
  Key(w, "admin_token_required");
  w.Bool(server.admin_token_required);
  Int(w, "console_subscribers", server.subscribers);
  w.EndObject();

  std::set<std::string> seen;
  Key(w, "models");
  w.StartArray();
  for (const ConsoleModelReading& m : models) {
    w.StartObject();
    Str(w, "name", m.name);
    Key(w, "version");
    if (m.version) {
      w.Int64(*m.version);
    } else {
      w.Null();
    }
    Str(w, "state", m.state);
    Str(w, "reason", m.reason);
    Str(w, "backend", m.backend);
    WriteCanary(w, m.canary);
    if (!m.serving) {
      w.EndObject();
      continue;
    }
    const std::string key = m.name + "/" + std::to_string(m.version.value_or(-1));
    seen.insert(key);
    std::deque<Sample>& ring = samples_[key];
    Sample sample;
    sample.time = now;
    sample.stats = m.stats;
    sample.latency = m.latency;
    if (m.llm) {
      sample.generation_tokens = m.llm->generation_tokens;
      sample.ttft = m.llm->time_to_first_token.counts;
      sample.tpot = m.llm->inter_token_latency.counts;
    }
    // A counter that went backwards means a new version object under the same key
    // (a reload): start over.
    if (!ring.empty() && ring.back().stats.success.count + ring.back().stats.fail.count >
                             sample.stats.success.count + sample.stats.fail.count) {
      ring.clear();
    }
    const Sample* previous = ring.empty() ? nullptr : &ring.back();
    // The window's start: the oldest sample still within the window.
    while (!ring.empty() && now - ring.front().time > quantile_window_) ring.pop_front();
    const Sample* window_start = ring.empty() ? nullptr : &ring.front();
    if (previous && ring.empty()) previous = nullptr;  // everything was older than the window
    const StatisticsSnapshot& s = m.stats;

    Int(w, "max_batch_size", m.max_batch_size);
    UInt(w, "queue_depth", m.queue_depth);
    Key(w, "instances");
    w.StartArray();
    for (const auto& group : m.instances) {
      w.StartObject();
      Str(w, "name", group.name);
      Str(w, "kind", group.kind);
      Int(w, "count", group.count);
      w.EndObject();
    }
    w.EndArray();

    Key(w, "counters");
    w.StartObject();
    UInt(w, "requests", s.success.count + s.fail.count);
    UInt(w, "failures", s.fail.count);
    UInt(w, "inferences", s.inference_count);
    UInt(w, "executions", s.execution_count);
    w.EndObject();

    Key(w, "rates");
    w.StartObject();
    double dt = previous ? Seconds(now - previous->time) : 0;
    auto rate = [&](uint64_t a, uint64_t b) { return dt > 0 && a >= b ? static_cast<double>(a - b) / dt : 0.0; };
    const StatisticsSnapshot empty;
    const StatisticsSnapshot& p = previous ? previous->stats : empty;
    Num(w, "requests", rate(s.success.count + s.fail.count, p.success.count + p.fail.count));
    Num(w, "inferences", rate(s.inference_count, p.inference_count));
    Num(w, "executions", rate(s.execution_count, p.execution_count));
    Num(w, "errors", rate(s.fail.count, p.fail.count));
    w.EndObject();

    Key(w, "latency_ms");
    w.StartObject();
    const std::vector<uint64_t> window_hist =
        window_start ? Diff(m.latency, window_start->latency) : m.latency;
    Num(w, "p50", LatencyHistogram::Quantile(window_hist, 0.5) * 1e3);
    Num(w, "p99", LatencyHistogram::Quantile(window_hist, 0.99) * 1e3);
    Num(w, "window_s", std::chrono::duration<double>(quantile_window_).count());
    w.EndObject();

    Key(w, "breakdown_ms");
    w.StartObject();
    Num(w, "queue", previous ? MeanMs(s.queue, p.queue) : 0);
    Num(w, "compute_input", previous ? MeanMs(s.compute_input, p.compute_input) : 0);
    Num(w, "compute_infer", previous ? MeanMs(s.compute_infer, p.compute_infer) : 0);
    Num(w, "compute_output", previous ? MeanMs(s.compute_output, p.compute_output) : 0);
    w.EndObject();

    Key(w, "batch_sizes");
    w.StartArray();
    for (const auto& b : s.batch_stats) {
      w.StartObject();
      UInt(w, "batch_size", b.batch_size);
      UInt(w, "executions", b.compute_infer.count);
      w.EndObject();
    }
    w.EndArray();

    Key(w, "failures");
    w.StartObject();
    UInt(w, "bad_request", s.failures.bad_request);
    UInt(w, "rejected", s.failures.rejected);
    UInt(w, "timeout", s.failures.timeout);
    UInt(w, "cancelled", s.failures.cancelled);
    UInt(w, "backend_error", s.failures.backend_error);
    w.EndObject();

    Key(w, "llm");
    if (!m.llm) {
      w.Null();
    } else {
      const GenerationMetrics& l = *m.llm;
      w.StartObject();
      Num(w, "tokens_per_s", previous ? rate(l.generation_tokens, previous->generation_tokens) : 0);
      const bool have_start = window_start && window_start->ttft.size() == l.time_to_first_token.counts.size() &&
                              window_start->tpot.size() == l.inter_token_latency.counts.size();
      const auto ttft = have_start ? Diff(l.time_to_first_token.counts, window_start->ttft)
                                   : l.time_to_first_token.counts;
      const auto tpot = have_start ? Diff(l.inter_token_latency.counts, window_start->tpot)
                                   : l.inter_token_latency.counts;
      Key(w, "ttft_ms");
      w.StartObject();
      Num(w, "p50", LlmQuantileMs(l.time_to_first_token, ttft, 0.5));
      Num(w, "p99", LlmQuantileMs(l.time_to_first_token, ttft, 0.99));
      w.EndObject();
      Key(w, "tpot_ms");
      w.StartObject();
      Num(w, "p50", LlmQuantileMs(l.inter_token_latency, tpot, 0.5));
      Num(w, "p99", LlmQuantileMs(l.inter_token_latency, tpot, 0.99));
      w.EndObject();
      Num(w, "kv_cache_usage", l.kv_cache_usage);
      Int(w, "running", l.num_running);
      Int(w, "waiting", l.num_waiting);
      UInt(w, "prompt_tokens", l.prompt_tokens);
      UInt(w, "generation_tokens", l.generation_tokens);
      UInt(w, "preemptions", l.preemptions);
      w.EndObject();
    }
    w.EndObject();
    ring.push_back(std::move(sample));
  }
  w.EndArray();
  w.EndObject();
  for (auto it = samples_.begin(); it != samples_.end();) {
    it = seen.count(it->first) ? std::next(it) : samples_.erase(it);
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace infera

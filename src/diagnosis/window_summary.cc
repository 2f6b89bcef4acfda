#include "diagnosis/window_summary.h"

#include <algorithm>
#include <utility>

namespace infera::diagnosis {
namespace {

uint64_t Minus(uint64_t newer, uint64_t older) { return newer > older ? newer - older : 0; }

StatisticsSnapshot::Duration Minus(const StatisticsSnapshot::Duration& newer,
                                   const StatisticsSnapshot::Duration& older) {
  return {Minus(newer.count, older.count), Minus(newer.ns, older.ns)};
}

// The observations of `newer` not in `older` (same bounds; otherwise all of `newer`).
Histogram Minus(const Histogram& newer, const Histogram& older) {
  if (older.bounds != newer.bounds || older.counts.size() != newer.counts.size()) return newer;
  Histogram h = newer;
  for (size_t i = 0; i < h.counts.size(); ++i) h.counts[i] = Minus(newer.counts[i], older.counts[i]);
  h.count = Minus(newer.count, older.count);
  h.sum = std::max(0.0, newer.sum - older.sum);
  return h;
}

double MeanMs(const Histogram& h) { return h.count > 0 ? h.sum / static_cast<double>(h.count) * 1000.0 : 0.0; }

uint64_t Requests(const DiagnosisSample& s) { return s.stats.success.count + s.stats.fail.count; }

// The engine's figures over the window: counters and histograms from the difference,
// gauges from the samples that carried traffic (`active`; the last one when none did).
WindowSummary::Llm SummarizeLlm(const GenerationMetrics& a, const GenerationMetrics& b,
                                const std::vector<const GenerationMetrics*>& active, double traffic_seconds) {
  WindowSummary::Llm llm;
  llm.preemptions = Minus(b.preemptions, a.preemptions);
  llm.finished = Minus(b.requests_finished_stop + b.requests_finished_length + b.requests_aborted + b.requests_failed,
                       a.requests_finished_stop + a.requests_finished_length + a.requests_aborted + a.requests_failed);
  const uint64_t generated = Minus(b.generation_tokens, a.generation_tokens);
  if (traffic_seconds > 0) llm.tokens_per_second = static_cast<double>(generated) / traffic_seconds;
  if (llm.finished > 0) {
    llm.prompt_tokens_per_request =
        static_cast<double>(Minus(b.prompt_tokens, a.prompt_tokens)) / static_cast<double>(llm.finished);
    llm.output_tokens_per_request = static_cast<double>(generated) / static_cast<double>(llm.finished);
  }
  const Histogram ttft = Minus(b.time_to_first_token, a.time_to_first_token);
  const Histogram tpot = Minus(b.inter_token_latency, a.inter_token_latency);
  const Histogram queue = Minus(b.queue_time, a.queue_time);
  const Histogram e2e = Minus(b.e2e_request_latency, a.e2e_request_latency);
  llm.ttft_ms = MeanMs(ttft);
  llm.ttft_p90_ms = ttft.Quantile(0.9) * 1000.0;
  llm.tpot_ms = MeanMs(tpot);
  llm.tpot_p90_ms = tpot.Quantile(0.9) * 1000.0;
  llm.queue_ms = MeanMs(queue);
  llm.e2e_ms = MeanMs(e2e);
  llm.prefill_ms = std::max(0.0, llm.ttft_ms - llm.queue_ms);
  llm.decode_ms = std::max(0.0, llm.e2e_ms - llm.ttft_ms);
  for (const GenerationMetrics* g : active) {
    llm.kv_cache_usage_peak = std::max(llm.kv_cache_usage_peak, g->kv_cache_usage);
    llm.num_running_peak = std::max(llm.num_running_peak, g->num_running);
    llm.num_waiting_peak = std::max(llm.num_waiting_peak, g->num_waiting);
    llm.kv_cache_usage_mean += g->kv_cache_usage;
    llm.num_running_mean += static_cast<double>(g->num_running);
    llm.num_waiting_mean += static_cast<double>(g->num_waiting);
  }
  if (!active.empty()) {
    const double n = static_cast<double>(active.size());
    llm.kv_cache_usage_mean /= n;
    llm.num_running_mean /= n;
    llm.num_waiting_mean /= n;
  }
  llm.max_num_seqs = b.max_num_seqs;
  llm.kv_cache_usage = b.kv_cache_usage;
  llm.num_running = b.num_running;
  llm.num_waiting = b.num_waiting;
  return llm;
}

StageFigure Mean(const StatisticsSnapshot::Duration& d) {
  StageFigure figure;
  figure.count = d.count;
  if (d.count > 0) figure.mean_us = static_cast<double>(d.ns) / static_cast<double>(d.count) / 1000.0;
  return figure;
}

}  // namespace

bool CarriedTraffic(const DiagnosisSample& a, const DiagnosisSample& b) {
  if (Requests(b) > Requests(a) || b.load.busy_ns > a.load.busy_ns) return true;
  if (a.in_flight > 0 || b.in_flight > 0) return true;
  if (b.llm) {
    if (b.llm->generation_tokens > (a.llm ? a.llm->generation_tokens : 0)) return true;
    if (b.llm->num_running > 0 || b.llm->num_waiting > 0) return true;
  }
  return false;
}

WindowSummary Summarize(const DiagnosisSample* older, const DiagnosisSample& newer,
                        std::chrono::steady_clock::time_point history_start, const ModelFacts& facts,
                        const std::vector<const DiagnosisSample*>& between) {
  DiagnosisSample zero;  // the counters at creation
  zero.time = history_start;
  if (newer.llm) {  // the engine's histograms start empty with its own bounds
    zero.llm = GenerationMetrics{};
    for (auto [from, to] : {std::pair{&newer.llm->time_to_first_token, &zero.llm->time_to_first_token},
                            {&newer.llm->inter_token_latency, &zero.llm->inter_token_latency},
                            {&newer.llm->e2e_request_latency, &zero.llm->e2e_request_latency},
                            {&newer.llm->queue_time, &zero.llm->queue_time}}) {
      *to = Histogram::WithBounds(from->bounds);
    }
  }
  const DiagnosisSample& old = older ? *older : zero;
  const auto start = old.time;
  const StatisticsSnapshot& a = old.stats;
  const StatisticsSnapshot& b = newer.stats;

  WindowSummary w;
  w.facts = facts;
  w.seconds = std::max(0.0, std::chrono::duration<double>(newer.time - start).count());
  // The seconds that carried traffic: each stretch between consecutive samples counts
  // whole when anything happened in it.
  std::vector<const DiagnosisSample*> chain;
  chain.push_back(&old);
  for (const DiagnosisSample* s : between) chain.push_back(s);
  chain.push_back(&newer);
  std::vector<const GenerationMetrics*> active_llm;
  for (size_t i = 1; i < chain.size(); ++i) {
    if (!CarriedTraffic(*chain[i - 1], *chain[i])) continue;
    w.traffic_seconds += std::max(0.0, std::chrono::duration<double>(chain[i]->time - chain[i - 1]->time).count());
    if (chain[i]->llm) active_llm.push_back(&*chain[i]->llm);
  }
  const StatisticsSnapshot::Duration success = Minus(b.success, a.success);
  const StatisticsSnapshot::Duration fail = Minus(b.fail, a.fail);
  w.successes = success.count;
  w.requests = success.count + fail.count;
  if (w.traffic_seconds > 0) w.rate_per_second = static_cast<double>(w.requests) / w.traffic_seconds;
  if (success.count > 0) w.mean_latency_us = static_cast<double>(success.ns) / success.count / 1000.0;
  w.concurrency = w.rate_per_second * w.mean_latency_us / 1e6;

  w.decode = Mean(Minus(b.decode, a.decode));
  w.queue = Mean(Minus(b.queue, a.queue));
  w.compute_input = Mean(Minus(b.compute_input, a.compute_input));
  w.compute_infer = Mean(Minus(b.compute_infer, a.compute_infer));
  w.compute_output = Mean(Minus(b.compute_output, a.compute_output));
  w.encode = Mean(Minus(b.encode, a.encode));
  w.write = Mean(Minus(b.write, a.write));
  const double compute_us = w.compute_input.mean_us + w.compute_infer.mean_us + w.compute_output.mean_us;
  w.server_us = w.decode.mean_us + w.queue.mean_us + compute_us + w.encode.mean_us;
  if (w.server_us > 0) {
    for (StageFigure* stage : {&w.decode, &w.queue, &w.compute_input, &w.compute_infer, &w.compute_output,
                               &w.encode}) {
      stage->share = stage->mean_us / w.server_us;
    }
    w.compute_share = compute_us / w.server_us;
    w.serialisation_share = (w.decode.mean_us + w.encode.mean_us) / w.server_us;
  }
  if (w.server_us + w.write.mean_us > 0) w.write.share = w.write.mean_us / (w.server_us + w.write.mean_us);

  // Batch sizes: executions per size is the count of any of its stage durations.
  std::map<uint64_t, uint64_t> before;
  for (const auto& size : a.batch_stats) before[size.batch_size] = size.compute_infer.count;
  for (const auto& size : b.batch_stats) {
    const uint64_t runs = Minus(size.compute_infer.count, before[size.batch_size]);
    if (runs == 0) continue;
    w.batch_sizes[size.batch_size] = runs;
    w.executions += runs;
    w.rows += runs * size.batch_size;
  }
  if (w.executions > 0) w.mean_batch_size = static_cast<double>(w.rows) / static_cast<double>(w.executions);

  w.instances = newer.load.num_instances;
  w.busy_seconds = static_cast<double>(Minus(newer.load.busy_ns, old.load.busy_ns)) / 1e9;
  if (w.traffic_seconds > 0 && w.instances > 0) {
    w.utilisation = std::clamp(w.busy_seconds / (w.traffic_seconds * static_cast<double>(w.instances)), 0.0, 1.0);
  }

  w.failures = {Minus(b.failures.bad_request, a.failures.bad_request),
                Minus(b.failures.rejected, a.failures.rejected), Minus(b.failures.timeout, a.failures.timeout),
                Minus(b.failures.cancelled, a.failures.cancelled),
                Minus(b.failures.backend_error, a.failures.backend_error)};
  w.write_failed = Minus(b.write_failed, a.write_failed);

  if (newer.llm) {
    if (active_llm.empty()) active_llm.push_back(&*newer.llm);
    w.llm = SummarizeLlm(old.llm ? *old.llm : *zero.llm, *newer.llm, active_llm, w.traffic_seconds);
  }
  return w;
}

}  // namespace infera::diagnosis

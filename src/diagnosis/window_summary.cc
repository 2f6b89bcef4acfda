#include "diagnosis/window_summary.h"

#include <algorithm>

namespace infera::diagnosis {
namespace {

uint64_t Minus(uint64_t newer, uint64_t older) { return newer > older ? newer - older : 0; }

StatisticsSnapshot::Duration Minus(const StatisticsSnapshot::Duration& newer,
                                   const StatisticsSnapshot::Duration& older) {
  return {Minus(newer.count, older.count), Minus(newer.ns, older.ns)};
}

StageFigure Mean(const StatisticsSnapshot::Duration& d) {
  StageFigure figure;
  figure.count = d.count;
  if (d.count > 0) figure.mean_us = static_cast<double>(d.ns) / static_cast<double>(d.count) / 1000.0;
  return figure;
}

}  // namespace

WindowSummary Summarize(const DiagnosisSample* older, const DiagnosisSample& newer,
                        std::chrono::steady_clock::time_point history_start, const ModelFacts& facts) {
  static const DiagnosisSample kZero;
  const DiagnosisSample& old = older ? *older : kZero;
  const auto start = older ? older->time : history_start;
  const StatisticsSnapshot& a = old.stats;
  const StatisticsSnapshot& b = newer.stats;

  WindowSummary w;
  w.facts = facts;
  w.seconds = std::max(0.0, std::chrono::duration<double>(newer.time - start).count());
  const StatisticsSnapshot::Duration success = Minus(b.success, a.success);
  const StatisticsSnapshot::Duration fail = Minus(b.fail, a.fail);
  w.successes = success.count;
  w.requests = success.count + fail.count;
  if (w.seconds > 0) w.rate_per_second = static_cast<double>(w.requests) / w.seconds;
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
  if (w.seconds > 0 && w.instances > 0) {
    w.utilisation = std::clamp(w.busy_seconds / (w.seconds * static_cast<double>(w.instances)), 0.0, 1.0);
  }

  w.failures = {Minus(b.failures.bad_request, a.failures.bad_request),
                Minus(b.failures.rejected, a.failures.rejected), Minus(b.failures.timeout, a.failures.timeout),
                Minus(b.failures.cancelled, a.failures.cancelled),
                Minus(b.failures.backend_error, a.failures.backend_error)};
  w.write_failed = Minus(b.write_failed, a.write_failed);

  if (newer.llm) {
    const LlmSample zero;
    const LlmSample& llm_old = old.llm ? *old.llm : zero;
    WindowSummary::Llm llm;
    llm.preemptions = Minus(newer.llm->preemptions, llm_old.preemptions);
    if (w.seconds > 0) {
      llm.tokens_per_second =
          static_cast<double>(Minus(newer.llm->generation_tokens, llm_old.generation_tokens)) / w.seconds;
    }
    llm.kv_cache_usage = newer.llm->kv_cache_usage;
    llm.num_running = newer.llm->num_running;
    llm.num_waiting = newer.llm->num_waiting;
    llm.max_num_seqs = newer.llm->max_num_seqs;
    w.llm = llm;
  }
  return w;
}

}  // namespace infera::diagnosis

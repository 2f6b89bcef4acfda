#include "diagnosis/diagnosis_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/str_cat.h"

namespace infera::diagnosis {
namespace {

Evidence Figure(std::string name, double value, std::string unit, std::string detail) {
  return Evidence{std::move(name), value, std::move(unit), std::move(detail)};
}

Evidence UtilisationEvidence(const WindowSummary& w) {
  return Figure("instance_utilisation", w.utilisation, "ratio",
                StrCat(Fixed(w.busy_seconds, 2), " s busy over ", Fixed(w.seconds, 1), " s × ", w.instances,
                       " instance(s)"));
}

// The part of the queue wait that is waiting for a free instance: the batcher holds a
// request at most max_queue_delay_microseconds to fill a batch (Triton's semantics), so
// whatever a request waited beyond that, it waited for an instance. Share of server time.
double InstanceWaitShare(const WindowSummary& w) {
  if (w.server_us <= 0) return 0;
  const double batching_bound = w.facts.dynamic_batching ? static_cast<double>(w.facts.max_queue_delay_us) : 0.0;
  return std::max(0.0, w.queue.mean_us - batching_bound) / w.server_us;
}

Evidence InstanceWaitEvidence(const WindowSummary& w) {
  return Figure("instance_wait_share", InstanceWaitShare(w), "ratio",
                w.facts.dynamic_batching
                    ? StrCat("queue wait beyond the batcher's ", w.facts.max_queue_delay_us,
                             " us delay: requests waiting for a free instance")
                    : "no dynamic batching: every queued moment is waiting for a free instance");
}

Evidence QueueEvidence(const WindowSummary& w) {
  return Figure("queue_share", w.queue.share, "ratio",
                StrCat("queue wait ", Fixed(w.queue.mean_us, 0), " us of ", Fixed(w.server_us, 0),
                       " us server time per request"));
}

Evidence RateEvidence(const WindowSummary& w) {
  return Figure("request_rate", w.rate_per_second, "req/s",
                StrCat(w.requests, " requests in ", Fixed(w.seconds, 1), " s"));
}

Diagnosis Idle(const WindowSummary& w) {
  Diagnosis d;
  d.bottleneck_class = "idle";
  d.summary = StrCat("only ", w.requests, " requests in the last ", Fixed(w.seconds, 0), " s (fewer than ",
                     kMinRequests, "): too little traffic to find a bottleneck");
  d.evidence.push_back(RateEvidence(w));
  return d;
}

std::optional<Diagnosis> MemoryBound(const WindowSummary& w) {
  if (!w.llm) return std::nullopt;
  const WindowSummary::Llm& llm = *w.llm;
  const bool preempting = llm.preemptions > 0;
  const bool full = llm.kv_cache_usage >= kKvCacheFull && llm.num_waiting > 0;
  if (!preempting && !full) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "memory_bound";
  d.summary = preempting ? StrCat("the KV cache is too small: ", llm.preemptions,
                                  " sequences were preempted (their tokens recomputed) in the window")
                         : StrCat("the KV cache is ", Percent(llm.kv_cache_usage), " full with ", llm.num_waiting,
                                  " sequences waiting for room");
  d.evidence.push_back(Figure("preemptions", static_cast<double>(llm.preemptions), "sequences",
                              "sequences evicted from the KV cache and recomputed"));
  d.evidence.push_back(Figure("kv_cache_usage", llm.kv_cache_usage, "ratio", "KV-cache blocks in use now"));
  d.evidence.push_back(Figure("waiting_sequences", static_cast<double>(llm.num_waiting), "sequences",
                              StrCat(llm.num_running, " running, max_num_seqs ", llm.max_num_seqs)));
  d.evidence.push_back(Figure("tokens_per_second", llm.tokens_per_second, "tokens/s", "generated tokens"));
  d.actions.push_back({"double the KV-cache budget (parameters kv_cache_memory_bytes)",
                       StrCat("room for about twice the resident tokens: the ", llm.preemptions,
                              " preemptions (each recomputes a whole sequence) should stop, and waiting "
                              "sequences start sooner")});
  if (llm.max_num_seqs > 1) {
    const int64_t seqs = std::max<int64_t>(1, llm.max_num_seqs / 2);
    d.actions.push_back({StrCat("or lower max_num_seqs from ", llm.max_num_seqs, " to ", seqs),
                         "each running sequence keeps its cache: fewer at once trade batch width for no "
                         "recomputation"});
  }
  return d;
}

std::optional<Diagnosis> ClientBound(const WindowSummary& w) {
  const uint64_t gone = w.write_failed + w.failures.cancelled;
  const double gone_ratio = static_cast<double>(gone) / static_cast<double>(std::max<uint64_t>(w.requests, 1));
  const bool disconnects = gone_ratio >= kClientGoneRatio;
  const bool slow_reads = w.write.share >= kWriteShare && w.write.mean_us >= kWriteOverEncode * w.encode.mean_us;
  if (!disconnects && !slow_reads) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "client_bound";
  d.evidence.push_back(Figure("client_disconnects", static_cast<double>(gone), "requests",
                              StrCat(w.failures.cancelled, " cancelled before they ran, ", w.write_failed,
                                     " answers written to a client that was gone (",
                                     Percent(gone_ratio), " of requests)")));
  d.evidence.push_back(Figure("write_share", w.write.share, "ratio",
                              StrCat("response write ", Fixed(w.write.mean_us, 0), " us per request vs server time ",
                                     Fixed(w.server_us, 0), " us (encode ", Fixed(w.encode.mean_us, 0), " us)")));
  if (disconnects) {
    d.summary = StrCat("clients go away before their answer: ", Percent(gone_ratio),
                       " of requests were cancelled or answered to a closed connection");
    d.actions.push_back({StrCat("raise the clients' timeout above the server latency (mean ",
                                Fixed(w.mean_latency_us / 1000.0, 1), " ms) or cut that latency"),
                         StrCat("the ", Percent(gone_ratio), " of work done for nobody becomes answers")});
  } else {
    d.summary = StrCat("clients read slowly: writing the response takes ", Percent(w.write.share),
                       " of the request's time in the server");
  }
  if (slow_reads || w.write.mean_us > 0) {
    d.actions.push_back({"send binary tensor outputs (binary_data) or use gRPC; check the client's read loop "
                         "and network",
                         StrCat("smaller bodies, read faster: the write's ", Fixed(w.write.mean_us, 0),
                                " us per request (", Percent(w.write.share), ") shrinks with the body")});
  }
  return d;
}

std::optional<Diagnosis> Queueing(const WindowSummary& w) {
  const double rejected_ratio =
      static_cast<double>(w.failures.rejected) / static_cast<double>(std::max<uint64_t>(w.requests, 1));
  // Utilisation is evidence, not a condition: over a window with idle stretches it is
  // diluted, while requests waiting for an instance are saturation by definition.
  const bool saturated = InstanceWaitShare(w) >= kQueueShare;
  const bool rejecting = rejected_ratio >= kRejectedRatio;
  if (!saturated && !rejecting) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "queueing";
  d.summary = StrCat("instances are saturated: requests wait ", Percent(InstanceWaitShare(w)),
                     " of their server time for a free instance (utilisation ", Percent(w.utilisation), ")",
                     rejecting ? StrCat(", ", Percent(rejected_ratio), " rejected (queue full)") : "");
  d.evidence.push_back(UtilisationEvidence(w));
  d.evidence.push_back(QueueEvidence(w));
  d.evidence.push_back(InstanceWaitEvidence(w));
  d.evidence.push_back(Figure("rejections", static_cast<double>(w.failures.rejected), "requests",
                              StrCat(Percent(rejected_ratio), " of requests refused (queue full)")));
  d.evidence.push_back(Figure("timeouts", static_cast<double>(w.failures.timeout), "requests",
                              "expired in the queue"));
  d.evidence.push_back(RateEvidence(w));
  const size_t n = std::max<size_t>(w.instances, 1);
  // Instances to bring utilisation to 70 % at the same load.
  const double needed = std::ceil(w.utilisation * static_cast<double>(n) / 0.70);
  const size_t add = std::max<size_t>(1, needed > n ? static_cast<size_t>(needed) - n : 1);
  const double after = w.utilisation * static_cast<double>(n) / static_cast<double>(n + add);
  d.actions.push_back({StrCat("add ", add, " instance", add > 1 ? "s" : "", " (instance_group count ", n, " -> ",
                              n + add, ")"),
                       StrCat("utilisation ", Percent(w.utilisation), " -> about ", Percent(after),
                              " at this load; the queue (", Percent(w.queue.share),
                              " of server time) shrinks — needs free CPU cores or accelerators for them")});
  if (w.facts.max_batch_size > 1 && !w.facts.dynamic_batching) {
    d.actions.push_back({"enable dynamic_batching",
                         StrCat("queued requests run together: up to ", w.facts.max_batch_size,
                                " per execution instead of 1")});
  }
  if (rejecting) {
    d.actions.push_back({"raise dynamic_batching max_queue_size (or add instances)",
                         StrCat("the ", w.failures.rejected, " rejected requests (", Percent(rejected_ratio),
                                ") queue instead of failing")});
  }
  return d;
}

std::optional<Diagnosis> BatchingIneffective(const WindowSummary& w) {
  if (w.facts.max_batch_size <= 1 || w.facts.llm) return std::nullopt;
  const double lambda = w.rate_per_second;
  const bool small_batches = w.facts.dynamic_batching && w.executions > 0 &&
                             w.mean_batch_size <= kSmallBatch && lambda >= kBatchingRate;
  // The queue is the batcher's delay: long, and (queueing having been ruled out) not
  // spent waiting for an instance.
  const bool delay_dominates = w.facts.dynamic_batching && w.facts.max_queue_delay_us > 0 &&
                               w.queue.share >= kQueueShare && InstanceWaitShare(w) < kQueueShare;
  const bool not_configured =
      !w.facts.dynamic_batching && w.utilisation >= kBatchWorthUtilisation && lambda >= kBatchingRate;
  if (!small_batches && !delay_dominates && !not_configured) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "batching_ineffective";
  d.evidence.push_back(Figure("mean_batch_size", w.mean_batch_size, "rows",
                              StrCat(w.rows, " rows in ", w.executions, " executions; max_batch_size ",
                                     w.facts.max_batch_size)));
  d.evidence.push_back(RateEvidence(w));
  d.evidence.push_back(Figure("concurrency", w.concurrency, "requests",
                              "requests in the server at once (rate × mean latency)"));
  d.evidence.push_back(UtilisationEvidence(w));
  const double target = std::min<double>(static_cast<double>(w.facts.max_batch_size), 4.0);
  if (delay_dominates) {
    d.summary = StrCat("requests wait for batches to fill: queue ", Percent(w.queue.share),
                       " of server time, within the batcher's ", w.facts.max_queue_delay_us, " us delay");
    d.evidence.push_back(QueueEvidence(w));
    d.evidence.push_back(InstanceWaitEvidence(w));
    const uint64_t lower = w.facts.max_queue_delay_us / 2;
    d.actions.push_back({StrCat("lower max_queue_delay_microseconds from ", w.facts.max_queue_delay_us, " to ",
                                lower),
                         StrCat("up to ", w.facts.max_queue_delay_us - lower,
                                " us less queue wait per request (now ", Fixed(w.queue.mean_us, 0),
                                " us), for smaller batches (mean ", Fixed(w.mean_batch_size, 1), " now)")});
    return d;
  }
  if (not_configured) {
    d.summary = StrCat("dynamic batching is off while instances are ", Percent(w.utilisation),
                       " busy at ", Fixed(lambda, 0), " req/s (max_batch_size ", w.facts.max_batch_size, ")");
  } else {
    d.summary = StrCat("dynamic batching is on but batches hold ", Fixed(w.mean_batch_size, 2), " rows at ",
                       Fixed(lambda, 0), " req/s");
  }
  if (w.concurrency < kSerialConcurrency) {
    d.actions.push_back({StrCat("send several rows per request, or more requests at once (concurrency now ",
                                Fixed(w.concurrency, 2), ")"),
                         "clients send one request at a time, so no queue delay can form a batch; a request "
                         "of N rows runs as one execution"});
  }
  // The delay that gathers `target` rows at this arrival rate, bounded to 100 us .. 10 ms.
  const double delay_us = std::clamp((target - 1.0) / std::max(lambda, 1.0) * 1e6, 100.0, 10000.0);
  const double expected = std::min<double>(static_cast<double>(w.facts.max_batch_size), 1.0 + lambda * delay_us / 1e6);
  const uint64_t delay = static_cast<uint64_t>(std::llround(delay_us));
  d.actions.push_back({not_configured ? StrCat("enable dynamic_batching { max_queue_delay_microseconds: ", delay, " }")
                                      : StrCat("raise max_queue_delay_microseconds from ", w.facts.max_queue_delay_us,
                                               " to ", delay),
                       StrCat("mean batch ", Fixed(w.mean_batch_size, 1), " -> about ", Fixed(expected, 1),
                              " at ", Fixed(lambda, 0), " req/s if requests arrive independently (adds up to ",
                              delay, " us latency)")});
  return d;
}

std::optional<Diagnosis> SerialisationBound(const WindowSummary& w) {
  if (w.serialisation_share < kSerialisationShare) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "serialisation_bound";
  d.summary = StrCat("decoding and encoding tensors take ", Percent(w.serialisation_share),
                     " of server time (decode ", Percent(w.decode.share), ", encode ", Percent(w.encode.share), ")");
  d.evidence.push_back(Figure("decode_share", w.decode.share, "ratio",
                              StrCat("request decode ", Fixed(w.decode.mean_us, 0), " us per request")));
  d.evidence.push_back(Figure("encode_share", w.encode.share, "ratio",
                              StrCat("response encode ", Fixed(w.encode.mean_us, 0), " us per request")));
  d.evidence.push_back(Figure("compute_share", w.compute_share, "ratio", "input + infer + output"));
  d.actions.push_back({"use binary tensors (binary_data_output, Inference-Header-Content-Length) or gRPC",
                       StrCat("JSON decode is ", Percent(w.decode.share), " and encode ", Percent(w.encode.share),
                              " of server time; binary tensors are copied, not parsed: up to ",
                              Fixed(w.decode.mean_us + w.encode.mean_us, 0), " us less per request")});
  return d;
}

std::optional<Diagnosis> ComputeBound(const WindowSummary& w) {
  if (w.compute_share < kComputeShare) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "compute_bound";
  const double compute_us = w.compute_input.mean_us + w.compute_infer.mean_us + w.compute_output.mean_us;
  d.summary = StrCat("the model's execution is ", Percent(w.compute_share), " of server time (",
                     Fixed(compute_us, 0), " us per request); nothing waits on anything else");
  d.evidence.push_back(Figure("compute_share", w.compute_share, "ratio",
                              StrCat("input ", Fixed(w.compute_input.mean_us, 0), " us, infer ",
                                     Fixed(w.compute_infer.mean_us, 0), " us, output ",
                                     Fixed(w.compute_output.mean_us, 0), " us")));
  d.evidence.push_back(UtilisationEvidence(w));
  d.evidence.push_back(QueueEvidence(w));
  d.actions.push_back({"make the model cheaper: lower precision (FP16/BF16/INT8), a smaller model, or a faster "
                       "device",
                       StrCat("latency follows compute: ", Fixed(compute_us, 0),
                              " us per request is the floor of every request's time")});
  if (w.utilisation >= kBusyUtilisation) {
    d.actions.push_back({"add instances if CPU cores are free",
                         StrCat("utilisation ", Percent(w.utilisation), ": more throughput, not lower latency")});
  } else {
    d.actions.push_back({"keep the instance count",
                         StrCat("utilisation ", Percent(w.utilisation),
                                ": instances are free, so more of them would not cut latency")});
  }
  return d;
}

Diagnosis Healthy(const WindowSummary& w) {
  Diagnosis d;
  d.bottleneck_class = "healthy";
  d.summary = StrCat("no stage stands out: queue ", Percent(w.queue.share), ", compute ", Percent(w.compute_share),
                     ", serialisation ", Percent(w.serialisation_share), " of server time, utilisation ",
                     Percent(w.utilisation));
  d.evidence.push_back(RateEvidence(w));
  d.evidence.push_back(UtilisationEvidence(w));
  d.evidence.push_back(QueueEvidence(w));
  return d;
}

}  // namespace

std::string Fixed(double value, int digits) {
  if (!std::isfinite(value)) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

std::string Percent(double ratio) { return StrCat(Fixed(ratio * 100.0, 0), " %"); }

Diagnosis Diagnose(const WindowSummary& window) {
  // Preemptions are evidence on their own, however few requests finished.
  if (std::optional<Diagnosis> d = MemoryBound(window)) return *std::move(d);
  if (window.requests < kMinRequests) return Idle(window);
  for (auto rule : {ClientBound, Queueing, BatchingIneffective, SerialisationBound, ComputeBound}) {
    if (std::optional<Diagnosis> d = rule(window)) return *std::move(d);
  }
  return Healthy(window);
}

}  // namespace infera::diagnosis

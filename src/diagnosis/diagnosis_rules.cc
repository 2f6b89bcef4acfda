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
                StrCat(Fixed(w.busy_seconds, 2), " s busy over the ", Fixed(w.traffic_seconds, 1),
                       " s with traffic (of ", Fixed(w.seconds, 1), " s) × ", w.instances, " instance(s)"));
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
                StrCat(w.requests, " requests in the ", Fixed(w.traffic_seconds, 1), " s with traffic (of ",
                       Fixed(w.seconds, 1), " s)"));
}

uint64_t MinRequests(const WindowSummary& w) { return w.facts.llm ? kMinLlmRequests : kMinRequests; }

Diagnosis Idle(const WindowSummary& w) {
  Diagnosis d;
  d.bottleneck_class = "idle";
  d.summary = StrCat("only ", w.requests, " requests in the last ", Fixed(w.seconds, 0), " s (fewer than ",
                     MinRequests(w), "): too little traffic to find a bottleneck");
  d.evidence.push_back(RateEvidence(w));
  return d;
}

std::optional<Diagnosis> ClientBound(const WindowSummary& w);

// ---- LLMs: the engine's own signals -------------------------------------------------
// An LLM's requests bypass the instances (one engine batches every sequence), and its
// statistics' "queue" is the engine's wait for a batch slot: the tensor rules' figures
// (instance wait, utilisation, batch sizes) say nothing about it.

// The engine queue's share of a generation's end-to-end time.
double EngineQueueShare(const WindowSummary::Llm& llm) { return llm.e2e_ms > 0 ? llm.queue_ms / llm.e2e_ms : 0; }
// Requests wait for the engine long enough to matter.
bool EngineQueues(const WindowSummary::Llm& llm) {
  return EngineQueueShare(llm) >= kQueueShare && llm.queue_ms >= kMinEngineQueueMs;
}
double PrefillShare(const WindowSummary::Llm& llm) { return llm.e2e_ms > 0 ? llm.prefill_ms / llm.e2e_ms : 0; }

std::string SeqsDetail(const WindowSummary::Llm& llm) {
  return StrCat("peak ", llm.num_running_peak, " running (mean ", Fixed(llm.num_running_mean, 1), "), max_num_seqs ",
                llm.max_num_seqs);
}

void LlmEvidence(const WindowSummary& w, Diagnosis& d) {
  const WindowSummary::Llm& llm = *w.llm;
  d.evidence.push_back(Figure("ttft_ms", llm.ttft_ms, "ms",
                              StrCat("time to first token, p90 ", Fixed(llm.ttft_p90_ms, 1), " ms: engine queue ",
                                     Fixed(llm.queue_ms, 1), " ms + prefill ", Fixed(llm.prefill_ms, 1), " ms")));
  d.evidence.push_back(Figure("tpot_ms", llm.tpot_ms, "ms",
                              StrCat("time per output token, p90 ", Fixed(llm.tpot_p90_ms, 1), " ms; ",
                                     Fixed(llm.tokens_per_second, 0), " tokens/s over the traffic seconds")));
  d.evidence.push_back(Figure("engine_queue_share", EngineQueueShare(llm), "ratio",
                              StrCat("waiting for a batch slot: ", Fixed(llm.queue_ms, 1), " ms of ",
                                     Fixed(llm.e2e_ms, 1), " ms end to end per generation")));
  d.evidence.push_back(Figure("kv_cache_usage_peak", llm.kv_cache_usage_peak, "ratio",
                              StrCat("KV-cache blocks in use at the busiest second (mean ",
                                     Percent(llm.kv_cache_usage_mean), ")")));
  d.evidence.push_back(Figure("running_sequences_peak", static_cast<double>(llm.num_running_peak), "sequences",
                              SeqsDetail(llm)));
  d.evidence.push_back(Figure("waiting_sequences_peak", static_cast<double>(llm.num_waiting_peak), "sequences",
                              StrCat("mean ", Fixed(llm.num_waiting_mean, 1), " while traffic ran")));
  d.evidence.push_back(Figure("preemptions", static_cast<double>(llm.preemptions), "sequences",
                              "sequences evicted from the KV cache and recomputed"));
  d.evidence.push_back(Figure("prompt_tokens_per_request", llm.prompt_tokens_per_request, "tokens",
                              StrCat(Fixed(llm.output_tokens_per_request, 1), " generated per request, ", llm.finished,
                                     " generations finished")));
}

std::optional<Diagnosis> KvCacheBound(const WindowSummary& w) {
  if (!w.llm) return std::nullopt;
  const WindowSummary::Llm& llm = *w.llm;
  const bool preempting = llm.preemptions > 0;
  const bool full = llm.kv_cache_usage_peak >= kKvCacheFull && llm.num_waiting_peak > 0;
  if (!preempting && !full) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "kv_cache_bound";
  d.summary = preempting ? StrCat("the KV cache is too small: ", llm.preemptions,
                                  " sequences were preempted (their tokens recomputed) in the window")
                         : StrCat("the KV cache is ", Percent(llm.kv_cache_usage_peak), " full with up to ",
                                  llm.num_waiting_peak, " sequences waiting for room");
  LlmEvidence(w, d);
  std::swap(d.evidence[0], d.evidence[6]);  // preemptions first
  std::swap(d.evidence[1], d.evidence[3]);  // then KV use
  d.actions.push_back({StrCat("double the KV-cache budget (parameters kv_cache_memory_bytes",
                              w.facts.kv_cache_memory.empty() ? "" : StrCat(" ", w.facts.kv_cache_memory), ")"),
                       StrCat("room for about twice the resident tokens: the ", llm.preemptions,
                              " preemptions (each recomputes a whole sequence) should stop, and waiting "
                              "sequences start sooner")});
  if (w.facts.kv_cache_dtype.empty() || w.facts.kv_cache_dtype == "fp32") {
    d.actions.push_back({"or store the cache in 16 bits (parameters kv_cache_dtype fp16 or bf16)",
                         "twice the tokens in the same memory, for a small loss of precision"});
  }
  if (llm.max_num_seqs > 1) {
    const int64_t seqs = std::max<int64_t>(1, llm.max_num_seqs / 2);
    d.actions.push_back({StrCat("or lower max_num_seqs from ", llm.max_num_seqs, " to ", seqs),
                         "each running sequence keeps its cache: fewer at once trade batch width for no "
                         "recomputation"});
  }
  return d;
}

// The batch is full and requests wait for a slot: every step decodes max_num_seqs
// sequences, so throughput is the step time.
std::optional<Diagnosis> DecodeBound(const WindowSummary& w) {
  const WindowSummary::Llm& llm = *w.llm;
  const bool full_batch = llm.max_num_seqs > 0 && llm.num_running_peak >= llm.max_num_seqs;
  if (!full_batch || !EngineQueues(llm)) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "decode_bound";
  d.summary = StrCat("the engine's batch is full: ", llm.num_running_peak, " sequences (max_num_seqs ",
                     llm.max_num_seqs, ") decode at ", Fixed(llm.tpot_ms, 1), " ms per token while requests wait ",
                     Percent(EngineQueueShare(llm)), " of their time for a slot");
  LlmEvidence(w, d);
  std::swap(d.evidence[0], d.evidence[4]);  // running first
  std::swap(d.evidence[1], d.evidence[2]);  // then the queue
  if (llm.kv_cache_usage_peak < kKvRoomForMore) {
    const int64_t more = llm.max_num_seqs * 2;
    d.actions.push_back({StrCat("raise max_num_seqs from ", llm.max_num_seqs, " to ", more),
                         StrCat("the KV cache peaked at ", Percent(llm.kv_cache_usage_peak),
                                ": room for twice the sequences per step, so waiting requests start at once; each "
                                "step grows, so TPOT (", Fixed(llm.tpot_ms, 1), " ms) rises somewhat"),
                         ActionKind::kRaiseMaxNumSeqs});
  }
  d.actions.push_back({"make each step cheaper: more engine threads (parameters num_threads), weight "
                       "quantization (parameters quantization int8) or a smaller model",
                       StrCat("TPOT ", Fixed(llm.tpot_ms, 1), " ms is the step time: a faster step serves the ",
                              "queue (", Fixed(llm.queue_ms, 1), " ms per request) sooner")});
  return d;
}

// Requests wait although the batch has free slots and the KV cache free blocks: the
// per-step token budget (max_num_batched_tokens) admits only so many prompt tokens.
std::optional<Diagnosis> LlmQueueing(const WindowSummary& w) {
  const WindowSummary::Llm& llm = *w.llm;
  if (!EngineQueues(llm)) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "queueing";
  d.summary = StrCat("requests wait ", Percent(EngineQueueShare(llm)), " of their time (", Fixed(llm.queue_ms, 1),
                     " ms) to enter the engine's batch although it ran at most ", llm.num_running_peak, " of ",
                     llm.max_num_seqs, " sequences with the KV cache at most ", Percent(llm.kv_cache_usage_peak),
                     " full");
  LlmEvidence(w, d);
  std::swap(d.evidence[0], d.evidence[2]);  // the queue first
  const int64_t budget = w.facts.max_num_batched_tokens;
  d.actions.push_back({budget > 0 ? StrCat("raise max_num_batched_tokens from ", budget, " to ", budget * 2)
                                  : "raise max_num_batched_tokens",
                       StrCat("each step admits prompt tokens up to that budget; prompts of ",
                              Fixed(llm.prompt_tokens_per_request, 0),
                              " tokens enter in fewer steps and the queue shrinks (the step that prefills them "
                              "is longer)")});
  return d;
}

// Time to first token is mostly the prompt's computation.
std::optional<Diagnosis> PrefillBound(const WindowSummary& w) {
  const WindowSummary::Llm& llm = *w.llm;
  if (PrefillShare(llm) < kPrefillShare) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "prefill_bound";
  d.summary = StrCat("computing the prompts takes ", Percent(PrefillShare(llm)), " of a generation's time (prefill ",
                     Fixed(llm.prefill_ms, 1), " ms of TTFT ", Fixed(llm.ttft_ms, 1), " ms) for prompts of ",
                     Fixed(llm.prompt_tokens_per_request, 0), " tokens and ",
                     Fixed(llm.output_tokens_per_request, 0), " generated");
  LlmEvidence(w, d);
  if (!w.facts.prefix_caching) {
    d.actions.push_back({"enable prefix caching (parameters enable_prefix_caching true)",
                         "prompts that share a prefix (a system prompt, few-shot examples) compute it once: "
                         "TTFT falls by the shared part's prefill"});
  }
  d.actions.push_back({"shorten the prompts (fewer examples, less context)",
                       StrCat("prefill grows with the prompt: ", Fixed(llm.prefill_ms, 1), " ms for ",
                              Fixed(llm.prompt_tokens_per_request, 0), " tokens now")});
  return d;
}

Diagnosis LlmHealthy(const WindowSummary& w) {
  const WindowSummary::Llm& llm = *w.llm;
  Diagnosis d;
  d.bottleneck_class = "healthy";
  d.summary = StrCat("the engine keeps up: TTFT ", Fixed(llm.ttft_ms, 1), " ms, TPOT ", Fixed(llm.tpot_ms, 1),
                     " ms, queue ", Percent(EngineQueueShare(llm)), " of a generation, KV cache at most ",
                     Percent(llm.kv_cache_usage_peak), ", at most ", llm.num_running_peak, " of ",
                     llm.max_num_seqs, " sequences running");
  LlmEvidence(w, d);
  return d;
}

Diagnosis DiagnoseLlm(const WindowSummary& w) {
  // Preemptions are evidence on their own, however few requests finished.
  if (std::optional<Diagnosis> d = KvCacheBound(w)) return *std::move(d);
  if (w.requests < kMinLlmRequests) return Idle(w);
  for (auto rule : {ClientBound, DecodeBound, LlmQueueing, PrefillBound}) {
    if (std::optional<Diagnosis> d = rule(w)) return *std::move(d);
  }
  return LlmHealthy(w);
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
  const bool waiting_for_instances = InstanceWaitShare(w) >= kQueueShare;
  const bool rejecting = rejected_ratio >= kRejectedRatio;
  if (!waiting_for_instances && !rejecting) return std::nullopt;
  Diagnosis d;
  d.bottleneck_class = "queueing";
  const bool busy = w.utilisation >= kBusyUtilisation;
  d.claims_saturation = busy;
  d.summary = StrCat(busy ? "instances are saturated: requests wait " : "requests wait ",
                     Percent(InstanceWaitShare(w)), " of their server time for a free instance (utilisation ",
                     Percent(w.utilisation), " over the ", Fixed(w.traffic_seconds, 1), " s with traffic)",
                     busy || w.utilisation >= kAddInstanceUtilisation
                         ? ""
                         : ": the instances idle between requests that arrive in bursts",
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
  if (w.utilisation >= kAddInstanceUtilisation) {
    // Instances to bring utilisation to 70 % at the same load.
    const double needed = std::ceil(w.utilisation * static_cast<double>(n) / 0.70);
    const size_t add = std::max<size_t>(1, needed > n ? static_cast<size_t>(needed) - n : 1);
    const double after = w.utilisation * static_cast<double>(n) / static_cast<double>(n + add);
    d.actions.push_back({StrCat("add ", add, " instance", add > 1 ? "s" : "", " (instance_group count ", n,
                                " -> ", n + add, ")"),
                         StrCat("utilisation ", Percent(w.utilisation), " -> about ", Percent(after),
                                " at this load; the queue (", Percent(w.queue.share),
                                " of server time) shrinks — needs free CPU cores or accelerators for them"),
                         ActionKind::kAddInstances});
  } else {
    d.actions.push_back({"spread the clients' requests over time, or accept the wait",
                         StrCat("the instances are busy only ", Percent(w.utilisation),
                                " of the seconds with traffic: requests queue in bursts, and more instances "
                                "would mostly idle")});
  }
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
                         StrCat("utilisation ", Percent(w.utilisation), ": more throughput, not lower latency"),
                         ActionKind::kAddInstances});
  } else {
    d.actions.push_back({"keep the instance count",
                         StrCat("utilisation ", Percent(w.utilisation),
                                ": instances are free, so more of them would not cut latency"),
                         ActionKind::kKeepInstances});
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

std::vector<std::string> CheckConsistency(const WindowSummary& w, const Diagnosis& d) {
  std::vector<std::string> faults;
  for (const Action& a : d.actions) {
    if (a.kind == ActionKind::kAddInstances && w.facts.llm) {
      faults.push_back(StrCat("'", a.action, "' for an LLM: one engine batches the sequences of every instance"));
    } else if (a.kind == ActionKind::kAddInstances && w.utilisation < kAddInstanceUtilisation) {
      faults.push_back(StrCat("'", a.action, "' at utilisation ", Percent(w.utilisation), " (below ",
                              Percent(kAddInstanceUtilisation), ")"));
    }
    if (a.kind == ActionKind::kKeepInstances && w.utilisation >= kBusyUtilisation) {
      faults.push_back(StrCat("'", a.action, "' at utilisation ", Percent(w.utilisation)));
    }
    if (a.kind == ActionKind::kRaiseMaxNumSeqs && w.llm && w.llm->kv_cache_usage_peak >= kKvRoomForMore) {
      faults.push_back(StrCat("'", a.action, "' with the KV cache at ", Percent(w.llm->kv_cache_usage_peak)));
    }
  }
  if (d.claims_saturation && w.utilisation < kBusyUtilisation) {
    faults.push_back(StrCat("'saturated' at utilisation ", Percent(w.utilisation), " (below ",
                            Percent(kBusyUtilisation), ")"));
  }
  if ((d.bottleneck_class == "healthy" || d.bottleneck_class == "idle") && w.llm && w.llm->preemptions > 0) {
    faults.push_back(StrCat("'", d.bottleneck_class, "' with ", w.llm->preemptions, " preemptions"));
  }
  return faults;
}

namespace {

Diagnosis DiagnoseUnchecked(const WindowSummary& window) {
  if (window.llm || window.facts.llm) {
    if (!window.llm) return Idle(window);  // an LLM whose engine reported nothing
    return DiagnoseLlm(window);
  }
  if (window.requests < kMinRequests) return Idle(window);
  for (auto rule : {ClientBound, Queueing, BatchingIneffective, SerialisationBound, ComputeBound}) {
    if (std::optional<Diagnosis> d = rule(window)) return *std::move(d);
  }
  return Healthy(window);
}

}  // namespace

Diagnosis Diagnose(const WindowSummary& window) {
  Diagnosis d = DiagnoseUnchecked(window);
  // The rules are written not to contradict their figures (tested); should one slip, an
  // action a figure in the same report refutes is withheld, and the report says so.
  std::vector<std::string> faults = CheckConsistency(window, d);
  if (faults.empty()) return d;
  Diagnosis vetted = d;
  vetted.actions.clear();
  for (const Action& a : d.actions) {
    Diagnosis one = d;
    one.actions = {a};
    one.claims_saturation = false;
    if (CheckConsistency(window, one).empty()) vetted.actions.push_back(a);
  }
  for (const std::string& fault : faults) vetted.evidence.push_back(Figure("withheld", 0, "", fault));
  return vetted;
}

Diagnosis DiagnoseEnsemble(const WindowSummary& ensemble, std::vector<StepVerdict> steps, size_t slowest,
                           const Diagnosis& slowest_diagnosis) {
  Diagnosis d;
  if (ensemble.requests < kMinRequests || slowest >= steps.size()) {
    d = Idle(ensemble);
    d.steps = std::move(steps);
    return d;
  }
  const StepVerdict& step = steps[slowest];
  d.bottleneck_class = slowest_diagnosis.bottleneck_class;
  d.slowest_step = step.model;
  d.summary = StrCat("the slowest step is '", step.model, "' (", Fixed(step.mean_latency_us / 1000.0, 1),
                     " ms of the pipeline's ", Fixed(ensemble.mean_latency_us / 1000.0, 1), " ms per request): ",
                     slowest_diagnosis.summary);
  for (const StepVerdict& s : steps) {
    d.evidence.push_back(Figure(StrCat("step ", s.model), s.mean_latency_us / 1000.0, "ms",
                                StrCat(s.requests, " requests, ", s.bottleneck_class)));
  }
  for (const Evidence& e : slowest_diagnosis.evidence) {
    d.evidence.push_back(Figure(StrCat(step.model, ".", e.name), e.value, e.unit, e.detail));
  }
  for (const Action& a : slowest_diagnosis.actions) {
    d.actions.push_back({StrCat("in '", step.model, "': ", a.action), a.expected_effect, ActionKind::kOther});
  }
  d.steps = std::move(steps);
  return d;
}

}  // namespace infera::diagnosis

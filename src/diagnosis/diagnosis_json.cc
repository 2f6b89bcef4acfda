#include "diagnosis/diagnosis_json.h"

#include <cmath>

#include "common/json_writer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::diagnosis {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(JsonWriter& w, std::string_view key) { WriteString(w, key); }

void Number(JsonWriter& w, double value) { w.Double(std::isfinite(value) ? value : 0.0); }

void Stage(JsonWriter& w, std::string_view name, const StageFigure& stage) {
  Key(w, name);
  w.StartObject();
  Key(w, "mean_us");
  Number(w, stage.mean_us);
  Key(w, "share");
  Number(w, stage.share);
  Key(w, "count");
  w.Uint64(stage.count);
  w.EndObject();
}

}  // namespace

std::string DiagnosisJson(std::string_view model, int64_t version, const WindowSummary& window,
                          const Diagnosis& diagnosis) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  Key(w, "model");
  WriteString(w, model);
  Key(w, "version");
  WriteString(w, std::to_string(version));
  Key(w, "window_seconds");
  Number(w, window.seconds);
  Key(w, "traffic_seconds");
  Number(w, window.traffic_seconds);
  Key(w, "requests");
  w.Uint64(window.requests);
  Key(w, "bottleneck");
  w.StartObject();
  Key(w, "class");
  WriteString(w, diagnosis.bottleneck_class);
  Key(w, "summary");
  WriteString(w, diagnosis.summary);
  w.EndObject();
  Key(w, "evidence");
  w.StartArray();
  for (const Evidence& e : diagnosis.evidence) {
    w.StartObject();
    Key(w, "name");
    WriteString(w, e.name);
    Key(w, "value");
    Number(w, e.value);
    Key(w, "unit");
    WriteString(w, e.unit);
    Key(w, "detail");
    WriteString(w, e.detail);
    w.EndObject();
  }
  w.EndArray();
  Key(w, "actions");
  w.StartArray();
  for (const Action& a : diagnosis.actions) {
    w.StartObject();
    Key(w, "action");
    WriteString(w, a.action);
    Key(w, "expected_effect");
    WriteString(w, a.expected_effect);
    w.EndObject();
  }
  w.EndArray();
  Key(w, "rate_per_second");
  Number(w, window.rate_per_second);
  Key(w, "mean_latency_us");
  Number(w, window.mean_latency_us);
  Key(w, "concurrency");
  Number(w, window.concurrency);
  Key(w, "stages");
  w.StartObject();
  Key(w, "server_us");
  Number(w, window.server_us);
  Stage(w, "decode", window.decode);
  Stage(w, "queue", window.queue);
  Stage(w, "compute_input", window.compute_input);
  Stage(w, "compute_infer", window.compute_infer);
  Stage(w, "compute_output", window.compute_output);
  Stage(w, "encode", window.encode);
  Stage(w, "write", window.write);
  Key(w, "compute_share");
  Number(w, window.compute_share);
  Key(w, "serialisation_share");
  Number(w, window.serialisation_share);
  w.EndObject();
  Key(w, "batch_sizes");
  w.StartObject();
  for (const auto& [size, executions] : window.batch_sizes) {
    Key(w, std::to_string(size));
    w.Uint64(executions);
  }
  w.EndObject();
  Key(w, "executions");
  w.Uint64(window.executions);
  Key(w, "mean_batch_size");
  Number(w, window.mean_batch_size);
  Key(w, "instances");
  w.StartObject();
  Key(w, "count");
  w.Uint64(window.instances);
  Key(w, "utilisation");
  Number(w, window.utilisation);
  Key(w, "busy_seconds");
  Number(w, window.busy_seconds);
  Key(w, "traffic_seconds");
  Number(w, window.traffic_seconds);
  w.EndObject();
  Key(w, "rejections");
  w.Uint64(window.failures.rejected);
  Key(w, "timeouts");
  w.Uint64(window.failures.timeout);
  Key(w, "failures");
  w.StartObject();
  Key(w, "bad_request");
  w.Uint64(window.failures.bad_request);
  Key(w, "rejected");
  w.Uint64(window.failures.rejected);
  Key(w, "timeout");
  w.Uint64(window.failures.timeout);
  Key(w, "cancelled");
  w.Uint64(window.failures.cancelled);
  Key(w, "backend_error");
  w.Uint64(window.failures.backend_error);
  w.EndObject();
  Key(w, "client");
  w.StartObject();
  Key(w, "write_failures");
  w.Uint64(window.write_failed);
  Key(w, "cancelled");
  w.Uint64(window.failures.cancelled);
  Key(w, "write_mean_us");
  Number(w, window.write.mean_us);
  Key(w, "write_share");
  Number(w, window.write.share);
  w.EndObject();
  if (window.llm) {
    const WindowSummary::Llm& llm = *window.llm;
    Key(w, "llm");
    w.StartObject();
    auto integer = [&](std::string_view key, int64_t value) {
      Key(w, key);
      w.Int64(value);
    };
    auto number = [&](std::string_view key, double value) {
      Key(w, key);
      Number(w, value);
    };
    integer("preemptions", static_cast<int64_t>(llm.preemptions));
    integer("finished", static_cast<int64_t>(llm.finished));
    number("tokens_per_second", llm.tokens_per_second);
    number("prompt_tokens_per_request", llm.prompt_tokens_per_request);
    number("output_tokens_per_request", llm.output_tokens_per_request);
    number("ttft_ms", llm.ttft_ms);
    number("ttft_p90_ms", llm.ttft_p90_ms);
    number("tpot_ms", llm.tpot_ms);
    number("tpot_p90_ms", llm.tpot_p90_ms);
    number("queue_ms", llm.queue_ms);
    number("prefill_ms", llm.prefill_ms);
    number("decode_ms", llm.decode_ms);
    number("e2e_ms", llm.e2e_ms);
    number("kv_cache_usage_peak", llm.kv_cache_usage_peak);
    number("kv_cache_usage_mean", llm.kv_cache_usage_mean);
    integer("num_running_peak", llm.num_running_peak);
    number("num_running_mean", llm.num_running_mean);
    integer("num_waiting_peak", llm.num_waiting_peak);
    number("num_waiting_mean", llm.num_waiting_mean);
    integer("max_num_seqs", llm.max_num_seqs);
    number("kv_cache_usage", llm.kv_cache_usage);
    integer("num_running", llm.num_running);
    integer("num_waiting", llm.num_waiting);
    w.EndObject();
  }
  if (!diagnosis.steps.empty()) {
    Key(w, "slowest_step");
    WriteString(w, diagnosis.slowest_step);
    Key(w, "steps");
    w.StartArray();
    for (const StepVerdict& step : diagnosis.steps) {
      w.StartObject();
      Key(w, "model");
      WriteString(w, step.model);
      Key(w, "version");
      WriteString(w, std::to_string(step.version));
      Key(w, "requests");
      w.Uint64(step.requests);
      Key(w, "mean_latency_us");
      Number(w, step.mean_latency_us);
      Key(w, "class");
      WriteString(w, step.bottleneck_class);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace infera::diagnosis

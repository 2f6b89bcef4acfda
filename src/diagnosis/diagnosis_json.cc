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
    Key(w, "llm");
    w.StartObject();
    Key(w, "preemptions");
    w.Uint64(window.llm->preemptions);
    Key(w, "tokens_per_second");
    Number(w, window.llm->tokens_per_second);
    Key(w, "kv_cache_usage");
    Number(w, window.llm->kv_cache_usage);
    Key(w, "num_running");
    w.Int64(window.llm->num_running);
    Key(w, "num_waiting");
    w.Int64(window.llm->num_waiting);
    Key(w, "max_num_seqs");
    w.Int64(window.llm->max_num_seqs);
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace infera::diagnosis

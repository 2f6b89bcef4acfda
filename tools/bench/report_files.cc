// FormatCsv / FormatJson / WriteTextFile: the machine-readable reports.
#include <cstdio>
#include <fstream>

#include "common/str_cat.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {
namespace {

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

std::string Num(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3f", value);
  return buffer;
}

void Key(JsonWriter& w, const char* key) { w.Key(key); }
void Str(JsonWriter& w, const std::string& s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Field(JsonWriter& w, const char* key, double v) {
  w.Key(key);
  w.Double(v);
}
void Field(JsonWriter& w, const char* key, int64_t v) {
  w.Key(key);
  w.Int64(v);
}
void Field(JsonWriter& w, const char* key, const std::string& v) {
  w.Key(key);
  Str(w, v);
}

void WriteLatency(JsonWriter& w, const char* key, const LatencySummary& s) {
  Key(w, key);
  w.StartObject();
  Field(w, "count", s.count);
  Field(w, "mean_us", s.mean_us);
  Field(w, "min_us", s.min_us);
  Field(w, "p50_us", s.p50_us);
  Field(w, "p90_us", s.p90_us);
  Field(w, "p95_us", s.p95_us);
  Field(w, "p99_us", s.p99_us);
  Field(w, "max_us", s.max_us);
  w.EndObject();
}

void WriteServer(JsonWriter& w, const ServerBreakdown& s) {
  Key(w, "server");
  w.StartObject();
  Field(w, "requests", s.requests);
  Field(w, "failures", s.failures);
  Field(w, "inferences", s.inferences);
  Field(w, "executions", s.executions);
  Field(w, "avg_batch_rows", s.avg_batch_rows);
  Field(w, "request_us", s.request_us);
  Field(w, "queue_us", s.queue_us);
  Field(w, "compute_input_us", s.compute_input_us);
  Field(w, "compute_infer_us", s.compute_infer_us);
  Field(w, "compute_output_us", s.compute_output_us);
  Field(w, "overhead_us", s.overhead_us);
  w.EndObject();
}

void WriteLevel(JsonWriter& w, const LevelResult& l) {
  w.StartObject();
  Field(w, "concurrency", int64_t{l.concurrency});
  Field(w, "request_rate", l.request_rate);
  if (!l.distribution.empty()) Field(w, "distribution", l.distribution);
  Key(w, "stable");
  w.Bool(l.stable);
  Field(w, "windows", int64_t{l.windows});
  Field(w, "duration_s", l.duration_s);
  Field(w, "sent", l.sent);
  Field(w, "ok", l.ok);
  Field(w, "errors", l.errors);
  Field(w, "dropped", l.dropped);
  Field(w, "throughput_per_s", l.throughput_rps);
  Field(w, "inferences_per_s", l.inferences_per_s);
  Field(w, "send_rate_per_s", l.send_rate);
  WriteLatency(w, "latency", l.latency);
  if (l.send_lag.count > 0) WriteLatency(w, "send_lag", l.send_lag);
  if (l.ttft.count > 0) {
    WriteLatency(w, "ttft", l.ttft);
    WriteLatency(w, "tpot", l.tpot);
    Field(w, "output_tokens", l.output_tokens);
    Field(w, "output_tokens_per_s", l.output_tokens_per_s);
  }
  Key(w, "error_counts");
  w.StartObject();
  for (const auto& [kind, count] : l.error_counts) {
    Key(w, kind.c_str());
    w.StartObject();
    Field(w, "count", count.count);
    Field(w, "example", count.example);
    w.EndObject();
  }
  w.EndObject();
  if (l.server) WriteServer(w, *l.server);
  Field(w, "client_cpu_pct", l.client_cpu_pct);
  Field(w, "client_cpu_us_per_request", l.client_cpu_us_per_request);
  Field(w, "foreign_cpu_pct", l.foreign_cpu_pct);
  if (l.server_cpu_pct) Field(w, "server_cpu_pct", *l.server_cpu_pct);
  if (l.server_cpu_us_per_request) Field(w, "server_cpu_us_per_request", *l.server_cpu_us_per_request);
  w.EndObject();
}

}  // namespace

std::string FormatCsv(const RunReport& r) {
  std::string out =
      "Concurrency,Request Rate,Inferences/Second,Requests/Second,Client Send Rate,"
      "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,Min latency,Max latency,"
      "Requests,Errors,Dropped,Stable,Server Request,Server Queue,Server Compute Input,"
      "Server Compute Infer,Server Compute Output,Server Overhead,Server Avg Batch,"
      "Client CPU %,Server CPU us/req,TTFT p50,TTFT p99,TPOT p50,TPOT p99,Output Tokens/Second\n";
  for (const LevelResult& l : r.levels) {
    const LatencySummary& s = l.latency;
    out += StrCat(l.concurrency, ",", Num(l.request_rate), ",", Num(l.inferences_per_s), ",",
                  Num(l.throughput_rps), ",", Num(l.send_rate), ",", Num(s.p50_us), ",", Num(s.p90_us),
                  ",", Num(s.p95_us), ",", Num(s.p99_us), ",", Num(s.mean_us), ",", Num(s.min_us), ",",
                  Num(s.max_us), ",", l.sent, ",", l.errors, ",", l.dropped, ",", l.stable ? 1 : 0);
    if (l.server) {
      const ServerBreakdown& b = *l.server;
      out += StrCat(",", Num(b.request_us), ",", Num(b.queue_us), ",", Num(b.compute_input_us), ",",
                    Num(b.compute_infer_us), ",", Num(b.compute_output_us), ",", Num(b.overhead_us), ",",
                    Num(b.avg_batch_rows));
    } else {
      out += ",,,,,,,";
    }
    out += StrCat(",", Num(l.client_cpu_pct), ",",
                  l.server_cpu_us_per_request ? Num(*l.server_cpu_us_per_request) : std::string());
    if (l.ttft.count > 0) {
      out += StrCat(",", Num(l.ttft.p50_us), ",", Num(l.ttft.p99_us), ",", Num(l.tpot.p50_us), ",",
                    Num(l.tpot.p99_us), ",", Num(l.output_tokens_per_s), "\n");
    } else {
      out += ",,,,,\n";
    }
  }
  return out;
}

std::string FormatJson(const RunReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 1);
  w.StartObject();
  Field(w, "tool", std::string("infera bench"));
  Field(w, "command_line", r.command_line);
  Field(w, "started_at", r.started_at);
  Field(w, "url", r.url);
  Field(w, "protocol", r.protocol);
  Key(w, "streaming");
  w.Bool(r.streaming);
  Field(w, "service_kind", r.service_kind);
  Field(w, "model", r.model);
  Field(w, "model_version", r.model_version);
  Field(w, "platform", r.platform);
  Field(w, "batch_size", r.batch_size);
  Field(w, "input_data", r.input_data);
  Field(w, "input_format", r.input_format);
  Field(w, "output_format", r.output_format);
  Field(w, "num_payloads", static_cast<int64_t>(r.num_payloads));
  Field(w, "client_threads", int64_t{r.client_threads});
  Key(w, "check");
  w.Bool(r.check);
  Field(w, "mode", r.mode);
  Field(w, "latency_metric", r.latency_metric);
  Key(w, "server_stats_available");
  w.Bool(r.server_stats_available);
  Key(w, "levels");
  w.StartArray();
  for (const LevelResult& l : r.levels) WriteLevel(w, l);
  w.EndArray();
  Key(w, "totals");
  w.StartObject();
  Field(w, "sent", r.total_sent);
  Field(w, "ok", r.total_ok);
  Field(w, "errors", r.total_errors);
  Field(w, "dropped", r.total_dropped);
  if (r.server_requests) Field(w, "server_requests", *r.server_requests);
  w.EndObject();
  Field(w, "stop_reason", r.stop_reason);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::PermissionDeniedError(StrCat("cannot write ", path));
  file << text;
  file.close();
  if (!file) return absl::DataLossError(StrCat("error writing ", path));
  return absl::OkStatus();
}

}  // namespace infera::bench

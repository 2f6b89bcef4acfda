// FormatTable / FormatLevelLine: the human-readable report. `infera bench` prints it
// in three parts so that it appears once: the title before the sweep, each level's row
// as the level finishes, the summary (server side, streaming, errors, totals) at the end.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/str_cat.h"
#include "tools/bench/report_writers.h"

namespace infera::bench {
namespace {

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

// Milliseconds with 3 significant-ish decimals: 0.187, 12.3, 1234.
std::string Ms(double us) {
  const double ms = us / 1000.0;
  return Fixed(ms, ms < 10 ? 3 : ms < 100 ? 2 : 1);
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string LoadLabel(const LevelResult& level) {
  return level.concurrency > 0 ? StrCat(level.concurrency) : Fixed(level.request_rate, level.request_rate < 10 ? 2 : 1);
}

}  // namespace

std::string FormatLevelLine(const RunReport& report, const LevelResult& l) {
  std::string line = StrCat(Pad(LoadLabel(l), 8), " ", Pad(Fixed(l.throughput_rps, 1), 10), " ",
                            Pad(Fixed(l.inferences_per_s, 1), 10));
  for (double us : {l.latency.p50_us, l.latency.p90_us, l.latency.p95_us, l.latency.p99_us,
                    l.latency.mean_us}) {
    line += " " + Pad(Ms(us), 8);
  }
  line += " " + Pad(StrCat(l.errors), 7) + " " + Pad(l.stable ? "yes" : "no", 6) + " " +
          Pad(Fixed(l.client_cpu_pct, 0) + "%", 10) + " " + Pad(Fixed(l.client_cpu_us_per_request, 1), 13);
  if (report.mode == "request_rate") {
    line += " " + Pad(Fixed(l.send_rate, 1), 9) + " " + Pad(Ms(l.send_lag.p99_us), 8);
  }
  return line;
}

std::string FormatLevelHeader(const RunReport& r) {
  std::string out = StrCat(Pad(r.mode == "concurrency" ? "conc" : "rate/s", 8), " ", Pad("req/s", 10), " ",
                           Pad("infer/s", 10), " ", Pad("p50", 8), " ", Pad("p90", 8), " ", Pad("p95", 8),
                           " ", Pad("p99", 8), " ", Pad("avg", 8), " ", Pad("errors", 7), " ",
                           Pad("stable", 6), " ", Pad("client cpu", 10), " ", Pad("client us/req", 13));
  if (r.mode == "request_rate") out += " " + Pad("sent/s", 9) + " " + Pad("lag p99", 8);
  return out;
}

std::string FormatTableTitle(const RunReport& r) {
  std::string out = StrCat("infera bench: model ", r.model, r.model_version.empty() ? "" : " v",
                           r.model_version, r.platform.empty() ? "" : StrCat(" (", r.platform, ")"),
                           " at ", r.url, ", ", r.protocol, r.streaming ? " streaming" : "", " ", r.service_kind, ", ", r.input_format,
                           " in / ", r.output_format, " out, batch ", r.batch_size, ", ",
                           r.num_payloads, " payloads (", r.input_data, ")", r.check ? ", checked" : "",
                           "\n");
  const std::string schedule = r.mode == "concurrency"            ? "closed loop (concurrency)"
                               : r.request_intervals_file.empty() ? "open loop (request rate)"
                                                                  : StrCat("open loop (request intervals from ",
                                                                           r.request_intervals_file, ")");
  out += StrCat(schedule,
                "; latency in ms", r.mode == "request_rate" ? " from each request's scheduled time" : "",
                "; stability on ", r.latency_metric, " latency\n\n");
  return out;
}

std::string FormatTableSummary(const RunReport& r) {
  std::string out;

  bool any_server = false;
  for (const LevelResult& l : r.levels) any_server |= l.server.has_value() || l.server_cpu_pct.has_value();
  if (any_server) {
    out += StrCat("\nserver side, per request (us)", r.server_stats_available ? "" : " (no statistics endpoint)",
                  "\n", Pad(r.mode == "concurrency" ? "conc" : "rate/s", 8), " ", Pad("server", 9), " ",
                  Pad("queue", 9), " ", Pad("input", 9), " ", Pad("infer", 9), " ", Pad("output", 9), " ",
                  Pad("overhead", 9), " ", Pad("batch", 6), " ", Pad("cpu us/req", 10), "\n");
    for (const LevelResult& l : r.levels) {
      std::string line = Pad(LoadLabel(l), 8);
      if (l.server) {
        const ServerBreakdown& s = *l.server;
        for (double us : {s.request_us, s.queue_us, s.compute_input_us, s.compute_infer_us,
                          s.compute_output_us, s.overhead_us}) {
          line += " " + Pad(Fixed(us, 1), 9);
        }
        line += " " + Pad(Fixed(s.avg_batch_rows, 2), 6);
      } else {
        line += std::string(7 * 10 - 3, ' ') + "-";
      }
      line += " " + Pad(l.server_cpu_us_per_request ? Fixed(*l.server_cpu_us_per_request, 1) : "-", 10);
      out += line + "\n";
    }
  }
  bool any_stream = false;
  for (const LevelResult& l : r.levels) any_stream |= l.ttft.count > 0;
  if (any_stream) {
    out += StrCat("\nstreaming (ms)\n", Pad(r.mode == "concurrency" ? "conc" : "rate/s", 8), " ",
                  Pad("TTFT p50", 9), " ", Pad("TTFT p99", 9), " ", Pad("TPOT p50", 9), " ", Pad("TPOT p99", 9),
                  " ", Pad("out tok/s", 10), " ", Pad("tok/req", 8), "\n");
    for (const LevelResult& l : r.levels) {
      out += StrCat(Pad(LoadLabel(l), 8), " ", Pad(Ms(l.ttft.p50_us), 9), " ", Pad(Ms(l.ttft.p99_us), 9), " ",
                    Pad(Ms(l.tpot.p50_us), 9), " ", Pad(Ms(l.tpot.p99_us), 9), " ",
                    Pad(Fixed(l.output_tokens_per_s, 1), 10), " ",
                    Pad(Fixed(l.ok ? static_cast<double>(l.output_tokens) / static_cast<double>(l.ok) : 0, 1), 8),
                    "\n");
    }
  }
  bool any_errors = false;
  for (const LevelResult& l : r.levels) any_errors |= !l.error_counts.empty();
  if (any_errors) {
    out += "\nerrors:\n";
    for (const LevelResult& l : r.levels) {
      for (const auto& [kind, count] : l.error_counts) {
        out += StrCat("  ", r.mode == "concurrency" ? "c=" : "rate=", LoadLabel(l), ": ", count.count,
                      " x ", kind, " (e.g. ", count.example, ")\n");
      }
    }
  }
  out += StrCat("\ntotal: ", r.total_sent, " sent = ", r.total_ok, " ok + ", r.total_errors, " errors",
                r.total_dropped ? StrCat(" (", r.total_dropped, " due but never sent)") : "",
                r.server_requests ? StrCat("; the server counted ", *r.server_requests) : "", "\n");
  double foreign = 0;
  for (const LevelResult& l : r.levels) foreign = std::max(foreign, l.foreign_cpu_pct);
  if (foreign >= 10) {
    out += StrCat("note: other processes used up to ", Fixed(foreign, 0),
                  " % of the machine during the measurements (figures are noisy)\n");
  }
  if (!r.stop_reason.empty()) out += StrCat("stopped early: ", r.stop_reason, "\n");
  return out;
}

std::string FormatTable(const RunReport& r) {
  std::string out = FormatTableTitle(r) + FormatLevelHeader(r) + "\n";
  for (const LevelResult& l : r.levels) out += FormatLevelLine(r, l) + "\n";
  return out + FormatTableSummary(r);
}

}  // namespace infera::bench

#include "tools/diagnose/diagnosis_table.h"

#include <cstdio>
#include <sstream>

#include "common/json_reader.h"
#include "common/status.h"
#include "rapidjson/document.h"

namespace infera::diagnose {
namespace {

std::string Fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}

double NumberAt(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return 0;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsNumber() ? it->value.GetDouble() : 0;
}

std::string StringAt(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : "";
}

const rapidjson::Value& MemberAt(const rapidjson::Value& object, const char* key) {
  static const rapidjson::Value kNull;
  if (!object.IsObject()) return kNull;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() ? it->value : kNull;
}

// `text` padded to `width`, and at least one space after it.
std::string Pad(std::string text, size_t width) {
  text.append(text.size() < width ? width - text.size() : 1, ' ');
  return text;
}
}  // namespace

absl::StatusOr<std::string> RenderDiagnosisTable(const std::string& json) {
  rapidjson::Document doc;
  RETURN_IF_ERROR(ReadJson(json, "diagnosis", doc));
  const rapidjson::Value& bottleneck = MemberAt(doc, "bottleneck");
  if (!doc.IsObject() || !bottleneck.IsObject()) {
    return absl::InvalidArgumentError("the answer is not a diagnosis (no \"bottleneck\" object)");
  }
  std::ostringstream out;
  out << "model " << StringAt(doc, "model") << " version " << StringAt(doc, "version") << ": last "
      << Fixed(NumberAt(doc, "window_seconds"), 1) << " s (" << Fixed(NumberAt(doc, "traffic_seconds"), 1)
      << " s with traffic), " << Fixed(NumberAt(doc, "requests"), 0) << " requests ("
      << Fixed(NumberAt(doc, "rate_per_second"), 1) << " req/s while traffic ran, concurrency "
      << Fixed(NumberAt(doc, "concurrency"), 2) << ")\n\n";
  out << "BOTTLENECK  " << StringAt(bottleneck, "class") << "\n  " << StringAt(bottleneck, "summary") << "\n";
  const rapidjson::Value& evidence = MemberAt(doc, "evidence");
  if (evidence.IsArray() && !evidence.Empty()) {
    out << "\nEVIDENCE\n";
    for (const auto& e : evidence.GetArray()) {
      const std::string unit = StringAt(e, "unit");
      const double value = NumberAt(e, "value");
      const std::string shown = unit == "ratio" ? Fixed(value * 100, 0) + " %" : Fixed(value, 1) + " " + unit;
      out << "  " << Pad(StringAt(e, "name"), 26) << Pad(shown, 16) << StringAt(e, "detail") << "\n";
    }
  }
  const rapidjson::Value& actions = MemberAt(doc, "actions");
  if (actions.IsArray() && !actions.Empty()) {
    out << "\nACTIONS\n";
    int n = 0;
    for (const auto& a : actions.GetArray()) {
      out << "  " << ++n << ". " << StringAt(a, "action") << "\n     -> " << StringAt(a, "expected_effect") << "\n";
    }
  }
  const rapidjson::Value& stages = MemberAt(doc, "stages");
  const rapidjson::Value& llm = MemberAt(doc, "llm");
  out << "\nSTAGES (mean per request)          us   share\n";
  if (llm.IsObject()) out << "  (an LLM: queue = the engine's wait for a batch slot, compute_infer = its generation)\n";
  for (const char* stage : {"decode", "queue", "compute_input", "compute_infer", "compute_output", "encode",
                            "write"}) {
    const rapidjson::Value& s = MemberAt(stages, stage);
    std::string us = Fixed(NumberAt(s, "mean_us"), 1);
    out << "  " << Pad(stage, 24) << std::string(us.size() < 14 ? 14 - us.size() : 0, ' ') << us << "  "
        << Fixed(NumberAt(s, "share") * 100, 0) << " %\n";
  }
  const std::string server_us = Fixed(NumberAt(stages, "server_us"), 1);
  out << "  " << Pad("server time", 24) << std::string(server_us.size() < 14 ? 14 - server_us.size() : 0, ' ')
      << server_us << "\n";
  out << "\n";
  const rapidjson::Value& steps = MemberAt(doc, "steps");
  const bool ensemble = steps.IsArray() && !steps.Empty();
  // An LLM's engine batches sequences itself, past the instances; an ensemble has none.
  if (!llm.IsObject() && !ensemble) {
    out << "BATCH SIZES ";
    const rapidjson::Value& sizes = MemberAt(doc, "batch_sizes");
    if (sizes.IsObject()) {
      for (const auto& m : sizes.GetObject()) {
        if (m.value.IsNumber()) out << " " << m.name.GetString() << ": " << Fixed(m.value.GetDouble(), 0);
      }
    }
    out << "  (mean " << Fixed(NumberAt(doc, "mean_batch_size"), 2) << ")\n";
    const rapidjson::Value& instances = MemberAt(doc, "instances");
    out << "INSTANCES    " << Fixed(NumberAt(instances, "count"), 0) << ", utilisation "
        << Fixed(NumberAt(instances, "utilisation") * 100, 0) << " % over the seconds with traffic\n";
  }
  const rapidjson::Value& client = MemberAt(doc, "client");
  out << "FAILURES     rejected " << Fixed(NumberAt(doc, "rejections"), 0) << ", timeouts "
      << Fixed(NumberAt(doc, "timeouts"), 0) << ", cancelled " << Fixed(NumberAt(client, "cancelled"), 0)
      << ", write failures " << Fixed(NumberAt(client, "write_failures"), 0) << "\n";
  if (llm.IsObject()) {
    out << "LLM          TTFT " << Fixed(NumberAt(llm, "ttft_ms"), 1) << " ms (p90 "
        << Fixed(NumberAt(llm, "ttft_p90_ms"), 1) << "), TPOT " << Fixed(NumberAt(llm, "tpot_ms"), 1) << " ms (p90 "
        << Fixed(NumberAt(llm, "tpot_p90_ms"), 1) << "), " << Fixed(NumberAt(llm, "tokens_per_second"), 1)
        << " tokens/s\n             KV cache peak " << Fixed(NumberAt(llm, "kv_cache_usage_peak") * 100, 0)
        << " %, running peak " << Fixed(NumberAt(llm, "num_running_peak"), 0) << " of "
        << Fixed(NumberAt(llm, "max_num_seqs"), 0) << ", waiting peak " << Fixed(NumberAt(llm, "num_waiting_peak"), 0)
        << ", preemptions " << Fixed(NumberAt(llm, "preemptions"), 0) << "\n";
  }
  if (ensemble) {
    out << "STEPS        (slowest: " << StringAt(doc, "slowest_step") << ")\n";
    for (const auto& step : steps.GetArray()) {
      out << "  " << Pad(StringAt(step, "model"), 24) << Fixed(NumberAt(step, "mean_latency_us") / 1000.0, 2)
          << " ms  " << Fixed(NumberAt(step, "requests"), 0) << " requests  " << StringAt(step, "class") << "\n";
    }
  }
  return out.str();
}
}  // namespace infera::diagnose

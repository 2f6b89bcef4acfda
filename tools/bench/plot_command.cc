#include "tools/bench/plot_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "common/str_cat.h"
#include "rapidjson/document.h"

namespace infera::bench {

absl::StatusOr<std::vector<PlotSeries>> SeriesFromReportJson(const std::string& name, std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("levels") || !doc["levels"].IsArray()) {
    return absl::InvalidArgumentError(StrCat(name, ": not an infera bench JSON report"));
  }
  std::vector<PlotSeries> series = {{name + " P50", {}}, {name + " P99", {}}};
  for (const auto& level : doc["levels"].GetArray()) {
    if (!level.IsObject() || !level.HasMember("throughput_per_s") || !level.HasMember("latency") ||
        !level["latency"].IsObject() || !level["latency"].HasMember("p50_us") ||
        !level["latency"].HasMember("p99_us") || !level["throughput_per_s"].IsNumber()) {
      return absl::InvalidArgumentError(StrCat(name, ": a level lacks throughput_per_s or latency"));
    }
    const double x = level["throughput_per_s"].GetDouble();
    const std::string label = level.HasMember("concurrency") && level["concurrency"].GetInt() > 0
                                  ? StrCat("c=", level["concurrency"].GetInt())
                                  : StrCat(level["request_rate"].GetDouble(), "/s");
    series[0].points.push_back({x, level["latency"]["p50_us"].GetDouble() / 1000, label});
    series[1].points.push_back({x, level["latency"]["p99_us"].GetDouble() / 1000, label});
  }
  return series;
}

int RunPlotCommand(const std::vector<std::string>& args) {
  std::string out, title = "latency vs throughput";
  std::vector<PlotSeries> series;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if ((arg == "-o" || arg == "--title") && i + 1 < args.size()) {
      (arg == "-o" ? out : title) = args[++i];
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "infera bench plot: expected NAME=REPORT.json, got '" << arg << "'\n"
                << "Usage: infera bench plot -o OUT.svg [--title T] NAME=REPORT.json...\n";
      return 2;
    }
    std::ifstream file(arg.substr(eq + 1));
    std::stringstream text;
    text << file.rdbuf();
    auto more = SeriesFromReportJson(arg.substr(0, eq), file ? text.str() : std::string());
    if (!more.ok()) {
      std::cerr << "infera bench plot: " << more.status().message() << "\n";
      return 2;
    }
    series.insert(series.end(), more->begin(), more->end());
  }
  if (out.empty() || series.empty()) {
    std::cerr << "Usage: infera bench plot -o OUT.svg [--title T] NAME=REPORT.json...\n";
    return 2;
  }
  if (absl::Status s = WriteTextFile(out, FormatSvgPlot(series, title)); !s.ok()) {
    std::cerr << "infera bench plot: " << s.message() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace infera::bench

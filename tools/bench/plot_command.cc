#include "tools/bench/plot_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/string_view.h"
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

absl::StatusOr<std::pair<std::string, std::string>> SplitNamedReport(
    std::string_view arg, const std::function<bool(const std::string&)>& readable) {
  bool has_name = false;
  for (size_t eq = arg.find('='); eq != std::string_view::npos; eq = arg.find('=', eq + 1)) {
    if (eq == 0) continue;  // no NAME before this '='
    has_name = true;
    std::string path(arg.substr(eq + 1));
    if (!path.empty() && readable(path)) return std::make_pair(std::string(arg.substr(0, eq)), path);
  }
  if (!has_name) return absl::InvalidArgumentError(StrCat("expected NAME=REPORT.json, got '", arg, "'"));
  return absl::InvalidArgumentError(StrCat("'", arg, "': no REPORT.json after a '=' can be read"));
}

namespace {

int PlotUsageError(absl::string_view problem) {  // absl::Status::message() is absl's view here
  std::cerr << "infera bench plot: " << problem << "\nsee 'infera bench --help'\n";
  return 2;
}

}  // namespace

int RunPlotCommand(const std::vector<std::string>& args) {
  std::string out, title = "latency vs throughput";
  std::vector<PlotSeries> series;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if ((arg == "-o" || arg == "--title") && i + 1 < args.size()) {
      (arg == "-o" ? out : title) = args[++i];
      continue;
    }
    auto named = SplitNamedReport(arg, [](const std::string& path) { return std::ifstream(path).good(); });
    if (!named.ok()) return PlotUsageError(named.status().message());
    std::ifstream file(named->second);
    std::stringstream text;
    text << file.rdbuf();
    auto more = SeriesFromReportJson(named->first, text.str());
    if (!more.ok()) return PlotUsageError(more.status().message());
    series.insert(series.end(), more->begin(), more->end());
  }
  if (out.empty()) return PlotUsageError("-o OUT.svg is required");
  if (series.empty()) return PlotUsageError("at least one NAME=REPORT.json is required");
  if (absl::Status s = WriteTextFile(out, FormatSvgPlot(series, title)); !s.ok()) {
    return PlotUsageError(s.message());
  }
  return 0;
}

}  // namespace infera::bench

#include "tools/analyze/analyze_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "common/str_cat.h"
#include "tools/analyze/analyze_options.h"
#include "tools/analyze/analyze_report.h"
#include "tools/analyze/config_edit.h"
#include "tools/analyze/config_render.h"
#include "tools/analyze/dimensions.h"
#include "tools/analyze/point_measure.h"
#include "tools/analyze/search.h"
#include "tools/analyze/server_process.h"
#include "tools/bench/report_writers.h"

namespace infera::analyze {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

int Fail(const std::string& message, int code) {
  std::cerr << "infera analyze: " << message << "\n";
  return code;
}

std::string SelfExecutable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("/proc/self/exe") : path.string();
}

// Restores the previous handlers of SIGINT and SIGTERM on scope exit.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction action {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// One line per measured point: medians, spread, verdict.
std::string Summary(const Objective& objective, const PointResult& r) {
  if (!r.loaded) return r.error;
  char line[256];
  std::snprintf(line, sizeof(line), "%.1f req/s, p50 %.2f ms, p99 %.2f ms (c=%d), median of %d, spread %.1f %%%s, objective %s",
                r.throughput_rps, r.p50_ms, r.p99_ms, r.concurrency, r.repeats, r.SpreadPct(objective),
                r.SpreadPct(objective) > kLargeSpreadPct ? " (large)" : "", VerdictName(r.verdict));
  return line;
}

std::vector<Dimension> SelectedDimensions(const AnalyzeOptions& o) {
  std::vector<Dimension> selected;
  for (const Dimension& d : Dimensions()) {
    if (o.dimensions.empty() ||
        std::find(o.dimensions.begin(), o.dimensions.end(), d.name) != o.dimensions.end()) {
      selected.push_back(d);
    }
  }
  return selected;
}

}  // namespace

int RunAnalyzeCommand(const std::vector<std::string>& args) {
  auto options = ParseAnalyzeOptions(args);
  if (!options.ok()) return Fail(StrCat(options.status().message(), "\nsee 'infera analyze --help'"), 2);
  if (options->help) {
    std::cout << AnalyzeHelpText();
    return 0;
  }
  const AnalyzeOptions& o = *options;
  const std::filesystem::path model_dir = std::filesystem::path(o.repository) / o.model;
  auto base = ReadBaseConfig(model_dir);
  if (!base.ok()) return Fail(StrCat(base.status().message()), 2);
  auto base_text = ReadBaseConfigText(model_dir);
  if (!base_text.ok()) return Fail(StrCat(base_text.status().message()), 2);
  const ApplyRules rules{o.allow_api_change};

  SearchContext context;
  context.cores = o.max_instances > 0 ? o.max_instances
                                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  context.model_max_batch_size = base->max_batch_size();
  context.platform = base->platform().empty() ? base->backend() : base->platform();
  context.max_queue_delay_us = o.max_queue_delay_us;
  context.precisions = o.precisions;
  const std::vector<Dimension> dimensions = SelectedDimensions(o);

  std::error_code error;
  std::filesystem::create_directories(o.out, error);
  if (error) return Fail(StrCat("cannot create --out ", o.out, ": ", error.message()), 2);
  const std::string binary = o.binary.empty() ? SelfExecutable() : o.binary;
  const std::string log_path = (std::filesystem::path(o.out) / "server.log").string();

  g_stop.store(false);
  SignalScope signals;
  std::cout << "infera analyze: starting the server (" << binary << ", log " << log_path << ")\n" << std::flush;
  auto server = ServerProcess::Start(binary, o.repository, log_path, {}, std::chrono::seconds(60));
  if (!server.ok()) return Fail(StrCat(server.status().message()), 1);

  MeasureSettings settings;
  settings.port = (*server)->port();
  settings.model = o.model;
  settings.objective = o.objective;
  settings.time_per_point_s = o.time_per_point_s;
  settings.repeats = o.repeats;
  settings.concurrency = o.concurrency;
  settings.server_pid = (*server)->pid();

  AnalyzeRun run;
  run.model = o.model;
  run.platform = context.platform;
  run.objective = o.objective;
  run.cores = context.cores;
  run.time_per_point_s = o.time_per_point_s;
  run.repeats = o.repeats;
  run.allow_api_change = o.allow_api_change;
  run.original_max_batch_size = base->max_batch_size();

  auto server_died = [&]() -> bool {
    if (!run.error.empty()) return true;
    if (auto how = (*server)->Exited()) {
      run.error = StrCat("the server process died (", *how, "); its log ends:\n", (*server)->LogTail(1500));
      return true;
    }
    return false;
  };
  int counter = 0;
  const MeasureFn measure = [&](const ConfigPoint& point) {
    PointResult result;
    auto config = ApplyPoint(*base, point, dimensions, rules);
    if (!config.ok()) {
      result.error = std::string(config.status().message());
      return result;
    }
    auto body = LoadOverrideBody(*config);
    if (!body.ok()) {
      result.error = std::string(body.status().message());
      return result;
    }
    const std::string label = DescribePoint(point, dimensions);
    const int n = ++counter;
    std::cout << "[" << n << "] " << label << ": measuring\n" << std::flush;
    result = MeasurePoint(settings, *body, g_stop);
    std::cout << "[" << n << "] -> " << Summary(o.objective, result) << "\n";
    std::cout << std::flush;
    if (!result.loaded && result.error.find("refused") != std::string::npos) {
      // A refused connection is most often the server going away: give its exit a moment
      // to be seen, so the run ends naming the death instead of measuring on without it.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!(*server)->Exited() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    server_died();
    return result;
  };
  const StopFn stop = [&] { return g_stop.load() || server_died(); };

  const auto started = std::chrono::steady_clock::now();
  if (o.baseline) {
    auto body = LoadOverrideBody(*base);
    if (!body.ok()) return Fail(std::string(body.status().message()), 1);
    std::cout << "[0] the model's own config.pbtxt: measuring\n" << std::flush;
    run.baseline = MeasurePoint(settings, *body, g_stop);
    std::cout << "[0] -> " << Summary(o.objective, *run.baseline) << "\n" << std::flush;
  }
  run.search = RunSearch(dimensions, context, o.objective, SearchOptions{o.min_gain_pct, o.max_points, o.patience}, measure, stop);
  run.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (g_stop.load()) run.search.stop_reason = "interrupted";
  server_died();
  server->reset();  // stop the child before writing (Ctrl-C: as soon as possible)

  // The best point's config: the model's own text with the changed fields edited.
  const int best = run.search.best;
  std::optional<std::string> config_text;
  if (best >= 0 && run.search.measured[best].result.loaded) {
    const MeasuredPoint& m = run.search.measured[best];
    auto config = ApplyPoint(*base, m.point, dimensions, rules);
    if (!config.ok()) return Fail(std::string(config.status().message()), 1);
    run.changes = ConfigChanges(*base, *config);
    run.have_best_config = true;
    auto text = RenderEditedConfig(
        *base_text, *base, *config,
        StrCat("infera analyze: ", m.label, " for ", o.objective.ToString(),
               m.result.met ? "" : m.result.verdict == Verdict::kWithinNoise ? " (objective within noise)"
                                                                             : " (objective not met: best effort)"));
    if (!text.ok()) return Fail(std::string(text.status().message()), 1);
    config_text = *text;
  }

  const std::filesystem::path out(o.out);
  const std::string report = FormatReport(run);
  std::cout << "\n" << report << std::flush;
  if (absl::Status s = bench::WriteTextFile((out / "report.md").string(), report); !s.ok()) {
    return Fail(std::string(s.message()), 1);
  }
  if (absl::Status s = bench::WriteTextFile((out / "latency_throughput.svg").string(), FormatPlot(run)); !s.ok()) {
    return Fail(std::string(s.message()), 1);
  }
  if (config_text) {
    if (absl::Status s = bench::WriteTextFile((out / "config.pbtxt").string(), *config_text); !s.ok()) {
      return Fail(std::string(s.message()), 1);
    }
    std::cout << "wrote " << (out / "config.pbtxt").string() << ", " << (out / "report.md").string() << ", "
              << (out / "latency_throughput.svg").string() << "\n";
  }
  if (!run.error.empty()) return Fail(run.error, 1);
  if (g_stop.load()) return Fail("interrupted; the partial report is written", 130);
  if (best < 0 || !run.search.measured[best].result.loaded) return Fail("no configuration could be measured", 1);
  return 0;
}

}  // namespace infera::analyze

// torch_backend_bench: in-process latency of a model through the pytorch backend — the
// exact code path the server runs (ModelInstance::Execute), without transport or
// scheduler. Used for the figures in docs/torch_backend.md.
//
//   torch_backend_bench --repo DIR --model NAME [--batch 1] [--iters 50] [--warmup 5]
//       [--optimize true|false] [--threads 1] [--instances 1] [--share true|false]
//       [--repeats 3] [--max_foreign_cpu 100]
//
// Each of --instances instances runs on its own thread, all at once, --iters timed
// calls each after --warmup untimed ones; that is one repeat. Inputs are seeded
// pseudo-random values (integer inputs in [0, 1000), valid ids for the demo models).
//
// The machine may be shared (other builds): each repeat measures the CPU time used by
// other processes meanwhile (/proc/stat minus our own getrusage), and a repeat whose
// foreign load exceeds --max_foreign_cpu percent of the machine is retried (up to 20
// times, 2 s apart). Prints one line:
//   model=.. batch=.. optimize=.. threads=.. instances=.. share=.. median_ms=..
//   (repeats: ..) p90_ms=.. items_per_s=.. foreign_cpu_pct=.. first_call_ms=.. load_s=..
//   rss_mb=..
// median_ms is the median over repeats of each repeat's median call latency (all
// instances' calls pooled); items_per_s sums the instances' throughputs.
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/torch/torch_backend.h"
#include "backend/torch/torch_options.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using Clock = std::chrono::steady_clock;

double RssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

// Busy CPU seconds of the whole machine (all processes) since boot.
double MachineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double OwnCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

struct RepeatResult {
  double median_ms = 0, p90_ms = 0, items_per_s = 0, foreign_cpu_pct = 0;
};

// One repeat: every instance on its own thread, `warmup` + `iters` calls each.
RepeatResult RunRepeat(std::vector<std::unique_ptr<ModelInstance>>& instances,
                       const std::vector<Tensor>& inputs, int batch, int warmup, int iters) {
  const int n = static_cast<int>(instances.size());
  std::vector<std::vector<double>> latencies(n);
  std::vector<std::thread> workers;
  const double busy0 = MachineBusySeconds(), own0 = OwnCpuSeconds();
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    workers.emplace_back([&, i] {
      for (int call = 0; call < warmup + iters; ++call) {
        const auto t0 = Clock::now();
        auto outputs = instances[i]->Execute(inputs);
        if (!outputs.ok()) {
          std::cerr << outputs.status() << "\n";
          std::exit(1);
        }
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (call >= warmup) latencies[i].push_back(ms);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double foreign = (MachineBusySeconds() - busy0) - (OwnCpuSeconds() - own0);
  RepeatResult result;
  result.foreign_cpu_pct =
      std::max(0.0, 100.0 * foreign / (wall * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN))));
  std::vector<double> all;
  for (const auto& per_instance : latencies) {
    all.insert(all.end(), per_instance.begin(), per_instance.end());
    double busy_ms = 0;
    for (double ms : per_instance) busy_ms += ms;
    result.items_per_s += batch * static_cast<double>(per_instance.size()) / (busy_ms / 1e3);
  }
  std::sort(all.begin(), all.end());
  result.median_ms = all[all.size() / 2];
  result.p90_ms = all[all.size() * 9 / 10];
  return result;
}

// Seeded values for one input of `batch` rows.
Tensor MakeInput(const inference::ModelInput& config, int64_t batch, bool batched,
                 uint64_t* seed) {
  Tensor tensor;
  tensor.name = config.name();
  tensor.dtype = FromConfigDataType(config.data_type());
  if (batched) tensor.shape.push_back(batch);
  for (int64_t dim : config.dims()) tensor.shape.push_back(dim < 0 ? 16 : dim);
  const int64_t count = ElementCount(tensor.shape).value_or(0);
  const size_t element = DataTypeByteSize(tensor.dtype);
  uint8_t* out;
  tensor.data = Buffer::Allocate(count * element, &out);
  for (int64_t i = 0; i < count; ++i) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t bits = static_cast<uint32_t>(*seed >> 33);
    if (tensor.dtype == DataType::kFp32) {
      const float value = static_cast<float>(bits % 20000) / 10000.0f - 1.0f;
      std::memcpy(out + i * element, &value, element);
    } else {
      const int64_t value = bits % 1000;
      std::memcpy(out + i * element, &value, element);  // little-endian: low bytes first
    }
  }
  return tensor;
}

int Main(std::map<std::string, std::string> flags) {
  const std::string repo = flags["repo"], model = flags["model"];
  if (repo.empty() || model.empty()) {
    std::cerr << "usage: torch_backend_bench --repo DIR --model NAME [--batch N] [--iters N] "
                 "[--warmup N] [--optimize true|false] [--threads N] [--instances N] "
                 "[--share true|false]\n";
    return 2;
  }
  auto flag = [&](const char* name, const char* fallback) {
    return flags.count(name) ? flags[name] : std::string(fallback);
  };
  const int batch = std::stoi(flag("batch", "1")), iters = std::stoi(flag("iters", "50"));
  const int warmup = std::stoi(flag("warmup", "5")), threads = std::stoi(flag("threads", "1"));
  const int num_instances = std::stoi(flag("instances", "1"));
  const std::string optimize = flag("optimize", "true"), share = flag("share", "true");

  std::ifstream file(repo + "/" + model + "/config.pbtxt");
  std::stringstream text;
  text << file.rdbuf();
  inference::ModelConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &config)) {
    std::cerr << "cannot parse " << repo << "/" << model << "/config.pbtxt\n";
    return 1;
  }
  (*config.mutable_parameters())["OPTIMIZE_FOR_INFERENCE"].set_string_value(optimize);
  (*config.mutable_parameters())["ENABLE_WEIGHT_SHARING"].set_string_value(share);
  std::unique_ptr<Backend> backend = CreateTorchBackend();
  const double rss_before = RssMb();
  const auto load_start = Clock::now();
  auto loaded = backend->Load({&config, 1, repo + "/" + model, repo + "/" + model + "/1"});
  if (!loaded.ok()) {
    std::cerr << loaded.status() << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<ModelInstance>> instances;
  for (int i = 0; i < num_instances; ++i) {
    auto instance = (*loaded)->CreateInstance({i, model + "_" + std::to_string(i), threads});
    if (!instance.ok()) {
      std::cerr << instance.status() << "\n";
      return 1;
    }
    instances.push_back(*std::move(instance));
  }
  const double load_s = std::chrono::duration<double>(Clock::now() - load_start).count();

  uint64_t seed = 42;
  std::vector<Tensor> inputs;
  for (const auto& input : config.input()) {
    inputs.push_back(MakeInput(input, batch, config.max_batch_size() > 0, &seed));
  }
  // The first call includes the TorchScript profiling executor's profiling run.
  const auto first_start = Clock::now();
  if (auto first = instances[0]->Execute(inputs); !first.ok()) {
    std::cerr << first.status() << "\n";
    return 1;
  }
  const double first_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - first_start).count();
  const int repeats = std::stoi(flag("repeats", "3"));
  const double max_foreign = std::stod(flag("max_foreign_cpu", "100"));
  std::vector<RepeatResult> results;
  for (int r = 0; r < repeats; ++r) {
    RepeatResult result;
    for (int attempt = 0; attempt < 20; ++attempt) {
      result = RunRepeat(instances, inputs, batch, warmup, iters);
      if (result.foreign_cpu_pct <= max_foreign) break;
      std::cerr << "repeat " << r << ": " << result.foreign_cpu_pct
                << "% foreign CPU load, retrying\n";
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    results.push_back(result);
  }
  std::vector<std::string> medians;
  for (const RepeatResult& result : results) medians.push_back(std::to_string(result.median_ms));
  std::sort(results.begin(), results.end(),
            [](const RepeatResult& a, const RepeatResult& b) { return a.median_ms < b.median_ms; });
  const RepeatResult& mid = results[results.size() / 2];
  double foreign = 0;
  for (const RepeatResult& result : results) foreign = std::max(foreign, result.foreign_cpu_pct);
  std::printf("model=%s batch=%d optimize=%s threads=%d instances=%d share=%s median_ms=%.3f "
              "(repeats:",
              model.c_str(), batch, optimize.c_str(), threads, num_instances, share.c_str(),
              mid.median_ms);
  for (const std::string& median : medians) std::printf(" %.6s", median.c_str());
  std::printf(") p90_ms=%.3f items_per_s=%.1f foreign_cpu_pct=%.0f first_call_ms=%.1f "
              "load_s=%.2f rss_mb=%.0f (+%.0f for the model)\n",
              mid.p90_ms, mid.items_per_s, foreign, first_ms, load_s, RssMb(),
              RssMb() - rss_before);
  return 0;
}

}  // namespace
}  // namespace infera

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key.rfind("--", 0) == 0) key = key.substr(2);
    flags[key] = argv[i + 1];
  }
  return infera::Main(std::move(flags));
}

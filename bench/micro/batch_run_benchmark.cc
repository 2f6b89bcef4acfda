// What one dynamic batch costs through a model version, end to end in process
// (docs/scheduling.md, "Batch isolation"): validate and enqueue N requests, a worker
// forms the batch, ModelVersion::RunBatch gathers, executes (the built-in identity
// backend: a copy), checks and splits the outputs, and completes each callback.
// Run before and after a change to RunBatch to see what the happy path costs.
//   build/bench/micro/batch_run_benchmark --benchmark_repetitions=5
// The requests are enqueued back to back from one thread while the worker waits for
// the batch, so the figure includes the hand-off (one wake-up per batch since issue 18,
// docs/scheduling.md "Batch gather and scatter"); `allocs/request` counts operator new
// calls in the whole process per request (building the request included).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "absl/synchronization/mutex.h"
#include "backend/builtin/builtin_backends.h"
#include "common/str_cat.h"
#include "google/protobuf/text_format.h"
#include "manager/model_version.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// Counts every allocation of the process (for allocs/request).
void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// gcc cannot see that these pair with the operator new above.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace infera {
namespace {

// N requests of one FP32 [1, 64] row each; the batch runs the moment the N-th arrives
// (preferred_batch_size N, a delay long enough that nothing runs before).
void BM_Batch(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto config = std::make_shared<inference::ModelConfig>();
  const std::string text = StrCat(R"pb(
    name: "id" backend: "identity" max_batch_size: )pb", std::max(n, 8), R"pb(
    input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 64 ] } ]
    output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 64 ] } ]
    instance_group [ { count: 1 kind: KIND_CPU } ]
    dynamic_batching { max_queue_delay_microseconds: 10000000 preferred_batch_size: [ )pb",
                                  n, " ] }");
  if (!google::protobuf::TextFormat::ParseFromString(text, config.get())) {
    state.SkipWithError("bad config");
    return;
  }
  std::unique_ptr<Backend> backend = CreateIdentityBackend();
  ModelVersion::Options options;
  options.config = config;
  options.version = 1;
  options.model_dir = std::filesystem::temp_directory_path();
  options.backend = backend.get();
  auto version = ModelVersion::Load(std::move(options));
  if (!version.ok()) {
    state.SkipWithError(std::string(version.status().message()).c_str());
    return;
  }
  const std::vector<float> row(64, 1.5f);
  absl::Mutex mu;
  int answered = 0;
  bool failed = false;
  const uint64_t allocations_before = g_allocations.load();
  for (auto _ : state) {
    {
      absl::MutexLock lock(&mu);
      answered = 0;
    }
    for (int i = 0; i < n; ++i) {
      InferRequest request;
      request.model_name = "id";
      request.arrival_time = std::chrono::steady_clock::now();
      request.inputs.push_back({"INPUT0", DataType::kFp32, {1, 64}, Buffer::Copy(row.data(), row.size() * 4)});
      (*version)->Infer(std::move(request), [&](absl::StatusOr<InferResponse> result, ResponseDelivery) {
        absl::MutexLock lock(&mu);
        failed |= !result.ok();
        ++answered;
      });
    }
    absl::MutexLock lock(&mu);
    auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return answered == n; };
    mu.Await(absl::Condition(&all));
  }
  if (failed) state.SkipWithError("a request failed");
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["allocs/request"] =
      static_cast<double>(g_allocations.load() - allocations_before) / (state.iterations() * n);
  (*version)->Shutdown();
}
BENCHMARK(BM_Batch)->Arg(1)->Arg(8)->Arg(64)->ArgName("requests")->UseRealTime();

}  // namespace
}  // namespace infera

BENCHMARK_MAIN();

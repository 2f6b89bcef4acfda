// block_matmul_bench: BlockMatmul (src/quant) on the 1 B-class shapes, per GGUF type, and
// PackedMatmul int8/int4 (src/llm) on the same shapes, for docs/benchmarks.md.
//
//   block_matmul_bench [--types Q8_0,Q4_0,...] [--batches 1,8] [--threads 1,2] [--runs 5]
//                      [--shapes 2048x2048,8192x2048,2048x8192,128256x2048] [--arena-mib 768]
//                      [--kernel amx|avx512vnni|avx2|reference]   (default: the best this CPU runs)
//
// A shape NxK is N output rows of K (GGUF's layout: attention projections 2048x2048, FFN
// gate/up 8192x2048, down 2048x8192, output/vocab 128256x2048). Each matrix is copied
// through an arena larger than the last-level cache (--arena-mib, default 768 MiB; this
// machine reports 480 MiB of L3) and each call reads the next copy, so every call streams
// its weights from memory, as a decode step of a real model does. The arena sits on huge
// pages (common/huge_page_buffer.h), as the server's GGUF weights do (docs/gguf.md,
// "Weights in memory"); the packed-* types' PackedMatrix copies do so of themselves.
// Per run: one call per copy, time / copies; the median of --runs runs is printed. Activation quantisation is
// inside the timed call (done once, by the calling thread); columns are split evenly over
// --threads (a spinning pool, threads created once).
//
// Prints one JSON line per (shape, type, batch, threads):
//   {"shape": "8192x2048", "type": "Q4_0", "kernel": "avx512vnni", "m": 1, "threads": 2,
//    "us": median µs per call, "weight_gb_s": matrix bytes / time, "gflop_s": 2·M·N·K / time,
//    "cpu_us": median process CPU µs per call (all threads, the pool's spinning included)}
// On a shared machine cpu_us at 1 thread is the steadier figure: it leaves out the time
// the benchmark waited for a core.
// Weights are random codes with finite scales (speed does not depend on the values).
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/float16.h"
#include "common/huge_page_buffer.h"
#include "llm/packed_matmul.h"
#include "quant/block_matmul.h"

namespace {

using Clock = std::chrono::steady_clock;
using infera::quant::BlockType;

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos <= text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    if (comma > pos) out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// threads − 1 spinning workers plus the caller; Run(f) calls f(t) for t < threads.
class Pool {
 public:
  explicit Pool(int threads) : threads_(threads) {
    for (int t = 1; t < threads; ++t) {
      workers_.emplace_back([this, t] {
        uint64_t seen = 0;
        for (;;) {
          uint64_t g;
          while ((g = generation_.load(std::memory_order_acquire)) == seen) _mm_pause();
          seen = g;
          if (stop_.load()) return;
          (*job_)(t);
          done_.fetch_add(1, std::memory_order_release);
        }
      });
    }
  }
  ~Pool() {
    stop_ = true;
    generation_.fetch_add(1);
    for (auto& w : workers_) w.join();
  }
  void Run(const std::function<void(int)>& f) {
    job_ = &f;
    done_.store(0);
    generation_.fetch_add(1, std::memory_order_release);
    f(0);
    while (done_.load(std::memory_order_acquire) != threads_ - 1) _mm_pause();
  }

 private:
  int threads_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* job_ = nullptr;
};

// Random codes; the half scale fields of each block set to small finite values.
void FillBlocks(BlockType type, uint8_t* data, size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t r = rng();
    std::memcpy(data + i, &r, 8);
  }
  std::vector<int> halves;
  switch (type) {
    case BlockType::kQ8_0: case BlockType::kQ4_0: case BlockType::kQ5_0: halves = {0}; break;
    case BlockType::kQ4_1: case BlockType::kQ5_1: case BlockType::kQ4_K: case BlockType::kQ5_K: halves = {0, 2}; break;
    case BlockType::kQ6_K: halves = {208}; break;
    default: break;
  }
  const auto& info = infera::quant::Info(type);
  const uint16_t half = infera::FloatToHalf(0.01f);
  if (type == BlockType::kF32) {
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      const float v = static_cast<float>(data[i] % 200) * 1e-3f - 0.1f;
      std::memcpy(data + i, &v, 4);
    }
  } else if (type == BlockType::kF16 || type == BlockType::kBF16) {
    for (size_t i = 0; i + 2 <= bytes; i += 2) {
      const float v = static_cast<float>(data[i] % 200) * 1e-3f - 0.1f;
      const uint16_t h = type == BlockType::kF16 ? infera::FloatToHalf(v) : infera::FloatToBf16(v);
      std::memcpy(data + i, &h, 2);
    }
  }
  for (size_t off = 0; off + info.block_bytes <= bytes; off += static_cast<size_t>(info.block_bytes)) {
    for (int h : halves) std::memcpy(data + off + h, &half, 2);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double CpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void Report(const std::string& shape, const char* type, const char* kernel, int64_t m, int threads, double us,
            double bytes, int64_t n, int64_t k, double cpu_us) {
  std::printf(
      "{\"shape\": \"%s\", \"type\": \"%s\", \"kernel\": \"%s\", \"m\": %lld, \"threads\": %d, \"us\": %.1f, "
      "\"weight_gb_s\": %.2f, \"gflop_s\": %.2f, \"cpu_us\": %.1f}\n",
      shape.c_str(), type, kernel, static_cast<long long>(m), threads, us, bytes / us / 1e3,
      2.0 * static_cast<double>(m * n * k) / us / 1e3, cpu_us);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> types = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16",
                                    "F32",  "packed-int8", "packed-int4"};
  std::vector<std::string> shapes = {"2048x2048", "8192x2048", "2048x8192", "128256x2048"};
  std::vector<int64_t> batches = {1, 8};
  std::vector<int> thread_counts = {1, 2};
  int runs = 5;
  size_t arena_bytes = size_t{768} << 20;
  infera::quant::BlockKernel kernel = infera::quant::BestBlockKernel();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--types") types = Split(value);
    else if (flag == "--shapes") shapes = Split(value);
    else if (flag == "--batches") { batches.clear(); for (auto& b : Split(value)) batches.push_back(std::stoll(b)); }
    else if (flag == "--threads") { thread_counts.clear(); for (auto& t : Split(value)) thread_counts.push_back(std::stoi(t)); }
    else if (flag == "--runs") runs = std::stoi(value);
    else if (flag == "--arena-mib") arena_bytes = std::stoull(value) << 20;
    else if (flag == "--kernel") {
      bool found = false;
      for (auto k : {infera::quant::BlockKernel::kAmx, infera::quant::BlockKernel::kAvx512Vnni, infera::quant::BlockKernel::kAvx2,
                     infera::quant::BlockKernel::kReference}) {
        if (value == infera::quant::BlockKernelName(k) && infera::quant::BlockKernelSupported(k)) kernel = k, found = true;
      }
      if (!found) { std::fprintf(stderr, "kernel %s unknown or not supported here\n", value.c_str()); return 2; }
    }
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  std::printf("{\"block_kernel\": \"%s\", \"packed_matmul_isa\": \"%s\"}\n",
              infera::quant::BlockKernelName(kernel), infera::llm::PackedMatmulIsa());
  const int64_t max_m = *std::max_element(batches.begin(), batches.end());
  for (const std::string& shape : shapes) {
    const int64_t n = std::stoll(shape.substr(0, shape.find('x')));
    const int64_t k = std::stoll(shape.substr(shape.find('x') + 1));
    std::vector<float> x(static_cast<size_t>(max_m * k));
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : x) v = normal(rng);
    std::vector<float> y(static_cast<size_t>(max_m * n));
    for (const std::string& type_name : types) {
      const bool packed = type_name.rfind("packed-", 0) == 0;
      std::vector<std::function<void(int64_t, int, int)>> calls;  // one per copy: (m, thread, threads)
      std::optional<infera::HugePageBuffer> arena;
      std::vector<infera::llm::PackedMatrix> packed_copies;
      std::vector<infera::quant::BlockMatrix> views;
      double matrix_bytes = 0;
      std::string error;
      if (packed) {
        const auto ptype = type_name == "packed-int8" ? infera::llm::PackedType::kInt8 : infera::llm::PackedType::kInt4;
        std::vector<float> w(static_cast<size_t>(n * k));
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 2654435761u % 255) - 127) * 1e-3f;
        packed_copies.push_back(infera::llm::PackedMatrix::FromOutIn(w.data(), n, k, ptype));
        matrix_bytes = static_cast<double>(packed_copies[0].bytes());
        const size_t copies = std::max<size_t>(1, std::min<size_t>(256, arena_bytes / packed_copies[0].bytes()));
        while (packed_copies.size() < copies) packed_copies.push_back(infera::llm::PackedMatrix::FromOutIn(w.data(), n, k, ptype));
      } else {
        const auto type = infera::quant::BlockTypeFromName(type_name);
        if (!type) { std::fprintf(stderr, "unknown type %s\n", type_name.c_str()); return 2; }
        const size_t bytes = static_cast<size_t>(n * infera::quant::RowBytes(*type, k));
        const size_t copies = std::max<size_t>(1, arena_bytes / bytes);
        arena = infera::HugePageBuffer::Allocate(bytes * copies);
        if (!arena) { std::fprintf(stderr, "cannot allocate the arena\n"); return 1; }
        FillBlocks(*type, arena->data(), bytes * copies, 9);
        matrix_bytes = static_cast<double>(bytes);
        for (size_t c = 0; c < copies; ++c) {
          views.push_back(*infera::quant::BlockMatrix::View(arena->data() + c * bytes, bytes, *type, n, k, &error));
        }
      }
      for (int threads : thread_counts) {
        Pool pool(threads);
        for (int64_t m : batches) {
          const size_t copies = packed ? packed_copies.size() : views.size();
          std::vector<double> per_call, cpu_per_call;
          for (int run = 0; run <= runs; ++run) {  // run 0 warms up
            const auto start = Clock::now();
            const double cpu_start = CpuMicros();
            for (size_t c = 0; c < copies; ++c) {
              if (packed) {
                const auto& w = packed_copies[c];
                const int64_t panels = w.num_panels();
                pool.Run([&](int t) {
                  infera::llm::PackedMatmul(x.data(), m, k, w, nullptr, y.data(), n, false, panels * t / threads,
                                            panels * (t + 1) / threads);
                });
              } else {
                const auto& w = views[c];
                const auto a = infera::quant::QuantizeActivations(x.data(), m, k, w.type(), k, &error, kernel);
                pool.Run([&](int t) {
                  infera::quant::BlockMatmul(*a, w, y.data(), n, n * t / threads, n * (t + 1) / threads);
                });
              }
            }
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                              static_cast<double>(copies);
            if (run > 0) per_call.push_back(us);
            if (run > 0) cpu_per_call.push_back((CpuMicros() - cpu_start) / static_cast<double>(copies));
          }
          Report(shape, type_name.c_str(),
                 packed ? infera::llm::PackedMatmulIsa()
                        : infera::quant::BlockKernelName(kernel),
                 m, threads, Median(per_call), matrix_bytes, n, k, Median(cpu_per_call));
        }
      }
    }
  }
  return 0;
}

// llm_matmul_bench: the packed-matmul kernels alone on the 45.6 M bench model's projection
// shapes (docs/benchmarks.md, "LLM weight quantisation"): every PackedType (f32, bf16,
// int8, int4) × M = 1, 8, 16 × each kernel this CPU runs (avx512f, avx2+fma: the portable
// body built for AVX2 + FMA, portable: the same body for baseline x86-64), one thread,
// same random weights. Prints one JSON line per case: the
// median of --reps calls and the packed bytes streamed per millisecond.
//
//   llm_matmul_bench [--reps 15]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/cpu_features.h"
#include "llm/packed_matmul.h"
#include "tools/llm/tool_cli.h"

namespace {

constexpr char kUsage[] =
    "Usage: llm_matmul_bench [--reps N]\n"
    "\n"
    "The packed-matmul kernels alone on the bench model's projection shapes, one thread:\n"
    "every weight type (f32, bf16, int8, int4) x M = 1, 8, 16 x each kernel this CPU runs.\n"
    "Prints one JSON line per case: the median of N calls and the bytes streamed per ms\n"
    "(docs/benchmarks.md, \"LLM weight quantisation\").\n"
    "\n"
    "Flags:\n"
    "  --reps N      calls per case (the median is reported). Default 15\n"
    "  -h, --help    show this help\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace infera::llm;
  using Clock = std::chrono::steady_clock;
  int reps = 15;
  infera::llm_tools::HandleHelp(argc, argv, kUsage);
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag != "--reps") infera::llm_tools::FlagError("llm_matmul_bench", "unknown flag " + flag);
    if (i + 1 >= argc) infera::llm_tools::FlagError("llm_matmul_bench", "--reps needs a value");
    reps = static_cast<int>(infera::llm_tools::IntegerFlag("llm_matmul_bench", flag, argv[i + 1], 1, 1 << 20));
  }
  struct Shape {
    const char* name;
    int64_t k, n;
  };
  const std::vector<Shape> shapes = {
      {"qkv", 512, 1536}, {"o", 512, 512}, {"gate_up", 512, 2816}, {"down", 1408, 512}, {"lm_head", 512, 32000}};
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (const Shape& s : shapes) {
    std::vector<float> w(static_cast<size_t>(s.k * s.n));
    for (float& f : w) f = normal(rng);
    for (PackedType type : {PackedType::kF32, PackedType::kBF16, PackedType::kInt8, PackedType::kInt4}) {
      const PackedMatrix packed = PackedMatrix::FromOutIn(w.data(), s.n, s.k, type);
      for (int64_t m : {1, 8, 16}) {
        std::vector<float> x(static_cast<size_t>(m * s.k)), y(static_cast<size_t>(m * s.n));
        for (float& f : x) f = normal(rng);
        const struct {
          const char* name;
          bool supported;
          decltype(&packed_matmul_internal::Portable) fn;
        } kernels[] = {{"avx512f", infera::CpuHasAvx512f(), &packed_matmul_internal::Avx512},
                       {"avx2+fma", infera::CpuHasAvx2Fma(), &packed_matmul_internal::Avx2},
                       {"portable", true, &packed_matmul_internal::Portable}};
        for (const auto& kern : kernels) {
          if (!kern.supported) continue;
          auto kernel = kern.fn;
          std::vector<double> ms;
          for (int r = 0; r < reps + 1; ++r) {
            const auto t0 = Clock::now();
            kernel(x.data(), m, s.k, packed, nullptr, y.data(), s.n, false, 0, packed.num_panels());
            if (r > 0) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          }
          std::sort(ms.begin(), ms.end());
          const double median = ms[ms.size() / 2];
          std::printf("{\"matmul\": \"%s\", \"type\": \"%s\", \"m\": %ld, \"kernel\": \"%s\", \"ms\": %.4f, "
                      "\"bytes\": %zu, \"gb_s\": %.2f}\n",
                      s.name, PackedTypeName(type), static_cast<long>(m), kern.name, median,
                      packed.bytes(), static_cast<double>(packed.bytes()) / median / 1e6);
        }
      }
    }
  }
  return 0;
}

// read_bandwidth: how fast 1 and 2 threads of this machine read memory, the ceiling for a
// memory-bound decode step (docs/benchmarks.md, "GGUF at 1 B", run D).
//
//   read_bandwidth [--mib 1024] [--runs 3]
//
// A buffer of --mib MiB (far larger than the caches), touched once, then read with 64-byte
// AVX-512 loads (AVX2 where the CPU has no AVX-512) summed into a register; each thread
// reads its own contiguous half. Prints one line per (threads, run): GB/s = bytes / wall.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

__attribute__((target("avx512f"))) long long ReadAvx512(const char* p, size_t bytes) {
  __m512i acc = _mm512_setzero_si512();
  for (size_t o = 0; o + 256 <= bytes; o += 256) {
    acc = _mm512_add_epi64(acc, _mm512_load_si512(p + o));
    acc = _mm512_add_epi64(acc, _mm512_load_si512(p + o + 64));
    acc = _mm512_add_epi64(acc, _mm512_load_si512(p + o + 128));
    acc = _mm512_add_epi64(acc, _mm512_load_si512(p + o + 192));
  }
  alignas(64) long long lanes[8];
  _mm512_store_si512(lanes, acc);
  long long sum = 0;
  for (long long lane : lanes) sum += lane;
  return sum;
}

__attribute__((target("avx2"))) long long ReadAvx2(const char* p, size_t bytes) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t o = 0; o + 128 <= bytes; o += 128) {
    acc = _mm256_add_epi64(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o)));
    acc = _mm256_add_epi64(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 32)));
    acc = _mm256_add_epi64(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 64)));
    acc = _mm256_add_epi64(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 96)));
  }
  alignas(32) long long lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 1024;
  int runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") {
      mib = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: read_bandwidth [--mib N] [--runs N]\n");
      return 2;
    }
  }
  if (mib < 64 || runs < 1) {
    std::fprintf(stderr, "read_bandwidth: --mib must be at least 64 and --runs at least 1\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  char* buffer = static_cast<char*>(std::aligned_alloc(64, bytes));
  if (buffer == nullptr) {
    std::fprintf(stderr, "read_bandwidth: cannot allocate %zu MiB\n", mib);
    return 1;
  }
  std::memset(buffer, 1, bytes);  // every page backed before the timed reads
  const bool avx512 = __builtin_cpu_supports("avx512f");
  for (int threads : {1, 2}) {
    for (int run = 0; run < runs; ++run) {
      std::vector<long long> sums(static_cast<size_t>(threads));
      std::vector<std::thread> workers;
      const auto start = std::chrono::steady_clock::now();
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          const size_t part = bytes / static_cast<size_t>(threads);
          const char* p = buffer + static_cast<size_t>(t) * part;
          sums[static_cast<size_t>(t)] = avx512 ? ReadAvx512(p, part) : ReadAvx2(p, part);
        });
      }
      for (std::thread& w : workers) w.join();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      long long check = 0;
      for (long long s : sums) check += s;
      std::printf("{\"threads\": %d, \"gb_s\": %.1f, \"checksum\": %lld}\n", threads,
                  static_cast<double>(bytes) / seconds / 1e9, check);
    }
  }
  std::free(buffer);
  return 0;
}

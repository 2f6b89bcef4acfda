// read_bandwidth: how fast 1 and 2 threads of this machine read memory, the ceiling for a
// memory-bound decode step (docs/benchmarks.md, "GGUF at 1 B", run D; docs/gguf.md,
// "Weights in memory").
//
//   read_bandwidth [--mib 1024] [--runs 3] [--file MODEL.gguf]
//
// A buffer of --mib MiB (far larger than the caches), touched once, then read with 64-byte
// AVX-512 loads (AVX2 where the CPU has no AVX-512) summed into a register; each thread
// reads its own contiguous half. The buffer is read on 4 KiB pages ("anon-4k") and on
// 2 MiB transparent huge pages ("anon-huge", common/huge_page_buffer.h, where the kernel's
// THP mode allows); with --file, the first --mib MiB of that file are also read through a
// read-only mapping of it ("file-mapping", the page cache's pages, populated first).
// Prints one line per (memory, threads, run): GB/s = bytes / wall.
#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/huge_page_buffer.h"

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

// Prints the GB/s of 1 and 2 threads reading `bytes` at `buffer`, `runs` times each.
void Measure(const char* memory, const char* buffer, size_t bytes, int runs) {
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
      std::printf("{\"memory\": \"%s\", \"threads\": %d, \"gb_s\": %.1f, \"checksum\": %lld}\n", memory, threads,
                  static_cast<double>(bytes) / seconds / 1e9, check);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 1024;
  int runs = 3;
  std::string file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") {
      mib = std::strtoul(argv[i + 1], nullptr, 10);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else if (flag == "--file") {
      file = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: read_bandwidth [--mib N] [--runs N] [--file PATH]\n");
      return 2;
    }
  }
  if (mib < 64 || runs < 1) {
    std::fprintf(stderr, "read_bandwidth: --mib must be at least 64 and --runs at least 1\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  {
    void* small = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (small == MAP_FAILED) {
      std::fprintf(stderr, "read_bandwidth: cannot allocate %zu MiB\n", mib);
      return 1;
    }
    madvise(small, bytes, MADV_NOHUGEPAGE);  // 4 KiB pages even where THP is "always"
    std::memset(small, 1, bytes);            // every page backed before the timed reads
    Measure("anon-4k", static_cast<const char*>(small), bytes, runs);
    munmap(small, bytes);
  }
  {
    std::optional<infera::HugePageBuffer> huge = infera::HugePageBuffer::Allocate(bytes);
    if (!huge) {
      std::fprintf(stderr, "read_bandwidth: cannot allocate %zu MiB\n", mib);
      return 1;
    }
    std::memset(huge->data(), 1, bytes);
    Measure("anon-huge", reinterpret_cast<const char*>(huge->data()), bytes, runs);
  }
  if (!file.empty()) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
      std::fprintf(stderr, "read_bandwidth: %s cannot be opened or is shorter than %zu MiB\n", file.c_str(), mib);
      return 1;
    }
    void* mapping = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (mapping == MAP_FAILED) {
      std::fprintf(stderr, "read_bandwidth: cannot map %s\n", file.c_str());
      return 1;
    }
    Measure("file-mapping", static_cast<const char*>(mapping), bytes, runs);
    munmap(mapping, bytes);
  }
  return 0;
}

// Cost of the per-request API key check (docs/api_keys.md, docs/benchmarks.md "API key
// check"): SHA-256 of the presented key, the digest lookup and CRYPTO_memcmp, the right,
// the model glob and the request token bucket — ApiKeyStore::Authorize as the HTTP and
// gRPC checks call it — and the HTTP side around it (route classification, query string).
//   build/bench/micro/api_key_benchmark --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "http/api_key_access.h"
#include "security/api_key_store.h"

namespace infera {
namespace {

// A store of `keys` keys (the checked one with rps=1e9 so its bucket never empties).
std::unique_ptr<ApiKeyStore> MakeStore(int keys) {
  const std::string path = "/tmp/infera_api_key_benchmark_keys.txt";
  {
    std::ofstream out(path);
    for (int i = 0; i < keys; ++i) {
      out << "key" << i << " sha256:" << DigestHex(DigestOf("inf-key-" + std::to_string(i)))
          << " rights=read,infer models=resnet*,fortune,bert-*" << (i == 0 ? " rps=1e9" : "") << "\n";
    }
  }
  ApiKeyStore::Options options;
  options.key_file = path;
  return std::move(*ApiKeyStore::Create(std::move(options)));
}

void BM_Authorize(benchmark::State& state) {
  std::unique_ptr<ApiKeyStore> store = MakeStore(static_cast<int>(state.range(0)));
  const std::string header = "Bearer inf-key-0";
  for (auto _ : state) {
    auto grant = store->Authorize(header, kRightInfer, "resnet50");
    benchmark::DoNotOptimize(grant);
  }
}
BENCHMARK(BM_Authorize)->Arg(1)->Arg(1000)->ArgName("keys");

void BM_CheckHttpApiKey(benchmark::State& state) {
  std::unique_ptr<ApiKeyStore> store = MakeStore(100);
  HttpRequest request;
  request.method = "POST";
  request.target = "/v2/models/resnet50/infer";
  request.headers.emplace_back("content-type", "application/json");
  request.headers.emplace_back("authorization", "Bearer inf-key-0");
  for (auto _ : state) {
    benchmark::DoNotOptimize(CheckHttpApiKey(*store, request));
    request.api_key.reset();
  }
}
BENCHMARK(BM_CheckHttpApiKey);

void BM_Sha256(benchmark::State& state) {
  const std::string key = "inf-Kw0DQfLgo1SLOMLZWznQaOlSOVPwniSVeCHB8_acCr8";
  for (auto _ : state) benchmark::DoNotOptimize(DigestOf(key));
}
BENCHMARK(BM_Sha256);

}  // namespace
}  // namespace infera

BENCHMARK_MAIN();

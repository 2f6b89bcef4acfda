// Throughput of the KServe v2 HTTP tensor codec: request decoding and response encoding,
// JSON and binary, for the tensors infera's benchmarks send.
//
//   build-codec/bench/micro/codec_benchmark --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Cases (second benchmark argument = element count):
//   FP32 [n]       image-like values with four decimals ("-1.2345"), as Python clients send
//                  normalised pixels; n = 150528 is a ResNet-18 input (1x3x224x224)
//   INT32 simple   the `simple` model's request: INPUT0 and INPUT1, INT32 [1,16] each
//   BYTES [n]      ASCII strings of 16..48 bytes (text inputs)
// Bytes processed = the body's size (JSON or JSON header + binary). Decoding copies the
// body once per iteration (DecodeInferRequest consumes it; a server moves it in instead):
// BM_CopyBody measures that copy alone.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codec/kserve_http_codec.h"
#include "common/str_cat.h"

namespace infera {
namespace {

enum CaseKind : int64_t { kFp32 = 0, kInt32Simple = 1, kBytes = 2 };
constexpr size_t kMaxElements = 1 << 24;

struct Case {
  std::string json_body;    // all-JSON request
  std::string binary_body;  // JSON header + binary tensor data
  size_t binary_header_length = 0;
  InferResponse response;  // the decoded inputs, echoed as outputs
  std::string label;
};

// One input's JSON data array and its binary bytes.
void AddInput(const std::string& name, std::string_view dtype, const Shape& shape,
              const std::string& json_data, const std::string& bytes, std::string& json_inputs,
              std::string& binary_inputs, std::string& blobs) {
  const std::string prefix = StrCat(R"({"name":")", name, R"(","shape":)", ShapeToString(shape),
                                    R"(,"datatype":")", dtype, R"(",)");
  if (!json_inputs.empty()) json_inputs += ",";
  if (!binary_inputs.empty()) binary_inputs += ",";
  json_inputs += StrCat(prefix, R"("data":)", json_data, "}");
  binary_inputs += StrCat(prefix, R"("parameters":{"binary_data_size":)", bytes.size(), "}}");
  blobs += bytes;
}

Case MakeCase(CaseKind kind, int64_t n) {
  std::mt19937 rng(1234);
  std::string json_inputs, binary_inputs, blobs;
  Case c;
  if (kind == kFp32) {
    std::uniform_int_distribution<int> dist(-21000, 26000);  // normalised pixels / 1e4
    std::string json = "[", bytes;
    for (int64_t i = 0; i < n; ++i) {
      const int v = dist(rng);
      char text[16];
      const int len = std::snprintf(text, sizeof(text), "%s%d.%04d", v < 0 ? "-" : "",
                                    std::abs(v) / 10000, std::abs(v) % 10000);
      json.append(i ? "," : "").append(text, len);
      const float f = static_cast<float>(v) / 10000.0f;
      bytes.append(reinterpret_cast<const char*>(&f), 4);
    }
    json += "]";
    const Shape shape = n == 150528 ? Shape{1, 3, 224, 224} : Shape{1, n};
    AddInput("input", "FP32", shape, json, bytes, json_inputs, binary_inputs, blobs);
    c.label = StrCat("FP32[", n, "]");
  } else if (kind == kInt32Simple) {
    for (const char* name : {"INPUT0", "INPUT1"}) {
      std::string json = "[", bytes;
      for (int32_t i = 0; i < 16; ++i) {
        json += StrCat(i ? "," : "", i);
        bytes.append(reinterpret_cast<const char*>(&i), 4);
      }
      json += "]";
      AddInput(name, "INT32", {1, 16}, json, bytes, json_inputs, binary_inputs, blobs);
    }
    c.label = "INT32 simple 2x[1,16]";
  } else {
    std::uniform_int_distribution<int> length(16, 48), letter('a', 'z');
    std::string json = "[", bytes;
    for (int64_t i = 0; i < n; ++i) {
      std::string s(length(rng), ' ');
      for (char& ch : s) ch = static_cast<char>(letter(rng));
      json += StrCat(i ? "," : "", "\"", s, "\"");
      AppendBytesElement(bytes, s);
    }
    json += "]";
    AddInput("text", "BYTES", {n}, json, bytes, json_inputs, binary_inputs, blobs);
    c.label = StrCat("BYTES[", n, "]");
  }
  c.json_body = StrCat(R"({"id":"bench","inputs":[)", json_inputs, "]}");
  const std::string header = StrCat(R"({"id":"bench","inputs":[)", binary_inputs, "]}");
  c.binary_header_length = header.size();
  c.binary_body = header + blobs;
  absl::StatusOr<InferRequest> request =
      DecodeInferRequest(c.json_body, std::nullopt, kMaxElements);
  if (!request.ok()) std::abort();
  c.response.model_name = "bench";
  c.response.model_version = 1;
  c.response.id = request->id;
  c.response.outputs = request->inputs;
  return c;
}

const Case& GetCase(const benchmark::State& state) {
  static std::vector<std::pair<std::pair<int64_t, int64_t>, Case*>> cache;
  const auto key = std::make_pair(state.range(0), state.range(1));
  for (auto& [k, c] : cache) {
    if (k == key) return *c;
  }
  cache.emplace_back(key, new Case(MakeCase(static_cast<CaseKind>(key.first), key.second)));
  return *cache.back().second;
}

void BM_DecodeJson(benchmark::State& state) {
  const Case& c = GetCase(state);
  for (auto _ : state) {
    absl::StatusOr<InferRequest> r = DecodeInferRequest(c.json_body, std::nullopt, kMaxElements);
    if (!r.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(c.json_body.size()));
  state.SetLabel(StrCat(c.label, " ", c.json_body.size(), " B"));
}

void BM_DecodeBinary(benchmark::State& state) {
  const Case& c = GetCase(state);
  for (auto _ : state) {
    absl::StatusOr<InferRequest> r =
        DecodeInferRequest(c.binary_body, c.binary_header_length, kMaxElements);
    if (!r.ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(c.binary_body.size()));
  state.SetLabel(StrCat(c.label, " ", c.binary_body.size(), " B"));
}

void Encode(benchmark::State& state, const OutputEncoding& encoding) {
  const Case& c = GetCase(state);
  size_t size = 0;
  for (auto _ : state) {
    absl::StatusOr<EncodedInferResponse> r = EncodeInferResponse(c.response, encoding);
    if (!r.ok()) state.SkipWithError("encode failed");
    size = r->body.size();
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(size));
  state.SetLabel(StrCat(c.label, " ", size, " B"));
}

void BM_EncodeJson(benchmark::State& state) { Encode(state, OutputEncoding{}); }

void BM_EncodeBinary(benchmark::State& state) {
  OutputEncoding binary;
  binary.binary_by_default = true;
  Encode(state, binary);
}

// The per-iteration body copy the decode benchmarks include.
void BM_CopyBody(benchmark::State& state) {
  const Case& c = GetCase(state);
  for (auto _ : state) {
    std::string copy = c.json_body;
    benchmark::DoNotOptimize(copy);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(c.json_body.size()));
  state.SetLabel(StrCat(c.label, " ", c.json_body.size(), " B"));
}

void Cases(benchmark::internal::Benchmark* b) {
  b->Args({kFp32, 16})->Args({kFp32, 4096})->Args({kFp32, 150528});
  b->Args({kInt32Simple, 32})->Args({kBytes, 64});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_DecodeJson)->Apply(Cases);
BENCHMARK(BM_EncodeJson)->Apply(Cases);
BENCHMARK(BM_DecodeBinary)->Apply(Cases);
BENCHMARK(BM_EncodeBinary)->Apply(Cases);
BENCHMARK(BM_CopyBody)->Args({kFp32, 150528})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace infera

BENCHMARK_MAIN();

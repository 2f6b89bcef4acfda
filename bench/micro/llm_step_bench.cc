// llm_step_bench: in-process timings behind docs/benchmarks.md's LLM rows.
//
//   llm_step_bench --model DIR [--threads N] [--context 64] [--steps 30]
//                  [--kernels packed,blas] [--batches 1,4,8,16] [--kv-dtypes fp32,bf16,fp16]
//   llm_step_bench --matmul 1,4,8,16 [--threads N]     projections alone, packed vs BLAS
//   llm_step_bench --kv-attention CONTEXT [--batches 16]  decode attention alone (one
//                  thread, 8 KV heads x 64) per KV-cache dtype x supported ISA, round-robin
//
// Prints JSON lines:
//   {"memcpy_gb_s": ...}                            best of 5 copies of 256 MiB
//   {"kernel": K, "bytes_per_decode_step": ..., "bandwidth_bound_ms": ...}
//                                                   weights streamed per step / memcpy rate
//   {"kernel": K, "batch": B, "prefill_ms": ..., "decode_step_ms": p50, ...}
//                                                   one prefill step of B·context tokens,
//                                                   then decode steps of B sequences; each
//                                                   runner (one per --kernels entry, same
//                                                   process) takes its turn step by step;
//                                                   with --kv-dtypes one runner per kernel x
//                                                   KV-cache dtype, named "kernel/dtype"
//   {"batch": B, "decode_speedup_packed_vs_blas": ..., "prefill_speedup": ...}
//   {"attention": "paged_kernel"|"aten_gather", "batch": 16, "ms_per_layer": ...}
//   {"kv_attention": "avx512f/bf16", "batch": B, "context": C, "ms_per_layer": p50,
//    "kv_mib": ..., "gb_s": ...}                   --kv-attention
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <vector>

#include "llm/cpu_kernels.h"
#include "llm/llama_model_runner.h"
#include "llm/packed_matmul.h"

namespace {

using Clock = std::chrono::steady_clock;
using infera::llm::LlamaModelRunner;
using infera::llm::ScheduledSequence;
using infera::llm::SchedulerOutput;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < text.size();) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double MemcpyGbPerSecond() {
  const size_t n = size_t{256} << 20;
  std::vector<char> a(n, 1), b(n, 2);
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), n);
    best = std::min(best, Ms(t0, Clock::now()));
    a[i] = b[n - 1 - i];
  }
  return static_cast<double>(n) / (best / 1e3) / 1e9;
}

struct NamedRunner {
  std::string name;
  std::unique_ptr<LlamaModelRunner> runner;
};

// B sequences of `context` prompt tokens (one prefill step of B·context rows), then timed
// decode steps. The runners take turns step by step, so they see the same machine load.
void DecodeSteps(std::vector<NamedRunner>& runners, int batch, int context, int steps) {
  const int block = 16;
  std::vector<ScheduledSequence> seqs(batch);
  int32_t next_block = 0;
  SchedulerOutput prefill;
  for (int s = 0; s < batch; ++s) {
    ScheduledSequence& q = seqs[s];
    q.request_id = s;
    for (int t = 0; t < context; ++t) q.token_ids.push_back(3 + (s * 131 + t * 7) % 30000);
    for (int b = 0; b < (context + steps + block) / block + 1; ++b) q.block_ids.push_back(next_block++);
    q.sample = true;
    prefill.sequences.push_back(q);
  }
  std::vector<double> prefill_ms;
  for (NamedRunner& r : runners) {
    auto t0 = Clock::now();
    (void)r.runner->Execute(prefill);
    prefill_ms.push_back(Ms(t0, Clock::now()));
  }
  std::vector<std::vector<double>> times(runners.size());
  for (int step = 0; step < steps; ++step) {
    SchedulerOutput decode;
    for (int s = 0; s < batch; ++s) {
      ScheduledSequence q = seqs[s];
      q.start_position = context + step;
      q.token_ids = {static_cast<int32_t>(5 + step)};
      decode.sequences.push_back(std::move(q));
    }
    for (size_t i = 0; i < runners.size(); ++i) {
      auto t = Clock::now();
      auto out = runners[i].runner->Execute(decode);
      times[i].push_back(Ms(t, Clock::now()));
      if (!out.ok()) std::cerr << out.status() << "\n";
    }
  }
  for (size_t i = 0; i < runners.size(); ++i) {
    const double p50 = Median(times[i]);
    std::cout << "{\"kernel\": \"" << runners[i].name << "\", \"batch\": " << batch << ", \"context\": " << context
              << ", \"prefill_tokens\": " << batch * context << ", \"prefill_ms\": " << prefill_ms[i]
              << ", \"decode_step_ms\": " << p50 << ", \"tok_s\": " << batch * 1e3 / p50 << "}\n";
  }
  if (runners.size() == 2) {
    std::cout << "{\"batch\": " << batch << ", \"decode_speedup_" << runners[0].name << "_vs_" << runners[1].name
              << "\": " << Median(times[1]) / Median(times[0]) << ", \"prefill_speedup\": " << prefill_ms[1] / prefill_ms[0]
              << "}\n";
  }
}

// Decode attention for `batch` sequences at `context` tokens, 8 heads x 64: the paged
// kernel against an ATen gather (index_select by slot, then bmm/softmax/bmm) per sequence.
void CompareAttention(int batch, int context) {
  const int64_t heads = 8, d = 64, bs = 16, blocks_per_seq = (context + bs - 1) / bs;
  const int64_t num_blocks = batch * blocks_per_seq;
  at::Tensor cache_k = at::randn({num_blocks, bs, heads, d});
  at::Tensor cache_v = at::randn({num_blocks, bs, heads, d});
  at::Tensor q = at::randn({batch, heads, d});
  at::Tensor out = at::empty({batch, heads, d});
  std::vector<std::vector<int32_t>> tables(batch);
  for (int s = 0; s < batch; ++s) {
    for (int64_t b = 0; b < blocks_per_seq; ++b) tables[s].push_back(static_cast<int32_t>(b * batch + s));
  }
  infera::llm::PagedKvLayout layout{bs, heads, d};
  const float scale = 1.0f / 8.0f;
  auto kernel = [&] {
    at::parallel_for(0, batch * heads, 4, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(context);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t s = item / heads, h = item % heads;
        infera::llm::PagedAttentionHead(q.data_ptr<float>() + (s * heads + h) * d, cache_k.data_ptr<float>(),
                                        cache_v.data_ptr<float>(), tables[s].data(), context, h, layout, scale,
                                        scratch.data(), out.data_ptr<float>() + (s * heads + h) * d);
      }
    });
  };
  auto gather = [&] {
    at::Tensor k_all = cache_k.view({-1, heads, d}), v_all = cache_v.view({-1, heads, d});
    for (int s = 0; s < batch; ++s) {
      std::vector<int64_t> slots(context);
      for (int p = 0; p < context; ++p) slots[p] = tables[s][p / bs] * bs + p % bs;
      at::Tensor idx = at::tensor(slots);
      at::Tensor k = k_all.index_select(0, idx).permute({1, 2, 0});  // [H, D, ctx]
      at::Tensor v = v_all.index_select(0, idx).permute({1, 0, 2});  // [H, ctx, D]
      at::Tensor scores = at::bmm(q[s].unsqueeze(1), k).mul_(scale).softmax(-1);  // [H, 1, ctx]
      out[s].copy_(at::bmm(scores, v).squeeze(1));
    }
  };
  for (auto& [name, fn] : std::vector<std::pair<const char*, std::function<void()>>>{{"paged_kernel", kernel},
                                                                                       {"aten_gather", gather}}) {
    std::vector<double> t;
    for (int i = 0; i < 50; ++i) {
      auto t0 = Clock::now();
      fn();
      t.push_back(Ms(t0, Clock::now()));
    }
    std::cout << "{\"attention\": \"" << name << "\", \"batch\": " << batch << ", \"context\": " << context
              << ", \"ms_per_layer\": " << Median(t) << "}\n";
  }
}

// One projection of the bench model's shapes, M rows: the packed kernel against ATen
// (OpenBLAS: GEMV for M = 1, NN GEMM otherwise) on the [in, out] layout, same process.
void CompareMatmul(const std::vector<int64_t>& rows, int reps) {
  struct Shape {
    const char* name;
    int64_t k, n;
  };
  const std::vector<Shape> shapes = {
      {"qkv", 512, 1536}, {"o", 512, 512}, {"gate_up", 512, 2816}, {"down", 1408, 512}, {"lm_head", 512, 32000}};
  for (const Shape& s : shapes) {
    at::Tensor w_kn = at::randn({s.k, s.n});
    at::Tensor w_nk = w_kn.t().contiguous();
    auto packed = infera::llm::PackedMatrix::FromOutIn(w_nk.data_ptr<float>(), s.n, s.k,
                                                       infera::llm::PackedType::kF32);
    for (int64_t m : rows) {
      at::Tensor x = at::randn({m, s.k});
      at::Tensor y = at::empty({m, s.n});
      auto blas = [&] {
        if (m == 1) {
          at::Tensor row = y[0];
          at::mv_out(row, w_kn.t(), x[0]);
        } else {
          at::mm_out(y, x, w_kn);
        }
      };
      auto mine = [&] {
        const int64_t panels = packed.num_panels();
        at::parallel_for(0, panels, 1, [&](int64_t b, int64_t e) {
          infera::llm::PackedMatmul(x.data_ptr<float>(), m, s.k, packed, nullptr, y.data_ptr<float>(), s.n, false,
                                    b, e);
        });
      };
      // Interleaved, so both see the same neighbours' memory traffic.
      std::vector<double> tb, tm;
      blas();
      mine();
      for (int i = 0; i < reps; ++i) {
        auto t0 = Clock::now();
        blas();
        auto t1 = Clock::now();
        mine();
        auto t2 = Clock::now();
        tb.push_back(Ms(t0, t1));
        tm.push_back(Ms(t1, t2));
      }
      const double t_blas = Median(tb), t_mine = Median(tm);
      const double gb = static_cast<double>(s.k * s.n * 4) / 1e9;
      std::cout << "{\"matmul\": \"" << s.name << "\", \"m\": " << m << ", \"blas_ms\": " << t_blas
                << ", \"packed_ms\": " << t_mine << ", \"speedup\": " << t_blas / t_mine
                << ", \"packed_gb_s\": " << gb / (t_mine / 1e3)
                << ", \"packed_gflops\": " << 2.0 * m * s.k * s.n / (t_mine / 1e3) / 1e9 << "}\n";
    }
  }
}

// Decode attention of `batch` sequences at `context` tokens (8 KV heads x 64, one query
// head per KV head) on one thread, for every KV-cache dtype on every ISA this CPU runs,
// interleaved round by round so they share the machine's load. gb_s: K/V bytes read per
// second.
void CompareKvAttention(int batch, int context, int rounds) {
  using infera::llm::KvCacheDtype;
  using infera::llm::KvKernelIsa;
  const int64_t heads = 8, d = 64, bs = 16, blocks_per_seq = (context + bs - 1) / bs;
  const int64_t num_blocks = batch * blocks_per_seq, elems = num_blocks * bs * heads * d;
  at::Tensor k32 = at::randn({elems}), v32 = at::randn({elems}), q = at::randn({batch, heads, d});
  std::vector<uint16_t> k16[2], v16[2];
  const KvCacheDtype half_types[2] = {KvCacheDtype::kBFloat16, KvCacheDtype::kFloat16};
  for (int i = 0; i < 2; ++i) {
    k16[i].resize(elems);
    v16[i].resize(elems);
    infera::llm::StoreKvRow(k32.data_ptr<float>(), elems, half_types[i], k16[i].data());
    infera::llm::StoreKvRow(v32.data_ptr<float>(), elems, half_types[i], v16[i].data());
  }
  std::vector<std::vector<int32_t>> tables(batch);
  for (int s = 0; s < batch; ++s) {
    for (int64_t b = 0; b < blocks_per_seq; ++b) tables[s].push_back(static_cast<int32_t>(b * batch + s));
  }
  const infera::llm::PagedKvLayout layout{bs, heads, d};
  struct Variant {
    KvKernelIsa isa;
    KvCacheDtype dtype;
    const void *k, *v;
    std::vector<double> ms;
  };
  std::vector<Variant> variants;
  for (KvKernelIsa isa : {KvKernelIsa::kPortable, KvKernelIsa::kAvx2, KvKernelIsa::kAvx512}) {
    if (!infera::llm::KvKernelIsaSupported(isa)) continue;
    variants.push_back({isa, KvCacheDtype::kFloat32, k32.data_ptr<float>(), v32.data_ptr<float>(), {}});
    for (int i = 0; i < 2; ++i) variants.push_back({isa, half_types[i], k16[i].data(), v16[i].data(), {}});
  }
  std::vector<float> scratch(context), out(d);
  for (int r = 0; r < rounds; ++r) {
    for (Variant& v : variants) {
      auto t0 = Clock::now();
      for (int s = 0; s < batch; ++s) {
        for (int64_t h = 0; h < heads; ++h) {
          infera::llm::PagedAttentionHeadOn(v.isa, q.data_ptr<float>() + (s * heads + h) * d, v.k, v.v, v.dtype,
                                            tables[s].data(), context, h, layout, 0.125f, scratch.data(), out.data());
        }
      }
      v.ms.push_back(Ms(t0, Clock::now()));
    }
  }
  for (Variant& v : variants) {
    const double p50 = Median(v.ms);
    const double bytes = 2.0 * batch * context * heads * d * static_cast<double>(infera::llm::KvCacheElementSize(v.dtype));
    std::cout << "{\"kv_attention\": \"" << infera::llm::KvKernelIsaName(v.isa) << "/"
              << infera::llm::KvCacheDtypeName(v.dtype) << "\", \"batch\": " << batch << ", \"context\": " << context
              << ", \"ms_per_layer\": " << p50 << ", \"kv_mib\": " << bytes / (1 << 20)
              << ", \"gb_s\": " << bytes / (p50 / 1e3) / 1e9 << "}\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  int threads = 1, context = 64, steps = 30;
  std::string matmul_rows;
  std::vector<std::string> kernels = {"packed", "blas"};
  std::vector<int> batches = {1, 4, 8, 16};
  std::vector<std::string> kv_dtypes;
  int kv_attention_context = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") model = value;
    else if (flag == "--threads") threads = std::stoi(value);
    else if (flag == "--context") context = std::stoi(value);
    else if (flag == "--steps") steps = std::stoi(value);
    else if (flag == "--matmul") matmul_rows = value;
    else if (flag == "--kernels") kernels = Split(value);
    else if (flag == "--kv-dtypes") kv_dtypes = Split(value);
    else if (flag == "--kv-attention") kv_attention_context = std::stoi(value);
    else if (flag == "--batches") {
      batches.clear();
      for (const std::string& b : Split(value)) batches.push_back(std::stoi(b));
    }
  }
  at::init_num_threads();
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  if (!matmul_rows.empty()) {
    std::vector<int64_t> rows;
    for (const std::string& r : Split(matmul_rows)) rows.push_back(std::stoll(r));
    std::cout << "{\"packed_matmul_isa\": \"" << infera::llm::PackedMatmulIsa() << "\"}\n";
    CompareMatmul(rows, 20);
    return 0;
  }
  if (kv_attention_context > 0) {
    for (int batch : batches) CompareKvAttention(batch, kv_attention_context, 15);
    return 0;
  }
  const double gbs = MemcpyGbPerSecond();
  std::cout << "{\"memcpy_gb_s\": " << gbs << "}\n";
  std::vector<NamedRunner> runners;
  // Enough blocks for the largest batch at context + steps (DecodeSteps hands out
  // consecutive blocks to every sequence of every batch size in turn).
  int64_t blocks = 0;
  for (int b : batches) blocks += static_cast<int64_t>(b) * ((context + steps + 16) / 16 + 1);
  blocks = std::max<int64_t>(blocks, 1200);
  const bool name_dtype = !kv_dtypes.empty();
  if (kv_dtypes.empty()) kv_dtypes = {"fp32"};
  for (const std::string& kernel_name : kernels)
  for (const std::string& dtype_name : kv_dtypes) {
    const std::string name = name_dtype ? kernel_name + "/" + dtype_name : kernel_name;
    auto kernel = kernel_name == "blas" ? infera::llm::MatmulKernel::kBlas : infera::llm::MatmulKernel::kPacked;
    const auto dtype = infera::llm::ParseKvCacheDtype(dtype_name);
    if (!dtype) {
      std::cerr << "--kv-dtypes: '" << dtype_name << "' is not fp32, bf16 or fp16\n";
      return 2;
    }
    auto runner = LlamaModelRunner::Load(model, threads, kernel);
    if (!runner.ok()) {
      std::cerr << runner.status() << "\n";
      return 1;
    }
    if (!(*runner)->AllocateKvCache(blocks, 16, *dtype).ok()) return 1;
    const double bytes = static_cast<double>((*runner)->bytes_per_decode_step());
    std::cout << "{\"kernel\": \"" << name << "\", \"parameters\": " << (*runner)->num_parameters()
              << ", \"kv_bytes_per_token\": " << (*runner)->kv_bytes_per_token(*dtype)
              << ", \"kv_attention_isa\": \"" << infera::llm::KvKernelIsaName(infera::llm::BestKvKernelIsa()) << "\""
              << ", \"bytes_per_decode_step\": " << bytes << ", \"bandwidth_bound_ms\": " << bytes / (gbs * 1e9) * 1e3
              << "}\n";
    runners.push_back({name, std::move(*runner)});
  }
  for (int batch : batches) DecodeSteps(runners, batch, context, steps);
  CompareAttention(16, context + 32);
  return 0;
}

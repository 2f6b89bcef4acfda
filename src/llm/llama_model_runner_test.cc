// LlamaModelRunner with each KV-cache dtype, on a tiny seeded random Llama written to a
// temporary directory (config.json + one fp32 safetensors file).
#include "llm/llama_model_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::llm {
namespace {

constexpr int kVocab = 96, kHidden = 64, kHeads = 4, kKvHeads = 2, kInter = 128, kLayers = 2;

void WriteTinyModel(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": )" << kVocab
      << R"(, "hidden_size": )" << kHidden << R"(, "intermediate_size": )" << kInter
      << R"(, "num_hidden_layers": )" << kLayers << R"(, "num_attention_heads": )" << kHeads
      << R"(, "num_key_value_heads": )" << kKvHeads
      << R"(, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 1024,
          "tie_word_embeddings": true, "hidden_act": "silu", "torch_dtype": "float32",
          "bos_token_id": 1, "eos_token_id": 2})";
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    float scale, offset;
  };
  const int d = kHidden / kHeads;
  std::vector<Tensor> tensors = {{"model.embed_tokens.weight", {kVocab, kHidden}, 1.0f, 0.0f},
                                 {"model.norm.weight", {kHidden}, 0.1f, 1.0f}};
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    tensors.push_back({p + "input_layernorm.weight", {kHidden}, 0.1f, 1.0f});
    tensors.push_back({p + "post_attention_layernorm.weight", {kHidden}, 0.1f, 1.0f});
    // Larger q/k than 1/sqrt(in) so attention is peaked, as in trained models.
    tensors.push_back({p + "self_attn.q_proj.weight", {kHeads * d, kHidden}, 0.25f, 0.0f});
    tensors.push_back({p + "self_attn.k_proj.weight", {kKvHeads * d, kHidden}, 0.25f, 0.0f});
    tensors.push_back({p + "self_attn.v_proj.weight", {kKvHeads * d, kHidden}, 0.125f, 0.0f});
    tensors.push_back({p + "self_attn.o_proj.weight", {kHidden, kHeads * d}, 0.125f, 0.0f});
    tensors.push_back({p + "mlp.gate_proj.weight", {kInter, kHidden}, 0.125f, 0.0f});
    tensors.push_back({p + "mlp.up_proj.weight", {kInter, kHidden}, 0.125f, 0.0f});
    tensors.push_back({p + "mlp.down_proj.weight", {kHidden, kInter}, 0.09f, 0.0f});
  }
  std::mt19937 rng(42);
  std::normal_distribution<float> normal;
  std::string header = "{";
  std::string data;
  for (const Tensor& t : tensors) {
    int64_t n = 1;
    std::string shape;
    for (int64_t s : t.shape) {
      n *= s;
      shape += (shape.empty() ? "" : ",") + std::to_string(s);
    }
    const size_t begin = data.size();
    for (int64_t i = 0; i < n; ++i) {
      const float v = t.offset + t.scale * normal(rng);
      data.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    header += (header.size() > 1 ? "," : "") + ("\"" + t.name + "\": {\"dtype\": \"F32\", \"shape\": [" + shape +
                                                "], \"data_offsets\": [" + std::to_string(begin) + "," +
                                                std::to_string(data.size()) + "]}");
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  const uint64_t len = header.size();
  out.write(reinterpret_cast<const char*>(&len), sizeof len);
  out << header << data;
}

const std::filesystem::path& ModelDir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::path(testing::TempDir()) / ("kv_dtype_model_" + std::to_string(::getpid()));
    WriteTinyModel(d);
    return d;
  }();
  return dir;
}

constexpr int64_t kBlocks = 64;

std::unique_ptr<LlamaModelRunner> Runner(KvCacheDtype dtype, int64_t block_size = 8) {
  auto runner = LlamaModelRunner::Load(ModelDir(), 1);
  EXPECT_TRUE(runner.ok()) << runner.status();
  EXPECT_TRUE((*runner)->AllocateKvCache(kBlocks, block_size, dtype).ok());
  return std::move(*runner);
}

// A prompt prefilled in chunks, then greedy decoding; the logits of every step.
struct Trace {
  std::vector<std::vector<float>> logits;
  std::vector<int32_t> generated;
};

std::vector<int32_t> Prompt(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % kVocab);
  return ids;
}

// Runs `prompts` together (one step holds a chunk of each), with scrambled block tables
// starting at `first_block`, then `generate` tokens one per step: greedy, or `forced[s]`
// (teacher forcing) when given. Returns one Trace per prompt.
std::vector<Trace> Generate(LlamaModelRunner& runner, const std::vector<std::vector<int32_t>>& prompts, int chunk,
                          int generate, int64_t block_size, int32_t first_block = 0,
                          const std::vector<std::vector<int32_t>>* forced = nullptr) {
  const size_t n = prompts.size();
  std::vector<std::vector<int32_t>> tokens = prompts, blocks(n);
  std::vector<int64_t> computed(n, 0);
  std::vector<Trace> runs(n);
  int32_t next = first_block;
  auto ensure_blocks = [&](size_t s, int64_t end) {
    while (static_cast<int64_t>(blocks[s].size()) * block_size < end) {
      // Scrambled ids (k -> 37k mod 64 permutes the 64 blocks), appended: a sequence's
      // blocks are neither contiguous nor ascending.
      blocks[s].push_back(static_cast<int32_t>((next++ * 37) % kBlocks));
    }
  };
  for (;;) {
    SchedulerOutput out;
    for (size_t s = 0; s < n; ++s) {
      const int64_t total = static_cast<int64_t>(prompts[s].size()) + generate;
      if (computed[s] >= total) continue;
      const int64_t len = static_cast<int64_t>(tokens[s].size());
      if (computed[s] >= len) continue;
      ScheduledSequence seq;
      seq.request_id = s;
      seq.start_position = computed[s];
      const int64_t end = std::min<int64_t>(len, computed[s] + chunk);
      seq.token_ids.assign(tokens[s].begin() + computed[s], tokens[s].begin() + end);
      ensure_blocks(s, end);
      seq.block_ids = blocks[s];
      seq.sample = true;
      out.sequences.push_back(std::move(seq));
    }
    if (out.sequences.empty()) break;
    auto result = runner.Execute(out);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return runs;
    for (size_t i = 0; i < out.sequences.size(); ++i) {
      const size_t s = out.sequences[i].request_id;
      computed[s] += static_cast<int64_t>(out.sequences[i].token_ids.size());
      const float* row = result->Row(i);
      runs[s].logits.emplace_back(row, row + kVocab);
      if (computed[s] >= static_cast<int64_t>(prompts[s].size()) &&
          static_cast<int64_t>(runs[s].generated.size()) < generate) {
        const int32_t greedy = static_cast<int32_t>(std::max_element(row, row + kVocab) - row);
        runs[s].generated.push_back(greedy);
        tokens[s].push_back(forced ? (*forced)[s][runs[s].generated.size() - 1] : greedy);
      }
    }
  }
  return runs;
}

double MaxAbsDiff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    for (size_t j = 0; j < a[i].size(); ++j) worst = std::max(worst, std::abs(double{a[i][j]} - b[i][j]));
  }
  return worst;
}

TEST(LlamaModelRunnerKvDtypeTest, SixteenBitCachesHalveTheBytesPerToken) {
  auto runner = Runner(KvCacheDtype::kFloat32);
  const int64_t fp32 = runner->kv_bytes_per_token(KvCacheDtype::kFloat32);
  EXPECT_EQ(fp32, kLayers * 2 * kKvHeads * (kHidden / kHeads) * 4);
  EXPECT_EQ(runner->kv_bytes_per_token(KvCacheDtype::kBFloat16) * 2, fp32);
  EXPECT_EQ(runner->kv_bytes_per_token(KvCacheDtype::kFloat16) * 2, fp32);
  EXPECT_EQ(runner->kv_cache_dtype(), KvCacheDtype::kFloat32);
  ASSERT_TRUE(runner->AllocateKvCache(16, 8, KvCacheDtype::kFloat16).ok());
  EXPECT_EQ(runner->kv_cache_dtype(), KvCacheDtype::kFloat16);
}

// The cache is an anonymous mapping (zero pages from the kernel): a size no address
// space holds, or one whose byte count overflows, is ResourceExhausted naming the
// cache, and the runner still works with a sane reallocation afterwards.
TEST(LlamaModelRunnerKvDtypeTest, ImpossibleCacheSizesAreResourceExhausted) {
  auto runner = Runner(KvCacheDtype::kFloat32);
  for (int64_t blocks : {int64_t{1} << 40, int64_t{1} << 62, int64_t{-1}}) {
    const absl::Status status = runner->AllocateKvCache(blocks, 8, KvCacheDtype::kFloat32);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << blocks;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("cannot allocate the KV cache")) << blocks;
  }
  ASSERT_TRUE(runner->AllocateKvCache(16, 8, KvCacheDtype::kFloat32).ok());
  EXPECT_EQ(runner->kv_cache_dtype(), KvCacheDtype::kFloat32);
}

// Logits with a 16-bit cache stay close to fp32's over a 150-token prompt (chunked
// prefill: later chunks read what earlier steps stored) and 40 decoded tokens, fed the
// fp32 run's tokens so every step compares the same inputs.
//
// Bounds: bf16 keeps 8 significant bits (relative rounding error ≤ 2^-9 ≈ 0.2 % per K/V
// element), fp16 11 bits (≤ 2^-12 ≈ 0.025 %), and an error in K/V moves the logits by
// about that fraction of their scale. This random model's logits reach |62.2|; measured
// maximum errors: bf16 0.193 (0.31 % of that), fp16 0.027 (0.04 %). Bounds: 1 % and
// 0.15 % of max |logit|; fp16 at least 4x tighter than bf16 (3 more bits: 8x expected).
// Greedy: wherever fp32's top-2 margin exceeds twice the bound, the argmax is the same.
TEST(LlamaModelRunnerKvDtypeTest, SixteenBitLogitsStayCloseToFp32) {
  const std::vector<int32_t> prompt = Prompt(150, 5);
  auto fp32 = Runner(KvCacheDtype::kFloat32);
  const Trace ref = Generate(*fp32, {prompt}, 16, 40, 8)[0];
  ASSERT_EQ(ref.generated.size(), 40u);
  const std::vector<std::vector<int32_t>> forced = {ref.generated};
  double err[3] = {0, 0, 0};
  for (KvCacheDtype dtype : {KvCacheDtype::kBFloat16, KvCacheDtype::kFloat16}) {
    auto runner = Runner(dtype);
    const Trace run = Generate(*runner, {prompt}, 16, 40, 8, 0, &forced)[0];
    err[static_cast<int>(dtype)] = MaxAbsDiff(run.logits, ref.logits);
  }
  const double bf16 = err[static_cast<int>(KvCacheDtype::kBFloat16)];
  const double fp16 = err[static_cast<int>(KvCacheDtype::kFloat16)];
  double range = 0;
  for (const auto& row : ref.logits) for (float x : row) range = std::max(range, std::abs(double{x}));
  std::printf("max |logit - fp32 logit|: bf16 %.6f, fp16 %.6f (max |logit| %.3f)\n", bf16, fp16, range);
  EXPECT_GT(bf16, 0.0);  // the cache really is 16-bit
  EXPECT_LT(bf16, 0.01 * range);
  EXPECT_LT(fp16, 0.0015 * range);
  EXPECT_LT(fp16 * 4, bf16);
  for (KvCacheDtype dtype : {KvCacheDtype::kBFloat16, KvCacheDtype::kFloat16}) {
    const double bound = (dtype == KvCacheDtype::kBFloat16 ? 0.01 : 0.0015) * range;
    const Trace run = Generate(*Runner(dtype), {prompt}, 16, 40, 8, 0, &forced)[0];
    int decisive = 0;
    for (size_t i = 0; i < ref.logits.size(); ++i) {
      std::vector<float> sorted = ref.logits[i];
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
      if (sorted[0] - sorted[1] <= 2 * bound) continue;
      ++decisive;
      const auto& r = ref.logits[i];
      const auto& g = run.logits[i];
      EXPECT_EQ(std::max_element(g.begin(), g.end()) - g.begin(), std::max_element(r.begin(), r.end()) - r.begin())
          << KvCacheDtypeName(dtype) << " step " << i;
    }
    EXPECT_GT(decisive, 20) << KvCacheDtypeName(dtype);
  }
}

// Batched == unbatched with a 16-bit cache: two sequences decoded together give the
// logits each gives alone (the cache rows are per sequence; only matmul blocking by rows
// can change the last bits).
TEST(LlamaModelRunnerKvDtypeTest, BatchedEqualsUnbatched) {
  for (KvCacheDtype dtype : {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16, KvCacheDtype::kFloat16}) {
    SCOPED_TRACE(KvCacheDtypeName(dtype));
    const std::vector<int32_t> a = Prompt(37, 11), b = Prompt(21, 12);
    auto together = Runner(dtype, 4);
    const std::vector<Trace> both = Generate(*together, {a, b}, 8, 12, 4);
    auto alone = Runner(dtype, 4);
    const Trace only_a = Generate(*alone, {a}, 8, 12, 4)[0];
    const Trace only_b = Generate(*alone, {b}, 8, 12, 4, /*first_block=*/30)[0];
    EXPECT_EQ(both[0].generated, only_a.generated);
    EXPECT_EQ(both[1].generated, only_b.generated);
    EXPECT_LT(MaxAbsDiff(both[0].logits, only_a.logits), 1e-4);
    EXPECT_LT(MaxAbsDiff(both[1].logits, only_b.logits), 1e-4);
  }
}

}  // namespace
}  // namespace infera::llm

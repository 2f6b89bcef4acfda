#include "llm/llama_model_runner.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <sys/mman.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/str_cat.h"
#include "llm/block_projection.h"
#include "llm/cpu_kernels.h"
#include "llm/llama_weights.h"
#include "llm/llm_model_options.h"
#include "llm/worker_team.h"
#include "quant/dequantize.h"

namespace infera::llm {
namespace {

// y (+)= x · W (+ bias) for x [rows, in] contiguous, y rows of stride `ldy`.
// Packed: the panels are split over the team's threads (each streams its own panels
// once for all rows). BLAS: a transposed GEMV for one row (1.5-3x faster than GEMM with
// M = 1 in OpenBLAS), an NN GEMM otherwise. GGUF projections (Projection::blocks):
// block_projection.h, with the runner's workspace.
void Matmul(const float* x, int64_t rows, const Projection& w, const float* bias, float* y, int64_t ldy,
            bool accumulate, BlockProjectionWorkspace* workspace, WorkerTeam& team) {
  if (!w.blocks.empty()) {
    BlockProjection(x, rows, w, bias, y, ldy, accumulate, workspace, team);
    return;
  }
  if (!w.packed.empty()) {
    team.ParallelFor(0, w.packed.num_panels(), 1, [&](int64_t begin, int64_t end) {
      PackedMatmul(x, rows, w.in, w.packed, bias, y, ldy, accumulate, begin, end);
    });
    return;
  }
  at::Tensor xt = at::from_blob(const_cast<float*>(x), {rows, w.in}, at::kFloat);
  at::Tensor yt = at::from_blob(y, {rows, w.out}, {ldy, 1}, at::kFloat);
  const float beta = accumulate ? 1.0f : 0.0f;
  if (rows == 1) {
    at::Tensor row = yt[0];
    row.addmv_(w.in_out.t(), xt[0], beta, 1.0f);
  } else {
    yt.addmm_(xt, w.in_out, beta, 1.0f);
  }
  if (bias) yt.add_(at::from_blob(const_cast<float*>(bias), {w.out}, at::kFloat));
}

// y = x · W (+ bias), y a contiguous [rows, out] tensor.
void LinearInto(const at::Tensor& x, const Projection& w, const at::Tensor& y, BlockProjectionWorkspace* workspace,
                WorkerTeam& team, const at::Tensor& bias = {}) {
  Matmul(x.data_ptr<float>(), x.size(0), w, bias.defined() ? bias.data_ptr<float>() : nullptr, y.data_ptr<float>(),
         w.out, false, workspace, team);
}

// x · W (+ bias) as a new [rows, out] tensor.
at::Tensor Linear(const at::Tensor& x, const Projection& w, BlockProjectionWorkspace* workspace, WorkerTeam& team,
                  const at::Tensor& bias = {}) {
  at::Tensor y = at::empty({x.size(0), w.out}, at::kFloat);
  LinearInto(x, w, y, workspace, team, bias);
  return y;
}

// A contiguous [rows, cols] float tensor in `buffer`'s memory, which grows when too small
// and is kept for the next layer and step. Why: a prefill step's largest activations are
// tens of MB (gate/up at 512 tokens and FFN 8192: 33.5 MB), above glibc's 32 MB mmap
// threshold cap, so a fresh tensor per layer was a fresh mapping: 8192 page faults and
// zeroed pages per layer, 6-9 % of a 512-token prefill's CPU time in the kernel.
at::Tensor Scratch(at::Tensor& buffer, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  if (!buffer.defined() || buffer.numel() < n) buffer = at::empty({n}, at::kFloat);
  return buffer.narrow(0, 0, n).view({rows, cols});
}

// residual += x · W (+ bias), in place.
void AddLinear(at::Tensor& residual, const at::Tensor& x, const Projection& w, BlockProjectionWorkspace* workspace,
               WorkerTeam& team, const at::Tensor& bias = {}) {
  Matmul(x.data_ptr<float>(), x.size(0), w, bias.defined() ? bias.data_ptr<float>() : nullptr,
         residual.data_ptr<float>(), residual.size(1), true, workspace, team);
}

// The flattened token batch of one step.
struct StepBatch {
  std::vector<int64_t> ids, positions, slots;
  std::vector<int32_t> seq_of_token;
  // Token index of each logits row: a sampled sequence's last token, or its last
  // 1 + num_draft_tokens tokens (speculative decoding).
  std::vector<int64_t> sample_rows;
  std::vector<float> rope_cos, rope_sin;  // [token][head_dim / 2], shared by every layer
  // Gemma-3's local layers' rope (rope_local_theta); empty when the model has none.
  std::vector<float> local_cos, local_sin;
};

// cos/sin of position · inv_freq for every token, in float32 as Hugging Face does.
// `scale` multiplies both (longrope's attention factor; 1 otherwise).
void RopeTables(const std::vector<int64_t>& positions, const std::vector<float>& inv_freq, float scale,
                std::vector<float>& cos, std::vector<float>& sin) {
  const size_t half = inv_freq.size();
  cos.resize(positions.size() * half);
  sin.resize(positions.size() * half);
  for (size_t t = 0; t < positions.size(); ++t) {
    const float pos = static_cast<float>(positions[t]);
    for (size_t i = 0; i < half; ++i) {
      const float angle = pos * inv_freq[i];
      cos[t * half + i] = std::cos(angle) * scale;
      sin[t * half + i] = std::sin(angle) * scale;
    }
  }
}

}  // namespace

struct LlamaModelRunner::Impl {
  LlamaWeights weights;
  int num_threads = 1;
  std::vector<float> inv_freq;
  std::vector<float> inv_freq_local;  // Gemma-3 local layers; empty otherwise
  at::Tensor kv_cache;  // [L, 2, num_blocks, block_size, Hkv, D] of kv_dtype
  KvCacheDtype kv_dtype = KvCacheDtype::kFloat32;
  int64_t num_blocks = 0;
  PagedKvLayout layout;
  BlockProjectionWorkspace workspace;  // GGUF projections' buffers, reused by every step
  // Per-layer activations, reused by every layer and step (Scratch): at most
  // max_num_batched_tokens rows each.
  struct {
    at::Tensor qkv, attn, gate_up, act;
  } scratch;
  std::unique_ptr<WorkerTeam> team;    // num_threads threads: every parallel region of a step

  absl::StatusOr<StepBatch> Flatten(const SchedulerOutput& step) const;
  void Layer(int64_t l, const SchedulerOutput& step, const StepBatch& batch, at::Tensor& x);
  void RopeAndStore(int64_t l, const StepBatch& batch, at::Tensor& qkv);
  void Attention(int64_t l, const SchedulerOutput& step, const StepBatch& batch,
                 const at::Tensor& qkv, at::Tensor& out);
  at::Tensor Norm(const at::Tensor& x, const at::Tensor& weight) const;
  void UnpermuteQk(at::Tensor& qkv) const;
  // The first element of one layer's K (kv = 0) or V (kv = 1) cache.
  void* CacheBase(int64_t layer, int kv) {
    return static_cast<char*>(kv_cache.data_ptr()) +
           (layer * 2 + kv) * num_blocks * layout.block_size * layout.SlotStride() * KvCacheElementSize(kv_dtype);
  }
};

LlamaModelRunner::LlamaModelRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LlamaModelRunner::~LlamaModelRunner() = default;

absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LlamaModelRunner::LoadGguf(const std::filesystem::path& gguf_file,
                                                                              const LlmModelOptions& options,
                                                                              int num_threads) {
  auto weights = LlamaWeights::LoadGguf(
      gguf_file, options.use_mmap ? gguf::GgufResidency::kMapped : gguf::GgufResidency::kHugePageCopy,
      options.matmul_kernel, options.quantization);
  return FromWeights(std::move(weights), options, num_threads);
}

absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LlamaModelRunner::Load(
    const std::filesystem::path& model_dir, int num_threads, MatmulKernel kernel, WeightQuantization quantization) {
  auto weights = LlamaWeights::Load(model_dir, kernel, quantization);
  if (!weights.ok()) return weights.status();
  return FromWeights(std::move(*weights), num_threads);
}

std::unique_ptr<LlamaModelRunner> LlamaModelRunner::FromWeights(LlamaWeights weights, int num_threads) {
  auto impl = std::make_unique<Impl>();
  impl->weights = std::move(weights);
  impl->num_threads = std::max(1, num_threads);
  impl->team = std::make_unique<WorkerTeam>(impl->num_threads);
  impl->inv_freq = impl->weights.config.RopeInverseFrequencies();
  if (impl->weights.config.rope_local_theta > 0) {
    impl->inv_freq_local = impl->weights.config.RopeInverseFrequencies(/*local=*/true);
  }
  impl->layout.num_kv_heads = impl->weights.config.num_kv_heads;
  impl->layout.head_dim = impl->weights.config.head_dim;
  return std::unique_ptr<LlamaModelRunner>(new LlamaModelRunner(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LlamaModelRunner::Load(const std::filesystem::path& model_dir,
                                                                          const LlmModelOptions& options,
                                                                          int num_threads) {
  return FromWeights(LlamaWeights::Load(model_dir, options.matmul_kernel, options.quantization), options,
                     num_threads);
}

absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LlamaModelRunner::FromWeights(
    absl::StatusOr<LlamaWeights> weights, const LlmModelOptions& options, int num_threads) {
  if (!weights.ok()) return weights.status();
  weights->config.SelectLongRopeRegime(options.ModelLen(weights->config));  // before the rope tables
  return FromWeights(std::move(*weights), num_threads);
}

const LlamaConfig& LlamaModelRunner::config() const { return impl_->weights.config; }
size_t LlamaModelRunner::num_parameters() const { return impl_->weights.num_parameters; }
int64_t LlamaModelRunner::vocab_size() const { return impl_->weights.config.vocab_size; }
size_t LlamaModelRunner::bytes_per_decode_step() const {
  return impl_->weights.BytesStreamedPerDecodeStep();
}
size_t LlamaModelRunner::weight_bytes() const { return impl_->weights.BytesInMemory(); }

int64_t LlamaModelRunner::kv_bytes_per_token(KvCacheDtype dtype) const {
  const LlamaConfig& c = impl_->weights.config;
  return c.num_layers * 2 * c.num_kv_heads * c.head_dim * KvCacheElementSize(dtype);
}

KvCacheDtype LlamaModelRunner::kv_cache_dtype() const { return impl_->kv_dtype; }

absl::Status LlamaModelRunner::AllocateKvCache(int64_t num_blocks, int64_t block_size, KvCacheDtype dtype) {
  const LlamaConfig& c = impl_->weights.config;
  // 16-bit caches hold raw bf16/fp16 words (StoreKvRow / PagedAttentionHead); the ATen
  // dtype only sizes and labels the storage.
  const at::ScalarType type = dtype == KvCacheDtype::kFloat32    ? at::kFloat
                              : dtype == KvCacheDtype::kBFloat16 ? at::kBFloat16
                                                                 : at::kHalf;
  const std::vector<int64_t> sizes = {c.num_layers, 2, num_blocks, block_size, c.num_kv_heads, c.head_dim};
  auto failed = [&](std::string_view why) {
    return absl::ResourceExhaustedError(StrCat("cannot allocate the KV cache (", num_blocks, " blocks of ",
                                               block_size, " tokens, ", KvCacheDtypeName(dtype), "): ", why));
  };
  int64_t bytes = static_cast<int64_t>(c10::elementSize(type));
  for (int64_t size : sizes) {
    if (size < 0 || __builtin_mul_overflow(bytes, size, &bytes)) return failed("the size overflows");
  }
  impl_->kv_cache = at::Tensor();  // a reallocation never holds both
  if (bytes == 0) {
    impl_->kv_cache = at::zeros(sizes, type);  // nothing to map
  } else {
    // Zeros straight from the kernel: an anonymous private mapping reads as zero and
    // gets a page only when a request first writes there, so the load does not write
    // every byte (at::zeros did: 35 ms for the demo model, docs/cold_start.md) and an
    // idle model's cache costs no resident memory. Same contents as at::zeros.
    void* data = ::mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) return failed(StrCat("mmap of ", bytes, " bytes: ", std::strerror(errno)));
    try {
      impl_->kv_cache = at::from_blob(
          data, sizes, [bytes](void* p) { ::munmap(p, static_cast<size_t>(bytes)); },
          at::TensorOptions().dtype(type));
    } catch (const std::exception& e) {
      ::munmap(data, static_cast<size_t>(bytes));
      return failed(e.what());
    }
  }
  impl_->kv_dtype = dtype;
  impl_->num_blocks = num_blocks;
  impl_->layout.block_size = block_size;
  return absl::OkStatus();
}

absl::StatusOr<StepBatch> LlamaModelRunner::Impl::Flatten(const SchedulerOutput& step) const {
  StepBatch b;
  const int64_t bs = layout.block_size;
  for (size_t s = 0; s < step.sequences.size(); ++s) {
    const ScheduledSequence& seq = step.sequences[s];
    const int64_t end = seq.start_position + static_cast<int64_t>(seq.token_ids.size());
    if (seq.token_ids.empty() || static_cast<int64_t>(seq.block_ids.size()) * bs < end) {
      return absl::InternalError(StrCat("request ", seq.request_id, ": block table of ",
                                        seq.block_ids.size(), " blocks does not cover ", end, " tokens"));
    }
    for (int32_t block : seq.block_ids) {
      if (block < 0 || block >= num_blocks) {
        return absl::InternalError(StrCat("request ", seq.request_id, ": block id ", block, " out of range"));
      }
    }
    if (weights.config.rope_scaling.type == "longrope" && !weights.config.rope_scaling.use_long_factor &&
        end > weights.config.rope_scaling.original_max_position_embeddings) {
      return absl::InvalidArgumentError(StrCat("request ", seq.request_id, ": position ", end - 1,
                                               " is past original_max_position_embeddings ",
                                               weights.config.rope_scaling.original_max_position_embeddings,
                                               " (the model was loaded with longrope's short factors)"));
    }
    for (size_t i = 0; i < seq.token_ids.size(); ++i) {
      const int64_t id = seq.token_ids[i];
      if (id < 0 || id >= weights.config.vocab_size) {
        return absl::InvalidArgumentError(StrCat("token id ", id, " is outside the vocabulary (",
                                                 weights.config.vocab_size, ")"));
      }
      const int64_t pos = seq.start_position + static_cast<int64_t>(i);
      b.ids.push_back(id);
      b.positions.push_back(pos);
      b.slots.push_back(static_cast<int64_t>(seq.block_ids[pos / bs]) * bs + pos % bs);
      b.seq_of_token.push_back(static_cast<int32_t>(s));
    }
    const int64_t rows = seq.NumLogitsRows();
    if (rows > static_cast<int64_t>(seq.token_ids.size())) {
      return absl::InternalError(StrCat("request ", seq.request_id, ": ", rows, " logits rows wanted from ",
                                        seq.token_ids.size(), " tokens"));
    }
    for (int64_t r = rows; r > 0; --r) b.sample_rows.push_back(static_cast<int64_t>(b.ids.size()) - r);
  }
  // Hugging Face: freqs = position * inv_freq in float32, then cos/sin.
  const RopeScaling& rs = weights.config.rope_scaling;
  RopeTables(b.positions, inv_freq, static_cast<float>(rs.attention_factor), b.rope_cos, b.rope_sin);
  if (!inv_freq_local.empty()) RopeTables(b.positions, inv_freq_local, 1.0f, b.local_cos, b.local_sin);
  return b;
}

// GGUF llama files store attn_q / attn_k rows permuted for interleaved RoPE: within a
// head, output 2i + j (j = 0, 1) is Hugging Face's output j·D/2 + i. Reordering the
// outputs (exact: a permutation of finished values) restores the rotate-half layout the
// rest of the step uses, without copying the weights out of the mapping.
void LlamaModelRunner::Impl::UnpermuteQk(at::Tensor& qkv) const {
  const LlamaConfig& c = weights.config;
  const int64_t d = c.head_dim, half = d / 2, width = qkv.size(1), heads = c.num_heads + c.num_kv_heads;
  float* base = qkv.data_ptr<float>();
  team->ParallelFor(0, qkv.size(0), 8, [&](int64_t begin, int64_t end) {
    std::vector<float> head(static_cast<size_t>(d));
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t hd = 0; hd < heads; ++hd) {
        float* p = base + t * width + hd * d;
        for (int64_t i = 0; i < half; ++i) {
          head[static_cast<size_t>(i)] = p[2 * i];
          head[static_cast<size_t>(half + i)] = p[2 * i + 1];
        }
        std::memcpy(p, head.data(), static_cast<size_t>(d) * sizeof(float));
      }
    }
  });
}

at::Tensor LlamaModelRunner::Impl::Norm(const at::Tensor& x, const at::Tensor& weight) const {
  const int64_t rows = x.size(0), n = x.size(1);
  at::Tensor out = at::empty({rows, n}, at::kFloat);
  const float eps = static_cast<float>(weights.config.rms_norm_eps);
  const float* src = x.data_ptr<float>();
  const float* w = weight.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  team->ParallelFor(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) RmsNorm(src + r * n, w, n, eps, dst + r * n);
  });
  return out;
}

void LlamaModelRunner::Impl::RopeAndStore(int64_t l, const StepBatch& batch, at::Tensor& qkv) {
  const LlamaConfig& c = weights.config;
  const int64_t d = c.head_dim, half = d / 2, width = qkv.size(1);
  const int64_t q_width = c.num_heads * d, kv_width = c.num_kv_heads * d;
  float* base = qkv.data_ptr<float>();
  char* k_cache = static_cast<char*>(CacheBase(l, 0));
  char* v_cache = static_cast<char*>(CacheBase(l, 1));
  const int64_t slot_bytes = layout.SlotStride() * KvCacheElementSize(kv_dtype);
  const KvCacheDtype dtype = kv_dtype;
  const bool local = c.UsesLocalRope(l);
  const std::vector<float>& cos_table = local ? batch.local_cos : batch.rope_cos;
  const std::vector<float>& sin_table = local ? batch.local_sin : batch.rope_sin;
  const LlamaLayerWeights& w = weights.layers[l];
  const float* q_norm = w.q_norm.defined() ? w.q_norm.data_ptr<float>() : nullptr;
  const float* k_norm = w.k_norm.defined() ? w.k_norm.data_ptr<float>() : nullptr;
  const float eps = static_cast<float>(c.rms_norm_eps);
  team->ParallelFor(0, static_cast<int64_t>(batch.ids.size()), 8, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* cos = cos_table.data() + t * half;
      const float* sin = sin_table.data() + t * half;
      float* row = base + t * width;
      if (q_norm) {  // Qwen3 / Gemma-3: RMSNorm over each head, before RoPE (in place)
        for (int64_t h = 0; h < c.num_heads; ++h) RmsNorm(row + h * d, q_norm, d, eps, row + h * d);
        for (int64_t h = 0; h < c.num_kv_heads; ++h) {
          RmsNorm(row + q_width + h * d, k_norm, d, eps, row + q_width + h * d);
        }
      }
      ApplyRope(row, c.num_heads, d, cos, sin);
      ApplyRope(row + q_width, c.num_kv_heads, d, cos, sin);
      StoreKvRow(row + q_width, kv_width, dtype, k_cache + batch.slots[t] * slot_bytes);
      StoreKvRow(row + q_width + kv_width, kv_width, dtype, v_cache + batch.slots[t] * slot_bytes);
    }
  });
}

void LlamaModelRunner::Impl::Attention(int64_t l, const SchedulerOutput& step,
                                       const StepBatch& batch, const at::Tensor& qkv,
                                       at::Tensor& out) {
  const LlamaConfig& c = weights.config;
  const int64_t d = c.head_dim, heads = c.num_heads, group = c.num_heads / c.num_kv_heads;
  const int64_t width = qkv.size(1);
  const float scale = c.AttentionScale();
  const int64_t window = c.WindowOf(l);
  const float softcap = static_cast<float>(c.attn_logit_softcapping);
  const float* q_base = qkv.data_ptr<float>();
  float* out_base = out.data_ptr<float>();
  const void* k_cache = CacheBase(l, 0);
  const void* v_cache = CacheBase(l, 1);
  const KvCacheDtype dtype = kv_dtype;
  const int64_t items = static_cast<int64_t>(batch.ids.size()) * heads;
  team->ParallelFor(0, items, 4, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> scratch;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / heads, h = item % heads;
      const ScheduledSequence& seq = step.sequences[batch.seq_of_token[t]];
      const int64_t context = batch.positions[t] + 1;  // causal: itself and everything before
      if (static_cast<int64_t>(scratch.size()) < context) scratch.resize(context);
      AttentionVariant variant;
      variant.logit_softcap = softcap;
      // Sliding window: keys at positions p - window + 1 .. p (Hugging Face's mask).
      if (window > 0) variant.window_start = std::max<int64_t>(0, context - window);
      PagedAttentionHead(q_base + t * width + h * d, k_cache, v_cache, dtype, seq.block_ids.data(), context,
                         h / group, layout, scale, scratch.data(), out_base + t * heads * d + h * d, variant);
    }
  });
}

void LlamaModelRunner::Impl::Layer(int64_t l, const SchedulerOutput& step, const StepBatch& batch,
                                   at::Tensor& x) {
  const LlamaLayerWeights& w = weights.layers[l];
  const LlamaConfig& c = weights.config;
  const int64_t tokens = x.size(0);
  at::Tensor h = Norm(x, w.input_norm);
  at::Tensor qkv = Scratch(scratch.qkv, tokens, w.qkv.out);
  LinearInto(h, w.qkv, qkv, &workspace, *team, w.qkv_bias);
  if (weights.qk_permuted) UnpermuteQk(qkv);
  RopeAndStore(l, batch, qkv);
  at::Tensor attn = Scratch(scratch.attn, tokens, c.num_heads * c.head_dim);
  Attention(l, step, batch, qkv, attn);
  if (c.gemma) {
    // Sandwich norms: each sub-block's output is normed before its residual add.
    x.add_(Norm(Linear(attn, w.o, &workspace, *team, w.o_bias), w.post_norm));
    h = Norm(x, w.pre_ff_norm);
  } else {
    AddLinear(x, attn, w.o, &workspace, *team, w.o_bias);
    h = Norm(x, w.post_norm);
  }
  at::Tensor gate_up = Scratch(scratch.gate_up, tokens, w.gate_up.out);
  LinearInto(h, w.gate_up, gate_up, &workspace, *team);
  const int64_t inter = c.intermediate_size;
  at::Tensor act = Scratch(scratch.act, tokens, inter);
  const float* gu = gate_up.data_ptr<float>();
  float* a = act.data_ptr<float>();
  const bool gelu = c.activation == MlpActivation::kGeluTanh;
  team->ParallelFor(0, tokens, 4, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* gate = gu + t * 2 * inter;
      if (gelu) GeluTanhMul(gate, gate + inter, inter, a + t * inter);
      else SiluMul(gate, gate + inter, inter, a + t * inter);
    }
  });
  if (c.gemma) {
    x.add_(Norm(Linear(act, w.down, &workspace, *team), w.post_ff_norm));
  } else {
    AddLinear(x, act, w.down, &workspace, *team);
  }
}

absl::StatusOr<ModelRunnerOutput> LlamaModelRunner::Execute(const SchedulerOutput& step) {
  Impl& m = *impl_;
  if (!m.kv_cache.defined()) return absl::FailedPreconditionError("KV cache not allocated");
  auto batch = m.Flatten(step);
  if (!batch.ok()) return batch.status();
  ModelRunnerOutput output;
  output.vocab_size = m.weights.config.vocab_size;
  if (batch->ids.empty()) return output;
  // The step's own regions run on `team`; ATen's ops (the BLAS matmul path, index_select,
  // add_) on this thread's OpenMP threads. get() first: a thread's first ATen parallel
  // call adopts the process-wide value.
  if (at::get_num_threads() != m.num_threads) at::set_num_threads(m.num_threads);
  try {
    at::InferenceMode guard;
    const int64_t tokens = static_cast<int64_t>(batch->ids.size());
    at::Tensor x;
    if (m.weights.embed_blocks) {  // GGUF: dequantise each looked-up row of token_embd
      const quant::BlockMatrix& e = *m.weights.embed_blocks;
      x = at::empty({tokens, e.k()}, at::kFloat);
      float* dst = x.data_ptr<float>();
      for (int64_t t = 0; t < tokens; ++t) quant::DequantizeRow(e.type(), e.row(batch->ids[t]), e.k(), dst + t * e.k());
    } else {
      at::Tensor ids = at::from_blob(batch->ids.data(), {tokens}, at::kLong);
      x = m.weights.embed.index_select(0, ids);
    }
    const LlamaConfig& c = m.weights.config;
    if (c.embedding_scale != 1.0) x.mul_(static_cast<float>(c.embedding_scale));  // Gemma: sqrt(hidden)
    for (int64_t l = 0; l < m.weights.config.num_layers; ++l) m.Layer(l, step, *batch, x);
    const int64_t sampled = static_cast<int64_t>(batch->sample_rows.size());
    if (sampled > 0) {
      at::Tensor rows = at::from_blob(batch->sample_rows.data(), {sampled}, at::kLong);
      at::Tensor last = m.Norm(x.index_select(0, rows), m.weights.final_norm);
      output.logits.resize(static_cast<size_t>(sampled * output.vocab_size));
      Matmul(last.data_ptr<float>(), sampled, m.weights.lm_head, nullptr, output.logits.data(), output.vocab_size,
             false, &m.workspace, *m.team);
      if (c.final_logit_softcapping > 0) {  // Gemma-2: cap · tanh(logit / cap)
        const float cap = static_cast<float>(c.final_logit_softcapping);
        for (float& v : output.logits) v = cap * std::tanh(v / cap);
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("model step failed: ", e.what()));
  }
  return output;
}

}  // namespace infera::llm

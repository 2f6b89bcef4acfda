// LlamaModelRunner: the ModelRunner for Llama-family models on LibTorch/ATen (CPU, fp32).
//
// Owns the weights (llama_weights.h) and the paged KV cache memory. One step computes the
// tokens of every scheduled sequence as one flattened batch [T, hidden] (prefill chunks
// and decode tokens mixed): per layer RMSNorm → fused QKV GEMM → RoPE and K/V written
// into the cache slots named by the block tables → paged attention over each sequence's
// blocks → O GEMM (+ residual, in place) → RMSNorm → fused gate/up GEMM → SwiGLU → down
// GEMM (+ residual); then the final norm and the LM head only for sampled sequences.
// The architecture variations of llama_config.h (q/k norm before RoPE, sandwich norms,
// GeGLU, scaled embeddings, attention and final logit soft-capping, per-layer sliding
// windows and Gemma-3's local rope) are branches inside these same steps.
// GGUF models (LoadGguf): the projections are quant::BlockMatmul on the file's blocks,
// llama's permuted q/k outputs are reordered after the qkv projection, embedding rows
// are dequantised per token (docs/llm.md, "GGUF models").
// GEMMs are ATen (OpenBLAS); the rest are cpu_kernels.h, parallelised over the runner's
// own WorkerTeam of num_threads threads (worker_team.h: it spins between the regions of
// a step instead of sleeping in OpenMP's passive wait).
//
// KV cache: one tensor [num_layers, 2 (K, V), num_blocks, block_size, num_kv_heads,
// head_dim] of the chosen KvCacheDtype (fp32, bf16 or fp16) allocated once by
// AllocateKvCache(); K/V are narrowed when written and widened to fp32 by the attention
// kernel (cpu_kernels.h), so compute stays fp32.
//
// This header is LibTorch-free; only the .cc files include ATen.
//
// Not thread-safe: Execute() on the engine thread only. ATen's intra-op thread count (for
// its own ops) is set on the calling thread at each Execute() (ATen's thread count is per
// OpenMP master thread; see docs/torch_backend.md).
#ifndef INFERA_LLM_LLAMA_MODEL_RUNNER_H_
#define INFERA_LLM_LLAMA_MODEL_RUNNER_H_

#include <cstdint>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "llm/kv_cache_dtype.h"
#include "llm/llama_config.h"
#include "llm/model_runner.h"

namespace infera::llm {

struct LlmModelOptions;  // llm_model_options.h

// How projections are multiplied: kPacked (packed_matmul.h, the default) or kBlas
// (OpenBLAS through ATen on [in, out] fp32 tensors; the previous path, for benchmarks).
enum class MatmulKernel { kPacked, kBlas };

// Weight-only quantisation applied at load (docs/llm.md, "Weight quantisation"): the
// projections become int8 (per output channel) or int4 (groups of 32 along K) packed
// matrices; the LM head becomes int8 for both; the embedding table stays fp32.
// kNone keeps fp32 (bf16 when the checkpoint is bf16). Needs MatmulKernel::kPacked.
enum class WeightQuantization { kNone, kInt8, kInt4 };

// "none", "int8", "int4": the `quantization` parameter's values.
inline const char* WeightQuantizationName(WeightQuantization q) {
  return q == WeightQuantization::kInt8 ? "int8" : q == WeightQuantization::kInt4 ? "int4" : "none";
}

class LlamaModelRunner : public ModelRunner {
 public:
  // Reads config.json and the weights in `model_dir`. `num_threads` >= 1. `kernel`
  // picks the projections' matmul (llama_weights.h); kBlas is for comparisons.
  // `quantization` other than kNone with kBlas is InvalidArgument.
  static absl::StatusOr<std::unique_ptr<LlamaModelRunner>> Load(
      const std::filesystem::path& model_dir, int num_threads, MatmulKernel kernel = MatmulKernel::kPacked,
      WeightQuantization quantization = WeightQuantization::kNone);
  // The runner as the `llm` backend builds it from a model's parsed config parameters
  // (matmul_kernel, quantization, max_model_len: longrope's regime): one
  // place, shared by the backend and tools/llm/llm_eval, so an option that changes the
  // runner applies to both.
  static absl::StatusOr<std::unique_ptr<LlamaModelRunner>> Load(const std::filesystem::path& model_dir,
                                                                 const LlmModelOptions& options, int num_threads);
  // A GGUF model file (docs/llm.md, "GGUF models"); its tensors stay in the file's bytes,
  // copied onto huge pages (mapped with use_mmap; docs/gguf.md, "Weights in memory").
  static absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LoadGguf(const std::filesystem::path& gguf_file,
                                                                     const LlmModelOptions& options, int num_threads);
  ~LlamaModelRunner() override;

  const LlamaConfig& config() const;
  size_t num_parameters() const;
  size_t weight_bytes() const;          // bytes of weights held in memory
  size_t bytes_per_decode_step() const;  // weights a batch-1 decode step streams
  // num_layers · 2 · num_kv_heads · head_dim · element size of `dtype` (4 or 2).
  int64_t kv_bytes_per_token(KvCacheDtype dtype = KvCacheDtype::kFloat32) const;

  // Allocates (zeroed) cache memory for `num_blocks` blocks of `block_size` tokens with
  // elements of `dtype`: an anonymous mapping, whose pages the kernel supplies zeroed on
  // first write (nothing is written at load). ResourceExhausted when the allocation fails.
  absl::Status AllocateKvCache(int64_t num_blocks, int64_t block_size,
                               KvCacheDtype dtype = KvCacheDtype::kFloat32);
  KvCacheDtype kv_cache_dtype() const;

  absl::StatusOr<ModelRunnerOutput> Execute(const SchedulerOutput& step) override;
  int64_t vocab_size() const override;

 private:
  struct Impl;
  explicit LlamaModelRunner(std::unique_ptr<Impl> impl);
  static std::unique_ptr<LlamaModelRunner> FromWeights(struct LlamaWeights weights, int num_threads);
  // The loaded weights as the options ask (longrope's regime from the served length).
  static absl::StatusOr<std::unique_ptr<LlamaModelRunner>> FromWeights(absl::StatusOr<struct LlamaWeights> weights,
                                                                        const LlmModelOptions& options,
                                                                        int num_threads);
  std::unique_ptr<Impl> impl_;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLAMA_MODEL_RUNNER_H_

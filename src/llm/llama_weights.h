// LlamaWeights: a Llama-family model's weights, loaded from safetensors (F32, BF16 or
// F16 on disk) and laid out for the runner. q/k/v are fused into one
// [hidden → (Hq + 2·Hkv)·D] projection and gate/up into one [hidden → 2·intermediate],
// so a layer is four matmuls; the LM head is a fifth (tied: packed from the embedding).
// Phi-3 checkpoints store them fused already (qkv_proj, gate_up_proj), in the same order.
//
// Projections, by MatmulKernel:
//   kPacked (default)  PackedMatrix (packed_matmul.h), packed once here: fp32, or bf16
//                      when the checkpoint is bf16 (kept exactly, half the bytes per step)
//   kBlas              fp32 ATen tensors [in, out] for OpenBLAS (GEMV for one row, NN
//                      GEMM otherwise): the previous path, kept for side-by-side benchmarks
// With WeightQuantization kInt8 / kInt4 (kPacked only) every layer projection is packed
// as PackedType kInt8 / kInt4 from its fp32 values, and the LM head as kInt8 for both
// (docs/llm.md, "Weight quantisation").
// Norms, biases and the embedding table are fp32 ATen tensors (F16/BF16 widened).
// LoadGguf (gguf_llama_weights.cc): a GGUF file's projections stay as its blocks in the
// file's bytes, mapped or copied onto huge pages (gguf::GgufResidency), and are multiplied
// by quant::BlockMatmul (Projection::blocks); the embedding too (rows dequantised when
// looked up); only norms and biases are widened (docs/llm.md, "GGUF models").
//
// IMPORTANT: internal to the model runner — the only header in src/llm that includes
// ATen. Do not include it from anything that must stay LibTorch-free.
//
// Thread-safe after Load() (read-only).
#ifndef INFERA_LLM_LLAMA_WEIGHTS_H_
#define INFERA_LLM_LLAMA_WEIGHTS_H_

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "gguf/gguf_file.h"
#include "llm/llama_config.h"
#include "llm/llama_model_runner.h"  // MatmulKernel
#include "llm/packed_matmul.h"
#include "quant/block_matmul.h"

namespace infera::llm {

// Part of a GGUF projection: one tensor's blocks in the file's mapping (quant::BlockMatrix,
// n = its outputs), writing outputs [out_offset, out_offset + n) of the projection.
struct BlockPart {
  quant::BlockMatrix matrix;
  int64_t out_offset = 0;
};

// One projection y = x · W, W mapping `in` features to `out`.
struct Projection {
  int64_t in = 0, out = 0;
  PackedMatrix packed;  // kPacked
  at::Tensor in_out;    // kBlas: fp32 [in, out]
  // GGUF: the file's tensors as they are (q, k, v as three parts of qkv; gate, up as two
  // of gate_up), multiplied by quant::BlockMatmul. Empty otherwise.
  std::vector<BlockPart> blocks;
  size_t bytes() const {
    if (!blocks.empty()) {
      size_t b = 0;
      for (const BlockPart& p : blocks) b += static_cast<size_t>(p.matrix.n() * p.matrix.row_bytes());
      return b;
    }
    return packed.empty() ? static_cast<size_t>(in_out.numel()) * 4 : packed.bytes();
  }
};

// Norm weights are stored ready to multiply: Gemma's (1 + w) is applied at load.
struct LlamaLayerWeights {
  at::Tensor input_norm;  // [hidden]
  // [hidden] post_attention_layernorm: the MLP's input norm, or with Gemma's sandwich
  // norms (config.gemma) the norm of the attention output before its residual add.
  at::Tensor post_norm;
  at::Tensor pre_ff_norm;   // [hidden] Gemma: the MLP's input norm; else undefined
  at::Tensor post_ff_norm;  // [hidden] Gemma: the MLP output's norm; else undefined
  at::Tensor q_norm, k_norm;  // [head_dim] with config.qk_norm; else undefined
  Projection qkv;         // hidden → (Hq + 2 Hkv) D
  at::Tensor qkv_bias;    // [(Hq + 2 Hkv) D] or undefined
  Projection o;           // Hq D → hidden
  at::Tensor o_bias;      // [hidden] or undefined
  Projection gate_up;     // hidden → 2 I (gate first)
  Projection down;        // I → hidden
};

struct LlamaWeights {
  LlamaConfig config;
  MatmulKernel kernel = MatmulKernel::kPacked;
  WeightQuantization quantization = WeightQuantization::kNone;
  at::Tensor embed;    // [vocab, hidden] fp32 (rows are looked up); undefined for GGUF
  // GGUF: the file (its mapping holds every projection's blocks), token_embd's blocks
  // (rows dequantised when looked up), and whether attn_q / attn_k rows are stored
  // permuted for interleaved RoPE (llama; the runner reorders their outputs).
  std::shared_ptr<const gguf::GgufFile> gguf;
  std::optional<quant::BlockMatrix> embed_blocks;
  bool qk_permuted = false;
  Projection lm_head;  // hidden → vocab
  at::Tensor final_norm;
  std::vector<LlamaLayerWeights> layers;
  size_t num_parameters = 0;  // as stored on disk (tied embeddings counted once)

  // Reads config.json and the safetensors in `dir`. Errors name the file and weight;
  // a quantisation with kBlas is InvalidArgument.
  static absl::StatusOr<LlamaWeights> Load(const std::filesystem::path& dir,
                                           MatmulKernel kernel = MatmulKernel::kPacked,
                                           WeightQuantization quantization = WeightQuantization::kNone);
  // Reads the GGUF model file `path` (docs/llm.md, "GGUF models"): tensors stay in the
  // file's bytes, held as `residency` says. Needs kPacked and kNone (the file's own types
  // are the quantisation).
  static absl::StatusOr<LlamaWeights> LoadGguf(const std::filesystem::path& path,
                                               gguf::GgufResidency residency,
                                               MatmulKernel kernel = MatmulKernel::kPacked,
                                               WeightQuantization quantization = WeightQuantization::kNone);
  // Bytes of every projection and norm (what a batch-1 decode step reads).
  size_t BytesStreamedPerDecodeStep() const;
  // Bytes held: the above plus the embedding table and biases.
  size_t BytesInMemory() const;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_LLAMA_WEIGHTS_H_

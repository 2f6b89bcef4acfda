#include "llm/llama_weights.h"

#include <cstring>

#include "api/float16.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/safetensors.h"

namespace infera::llm {
namespace {

// Copies a safetensors view into a new fp32 tensor, checking its shape.
absl::StatusOr<at::Tensor> ToFloat(const SafetensorsModel& st, const std::string& name,
                                   const std::vector<int64_t>& expected) {
  ASSIGN_OR_RETURN(TensorView view, st.Get(name));
  if (view.shape != expected) {
    return absl::InvalidArgumentError(StrCat("weight '", name, "' has shape [", StrJoin(view.shape, ","),
                                             "]; config.json implies [", StrJoin(expected, ","), "]"));
  }
  at::Tensor out = at::empty(expected, at::kFloat);
  float* dst = out.data_ptr<float>();
  const int64_t n = view.NumElements();
  switch (view.dtype) {
    case WeightType::kF32:
      std::memcpy(dst, view.data, view.num_bytes);
      break;
    case WeightType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, view.data + 2 * i, 2);
        dst[i] = Bf16ToFloat(h);
      }
      break;
    case WeightType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, view.data + 2 * i, 2);
        dst[i] = HalfToFloat(h);
      }
      break;
  }
  return out;
}

// How a projection is stored: the kernel, and for kPacked the quantisation.
struct Storage {
  MatmulKernel kernel = MatmulKernel::kPacked;
  WeightQuantization quantization = WeightQuantization::kNone;
};

// `w_out_in` is fp32 [out, in] (Hugging Face's layout, fused rows concatenated).
// `bf16`: the checkpoint stores this weight as bf16, so packing it as bf16 is exact.
// Quantised storage ignores it (quantised from the fp32 values, which are exact).
Projection MakeProjection(const at::Tensor& w_out_in, Storage storage, bool bf16) {
  const MatmulKernel kernel = storage.kernel;
  Projection p;
  p.out = w_out_in.size(0);
  p.in = w_out_in.size(1);
  if (kernel == MatmulKernel::kBlas) {
    p.in_out = w_out_in.t().contiguous();
  } else {
    at::Tensor w = w_out_in.contiguous();
    PackedType type = bf16 ? PackedType::kBF16 : PackedType::kF32;
    if (storage.quantization == WeightQuantization::kInt8) type = PackedType::kInt8;
    if (storage.quantization == WeightQuantization::kInt4) type = PackedType::kInt4;
    p.packed = PackedMatrix::FromOutIn(w.data_ptr<float>(), p.out, p.in, type);
  }
  return p;
}

bool IsBf16(const SafetensorsModel& st, const std::string& name) {
  auto view = st.Get(name);
  return view.ok() && view->dtype == WeightType::kBF16;
}

absl::StatusOr<at::Tensor> OptionalBias(const SafetensorsModel& st, const std::string& name,
                                        int64_t size) {
  if (!st.Has(name)) return at::Tensor();
  return ToFloat(st, name, {size});
}

// A norm weight, with Gemma's (1 + w) folded in.
absl::StatusOr<at::Tensor> NormWeight(const SafetensorsModel& st, const LlamaConfig& c, const std::string& name,
                                      int64_t size) {
  ASSIGN_OR_RETURN(at::Tensor w, ToFloat(st, name, {size}));
  if (c.gemma) w.add_(1.0f);
  return w;
}

absl::StatusOr<LlamaLayerWeights> LoadLayer(const SafetensorsModel& st, const LlamaConfig& c, int64_t i,
                                            Storage kernel) {
  const std::string p = StrCat("model.layers.", i, ".");
  const int64_t h = c.hidden_size, d = c.head_dim, q_out = c.num_heads * d,
                kv_out = c.num_kv_heads * d, inter = c.intermediate_size;
  LlamaLayerWeights w;
  ASSIGN_OR_RETURN(w.input_norm, NormWeight(st, c, p + "input_layernorm.weight", h));
  ASSIGN_OR_RETURN(w.post_norm, NormWeight(st, c, p + "post_attention_layernorm.weight", h));
  if (c.gemma) {
    ASSIGN_OR_RETURN(w.pre_ff_norm, NormWeight(st, c, p + "pre_feedforward_layernorm.weight", h));
    ASSIGN_OR_RETURN(w.post_ff_norm, NormWeight(st, c, p + "post_feedforward_layernorm.weight", h));
  }
  if (c.qk_norm) {
    ASSIGN_OR_RETURN(w.q_norm, NormWeight(st, c, p + "self_attn.q_norm.weight", d));
    ASSIGN_OR_RETURN(w.k_norm, NormWeight(st, c, p + "self_attn.k_norm.weight", d));
  }
  if (c.fused_weights) {
    const std::string qkv_name = p + "self_attn.qkv_proj.weight";
    ASSIGN_OR_RETURN(at::Tensor qkv, ToFloat(st, qkv_name, {q_out + 2 * kv_out, h}));
    w.qkv = MakeProjection(qkv, kernel, IsBf16(st, qkv_name));
  } else {
    ASSIGN_OR_RETURN(at::Tensor q, ToFloat(st, p + "self_attn.q_proj.weight", {q_out, h}));
    ASSIGN_OR_RETURN(at::Tensor k, ToFloat(st, p + "self_attn.k_proj.weight", {kv_out, h}));
    ASSIGN_OR_RETURN(at::Tensor v, ToFloat(st, p + "self_attn.v_proj.weight", {kv_out, h}));
    const bool qkv_bf16 = IsBf16(st, p + "self_attn.q_proj.weight") && IsBf16(st, p + "self_attn.k_proj.weight") &&
                          IsBf16(st, p + "self_attn.v_proj.weight");
    w.qkv = MakeProjection(at::cat({q, k, v}, 0), kernel, qkv_bf16);
  }
  ASSIGN_OR_RETURN(at::Tensor qb, OptionalBias(st, p + "self_attn.q_proj.bias", q_out));
  ASSIGN_OR_RETURN(at::Tensor kb, OptionalBias(st, p + "self_attn.k_proj.bias", kv_out));
  ASSIGN_OR_RETURN(at::Tensor vb, OptionalBias(st, p + "self_attn.v_proj.bias", kv_out));
  if (qb.defined() || kb.defined() || vb.defined()) {
    auto or_zeros = [](const at::Tensor& t, int64_t n) { return t.defined() ? t : at::zeros({n}); };
    w.qkv_bias = at::cat({or_zeros(qb, q_out), or_zeros(kb, kv_out), or_zeros(vb, kv_out)});
  }
  ASSIGN_OR_RETURN(at::Tensor o, ToFloat(st, p + "self_attn.o_proj.weight", {h, q_out}));
  w.o = MakeProjection(o, kernel, IsBf16(st, p + "self_attn.o_proj.weight"));
  ASSIGN_OR_RETURN(w.o_bias, OptionalBias(st, p + "self_attn.o_proj.bias", h));
  if (c.fused_weights) {
    const std::string gate_up_name = p + "mlp.gate_up_proj.weight";
    ASSIGN_OR_RETURN(at::Tensor gate_up, ToFloat(st, gate_up_name, {2 * inter, h}));
    w.gate_up = MakeProjection(gate_up, kernel, IsBf16(st, gate_up_name));
  } else {
    ASSIGN_OR_RETURN(at::Tensor gate, ToFloat(st, p + "mlp.gate_proj.weight", {inter, h}));
    ASSIGN_OR_RETURN(at::Tensor up, ToFloat(st, p + "mlp.up_proj.weight", {inter, h}));
    w.gate_up = MakeProjection(at::cat({gate, up}, 0), kernel,
                               IsBf16(st, p + "mlp.gate_proj.weight") && IsBf16(st, p + "mlp.up_proj.weight"));
  }
  ASSIGN_OR_RETURN(at::Tensor down, ToFloat(st, p + "mlp.down_proj.weight", {h, inter}));
  w.down = MakeProjection(down, kernel, IsBf16(st, p + "mlp.down_proj.weight"));
  return w;
}

}  // namespace

absl::StatusOr<LlamaWeights> LlamaWeights::Load(const std::filesystem::path& dir, MatmulKernel matmul,
                                                WeightQuantization quantization) {
  if (matmul == MatmulKernel::kBlas && quantization != WeightQuantization::kNone) {
    return absl::InvalidArgumentError("parameter quantization: int8/int4 need matmul_kernel packed (the blas path is fp32)");
  }
  LlamaWeights w;
  w.kernel = matmul;
  w.quantization = quantization;
  const Storage kernel{matmul, quantization};
  // The LM head: int8 for both quantisations (its error reaches every logit directly;
  // llama.cpp also keeps the output layer at higher precision in its 4-bit mixes).
  const Storage head{matmul, quantization == WeightQuantization::kNone ? WeightQuantization::kNone
                                                                       : WeightQuantization::kInt8};
  ASSIGN_OR_RETURN(w.config, LlamaConfig::Load(dir / "config.json"));
  ASSIGN_OR_RETURN(auto st, SafetensorsModel::Open(dir));
  const LlamaConfig& c = w.config;
  try {
    ASSIGN_OR_RETURN(w.embed, ToFloat(*st, "model.embed_tokens.weight", {c.vocab_size, c.hidden_size}));
    ASSIGN_OR_RETURN(w.final_norm, NormWeight(*st, c, "model.norm.weight", c.hidden_size));
    // Some tied checkpoints still carry lm_head.weight; an untied one must.
    if (st->Has("lm_head.weight") && !c.tie_word_embeddings) {
      ASSIGN_OR_RETURN(at::Tensor head_weight, ToFloat(*st, "lm_head.weight", {c.vocab_size, c.hidden_size}));
      w.lm_head = MakeProjection(head_weight, head, IsBf16(*st, "lm_head.weight"));
    } else if (c.tie_word_embeddings) {
      w.lm_head = MakeProjection(w.embed, head, IsBf16(*st, "model.embed_tokens.weight"));
    } else {
      return absl::InvalidArgumentError(StrCat("weight 'lm_head.weight' is missing from ", dir.string(),
                                               " and config.json has tie_word_embeddings false"));
    }
    for (int64_t i = 0; i < c.num_layers; ++i) {
      ASSIGN_OR_RETURN(LlamaLayerWeights layer, LoadLayer(*st, c, i, kernel));
      w.layers.push_back(std::move(layer));
    }
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("loading weights from ", dir.string(), ": ", e.what()));
  }
  for (const std::string& name : st->Names()) {
    auto view = st->Get(name);
    if (view.ok()) w.num_parameters += static_cast<size_t>(view->NumElements());
  }
  return w;
}

size_t LlamaWeights::BytesStreamedPerDecodeStep() const {
  size_t bytes = lm_head.bytes() + static_cast<size_t>(final_norm.numel()) * sizeof(float);
  for (const auto& l : layers) {
    for (const at::Tensor* norm : {&l.input_norm, &l.post_norm, &l.pre_ff_norm, &l.post_ff_norm, &l.q_norm, &l.k_norm}) {
      if (norm->defined()) bytes += static_cast<size_t>(norm->numel()) * sizeof(float);
    }
    bytes += l.qkv.bytes() + l.o.bytes() + l.gate_up.bytes() + l.down.bytes();
  }
  return bytes;
}

size_t LlamaWeights::BytesInMemory() const {
  size_t bytes = BytesStreamedPerDecodeStep();
  if (embed.defined()) bytes += static_cast<size_t>(embed.numel()) * sizeof(float);
  // A tied GGUF head is token_embd itself (counted once, in lm_head).
  if (embed_blocks && (lm_head.blocks.empty() || lm_head.blocks[0].matrix.row(0) != embed_blocks->row(0))) {
    bytes += static_cast<size_t>(embed_blocks->n() * embed_blocks->row_bytes());
  }
  for (const auto& l : layers) {
    if (l.qkv_bias.defined()) bytes += static_cast<size_t>(l.qkv_bias.numel()) * sizeof(float);
    if (l.o_bias.defined()) bytes += static_cast<size_t>(l.o_bias.numel()) * sizeof(float);
  }
  return bytes;
}

}  // namespace infera::llm

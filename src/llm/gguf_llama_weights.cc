// LlamaWeights::LoadGguf: a GGUF file's tensors as the runner's weights, without copying
// the projections (docs/llm.md, "GGUF models"). Tensor names are GGUF's
// (token_embd, blk.N.attn_q, ..., output_norm, output); dims are ggml's (dims[0] is the
// row length, so a projection mapping `in` to `out` has dims {in, out}).
#include <cstring>

#include "common/status.h"
#include "common/str_cat.h"
#include "gguf/gguf_file.h"
#include "llm/gguf_llama_config.h"
#include "llm/llama_weights.h"
#include "quant/dequantize.h"

namespace infera::llm {
namespace {

class GgufTensors {
 public:
  explicit GgufTensors(const gguf::GgufFile& file) : file_(file) {}

  // The tensor `name` as `out` rows of `in` elements, of a type with a kernel here.
  absl::StatusOr<quant::BlockMatrix> Matrix(const std::string& name, int64_t out, int64_t in) const {
    ASSIGN_OR_RETURN(const gguf::GgufTensor* t, Get(name));
    const std::vector<int64_t> want = out == 1 ? std::vector<int64_t>{in} : std::vector<int64_t>{in, out};
    if (t->dims != want) {
      return Error(StrCat("tensor '", name, "' has dims [", StrJoin(t->dims, ","), "]; the metadata implies [",
                          StrJoin(want, ","), "]"));
    }
    const std::optional<quant::BlockType> type = quant::BlockTypeFromId(static_cast<uint32_t>(t->type));
    if (!type) {
      return Error(StrCat("tensor '", name, "' has type ", gguf::GgmlTypeName(t->type),
                          ", which has no kernel here (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, "
                          "Q5_K, Q6_K)"));
    }
    std::string error = quant::CheckRowLength(*type, in);
    std::optional<quant::BlockMatrix> m;
    if (error.empty()) m = quant::BlockMatrix::View(t->data, t->num_bytes, *type, out, in, &error);
    if (!m) return Error(StrCat("tensor '", name, "': ", error));
    return *m;
  }

  // A vector (norm, bias) widened to fp32.
  absl::StatusOr<at::Tensor> Vector(const std::string& name, int64_t size) const {
    ASSIGN_OR_RETURN(quant::BlockMatrix m, Matrix(name, 1, size));
    at::Tensor out = at::empty({size}, at::kFloat);
    quant::DequantizeRow(m.type(), m.row(0), size, out.data_ptr<float>());
    return out;
  }
  absl::StatusOr<at::Tensor> OptionalVector(const std::string& name, int64_t size) const {
    if (file_.FindTensor(name) == nullptr) return at::Tensor();
    return Vector(name, size);
  }
  bool Has(const std::string& name) const { return file_.FindTensor(name) != nullptr; }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(file_.where(), ": ", what));
  }

 private:
  absl::StatusOr<const gguf::GgufTensor*> Get(const std::string& name) const {
    const gguf::GgufTensor* t = file_.FindTensor(name);
    if (t == nullptr) return Error(StrCat("tensor '", name, "' is missing"));
    return t;
  }
  const gguf::GgufFile& file_;
};

// One projection from the named tensors, each `outs[i]` rows, stacked in order.
absl::StatusOr<Projection> Stack(const GgufTensors& t, const std::vector<std::string>& names,
                                 const std::vector<int64_t>& outs, int64_t in) {
  Projection p;
  p.in = in;
  for (size_t i = 0; i < names.size(); ++i) {
    ASSIGN_OR_RETURN(quant::BlockMatrix m, t.Matrix(names[i], outs[i], in));
    p.blocks.push_back({m, p.out});
    p.out += outs[i];
  }
  return p;
}

absl::StatusOr<LlamaLayerWeights> LoadLayer(const GgufTensors& t, const LlamaConfig& c, int64_t i) {
  const std::string p = StrCat("blk.", i, ".");
  const int64_t h = c.hidden_size, d = c.head_dim, q_out = c.num_heads * d, kv_out = c.num_kv_heads * d,
                inter = c.intermediate_size;
  LlamaLayerWeights w;
  // Norm weights as stored: Gemma's GGUF converter has already added the 1.
  ASSIGN_OR_RETURN(w.input_norm, t.Vector(p + "attn_norm.weight", h));
  if (c.gemma) {
    ASSIGN_OR_RETURN(w.post_norm, t.Vector(p + "post_attention_norm.weight", h));
    ASSIGN_OR_RETURN(w.pre_ff_norm, t.Vector(p + "ffn_norm.weight", h));
    ASSIGN_OR_RETURN(w.post_ff_norm, t.Vector(p + "post_ffw_norm.weight", h));
  } else {
    ASSIGN_OR_RETURN(w.post_norm, t.Vector(p + "ffn_norm.weight", h));
  }
  if (c.qk_norm) {
    ASSIGN_OR_RETURN(w.q_norm, t.Vector(p + "attn_q_norm.weight", d));
    ASSIGN_OR_RETURN(w.k_norm, t.Vector(p + "attn_k_norm.weight", d));
  }
  if (c.fused_weights) {
    ASSIGN_OR_RETURN(w.qkv, Stack(t, {p + "attn_qkv.weight"}, {q_out + 2 * kv_out}, h));
    // Phi-3's ffn_up holds gate and up (gate first), as Hugging Face's gate_up_proj.
    ASSIGN_OR_RETURN(w.gate_up, Stack(t, {p + "ffn_up.weight"}, {2 * inter}, h));
  } else {
    ASSIGN_OR_RETURN(w.qkv, Stack(t, {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"},
                                  {q_out, kv_out, kv_out}, h));
    ASSIGN_OR_RETURN(w.gate_up, Stack(t, {p + "ffn_gate.weight", p + "ffn_up.weight"}, {inter, inter}, h));
  }
  ASSIGN_OR_RETURN(at::Tensor qb, t.OptionalVector(p + "attn_q.bias", q_out));
  ASSIGN_OR_RETURN(at::Tensor kb, t.OptionalVector(p + "attn_k.bias", kv_out));
  ASSIGN_OR_RETURN(at::Tensor vb, t.OptionalVector(p + "attn_v.bias", kv_out));
  if (qb.defined() || kb.defined() || vb.defined()) {
    auto or_zeros = [](const at::Tensor& x, int64_t n) { return x.defined() ? x : at::zeros({n}); };
    w.qkv_bias = at::cat({or_zeros(qb, q_out), or_zeros(kb, kv_out), or_zeros(vb, kv_out)});
  }
  ASSIGN_OR_RETURN(w.o, Stack(t, {p + "attn_output.weight"}, {h}, q_out));
  ASSIGN_OR_RETURN(w.o_bias, t.OptionalVector(p + "attn_output.bias", h));
  ASSIGN_OR_RETURN(w.down, Stack(t, {p + "ffn_down.weight"}, {h}, inter));
  return w;
}

}  // namespace

absl::StatusOr<LlamaWeights> LlamaWeights::LoadGguf(const std::filesystem::path& path,
                                                    gguf::GgufResidency residency, MatmulKernel kernel,
                                                    WeightQuantization quantization) {
  if (kernel != MatmulKernel::kPacked || quantization != WeightQuantization::kNone) {
    return absl::InvalidArgumentError(
        StrCat(path.string(), ": a GGUF model runs on its own tensor types: parameters matmul_kernel and "
                              "quantization must be left at packed / none"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(path, residency));
  LlamaWeights w;
  ASSIGN_OR_RETURN(w.config, LlamaConfigFromGguf(*file));
  const LlamaConfig& c = w.config;
  w.kernel = kernel;
  w.quantization = quantization;
  w.qk_permuted = GgufQkPermuted(c);
  GgufTensors t(*file);
  try {
    ASSIGN_OR_RETURN(quant::BlockMatrix embd, t.Matrix("token_embd.weight", c.vocab_size, c.hidden_size));
    w.embed_blocks = embd;
    ASSIGN_OR_RETURN(w.final_norm, t.Vector("output_norm.weight", c.hidden_size));
    if (t.Has("output.weight")) {
      ASSIGN_OR_RETURN(w.lm_head, Stack(t, {"output.weight"}, {c.vocab_size}, c.hidden_size));
    } else {  // tied: the LM head multiplies by token_embd's blocks
      w.lm_head.in = c.hidden_size;
      w.lm_head.out = c.vocab_size;
      w.lm_head.blocks.push_back({embd, 0});
    }
    for (int64_t i = 0; i < c.num_layers; ++i) {
      ASSIGN_OR_RETURN(LlamaLayerWeights layer, LoadLayer(t, c, i));
      w.layers.push_back(std::move(layer));
    }
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("loading weights from ", path.string(), ": ", e.what()));
  }
  for (const gguf::GgufTensor& tensor : file->tensors()) w.num_parameters += static_cast<size_t>(tensor.NumElements());
  file->ReleaseMetadata();  // read into w.config above; the tokenizer reads its own copy
  w.gguf = std::move(file);
  return w;
}

}  // namespace infera::llm

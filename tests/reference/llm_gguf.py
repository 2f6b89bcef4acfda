#!/usr/bin/env python3
"""The tiny checkpoints of llm_reference.py as GGUF files, and what the engine computes
with when it serves them (docs/llm.md, "GGUF models").

    config = gguf_config(arch)                  # llm_reference config, sized for K-quants
    weights = ref.random_weights(config, seed)  # Hugging Face names, float32
    engine_w = write_gguf(path, config, weights, "Q4_K", tokenizer_dir)

write_gguf converts Hugging Face names and layouts to GGUF's (token_embd, blk.N.attn_q,
..., output_norm, output; llama's attn_q / attn_k rows permuted for interleaved RoPE;
Gemma's norms with the 1 added; Phi-3's fused attn_qkv and ffn_up), encodes the matrices
as `types` (one type, or a dict per GGUF tensor suffix with a "default"), norms as F32,
and returns the weights the engine multiplies with: every matrix dequantised from the
same blocks, wrapped (`BlockWeight`) so that `h @ w.T` in llm_reference.forward
quantises h as the kernels do (quant/block_matmul.h: per 32- or 256-element block,
d = amax / 127 in float32, q = rint(x * (1 / d)) clamped to +-127; float types keep h).
Written from the GGUF naming conventions; no code from llama.cpp.
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import gguf_quant  # noqa: E402
import gguf_tokenizer  # noqa: E402
import llm_reference as ref  # noqa: E402
from gguf_writer import GGUFWriter, ValueType, typed  # noqa: E402

F32 = np.float32
GGUF_ARCH = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "phi3": "phi3",
             "gemma2": "gemma2", "gemma3_text": "gemma3"}
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] | upper }}: {{ m['content'] }}<|im_end|>\n"
            "{% endfor %}{% if add_generation_prompt %}<|im_start|>ASSISTANT: {% endif %}")


def gguf_config(arch):
    """llm_reference's tiny config of `arch` with every matrix's row length a multiple of
    256 (K-quants): llama without rope scaling (write_gguf carries llama3 as a rope_freqs
    tensor: see llama3_rope_freqs), Gemma's query_pre_attn_scalar written as
    <arch>.attention.scale."""
    c = ref.tiny_config(arch, hidden_size=256, intermediate_size=512, head_dim=64, num_hidden_layers=2,
                        max_position_embeddings=512)
    if arch == "llama":
        c["rope_scaling"] = None
    if arch in ("gemma2", "gemma3_text"):
        c["num_hidden_layers"] = 4
    return c


def llama3_rope_freqs(config):
    """Llama 3.1's rope scaling as GGUF carries it (a rope_freqs tensor, what llama.cpp's
    converter writes): per rotary frequency i of wavelength L = 2 pi base^(2i/d), the
    divisor 1 where L < original / high_freq_factor, `factor` where L > original /
    low_freq_factor, and 1 / ((1 - s) / factor + s) between, s = (original / L - low) /
    (high - low); float32 values, as stored."""
    rs = config["rope_scaling"]
    d, base = ref.head_dim(config), config["rope_theta"]
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    original = rs["original_max_position_embeddings"]
    out = []
    for i in range(d // 2):
        wavelength = 2 * math.pi * base ** (2 * i / d)
        if wavelength < original / high:
            out.append(1.0)
        elif wavelength > original / low:
            out.append(factor)
        else:
            s = (original / wavelength - low) / (high - low)
            out.append(1 / ((1 - s) / factor + s))
    return [float(F32(x)) for x in out]


def _rope_kind(config):
    rs = config.get("rope_scaling") or {}
    return rs.get("rope_type", rs.get("type"))


def _block_elements(name):
    return gguf_quant.TYPES[name][1]


def quantise_activations(h, name):
    """h as the kernel sees it for weights of type `name` (float64 values of q * d)."""
    h = np.asarray(h, dtype=F32)
    if name in ("F32", "F16", "BF16"):
        return h.astype(np.float64)
    block = 256 if name.endswith("_K") else 32
    shape = h.shape
    x = h.reshape(shape[:-1] + (shape[-1] // block, block))
    amax = np.abs(x).max(axis=-1, keepdims=True)
    d = (amax / F32(127)).astype(F32)
    with np.errstate(divide="ignore"):
        inv = np.where(d > 0, F32(1) / d, F32(0)).astype(F32)
    q = np.clip(np.rint((x * inv).astype(F32)), -127, 127)
    return (q.astype(np.float64) * d.astype(np.float64)).reshape(shape)


class BlockWeight:
    """A dequantised [out, in] matrix of GGUF type `name`; `h @ w.T` quantises h first."""
    __array_ufunc__ = None  # numpy defers `h @ self` to __rmatmul__

    def __init__(self, values, name, transposed=False):
        self.values, self.name, self.transposed = values, name, transposed

    @property
    def T(self):
        return BlockWeight(self.values, self.name, not self.transposed)

    @property
    def shape(self):
        return self.values.T.shape if self.transposed else self.values.shape

    def __getitem__(self, index):  # embedding rows
        return self.values[index]

    def __rmatmul__(self, h):
        assert self.transposed
        return quantise_activations(h, self.name) @ self.values.T


def _permute_rows(w, heads):
    """Hugging Face rotate-half rows -> GGUF llama's interleaved order, per head:
    row j*D/2 + i goes to 2i + j."""
    out_dim = w.shape[0]
    d = out_dim // heads
    return w.reshape((heads, 2, d // 2) + w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _type_of(types, suffix):
    if isinstance(types, str):
        return types
    return types.get(suffix, types["default"])


def write_gguf(path, config, weights, types, tokenizer_dir, template=TEMPLATE, extra=None, skip=()):
    """Writes the GGUF file; returns the weights the engine computes with (see module doc)."""
    c = config
    mt = c["model_type"]
    arch = GGUF_ARCH[mt]
    gemma = ref.is_gemma(c)
    hq, hkv, d = c["num_attention_heads"], c["num_key_value_heads"], ref.head_dim(c)
    w = GGUFWriter()
    w.add("general.architecture", arch)
    w.add("general.name", f"tiny {mt}")
    w.add(f"{arch}.block_count", c["num_hidden_layers"])
    w.add(f"{arch}.context_length", c["max_position_embeddings"])
    w.add(f"{arch}.embedding_length", c["hidden_size"])
    w.add(f"{arch}.feed_forward_length", c["intermediate_size"])
    w.add(f"{arch}.attention.head_count", hq)
    w.add(f"{arch}.attention.head_count_kv", hkv)
    w.add(f"{arch}.attention.key_length", d)
    w.add(f"{arch}.attention.value_length", d)
    w.add(f"{arch}.rope.dimension_count", d)
    w.add(f"{arch}.attention.layer_norm_rms_epsilon", float(c.get("rms_norm_eps", 1e-6)))
    w.add(f"{arch}.rope.freq_base", float(c["rope_theta"]))
    # Rope scaling: linear as keys; llama3 as a rope_freqs tensor of its divisors (or a
    # config's own "rope_freqs" list); longrope as rope_factors_short / _long tensors and
    # rope.scaling.original_context_length (+ attn_factor when the config states one); yarn
    # as keys (llama.cpp's: factor, original_context_length, and attn_factor, which readers
    # multiply by the derived 0.1 ln(factor) + 1; beta_fast 32 / beta_slow 1 implied).
    scaling = c.get("rope_scaling")
    kind = _rope_kind(c)
    rope_tensors = {}
    if kind == "linear":
        w.add(f"{arch}.rope.scaling.type", kind)
        w.add(f"{arch}.rope.scaling.factor", float(scaling["factor"]))
    elif kind == "llama3":
        rope_tensors["rope_freqs.weight"] = llama3_rope_freqs(c)
    elif kind in ("longrope", "su"):
        original = c.get("original_max_position_embeddings") or scaling["original_max_position_embeddings"]
        w.add(f"{arch}.rope.scaling.original_context_length", int(original))
        if scaling.get("attention_factor") is not None:
            w.add(f"{arch}.rope.scaling.attn_factor", float(scaling["attention_factor"]))
        rope_tensors["rope_factors_long.weight"] = scaling["long_factor"]
        rope_tensors["rope_factors_short.weight"] = scaling["short_factor"]
    elif kind == "yarn":
        if scaling.get("beta_fast", 32) != 32 or scaling.get("beta_slow", 1) != 1 or not scaling.get("truncate", True):
            raise ValueError("yarn's beta_fast / beta_slow / truncate have no GGUF keys (32, 1, true only)")
        factor = float(scaling["factor"])
        w.add(f"{arch}.rope.scaling.type", "yarn")
        w.add(f"{arch}.rope.scaling.factor", factor)
        original = scaling.get("original_max_position_embeddings") or c["max_position_embeddings"]
        w.add(f"{arch}.rope.scaling.original_context_length", int(original))
        if scaling.get("attention_factor") is not None:
            derived = 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1
            w.add(f"{arch}.rope.scaling.attn_factor", float(scaling["attention_factor"]) / derived)
    elif kind not in (None, "default"):
        raise ValueError(f"rope_scaling {kind} has no GGUF form here")
    if c.get("rope_freqs") is not None:
        rope_tensors["rope_freqs.weight"] = c["rope_freqs"]
    sliding = [i for i, s in enumerate(ref.sliding_layers(c)) if s]
    if sliding:
        w.add(f"{arch}.attention.sliding_window", c["sliding_window"])
    if mt == "gemma3_text":
        w.add(f"{arch}.attention.sliding_window_pattern", c.get("sliding_window_pattern", 6))
    if gemma:
        w.add(f"{arch}.attention.scale", float(c["query_pre_attn_scalar"]) ** -0.5)
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        if c.get(key):
            w.add(f"{arch}.{key}", float(c[key]))
    gguf_tokenizer.add_tokenizer(w, tokenizer_dir)
    w.metadata.pop("tokenizer.chat_template", None)
    if template is not None:
        w.add("tokenizer.chat_template", template)
    for key, value in (extra or {}).items():
        w.metadata.pop(key, None)
        w.add(key, value)

    engine = {}

    def matrix(gguf_name, hf_name, values, suffix, permute_heads=0):
        name = _type_of(types, suffix)
        stored = _permute_rows(values, permute_heads) if permute_heads else values
        blocks = gguf_quant.quantize(name, stored.astype(F32))
        if gguf_name not in skip:
            w.add_tensor(gguf_name, gguf_quant.type_id(name), stored.shape, blocks.tobytes())
        deq = gguf_quant.dequantize(name, blocks, values.shape[-1]).astype(np.float64)
        if permute_heads:  # undo on the dequantised rows (rows are whole blocks)
            deq = deq.reshape(permute_heads, d // 2, 2, -1).swapaxes(1, 2).reshape(values.shape)
        engine[hf_name] = BlockWeight(deq, name)

    def vector(gguf_name, hf_name, values, norm=False):
        stored = (values.astype(F32) + F32(1)) if (norm and gemma) else values.astype(F32)
        if gguf_name not in skip:
            w.add_array_tensor(gguf_name, stored)
        engine[hf_name] = values.astype(np.float64)

    matrix("token_embd.weight", "model.embed_tokens.weight", weights["model.embed_tokens.weight"], "token_embd")
    vector("output_norm.weight", "model.norm.weight", weights["model.norm.weight"], norm=True)
    if "lm_head.weight" in weights and not c.get("tie_word_embeddings", gemma):
        matrix("output.weight", "lm_head.weight", weights["lm_head.weight"], "output")
    permute = mt in ("llama", "mistral")
    for i in range(c["num_hidden_layers"]):
        p, g = f"model.layers.{i}.", f"blk.{i}."
        vector(g + "attn_norm.weight", p + "input_layernorm.weight", weights[p + "input_layernorm.weight"], True)
        if gemma:
            vector(g + "post_attention_norm.weight", p + "post_attention_layernorm.weight",
                   weights[p + "post_attention_layernorm.weight"], True)
            vector(g + "ffn_norm.weight", p + "pre_feedforward_layernorm.weight",
                   weights[p + "pre_feedforward_layernorm.weight"], True)
            vector(g + "post_ffw_norm.weight", p + "post_feedforward_layernorm.weight",
                   weights[p + "post_feedforward_layernorm.weight"], True)
        else:
            vector(g + "ffn_norm.weight", p + "post_attention_layernorm.weight",
                   weights[p + "post_attention_layernorm.weight"], True)
        if mt in ("qwen3", "gemma3_text"):
            vector(g + "attn_q_norm.weight", p + "self_attn.q_norm.weight", weights[p + "self_attn.q_norm.weight"], True)
            vector(g + "attn_k_norm.weight", p + "self_attn.k_norm.weight", weights[p + "self_attn.k_norm.weight"], True)
        if mt == "phi3":
            matrix(g + "attn_qkv.weight", p + "self_attn.qkv_proj.weight", weights[p + "self_attn.qkv_proj.weight"],
                   "attn_qkv")
            matrix(g + "ffn_up.weight", p + "mlp.gate_up_proj.weight", weights[p + "mlp.gate_up_proj.weight"],
                   "ffn_up")
        else:
            matrix(g + "attn_q.weight", p + "self_attn.q_proj.weight", weights[p + "self_attn.q_proj.weight"],
                   "attn_q", hq if permute else 0)
            matrix(g + "attn_k.weight", p + "self_attn.k_proj.weight", weights[p + "self_attn.k_proj.weight"],
                   "attn_k", hkv if permute else 0)
            matrix(g + "attn_v.weight", p + "self_attn.v_proj.weight", weights[p + "self_attn.v_proj.weight"],
                   "attn_v")
            matrix(g + "ffn_gate.weight", p + "mlp.gate_proj.weight", weights[p + "mlp.gate_proj.weight"], "ffn_gate")
            matrix(g + "ffn_up.weight", p + "mlp.up_proj.weight", weights[p + "mlp.up_proj.weight"], "ffn_up")
        for m in "qkv":
            key = p + f"self_attn.{m}_proj.bias"
            if key in weights:
                vector(g + f"attn_{m}.bias", key, weights[key])
        matrix(g + "attn_output.weight", p + "self_attn.o_proj.weight", weights[p + "self_attn.o_proj.weight"],
               "attn_output")
        matrix(g + "ffn_down.weight", p + "mlp.down_proj.weight", weights[p + "mlp.down_proj.weight"], "ffn_down")
    for name, values in rope_tensors.items():
        if name not in skip:
            w.add_array_tensor(name, np.array(values, dtype=F32))
    w.write(path)
    return engine


def reference_config(config):
    """The config the reference runs a GGUF of `config` with: Gemma's attention scale as
    the file states it (float32 of query_pre_attn_scalar^-1/2); llama3 rope scaling as the
    rope_freqs divisors the file holds (llm_reference divides each frequency by its
    rope_freqs entry); longrope's factors as float32."""
    c = dict(config)
    if _rope_kind(c) == "llama3":
        c["rope_freqs"] = llama3_rope_freqs(c)
        c["rope_scaling"] = None
    elif _rope_kind(c) in ("longrope", "su"):
        rs = dict(c["rope_scaling"])
        for key in ("short_factor", "long_factor"):
            rs[key] = [float(F32(x)) for x in rs[key]]
        c["rope_scaling"] = rs
    if ref.is_gemma(c):
        s = float(F32(float(c["query_pre_attn_scalar"]) ** -0.5))
        c["query_pre_attn_scalar"] = 1.0 / (s * s)
    return c

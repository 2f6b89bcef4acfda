"""An independent numpy reference forward pass for the decoder architectures the LLM
engine loads, and a generator of tiny random-weight checkpoints for each.

Written from the architectures' published descriptions (Hugging Face transformers'
model documentation and configuration fields), not from the C++ engine: float64
throughout, whole-sequence (no KV cache, no paging), one token sequence at a time.

Architectures (config.json `model_type`):
  llama        RMSNorm, rotate-half RoPE (rope_scaling linear / llama3 / yarn), GQA, SwiGLU
  mistral      llama + sliding-window attention on every layer
  qwen2        llama + q/k/v biases (sliding window from max_window_layers when enabled)
  qwen3        llama + RMSNorm over each head's q and k before RoPE, explicit head_dim
  phi3         llama with fused qkv_proj and gate_up_proj weights, sliding window;
               rope_scaling longrope / su (attention factor; short factors for sequences
               up to original_max_position_embeddings, long factors for longer ones, as
               Hugging Face picks by the forward's length)
  gemma2       (1 + w) RMSNorm, embeddings x sqrt(hidden), sandwich norms (post-attention,
               pre/post-feedforward), GeGLU (gelu tanh), scale query_pre_attn_scalar^-1/2,
               attention and final logit soft-capping, sliding window on even layers
  gemma3_text  gemma2's layer shape + q/k norm, no soft-capping by default, every
               sliding_window_pattern-th layer global (rope_theta + rope_scaling), the
               others local (sliding window, rope_local_base_freq, unscaled)
Any of them may carry "rope_freqs" (not a config.json field: a GGUF's rope_freqs tensor,
how llama.cpp stores Llama 3.1's rope scaling): frequency i is divided by rope_freqs[i].

Command line (for manual checks):
  llm_reference.py make ARCH DIR [--dtype float32|bfloat16] [--seed N] [--tokenizer-from DIR]
  llm_reference.py greedy DIR --prompt 1,2,3 [--tokens N]
"""

import argparse
import json
import math
import os
import shutil
import struct
import sys

import numpy as np

ARCHITECTURES = {
    "llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM", "phi3": "Phi3ForCausalLM", "gemma2": "Gemma2ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM",
}

# ------------------------------------------------------------------------ safetensors


def _bf16_bits(a):
    """float32 array -> bf16 words, round to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def write_safetensors(path, tensors, dtype="float32"):
    """{name: float array} -> a safetensors file of F32 / BF16 / F16 tensors."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name], dtype=np.float32)
        if dtype == "float32":
            data, code = a.astype("<f4").tobytes(), "F32"
        elif dtype == "bfloat16":
            data, code = _bf16_bits(a).astype("<u2").tobytes(), "BF16"
        elif dtype == "float16":
            data, code = a.astype("<f2").tobytes(), "F16"
        else:
            raise ValueError(dtype)
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """A safetensors file -> {name: float64 array} (the stored values, exactly)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        blob = raw[base + begin:base + end]
        if info["dtype"] == "F32":
            a = np.frombuffer(blob, "<f4")
        elif info["dtype"] == "F16":
            a = np.frombuffer(blob, "<f2")
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(blob, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{name}: dtype {info['dtype']}")
        out[name] = a.astype(np.float64).reshape(info["shape"])
    return out


def load(directory):
    """(config, weights) of a checkpoint directory."""
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    return config, read_safetensors(os.path.join(directory, "model.safetensors"))


# ------------------------------------------------------------------ architecture facts


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def is_gemma(c):
    return c["model_type"] in ("gemma2", "gemma3_text")


def sliding_layers(c):
    """[bool] per layer: does it use sliding-window attention?"""
    n, mt = c["num_hidden_layers"], c["model_type"]
    if c.get("layer_types"):
        return [t == "sliding_attention" for t in c["layer_types"]]
    if not c.get("sliding_window"):
        return [False] * n
    if mt in ("mistral", "phi3"):
        return [True] * n
    if mt in ("qwen2", "qwen3"):
        if not c.get("use_sliding_window"):
            return [False] * n
        return [i >= c.get("max_window_layers", n) for i in range(n)]
    if mt == "gemma2":
        return [i % 2 == 0 for i in range(n)]
    if mt == "gemma3_text":
        pattern = c.get("sliding_window_pattern", 6)
        return [(i + 1) % pattern != 0 for i in range(n)]
    return [False] * n


def inverse_frequencies(c, local=False, long=False):
    d = head_dim(c)
    base = c.get("rope_local_base_freq", 10000.0) if local else c.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (np.arange(0, d, 2, dtype=np.float64) / d))
    if local:  # Gemma-3's local layers: unscaled
        return inv
    if c.get("rope_freqs") is not None:
        # A GGUF's rope_freqs tensor (llama.cpp's form of Llama 3.1's rope scaling): each
        # frequency divided by its entry, at every position; then rope_scaling (linear).
        inv = inv / np.array(c["rope_freqs"], dtype=np.float64)
    rs = c.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    if kind == "default":
        return inv
    if kind == "linear":
        return inv / rs["factor"]
    if kind in ("longrope", "su"):
        # Phi-3: each frequency divided by its short_factor while the sequence is within
        # original_max_position_embeddings, by its long_factor beyond (`long`: forward()).
        return inv / np.array(rs["long_factor" if long else "short_factor"], dtype=np.float64)
    if kind == "llama3":
        # Llama 3.1: long wavelengths divided by `factor`, short ones kept, a smooth
        # interpolation between low_freq_factor and high_freq_factor.
        old = rs["original_max_position_embeddings"]
        low, high, factor = rs["low_freq_factor"], rs["high_freq_factor"], rs["factor"]
        out = []
        for f in inv:
            wavelen = 2 * math.pi / f
            if wavelen < old / high:
                out.append(f)
            elif wavelen > old / low:
                out.append(f / factor)
            else:
                smooth = (old / wavelen - low) / (high - low)
                out.append((1 - smooth) * f / factor + smooth * f)
        return np.array(out)
    if kind == "yarn":
        # YaRN (arXiv 2309.00071, "NTK-by-parts"): dimensions that turn fewer than
        # beta_slow times over the original length are interpolated (divided by factor),
        # those that turn more than beta_fast times kept, a linear ramp between; the
        # ramp's bounds are the dimensions d_r = D ln(L / (2 pi r)) / (2 ln base), floor
        # and ceiling unless truncate is false, clipped to [0, D - 1], and the ramp runs
        # over the index of each frequency (0 .. D/2 - 1) as Hugging Face writes it.
        original = rs.get("original_max_position_embeddings") or c["max_position_embeddings"]
        factor = rs["factor"]

        def dim_of(rotations):
            return d * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low, high = dim_of(rs.get("beta_fast") or 32), dim_of(rs.get("beta_slow") or 1)
        if rs.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        keep = 1 - ramp
        return (inv / factor) * (1 - keep) + inv * keep
    raise ValueError(f"rope_scaling {kind}")


# ------------------------------------------------------------ weight quantisation
#
# The engine's `quantization` parameter (docs/llm.md, "Weight quantisation"): weight-only,
# symmetric, activations stay fp32; every layer projection is quantised from its fp32
# values, the LM head as int8 for both modes, the embedding table and norms untouched.
#   int8: per output channel, scale = absmax / 127 (fp32), q = round-half-even(w / scale)
#   int4: per output channel and group of 32 input features, d = fp16(extreme / -8) where
#         `extreme` is the group's value of largest magnitude (the first such), q =
#         round-half-even(w / d) clamped to [-8, 7]
# The reference replaces those weights with their dequantised values q * scale.

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "gate_proj", "up_proj", "down_proj",
               "gate_up_proj")


def dequantised_int8(w):
    w = w.astype(np.float32)
    scale = (np.abs(w).max(axis=1, keepdims=True) / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    q = np.clip(np.rint(w / safe), -127, 127).astype(np.float32)
    return np.where(scale > 0, q * scale, np.float32(0)).astype(np.float64)


def dequantised_int4(w, group=32):
    w = w.astype(np.float32)
    out = np.zeros_like(w, dtype=np.float64)
    for g0 in range(0, w.shape[1], group):
        block = w[:, g0:g0 + group]
        first_max = np.argmax(np.abs(block), axis=1)  # argmax returns the first maximum
        extreme = block[np.arange(block.shape[0]), first_max]
        d = (extreme / np.float32(-8)).astype(np.float16).astype(np.float32)[:, None]
        safe = np.where(d != 0, d, np.float32(1))
        q = np.clip(np.rint(block / safe), -8, 7).astype(np.float32)
        out[:, g0:g0 + group] = np.where(d != 0, q * d, np.float32(0))
    return out


def quantised(config, weights, mode):
    """The weights as the engine computes with them under `quantization: mode`."""
    if mode in (None, "none"):
        return weights
    layer = dequantised_int8 if mode == "int8" else dequantised_int4
    out = dict(weights)
    for name, w in weights.items():
        if name.startswith("model.layers.") and name.endswith(".weight") and name.split(".")[-2] in PROJECTIONS:
            out[name] = layer(w)
    gemma = is_gemma(config)
    if config.get("tie_word_embeddings", gemma) or "lm_head.weight" not in weights:
        out["lm_head.weight"] = dequantised_int8(weights["model.embed_tokens.weight"])
        out["_tied_head_quantised"] = True
    else:
        out["lm_head.weight"] = dequantised_int8(weights["lm_head.weight"])
    return out


# --------------------------------------------------------------------------- forward


def rms_norm(x, w, eps, gemma):
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return y * (1.0 + w) if gemma else y * w


def rope_attention_factor(c):
    """longrope's cos/sin scale: given, or sqrt(1 + ln(s) / ln(original)) for the context
    extension s = max_position_embeddings / original_max_position_embeddings (> 1).
    yarn's: given, or 0.1 ln(factor) + 1 (with mscale / mscale_all_dim: their ratio of
    0.1 m ln(factor) + 1)."""
    rs = c.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "yarn":
        if rs.get("attention_factor") is not None:
            return rs["attention_factor"]

        def mscale(m):
            return 1.0 if rs["factor"] <= 1 else 0.1 * m * math.log(rs["factor"]) + 1.0

        if rs.get("mscale") and rs.get("mscale_all_dim"):
            return mscale(rs["mscale"]) / mscale(rs["mscale_all_dim"])
        return mscale(1.0)
    if kind not in ("longrope", "su"):
        return 1.0
    if rs.get("attention_factor") is not None:
        return rs["attention_factor"]
    original = c.get("original_max_position_embeddings") or rs["original_max_position_embeddings"]
    s = c["max_position_embeddings"] / original
    return 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(original))


def rope(x, positions, inv, factor=1.0):
    """x [n, heads, d], rotate-half layout; cos and sin multiplied by `factor`."""
    angles = np.outer(positions, inv)  # [n, d/2]
    cos = factor * np.concatenate([np.cos(angles)] * 2, axis=-1)[:, None, :]
    sin = factor * np.concatenate([np.sin(angles)] * 2, axis=-1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


def forward(c, w, tokens):
    """Logits [len(tokens), vocab] (float64) of the causal LM over `tokens`. longrope: the
    long factors when the sequence is longer than original_max_position_embeddings
    (Hugging Face's rule for a whole-sequence forward)."""
    mt = c["model_type"]
    gemma = is_gemma(c)
    n = len(tokens)
    hq, hkv, d = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"]), head_dim(c)
    eps = c.get("rms_norm_eps", 1e-6)
    act_name = (c.get("hidden_activation") if gemma else None) or c.get("hidden_act", "silu")
    act = gelu_tanh if act_name in ("gelu_pytorch_tanh", "gelu_new") else silu
    scale = (c.get("query_pre_attn_scalar", 256) if gemma else d) ** -0.5
    attn_cap = c.get("attn_logit_softcapping", 50.0 if mt == "gemma2" else None)
    final_cap = c.get("final_logit_softcapping", 30.0 if mt == "gemma2" else None)
    qk_norm = mt in ("qwen3", "gemma3_text")
    sliding = sliding_layers(c)
    window = c.get("sliding_window") or 0
    positions = np.arange(n, dtype=np.float64)
    long = False
    rs = c.get("rope_scaling") or {}
    if rs.get("rope_type", rs.get("type")) in ("longrope", "su"):
        original = c.get("original_max_position_embeddings") or rs["original_max_position_embeddings"]
        long = n > original
    inv_global = inverse_frequencies(c, long=long)
    inv_local = inverse_frequencies(c, local=True) if mt == "gemma3_text" else inv_global
    rope_factor = rope_attention_factor(c)

    x = w["model.embed_tokens.weight"][np.array(tokens)]
    if gemma:
        x = x * math.sqrt(c["hidden_size"])
    i_idx, j_idx = np.arange(n)[:, None], np.arange(n)[None, :]
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps, gemma)
        if mt == "phi3":
            qkv = h @ w[p + "self_attn.qkv_proj.weight"].T
            q, k, v = np.split(qkv, [hq * d, hq * d + hkv * d], axis=-1)
        else:
            q, k, v = (h @ w[p + f"self_attn.{m}_proj.weight"].T for m in "qkv")
            q = q + w.get(p + "self_attn.q_proj.bias", 0.0)
            k = k + w.get(p + "self_attn.k_proj.bias", 0.0)
            v = v + w.get(p + "self_attn.v_proj.bias", 0.0)
        q, k, v = q.reshape(n, hq, d), k.reshape(n, hkv, d), v.reshape(n, hkv, d)
        if qk_norm:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps, gemma)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps, gemma)
        local = sliding[layer] and mt == "gemma3_text"
        inv, factor = (inv_local, 1.0) if local else (inv_global, rope_factor)
        q, k = rope(q, positions, inv, factor), rope(k, positions, inv, factor)
        group = hq // hkv
        k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
        scores = np.einsum("ihd,jhd->hij", q, k) * scale
        if attn_cap:
            scores = attn_cap * np.tanh(scores / attn_cap)
        allowed = j_idx <= i_idx
        if sliding[layer]:
            allowed = allowed & (i_idx - j_idx < window)
        scores = np.where(allowed[None], scores, -np.inf)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        attn = np.einsum("hij,jhd->ihd", probs, v).reshape(n, hq * d)
        o = attn @ w[p + "self_attn.o_proj.weight"].T
        if gemma:
            x = x + rms_norm(o, w[p + "post_attention_layernorm.weight"], eps, True)
            h = rms_norm(x, w[p + "pre_feedforward_layernorm.weight"], eps, True)
        else:
            x = x + o
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps, False)
        if mt == "phi3":
            gate, up = np.split(h @ w[p + "mlp.gate_up_proj.weight"].T, 2, axis=-1)
        else:
            gate, up = h @ w[p + "mlp.gate_proj.weight"].T, h @ w[p + "mlp.up_proj.weight"].T
        mlp = (act(gate) * up) @ w[p + "mlp.down_proj.weight"].T
        x = x + (rms_norm(mlp, w[p + "post_feedforward_layernorm.weight"], eps, True) if gemma else mlp)
    x = rms_norm(x, w["model.norm.weight"], eps, gemma)
    tied = c.get("tie_word_embeddings", gemma) and not w.get("_tied_head_quantised")
    head = None if tied else w.get("lm_head.weight")
    logits = x @ (head if head is not None else w["model.embed_tokens.weight"]).T
    if final_cap:
        logits = final_cap * np.tanh(logits / final_cap)
    return logits


def greedy(c, w, prompt, num_tokens):
    """(tokens, margins): the greedy continuation, and at each step the gap between the
    best and second-best logit (a small gap is numerically fragile)."""
    tokens, out, margins = list(prompt), [], []
    for _ in range(num_tokens):
        logits = forward(c, w, tokens)[-1]
        order = np.argsort(-logits)
        out.append(int(order[0]))
        margins.append(float(logits[order[0]] - logits[order[1]]))
        tokens.append(out[-1])
    return out, margins


# ----------------------------------------------------------------- tiny checkpoints


def tiny_config(arch, **overrides):
    """A small config of `arch` (vocab 1024 = the fortune demo tokenizer's): 64 hidden,
    4 query / 2 KV heads, a sliding window of 16 where the architecture has one."""
    c = {"architectures": [ARCHITECTURES[arch]], "model_type": arch, "vocab_size": 1024,
         "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
         "num_attention_heads": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "max_position_embeddings": 256, "tie_word_embeddings": False,
         "hidden_act": "silu", "bos_token_id": 1021, "eos_token_id": [1021, 1023]}
    if arch == "llama":
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    elif arch == "mistral":
        c["sliding_window"] = 16
    elif arch == "qwen2":
        c.update(rope_theta=1000000.0, tie_word_embeddings=True, use_sliding_window=False, sliding_window=None)
    elif arch == "qwen3":
        c.update(head_dim=32, rope_theta=1000000.0, attention_bias=False, use_sliding_window=False,
                 sliding_window=None, tie_word_embeddings=True)
    elif arch == "phi3":
        c.update(sliding_window=16, rope_scaling=None, original_max_position_embeddings=256,
                 rms_norm_eps=1e-5)
    elif arch == "gemma2":
        c.update(num_hidden_layers=4, head_dim=32, query_pre_attn_scalar=24, hidden_act="gelu_pytorch_tanh",
                 hidden_activation="gelu_pytorch_tanh", attn_logit_softcapping=5.0,
                 final_logit_softcapping=10.0, sliding_window=16, tie_word_embeddings=True)
    elif arch == "gemma3_text":
        c.update(num_hidden_layers=4, head_dim=32, query_pre_attn_scalar=32,
                 hidden_activation="gelu_pytorch_tanh", sliding_window=16, sliding_window_pattern=3,
                 rope_theta=1000000.0, rope_local_base_freq=10000.0,
                 rope_scaling={"rope_type": "linear", "factor": 2.0},
                 attn_logit_softcapping=None, final_logit_softcapping=None, tie_word_embeddings=True)
    c.update(overrides)
    return c


def random_weights(c, seed):
    """Seeded random float32 weights with Hugging Face's names for `c`'s architecture."""
    rng = np.random.default_rng(seed)
    mt, gemma = c["model_type"], is_gemma(c)
    hidden, inter, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hq, hkv, d = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)

    def rnd(*shape, scale=None):
        scale = 1.0 / math.sqrt(shape[-1]) if scale is None else scale
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def norm(n):  # Gemma stores w with the norm multiplying by (1 + w)
        return rnd(n, scale=0.1) if gemma else 1.0 + rnd(n, scale=0.1)

    # Gemma scales embeddings by sqrt(hidden): smaller rows keep activations near 1.
    w = {"model.embed_tokens.weight": rnd(v, hidden, scale=0.5 if gemma else 1.0),
         "model.norm.weight": norm(hidden)}
    if not c.get("tie_word_embeddings", gemma):
        w["lm_head.weight"] = rnd(v, hidden)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(hidden)
        w[p + "post_attention_layernorm.weight"] = norm(hidden)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(hidden)
            w[p + "post_feedforward_layernorm.weight"] = norm(hidden)
        if mt in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        if mt == "phi3":
            w[p + "self_attn.qkv_proj.weight"] = rnd((hq + 2 * hkv) * d, hidden)
            w[p + "mlp.gate_up_proj.weight"] = rnd(2 * inter, hidden)
        else:
            w[p + "self_attn.q_proj.weight"] = rnd(hq * d, hidden)
            w[p + "self_attn.k_proj.weight"] = rnd(hkv * d, hidden)
            w[p + "self_attn.v_proj.weight"] = rnd(hkv * d, hidden)
            w[p + "mlp.gate_proj.weight"] = rnd(inter, hidden)
            w[p + "mlp.up_proj.weight"] = rnd(inter, hidden)
        if mt == "qwen2":
            w[p + "self_attn.q_proj.bias"] = rnd(hq * d, scale=0.1)
            w[p + "self_attn.k_proj.bias"] = rnd(hkv * d, scale=0.1)
            w[p + "self_attn.v_proj.bias"] = rnd(hkv * d, scale=0.1)
        w[p + "self_attn.o_proj.weight"] = rnd(hidden, hq * d)
        w[p + "mlp.down_proj.weight"] = rnd(hidden, inter)
    return w


def make_checkpoint(directory, config, seed=0, dtype="float32", tokenizer_from=None):
    """Writes config.json + model.safetensors (+ the tokenizer files of `tokenizer_from`)."""
    os.makedirs(directory, exist_ok=True)
    config = dict(config, torch_dtype=dtype)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    write_safetensors(os.path.join(directory, "model.safetensors"), random_weights(config, seed), dtype)
    if tokenizer_from:
        for name in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(tokenizer_from, name)):
                shutil.copy(os.path.join(tokenizer_from, name), os.path.join(directory, name))
    return config


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make")
    make.add_argument("arch", choices=sorted(ARCHITECTURES))
    make.add_argument("dir")
    make.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("--tokenizer-from")
    run = sub.add_parser("greedy")
    run.add_argument("dir")
    run.add_argument("--prompt", required=True)
    run.add_argument("--tokens", type=int, default=8)
    args = parser.parse_args(argv)
    if args.command == "make":
        make_checkpoint(args.dir, tiny_config(args.arch), args.seed, args.dtype, args.tokenizer_from)
    else:
        config, weights = load(args.dir)
        tokens, margins = greedy(config, weights, [int(t) for t in args.prompt.split(",")], args.tokens)
        print(json.dumps({"tokens": tokens, "margins": margins}))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Helpers for the LLM tests: tiny seeded random Llama-family models written in Hugging
Face format (config.json + safetensors, fp32 or bf16, single file or sharded), a
hand-written reference forward pass in PyTorch (Debian's python3-torch), and small
tokenizer.json files.

The reference follows Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM math
(RMSNorm in fp32, rotate-half RoPE with rope_theta, GQA by repeating K/V heads, SwiGLU)
written out here so it does not depend on `transformers` (not in Debian).
"""

import json
import math
import os
import struct

import torch

from llm_reference_serving import matching_prefix_ok  # noqa: F401 (test_llm.py's)

DTYPES = {"float32": (torch.float32, "F32"), "bfloat16": (torch.bfloat16, "BF16"),
          "float16": (torch.float16, "F16")}


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} in the safetensors format (header JSON padded to 8 bytes)."""
    header, blobs, offset = {}, [], 0
    names = sorted(tensors)
    for name in names:
        t = tensors[name].contiguous()
        dtype_name = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}[t.dtype]
        data = t.view(torch.uint8).numpy().tobytes() if t.dtype != torch.float32 else t.numpy().tobytes()
        header[name] = {"dtype": dtype_name, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def tiny_config(**overrides):
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": 96, "hidden_size": 64, "intermediate_size": 160,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 512,
        "tie_word_embeddings": False, "hidden_act": "silu", "torch_dtype": "float32",
        "bos_token_id": 1, "eos_token_id": 2,
    }
    config.update(overrides)
    return config


def random_weights(config, seed, bias=False):
    """Seeded random weights (fp32) with HF names. Scales keep logits in a useful range."""
    g = torch.Generator().manual_seed(seed)
    h, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d = config.get("head_dim", h // heads)
    v = config["vocab_size"]

    def rnd(*shape, scale=None):
        scale = scale if scale is not None else 1.0 / math.sqrt(shape[-1])
        return torch.randn(*shape, generator=g) * scale

    w = {"model.embed_tokens.weight": rnd(v, h, scale=1.0),
         "model.norm.weight": 1.0 + 0.1 * rnd(h, scale=1.0)}
    if not config.get("tie_word_embeddings"):
        w["lm_head.weight"] = rnd(v, h)
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1.0 + 0.1 * rnd(h, scale=1.0)
        w[p + "post_attention_layernorm.weight"] = 1.0 + 0.1 * rnd(h, scale=1.0)
        w[p + "self_attn.q_proj.weight"] = rnd(heads * d, h)
        w[p + "self_attn.k_proj.weight"] = rnd(kv * d, h)
        w[p + "self_attn.v_proj.weight"] = rnd(kv * d, h)
        w[p + "self_attn.o_proj.weight"] = rnd(h, heads * d)
        if bias:
            w[p + "self_attn.q_proj.bias"] = 0.1 * rnd(heads * d, scale=1.0)
            w[p + "self_attn.k_proj.bias"] = 0.1 * rnd(kv * d, scale=1.0)
            w[p + "self_attn.v_proj.bias"] = 0.1 * rnd(kv * d, scale=1.0)
        w[p + "mlp.gate_proj.weight"] = rnd(inter, h)
        w[p + "mlp.up_proj.weight"] = rnd(inter, h)
        w[p + "mlp.down_proj.weight"] = rnd(h, inter)
    return w


def write_model(directory, config, weights, dtype="float32", shards=1):
    """Writes config.json and the weights (cast to `dtype`), in `shards` files."""
    os.makedirs(directory, exist_ok=True)
    config = dict(config, torch_dtype=dtype)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    torch_dtype = DTYPES[dtype][0]
    cast = {k: t.to(torch_dtype) for k, t in weights.items()}
    if shards == 1:
        write_safetensors(os.path.join(directory, "model.safetensors"), cast, {"format": "pt"})
        return
    names = sorted(cast)
    weight_map = {}
    for s in range(shards):
        part = names[s::shards]
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(directory, file), {n: cast[n] for n in part})
        weight_map.update({n: file for n in part})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)


def loaded_weights(weights, dtype):
    """What the server computes with: the stored dtype widened back to fp32."""
    torch_dtype = DTYPES[dtype][0]
    return {k: t.to(torch_dtype).to(torch.float32) for k, t in weights.items()}


def _rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference_logits(config, w, tokens):
    """Logits [len(tokens), vocab] of the causal LM over `tokens` (fp32, batch 1)."""
    h = config["hidden_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d = config.get("head_dim", h // heads)
    eps = config["rms_norm_eps"]
    n = len(tokens)
    with torch.no_grad():
        x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
        inv_freq = 1.0 / (config["rope_theta"] ** (torch.arange(0, d, 2).float() / d))
        freqs = torch.outer(torch.arange(n).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        mask = torch.full((n, n), float("-inf")).triu(1)
        for i in range(config["num_hidden_layers"]):
            p = f"model.layers.{i}."
            hs = _rms_norm(x, w[p + "input_layernorm.weight"], eps)

            def proj(name):
                out = hs @ w[p + f"self_attn.{name}_proj.weight"].T
                bias = w.get(p + f"self_attn.{name}_proj.bias")
                return out + bias if bias is not None else out

            q = proj("q").view(n, heads, d).transpose(0, 1)
            k = proj("k").view(n, kv, d).transpose(0, 1)
            v = proj("v").view(n, kv, d).transpose(0, 1)
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
            k = k.repeat_interleave(heads // kv, dim=0)
            v = v.repeat_interleave(heads // kv, dim=0)
            scores = q @ k.transpose(1, 2) / math.sqrt(d) + mask
            attn = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(n, heads * d)
            x = x + attn @ w[p + "self_attn.o_proj.weight"].T
            hs = _rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            gate = hs @ w[p + "mlp.gate_proj.weight"].T
            up = hs @ w[p + "mlp.up_proj.weight"].T
            x = x + (torch.nn.functional.silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
        x = _rms_norm(x, w["model.norm.weight"], eps)
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
        return x @ head.T


def reference_greedy(config, w, prompt, num_tokens):
    """Greedy continuation of `prompt`: (tokens, margins) where margins[i] is the gap
    between the best and second-best logit at step i (small gaps are numerically fragile)."""
    tokens, out, margins = list(prompt), [], []
    for _ in range(num_tokens):
        logits = reference_logits(config, w, tokens)[-1]
        top = torch.topk(logits, 2)
        out.append(int(top.indices[0]))
        margins.append(float(top.values[0] - top.values[1]))
        tokens.append(out[-1])
    return out, margins


# ------------------------------------------------------------------------- tokenizers

GPT2_PATTERN = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")


def bytes_to_unicode():
    """GPT-2's byte alphabet: byte -> printable character."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _class_ranges(pred):
    """A Python `re` character-class body for the code points where pred(category)."""
    import unicodedata
    parts, start = [], None
    for cp in range(0x110000):
        ok = pred(unicodedata.category(chr(cp)))
        if ok and start is None:
            start = cp
        if not ok and start is not None:
            parts.append((start, cp - 1))
            start = None
    if start is not None:
        parts.append((start, 0x10FFFF))

    def esc(c):
        return "\\U%08x" % c
    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in parts)


_RE_CACHE = {}


def python_pattern(pattern):
    """Translates an Oniguruma pattern with \\p{L}, \\p{N}, \\s into Python `re` syntax
    (explicit Unicode classes; \\s = the White_Space property), an independent
    implementation of the same split that the server's hand-written matchers do."""
    import re
    if pattern in _RE_CACHE:
        return _RE_CACHE[pattern]
    letters = _class_ranges(lambda c: c.startswith("L"))
    numbers = _class_ranges(lambda c: c.startswith("N"))
    space = r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
    p = pattern.replace(r"[^\r\n\p{L}\p{N}]", f"[^\\r\\n{letters}{numbers}]")
    p = p.replace(r"[^\s\p{L}\p{N}]", f"[^{space}{letters}{numbers}]")
    p = p.replace(r"\p{L}", f"[{letters}]").replace(r"\p{N}", f"[{numbers}]")
    p = p.replace(r"\s", f"[{space}]").replace(r"\S", f"[^{space}]")
    p = p.replace("(?i:", "(?i:")
    compiled = re.compile(p)
    _RE_CACHE[pattern] = compiled
    return compiled


def reference_bpe(symbols, ranks):
    """Merges adjacent symbols lowest rank first, leftmost first (Hugging Face order)."""
    symbols = list(symbols)
    while len(symbols) > 1:
        best, best_rank = None, None
        for i in range(len(symbols) - 1):
            r = ranks.get((symbols[i], symbols[i + 1]))
            if r is not None and (best_rank is None or r < best_rank):
                best, best_rank = i, r
        if best is None:
            break
        symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
    return symbols


def train_byte_level_bpe(text, num_merges, pattern=GPT2_PATTERN):
    """A small byte-level BPE trainer: returns (vocab {token: id}, merges [(a, b)])."""
    b2u = bytes_to_unicode()
    words = {}
    for piece in python_pattern(pattern).findall(text):
        w = tuple(b2u[b] for b in piece.encode())
        words[w] = words.get(w, 0) + 1
    vocab = {b2u[b]: i for i, b in enumerate(range(256))}
    merges = []
    for _ in range(num_merges):
        pairs = {}
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + c
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        vocab[best[0] + best[1]] = len(vocab)
        new_words = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + c
        words = new_words
    return vocab, merges


def reference_byte_level_encode(text, vocab, merges, pattern, added=()):
    """Pure-Python byte-level BPE encode: added tokens split first, then regex pieces."""
    b2u = bytes_to_unicode()
    ranks = {m: i for i, m in enumerate(merges)}
    ids, segments, i = [], [], 0
    added = sorted(added, key=lambda a: -len(a[0]))
    start = 0
    while i < len(text):
        hit = next(((c, t) for c, t in added if text.startswith(c, i)), None)
        if hit:
            segments.append(("text", text[start:i]))
            segments.append(("added", hit[1]))
            i += len(hit[0])
            start = i
        else:
            i += 1
    segments.append(("text", text[start:]))
    for kind, value in segments:
        if kind == "added":
            ids.append(value)
            continue
        for piece in python_pattern(pattern).findall(value):
            symbols = [b2u[b] for b in piece.encode()]
            ids.extend(vocab[s] for s in reference_bpe(symbols, ranks))
    return ids


def byte_level_tokenizer_json(vocab, merges, style="gpt2", added=(), bos=None):
    """tokenizer.json for a byte-level BPE; style gpt2 (ByteLevel use_regex) or llama3 /
    qwen2 (Split with their pattern, then ByteLevel without regex)."""
    if style == "gpt2":
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    else:
        pattern = LLAMA3_PATTERN if style == "llama3" else QWEN2_PATTERN
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    if bos is not None:
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": bos[0], "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [], "special_tokens": {bos[0]: {"id": bos[0], "ids": [bos[1]], "tokens": [bos[0]]}}}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for c, i in added],
        "normalizer": None, "pre_tokenizer": pre, "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": style == "llama3",
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


SAMPLE_TEXT = (
    "The quick brown fox jumps over the lazy dog. It's a truth universally acknowledged, "
    "that a single man in possession of a good fortune, must be in want of a wife. "
    "You'll never know what you've got 'til it's gone. 1234567 + 89 = 1234656!\n\n"
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Stra\u00dfe; \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8. "
    "Emoji: \U0001F600\U0001F44D\U0001F3FD  tabs\tand   spaces   \n  indented\r\nline"
) * 3


def write_llm_repo(repo, name, config, weights, tokenizer_json, tokenizer_config=None,
                   dtype="float32", shards=1, parameters=None, instances=1, kserve=True, max_batch_size=0):
    """A model repository entry for the llm backend (decoupled: one instance serves every
    tensor request)."""
    version = os.path.join(repo, name, "1")
    write_model(version, config, weights, dtype, shards)
    with open(os.path.join(version, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json, f, ensure_ascii=False)
    with open(os.path.join(version, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config or {}, f)
    lines = [f'name: "{name}"', 'backend: "llm"', f"max_batch_size: {max_batch_size}"]
    if kserve:
        lines += ['input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },',
                  '  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
                  '  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true },',
                  '  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true } ]',
                  'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]']
    lines.append(f"instance_group [ {{ count: {instances} kind: KIND_CPU }} ]")
    for k, v in (parameters or {}).items():
        lines.append(f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}')
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write("\n".join(lines) + "\n")

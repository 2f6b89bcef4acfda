#!/usr/bin/python3
"""Random-weight Llama GGUF files at realistic sizes, for the infera vs llama.cpp benchmark.

    bench/llm/make_gguf_bench_model.py OUT_DIR [--shape 1b|3b ...] [--type Q4_0|Q8_0|Q4_K_M ...]
    -> OUT_DIR/bench-1b-Q4_0.gguf, bench-1b-Q8_0.gguf, bench-1b-Q4_K_M.gguf (and 3b the same)

Shapes (Llama architecture, rope 500000, RMSNorm 1e-5, untied output):
  1b: 16 layers x 2048, 32 query / 8 KV heads (head 64), FFN 8192, vocab 128256  (1.50 B params)
  3b: 28 layers x 3072, 24 query / 8 KV heads (head 128), FFN 8192, vocab 128256 (3.61 B params)

Tensor types follow llama-quantize's choices for the file type, so the files look like the
ones users download: Q8_0 -> every matrix Q8_0; Q4_0 -> every matrix Q4_0 except
output.weight in Q6_K; Q4_K_M -> Q4_K, with output.weight and the "more bits" layers'
attn_v / ffn_down in Q6_K (layers i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2). Norms F32.

Weights: seeded normal, std 1/sqrt(fan_in) for matrices (so activations keep their scale
through each layer), 0.02 for the embedding, norms 1. Generating and block-encoding 1.5 B
values in numpy takes long on 2 cores, so --distinct-layers layers (default 2) are drawn and
encoded, and layer i stores distinct layer i % distinct_layers's bytes; the embedding and
output rows are drawn --distinct-rows (default 16384) at a time and repeated. Every tensor
still has its own place in the file, so a decode step reads exactly the bytes a real model
of this shape reads: the comparison is about memory bandwidth, not about the values.

Tokenizer: byte-level BPE (model "gpt2", pre "llama-bpe": Llama 3's split regex) of exactly 128256 entries: the
fortune demo model's tokenizer (--tokenizer, default /work/fresh3/demo-models/fortune/1)
extended deterministically: synthetic token k (k = 0, 1, ...) is the concatenation of two
existing tokens chosen by a seeded generator, added with the merge "left right", until the
vocabulary (incl. fortune's three special tokens, moved to the end) has 128256 entries.
Every merge's parts are tokens, so both engines' BPE loaders accept it.

The file is written in one streaming pass (header from the shapes, then each tensor's
blocks), never held in memory: the 3b Q8_0 file is 3.8 GB.
"""
import argparse
import json
import os
import random
import struct
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from gguf_quant import quantize  # noqa: E402
from gguf_tokenizer import CL100K, add_tokenizer  # noqa: E402
from gguf_writer import GGMLType, GGUFWriter, encode_string, encode_value, tensor_bytes  # noqa: E402

SHAPES = {
    "1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, ffn=8192, vocab=128256),
    "3b": dict(layers=28, hidden=3072, heads=24, kv_heads=8, ffn=8192, vocab=128256),
}
FILE_TYPE = {"Q4_0": 2, "Q8_0": 7, "Q4_K_M": 15}  # general.file_type (llama_ftype)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def matrix_type(file_type, name, layer, n_layers):
    if file_type == "Q8_0":
        return "Q8_0"
    if name == "output.weight":
        return "Q6_K"
    if file_type == "Q4_0":
        return "Q4_0"
    if name.endswith(("attn_v.weight", "ffn_down.weight")) and more_bits(layer, n_layers):
        return "Q6_K"
    return "Q4_K"


def synthetic_tokenizer(src_dir, vocab_size, out_dir, seed=0):
    """fortune's tokenizer.json grown to vocab_size entries; returns the directory."""
    with open(os.path.join(src_dir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    model = tok["model"]
    vocab = dict(model["vocab"])
    merges = list(model["merges"])
    base = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    rng = random.Random(seed)
    target = vocab_size - len(SPECIAL)
    pool = list(base)
    while len(vocab) < target:
        left, right = rng.choice(pool), rng.choice(pool)
        text = left + right
        if text in vocab or len(text) > 24:
            continue
        vocab[text] = len(vocab)
        merges.append(f"{left} {right}")
        pool.append(text)
    model["vocab"] = vocab
    model["merges"] = merges
    # Llama 3's pre-tokenizer (the cl100k split regex, then byte-level): GGUF pre "llama-bpe".
    # (fortune's plain ByteLevel becomes pre "gpt2", a name llama.cpp does not know: it says "gpt-2".)
    tok["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": CL100K}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    for a, content in zip(tok["added_tokens"], SPECIAL):
        assert a["content"] == content
    for k, a in enumerate(tok["added_tokens"]):
        a["id"] = target + k
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(src_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    with open(os.path.join(out_dir, "generation_config.json"), "w", encoding="utf-8") as f:
        json.dump({"bos_token_id": target, "eos_token_id": [target, target + 2]}, f)
    return out_dir


class Tensor:
    def __init__(self, name, type_name, shape, chunks):
        self.name, self.type_name, self.shape, self.chunks = name, type_name, shape, chunks
        self.ggml_type = GGMLType.F32 if type_name == "F32" else GGMLType[type_name]
        self.nbytes = tensor_bytes(self.ggml_type, shape)


def write_streaming(path, metadata_writer, tensors, alignment=32):
    pad = lambda n: (-n) % alignment  # noqa: E731
    head = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(metadata_writer.metadata))]
    for key, t in metadata_writer.metadata.items():
        head.append(encode_string(key) + struct.pack("<I", t.type) + encode_value(t))
    offset = 0
    for t in tensors:
        dims = list(reversed(t.shape))
        head.append(encode_string(t.name) + struct.pack("<I", len(dims)) +
                    b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", int(t.ggml_type), offset))
        offset += t.nbytes + pad(t.nbytes)
    head = b"".join(head)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(head + b"\0" * pad(len(head)))
        for t in tensors:
            written = 0
            for chunk in t.chunks():
                f.write(chunk)
                written += len(chunk)
            if written != t.nbytes:
                raise RuntimeError(f"{t.name}: wrote {written} bytes, expected {t.nbytes}")
            f.write(b"\0" * pad(t.nbytes))
    os.replace(tmp, path)


def build(shape_name, file_type, out_dir, tok_dir, distinct_layers, distinct_rows, seed):
    s = SHAPES[shape_name]
    L, H, V, F = s["layers"], s["hidden"], s["vocab"], s["ffn"]
    head_dim = H // s["heads"]
    kv = s["kv_heads"] * head_dim
    rng = np.random.default_rng(seed)
    cache = {}

    def encoded(key, type_name, rows, cols, std):
        """Bytes of a [rows, cols] random matrix in type_name, cached by key."""
        if (key, type_name) not in cache:
            x = rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(std)
            cache[(key, type_name)] = quantize(type_name, x).tobytes()
        return cache[(key, type_name)]

    def matrix(name, layer, rows, cols):
        type_name = matrix_type(file_type, name, layer, L)
        key = (name.split(".", 2)[-1], layer % distinct_layers if layer >= 0 else -1)
        return Tensor(name, type_name, (rows, cols),
                      lambda: [encoded(key, type_name, rows, cols, 1.0 / np.sqrt(cols))])

    def vocab_matrix(name, std):
        type_name = matrix_type(file_type, name, -1, L)

        def chunks():
            block = encoded((name, "rows"), type_name, distinct_rows, H, std)
            full, rest = divmod(V, distinct_rows)
            for _ in range(full):
                yield block
            yield block[: rest * len(block) // distinct_rows]
        return Tensor(name, type_name, (V, H), chunks)

    def ones(name, n):
        return Tensor(name, "F32", (n,), lambda: [np.ones(n, np.float32).tobytes()])

    tensors = [vocab_matrix("token_embd.weight", 0.02)]
    for i in range(L):
        p = f"blk.{i}."
        tensors += [ones(p + "attn_norm.weight", H),
                    matrix(p + "attn_q.weight", i, H, H), matrix(p + "attn_k.weight", i, kv, H),
                    matrix(p + "attn_v.weight", i, kv, H), matrix(p + "attn_output.weight", i, H, H),
                    ones(p + "ffn_norm.weight", H),
                    matrix(p + "ffn_gate.weight", i, F, H), matrix(p + "ffn_up.weight", i, F, H),
                    matrix(p + "ffn_down.weight", i, H, F)]
    tensors += [ones("output_norm.weight", H), vocab_matrix("output.weight", 1.0 / np.sqrt(H))]

    w = GGUFWriter()
    w.add("general.architecture", "llama")
    w.add("general.name", f"infera-bench-{shape_name}-{file_type}")
    w.add("general.file_type", FILE_TYPE[file_type])
    w.add("llama.block_count", L)
    w.add("llama.context_length", 8192)
    w.add("llama.embedding_length", H)
    w.add("llama.feed_forward_length", F)
    w.add("llama.attention.head_count", s["heads"])
    w.add("llama.attention.head_count_kv", s["kv_heads"])
    w.add("llama.rope.freq_base", 500000.0)
    w.add("llama.rope.dimension_count", head_dim)
    w.add("llama.attention.layer_norm_rms_epsilon", 1e-5)
    w.add("llama.vocab_size", V)
    add_tokenizer(w, tok_dir)
    assert len(w.metadata["tokenizer.ggml.tokens"].value) == V
    path = os.path.join(out_dir, f"bench-{shape_name}-{file_type}.gguf")
    write_streaming(path, w, tensors)
    return path, sum(t.nbytes for t in tensors), sum(t.shape[0] * (t.shape[1] if len(t.shape) > 1 else 1)
                                                     for t in tensors)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--shape", action="append", choices=sorted(SHAPES))
    p.add_argument("--type", action="append", choices=sorted(FILE_TYPE))
    p.add_argument("--tokenizer", default="/work/fresh3/demo-models/fortune/1")
    p.add_argument("--distinct-layers", type=int, default=2)
    p.add_argument("--distinct-rows", type=int, default=16384)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tok_dir = synthetic_tokenizer(args.tokenizer, 128256, tmp)
        for shape in args.shape or ["1b"]:
            for file_type in args.type or ["Q4_0", "Q8_0", "Q4_K_M"]:
                t0 = time.time()
                path, nbytes, params = build(shape, file_type, args.out_dir, tok_dir, args.distinct_layers,
                                             args.distinct_rows, args.seed)
                print(json.dumps({"file": path, "tensor_bytes": nbytes, "params": params,
                                  "bits_per_weight": round(8 * nbytes / params, 2),
                                  "seconds": round(time.time() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()

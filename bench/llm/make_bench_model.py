#!/usr/bin/python3
"""Writes the benchmark LLM repository: a random Llama with llama.cpp's reference shape
(4 layers x 512, 8 heads, FFN 1408, vocab 32000, untied: 45.6 M parameters, f32), as the
`llm` backend loads it, under two names: `bench` (prefix caching on) and `bench_nocache`.
With --ab, two more variants of `bench_nocache` for side-by-side runs in one server:
`bench_blas` (matmul_kernel blas: the OpenBLAS path) and `bench_other_threads` (the
other thread count: 2 when --threads is 1, else 1). With --quant, three more variants of
`bench_nocache` (docs/llm.md, "Weight quantisation"): `bench_bf16` (the same weights
stored bf16: the bf16 packing), `bench_int8` and `bench_int4` (quantization int8 / int4).

    /usr/bin/python3 bench/llm/make_bench_model.py --out DIR [--threads N] [--ab] [--quant]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration"))
import llm_testutil as u  # noqa: E402

CONFIG = u.tiny_config(vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=4,
                       num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048,
                       bos_token_id=1, eos_token_id=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-num-seqs", type=int, default=16)
    p.add_argument("--ab", action="store_true", help="also write bench_blas and bench_other_threads")
    p.add_argument("--quant", action="store_true", help="also write bench_bf16, bench_int8 and bench_int4")
    args = p.parse_args()
    weights = u.random_weights(CONFIG, seed=1)
    vocab = {u.bytes_to_unicode()[b]: b for b in range(256)}
    tokenizer = u.byte_level_tokenizer_json(vocab, [], "gpt2", [("</s>", 2)])
    common = {"max_num_seqs": args.max_num_seqs, "max_num_batched_tokens": 1024, "max_model_len": 2048,
              "kv_cache_memory_bytes": "512MiB", "num_threads": args.threads}
    variants = [("bench", {}), ("bench_nocache", {"enable_prefix_caching": "false"})]
    if args.ab:
        variants += [("bench_blas", {"enable_prefix_caching": "false", "matmul_kernel": "blas"}),
                     ("bench_other_threads", {"enable_prefix_caching": "false",
                                              "num_threads": 2 if args.threads == 1 else 1})]
    if args.quant:
        variants += [("bench_bf16", {"enable_prefix_caching": "false"}),
                     ("bench_int8", {"enable_prefix_caching": "false", "quantization": "int8"}),
                     ("bench_int4", {"enable_prefix_caching": "false", "quantization": "int4"})]
    for name, extra in variants:
        u.write_llm_repo(args.out, name, CONFIG, weights, tokenizer, {"eos_token": "</s>"},
                         dtype="bfloat16" if name == "bench_bf16" else "float32",
                         parameters=dict(common, **extra), instances=1, kserve=False)
    n = sum(t.numel() for t in weights.values())
    print(json.dumps({"parameters": n, "out": args.out}))


if __name__ == "__main__":
    main()

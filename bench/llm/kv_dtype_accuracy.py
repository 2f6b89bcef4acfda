#!/usr/bin/env python3
"""Accuracy of the 16-bit KV caches against fp32 (docs/llm.md, "KV-cache dtype").

Runs build/tools/llm/llm_logits (the paged runner, no server) once per kv_cache_dtype on
the same prompts — fortunes from /usr/share/games/fortunes, the demo's corpus — fed one
token per step (every prompt position's logits read the cache), then G greedy tokens
decoded together. Prints JSON: per dtype, the max and mean |logit − fp32 logit| over the
prompt positions, top-1 agreement there, perplexity of the prompts' next tokens, and
greedy agreement (tokens before the first difference from fp32's generation / G).

  bench/llm/kv_dtype_accuracy.py --model demo-models/fortune/1 [--prompts 32] [--generate 128]
"""

import argparse
import json
import math
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fortunes(n, min_chars=600):
    """n texts of at least min_chars: consecutive fortunes joined, from the demo's corpus."""
    entries = []
    for name in ("fortunes", "literature", "riddles"):
        with open(os.path.join("/usr/share/games/fortunes", name), encoding="utf-8", errors="replace") as f:
            entries += [e.strip() for e in f.read().split("\n%\n") if e.strip()]
    texts, current = [], ""
    for entry in entries:
        current = f"{current}\n{entry}" if current else entry
        if len(current) >= min_chars:
            texts.append(current)
            current = ""
    step = max(1, len(texts) // n)
    return texts[::step][:n]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--prompts", type=int, default=32)
    p.add_argument("--generate", type=int, default=128)
    p.add_argument("--max-prompt-tokens", type=int, default=256)
    args = p.parse_args()
    texts = fortunes(args.prompts)
    tok = subprocess.run([os.path.join(args.build, "tools/llm/llm_tokenize"), args.model],
                         input="".join(json.dumps(t) + "\n" for t in texts), capture_output=True, text=True,
                         check=True)
    prompts = [json.loads(line)["ids"][:args.max_prompt_tokens] for line in tok.stdout.splitlines()]
    runs = {}
    for dtype in ("fp32", "bf16", "fp16"):
        cmd = [os.path.join(args.build, "tools/llm/llm_logits"), "--model", args.model, "--chunk", "1",
               "--block-size", "16", "--threads", "1", "--generate", str(args.generate), "--kv-cache-dtype", dtype]
        for ids in prompts:
            cmd += ["--prompt", ",".join(map(str, ids))]
        runs[dtype] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["sequences"]
    report = {"prompts": len(prompts), "prompt_tokens": sum(map(len, prompts)), "generate": args.generate}
    for dtype, seqs in runs.items():
        max_err, sum_err, count, top1, nll, nll_n, agreed = 0.0, 0.0, 0, 0, 0.0, 0, 0
        for ids, seq, ref in zip(prompts, seqs, runs["fp32"]):
            for pos in range(len(ids)):
                row, ref_row = seq["logits"][pos], ref["logits"][pos]
                errs = [abs(a - b) for a, b in zip(row, ref_row)]
                max_err = max(max_err, max(errs))
                sum_err += sum(errs)
                count += len(errs)
                top1 += row.index(max(row)) == ref_row.index(max(ref_row))
                if pos + 1 < len(ids):
                    m = max(row)
                    log_z = m + math.log(sum(math.exp(x - m) for x in row))
                    nll += log_z - row[ids[pos + 1]]
                    nll_n += 1
            gen, ref_gen = seq["generated"], ref["generated"]
            agreed += next((i for i, (a, b) in enumerate(zip(gen, ref_gen)) if a != b), len(gen))
        report[dtype] = {"max_abs_logit_error": max_err, "mean_abs_logit_error": sum_err / count,
                         "top1_agreement": top1 / sum(map(len, prompts)), "perplexity": math.exp(nll / nll_n),
                         "greedy_agreement": agreed / (len(prompts) * args.generate)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

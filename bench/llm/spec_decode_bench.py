#!/usr/bin/env python3
"""Speculative decoding (n-gram prompt lookup) vs plain decoding on one LLM, C = 1, greedy
(docs/speculative_decoding.md; figures in docs/benchmarks.md, "Speculative decoding").

One server holds the model twice: as is (`<model>`) and with speculative_model "[ngram]"
(`<model>_spec`). Each run sends every prompt to both, alternating which goes first, one
request at a time (non-streamed /v1/completions, temperature 0, ignore_eos, max_tokens);
a run's output tok/s is its completion tokens over its summed request wall times. The
outputs must be token for token identical (checked every time). Prints medians over runs,
the speed-up, and the acceptance rate from the vLLM spec_decode counters.

  /usr/bin/python3 bench/llm/spec_decode_bench.py --binary build/infera \
      --model-dir demo-models/fortune --runs 9 --max-tokens 256 --prompts mixed
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration"))
import infera_server  # noqa: E402

# Repetitive text: code, lists, quoted text (issue 27's target workload).
PROMPTS = [
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "for i in range(10):\n    print(i)\nfor j in range(10):\n    print(j)\nfor k in range(10):\n",
    "1. apples\n2. pears\n3. plums\n4. apples\n5. pears\n6. plums\n7.",
    "- red\n- green\n- blue\n- red\n- green\n-",
    '"A fool and his money are soon parted," he said. "A fool and his money are soon parted," she said. "',
    "> You will be rich.\n> You will be happy.\n> You will be",
]
# Prompts after which fortune's own greedy continuation repeats (found by measuring the
# share of output tokens that came from accepted drafts, 0.2-0.4 here against 0-0.2 for
# most prompts): the favourable case for n-gram lookup on this model.
REPEATING = [
    "- red\n- green\n- blue\n- red\n- green\n-",
    '"A fool and his money are soon parted," he said. "A fool and his money are soon parted," she said. "',
    "You will be married within a year.\nYou will be married within a year.\nYou will be",
    "SELECT * FROM users;\nSELECT * FROM users;\nSELECT",
    "aaaa bbbb aaaa bbbb aaaa",
    "Q: What is it?\nA: It is.\nQ: What is it?\nA: It is.\nQ: What is it?\nA:",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/infera")
    ap.add_argument("--model-dir", default="demo-models/fortune", help="a model directory (config.pbtxt + 1/)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--num-speculative-tokens", type=int, default=4)
    ap.add_argument("--ngram-max", type=int, default=4)
    ap.add_argument("--ngram-min", type=int, default=2)
    ap.add_argument("--prompts", choices=["mixed", "repeating"], default="mixed",
                    help="mixed: code, lists, quoted text; repeating: where fortune's continuation repeats")
    args = ap.parse_args()
    prompts = PROMPTS if args.prompts == "mixed" else REPEATING
    infera_server.BINARY = os.path.abspath(args.binary)
    src_repo, name = os.path.split(os.path.abspath(args.model_dir))
    repo = tempfile.mkdtemp(prefix="infera-specbench-")
    infera_server.copy_model(src_repo, name, repo)
    extra = {"speculative_model": "[ngram]", "num_speculative_tokens": args.num_speculative_tokens,
             "ngram_prompt_lookup_max": args.ngram_max, "ngram_prompt_lookup_min": args.ngram_min}
    infera_server.copy_model(src_repo, name, repo, lambda text: text + "".join(
        f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}\n' for k, v in extra.items()),
        new_name=f"{name}_spec")
    server = infera_server.InferaServer(repo)
    server.wait_ready()
    models = [name, f"{name}_spec"]

    def complete(model, prompt):
        body = {"model": model, "prompt": prompt, "max_tokens": args.max_tokens, "temperature": 0,
                "ignore_eos": True, "logprobs": 0, "return_tokens_as_token_ids": True}
        start = time.perf_counter()
        status, _, data = server.request("POST", "/v1/completions", json.dumps(body),
                                         {"Content-Type": "application/json"})
        elapsed = time.perf_counter() - start
        assert status == 200, data
        choice = json.loads(data)["choices"][0]
        return choice["logprobs"]["tokens"], elapsed

    def counter(kind):
        m = re.search(rf'^vllm:spec_decode_num_{kind}_tokens_total{{model_name="{name}_spec",engine="0"}} (\S+)$',
                      server.metrics_text(), re.M)
        return float(m.group(1))

    try:
        for prompt in prompts[:2]:  # warm-up
            for model in models:
                complete(model, prompt)
        draft0, accepted0 = counter("draft"), counter("accepted")
        rates = {m: [] for m in models}
        for run in range(args.runs):
            tokens = {m: 0 for m in models}
            seconds = {m: 0.0 for m in models}
            for i, prompt in enumerate(prompts):
                order = models if (run + i) % 2 == 0 else models[::-1]
                outputs = {}
                for model in order:
                    out, elapsed = complete(model, prompt)
                    outputs[model] = out
                    tokens[model] += len(out)
                    seconds[model] += elapsed
                if outputs[models[0]] != outputs[models[1]]:
                    raise SystemExit(f"outputs differ for prompt {prompt!r}")
            for m in models:
                rates[m].append(tokens[m] / seconds[m])
            print(f"run {run + 1}: " + ", ".join(f"{m} {rates[m][-1]:.0f} tok/s" for m in models), flush=True)
        draft, accepted = counter("draft") - draft0, counter("accepted") - accepted0
        base, spec = (statistics.median(rates[m]) for m in models)
        print(f"median output tok/s at C=1: {name} {base:.0f}, {name}_spec {spec:.0f}; speed-up {spec / base:.2f}x "
              f"(per run: {', '.join(f'{s / b:.2f}' for b, s in zip(rates[models[0]], rates[models[1]]))}); "
              f"acceptance {accepted / draft:.2f} ({accepted:.0f} of {draft:.0f} drafts); outputs identical")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

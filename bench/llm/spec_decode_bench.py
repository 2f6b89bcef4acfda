#!/usr/bin/env python3
"""Speculative decoding (n-gram prompt lookup, draft models) vs plain decoding on one LLM,
C = 1, greedy (docs/speculative_decoding.md; figures in docs/benchmarks.md, "Speculative
decoding").

One server holds the model once as is (`<model>`) and once per speculation variant:
`<model>_ngram` (speculative_model "[ngram]"; leave out with --no-ngram), `<model>_l<N>`
for each --truncated-draft N (a draft written by the script: the model's first N layers,
testutil.truncate_llama_layers), `<model>_d<i>` for each --draft DIR (a draft model
directory, copied into the version directory). Each run sends every prompt to every
variant, rotating which goes first, one request at a time (non-streamed /v1/completions,
temperature 0, ignore_eos, max_tokens); a run's output tok/s is its completion tokens over
its summed request wall times. The outputs must be token for token identical to the plain
model's (checked every time). Prints medians over runs, the speed-ups, and each variant's
acceptance rate from the vLLM spec_decode counters.

  /usr/bin/python3 bench/llm/spec_decode_bench.py --binary build/infera \
      --model-dir demo-models/fortune --runs 9 --max-tokens 256 --prompts mixed \
      --truncated-draft 1 --truncated-draft 2
"""

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration"))
import infera_server  # noqa: E402
import testutil  # noqa: E402

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
    ap.add_argument("--no-ngram", action="store_true", help="leave out the [ngram] variant")
    ap.add_argument("--draft", action="append", default=[],
                    help="a draft model directory (config.json + safetensors, the model's vocabulary); repeatable")
    ap.add_argument("--truncated-draft", type=int, action="append", default=[], metavar="N",
                    help="a draft made of the model's first N layers; repeatable")
    ap.add_argument("--prompts", choices=["mixed", "repeating"], default="mixed",
                    help="mixed: code, lists, quoted text; repeating: where fortune's continuation repeats")
    args = ap.parse_args()
    prompts = PROMPTS if args.prompts == "mixed" else REPEATING
    infera_server.BINARY = os.path.abspath(args.binary)
    src_repo, name = os.path.split(os.path.abspath(args.model_dir))
    repo = tempfile.mkdtemp(prefix="infera-specbench-")
    infera_server.copy_model(src_repo, name, repo)

    def variant(suffix, extra, build=None):
        dst = infera_server.copy_model(src_repo, name, repo, lambda text: text + "".join(
            f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}\n' for k, v in extra.items()),
            new_name=f"{name}_{suffix}")
        if build:
            build(os.path.join(dst, "1"))
        return f"{name}_{suffix}"

    k = args.num_speculative_tokens
    models = [name]
    if not args.no_ngram:
        models.append(variant("ngram", {"speculative_model": "[ngram]", "num_speculative_tokens": k,
                                        "ngram_prompt_lookup_max": args.ngram_max,
                                        "ngram_prompt_lookup_min": args.ngram_min}))
    for layers in args.truncated_draft:
        models.append(variant(f"l{layers}", {"speculative_model": "draft", "num_speculative_tokens": k},
                              lambda version, n=layers: testutil.truncate_llama_layers(
                                  version, os.path.join(version, "draft"), n)))
    for i, draft in enumerate(args.draft):
        models.append(variant(f"d{i}", {"speculative_model": "draft", "num_speculative_tokens": k},
                              lambda version, d=draft: shutil.copytree(os.path.abspath(d),
                                                                       os.path.join(version, "draft"))))
    server = infera_server.InferaServer(repo)
    server.wait_ready()

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

    def counter(model, kind):
        m = re.search(rf'^vllm:spec_decode_num_{kind}_tokens_total{{model_name="{model}",engine="0"}} (\S+)$',
                      server.metrics_text(), re.M)
        return float(m.group(1))

    try:
        for prompt in prompts[:2]:  # warm-up
            for model in models:
                complete(model, prompt)
        spec = models[1:]
        start = {m: (counter(m, "draft"), counter(m, "accepted")) for m in spec}
        rates = {m: [] for m in models}
        for run in range(args.runs):
            tokens = {m: 0 for m in models}
            seconds = {m: 0.0 for m in models}
            for i, prompt in enumerate(prompts):
                shift = (run + i) % len(models)
                outputs = {}
                for model in models[shift:] + models[:shift]:
                    out, elapsed = complete(model, prompt)
                    outputs[model] = out
                    tokens[model] += len(out)
                    seconds[model] += elapsed
                for m in spec:
                    if outputs[m] != outputs[name]:
                        raise SystemExit(f"{m}: output differs from {name} for prompt {prompt!r}")
            for m in models:
                rates[m].append(tokens[m] / seconds[m])
            print(f"run {run + 1}: " + ", ".join(f"{m} {rates[m][-1]:.0f} tok/s" for m in models), flush=True)
        base = statistics.median(rates[name])
        print(f"median output tok/s at C=1 (load average {os.getloadavg()[0]:.2f}): {name} {base:.0f}")
        for m in spec:
            draft, accepted = (counter(m, kind) - s for kind, s in zip(("draft", "accepted"), start[m]))
            med = statistics.median(rates[m])
            per_run = ", ".join(f"{s / b:.2f}" for b, s in zip(rates[name], rates[m]))
            print(f"  {m}: {med:.0f} tok/s, speed-up {med / base:.2f}x (per run: {per_run}); acceptance "
                  f"{accepted / max(draft, 1):.2f} ({accepted:.0f} of {draft:.0f} drafts); outputs identical")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A small OpenAI streaming load generator (Python stdlib only: threads + http.client).

Each of --concurrency threads sends streamed /v1/completions requests back to back
(closed loop) until --requests have been sent; every request's prompt is --prompt-tokens
token ids (seeded random, the first --shared-prefix of them common to all requests) and
asks for exactly --max-tokens tokens (ignore_eos, temperature 0). `logprobs: 1` makes
every token arrive in its own SSE chunk, so the first chunk times the first token.

Reported (JSON on stdout, one object):
  output_tok_s    generated tokens / wall time of the measured requests
  ttft_ms         time to first token: p50, p99 (request sent -> first token chunk)
  tpot_ms         time per output token after the first: (e2e - ttft) / (tokens - 1)
  itl_ms          gaps between consecutive token chunks (p50, p99)
  e2e_ms          request latency
--warmup requests run first and are not counted. Bounded: each request has a timeout.

Usage:
  bench/llm/openai_bench.py --port 8000 --model bench --concurrency 8 --requests 64
"""

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time


def percentile(values, q):
    if not values:
        return 0.0
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def make_prompts(n, length, shared, vocab, seed):
    rng = random.Random(seed)
    prefix = [rng.randrange(3, vocab) for _ in range(shared)]
    return [prefix + [rng.randrange(3, vocab) for _ in range(length - shared)] for _ in range(n)]


def one_request(host, port, model, prompt, max_tokens, timeout):
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                       "ignore_eos": True, "stream": True, "logprobs": 1,
                       "stream_options": {"include_usage": True}})
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    token_times, usage, buffer = [], None, b""
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        now = time.perf_counter()
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if not event.startswith(b"data: "):
                continue
            data = event[6:]
            if data == b"[DONE]":
                continue
            obj = json.loads(data)
            if obj.get("usage"):
                usage = obj["usage"]
            for choice in obj.get("choices", []):
                lp = choice.get("logprobs") or {}
                token_times.extend([now] * len(lp.get("token_logprobs") or []))
    conn.close()
    end = time.perf_counter()
    n = usage["completion_tokens"] if usage else len(token_times)
    return {"start": start, "end": end, "tokens": n, "token_times": token_times}


def run(args):
    total = args.warmup + args.requests
    prompts = make_prompts(total, args.prompt_tokens, args.shared_prefix, args.vocab, args.seed)
    results, errors = [None] * total, []
    next_index = [0]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                i = next_index[0]
                if i >= total:
                    return
                next_index[0] += 1
            try:
                results[i] = one_request(args.host, args.port, args.model, prompts[i], args.max_tokens,
                                         args.timeout)
            except Exception as e:  # noqa: BLE001 - reported, counted
                errors.append(repr(e))

    if args.warmup:
        saved = total
        total = args.warmup
        threads = [threading.Thread(target=worker) for _ in range(min(args.concurrency, args.warmup))]
        [t.start() for t in threads]
        [t.join() for t in threads]
        total = saved
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    t0 = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    wall = time.perf_counter() - t0
    measured = [r for r in results[args.warmup:] if r]
    ttft = [(r["token_times"][0] - r["start"]) * 1e3 for r in measured if r["token_times"]]
    tpot = [((r["end"] - r["start"]) - (r["token_times"][0] - r["start"])) * 1e3 / (r["tokens"] - 1)
            for r in measured if r["token_times"] and r["tokens"] > 1]
    itl = [(b - a) * 1e3 for r in measured for a, b in zip(r["token_times"], r["token_times"][1:])]
    e2e = [(r["end"] - r["start"]) * 1e3 for r in measured]
    tokens = sum(r["tokens"] for r in measured)
    summary = {
        "concurrency": args.concurrency, "requests": len(measured), "errors": len(errors),
        "prompt_tokens": args.prompt_tokens, "shared_prefix": args.shared_prefix,
        "max_tokens": args.max_tokens, "wall_s": round(wall, 3),
        "output_tok_s": round(tokens / wall, 1),
        "ttft_ms": {"p50": round(statistics.median(ttft), 2), "p99": round(percentile(ttft, 0.99), 2)},
        "tpot_ms": {"p50": round(statistics.median(tpot), 2), "p99": round(percentile(tpot, 0.99), 2)},
        "itl_ms": {"p50": round(percentile(itl, 0.5), 2), "p99": round(percentile(itl, 0.99), 2)},
        "e2e_ms": {"p50": round(statistics.median(e2e), 1), "p99": round(percentile(e2e, 0.99), 1)},
    }
    if errors:
        summary["first_error"] = errors[0]
    return summary


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--model", required=True)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--requests", type=int, default=32)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--prompt-tokens", type=int, default=64)
    p.add_argument("--shared-prefix", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args()
    summary = run(args)
    print(json.dumps(summary))
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

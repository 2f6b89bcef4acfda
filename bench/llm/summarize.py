#!/usr/bin/python3
"""Medians of repeated openai_bench.py rows (JSON lines with a "label"), one line per label:
output tok/s, TTFT and TPOT p50/p99 — each the median over the repeats of that figure.

    bench/llm/summarize.py results.jsonl
"""
import json
import statistics
import sys


def main():
    rows = {}
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows.setdefault(r["label"], []).append(r)
    for label, runs in rows.items():
        med = lambda get: statistics.median(get(r) for r in runs)  # noqa: E731
        print(json.dumps({
            "label": label, "runs": len(runs),
            "output_tok_s": round(med(lambda r: r["output_tok_s"]), 1),
            "output_tok_s_all": [r["output_tok_s"] for r in runs],
            "ttft_ms": {"p50": round(med(lambda r: r["ttft_ms"]["p50"]), 1),
                        "p99": round(med(lambda r: r["ttft_ms"]["p99"]), 1)},
            "tpot_ms": {"p50": round(med(lambda r: r["tpot_ms"]["p50"]), 2),
                        "p99": round(med(lambda r: r["tpot_ms"]["p99"]), 2)},
            "errors": sum(r["errors"] for r in runs)}))


if __name__ == "__main__":
    main()

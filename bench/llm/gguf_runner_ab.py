#!/usr/bin/python3
"""One infera binary on one GGUF file, phase by phase, for old/new comparisons of the runner.

    bench/llm/gguf_runner_ab.py --infera OLD_OR_NEW_BINARY --gguf FILE --threads 2 \
        [--phases c1,c8,ttft] [--max-tokens 16] [--rounds 1] [--perf PREFIX]

Starts `infera serve` as bench/llm/gguf_side_by_side.py does (same repository, config and
streaming client; OMP_WAIT_POLICY=passive, as deployed, unless the environment sets it), then per phase: c1 = one 64-token prompt,
MAX_TOKENS out (c1_tok_s; c1_decode_tok_s = tokens after the first over the time after the
first); c8 = eight at once (c8_tok_s); ttft = one 512-token prompt, max_tokens 1 (ttft_ms).
Each phase also reports the server's CPU seconds (utime + stime) over the phase, less
sensitive than wall time to other jobs on a shared machine. --perf PREFIX records
`perf record -g` of the server per phase into PREFIX-PHASE.data. JSON on stdout.
Alternate the old and new binaries per round and compare ratios (docs/benchmarks.md).
"""
import argparse, json, os, subprocess, sys, tempfile, time, statistics
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_side_by_side as g

p = argparse.ArgumentParser()
p.add_argument("--infera", required=True)
p.add_argument("--gguf", default="/tmp/i31-peer/models/bench-1b-Q4_0.gguf")
p.add_argument("--threads", type=int, default=1)
p.add_argument("--phases", default="c1,c8,ttft")   # c1,c8,ttft
p.add_argument("--max-tokens", type=int, default=32)
p.add_argument("--perf", default="")  # prefix for perf data files; one per phase
p.add_argument("--rounds", type=int, default=1)
a = p.parse_args()
args = argparse.Namespace(threads=a.threads, slots=8, ctx=1024, infera_kv_bytes="", load_timeout=300,
                          infera=a.infera, timeout=1200)
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
work = tempfile.mkdtemp(prefix="i31d-")
res = {}
with g.Server("infera", a.gguf, args, work) as s:
    run = lambda ps, c, m: g.closed_loop(s.port, s.model, ps, c, m, True, 1200)
    run(g.prompts(1, 16, 128256, 99), 1, 4)
    for r in range(a.rounds):
        for ph in a.phases.split(","):
            perf = None
            if a.perf:
                perf = subprocess.Popen(["perf", "record", "-g", "-F", "499", "-o", f"{a.perf}-{ph}.data", "-p", str(s.proc.pid)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
            cpu0 = cpu(s.proc.pid)
            if ph == "c1":
                x = run(g.prompts(1, 64, 128256, 1000 + r), 1, a.max_tokens)
                v = x["tokens"] / (x["wall_s"])
                # decode rate excluding prefill: tokens-1 over (end-first) approximated by wall - ttft
                v2 = (x["tokens"] - 1) / (x["wall_s"] - x["ttft_ms"] / 1e3)
                res.setdefault("c1_tok_s", []).append(v); res.setdefault("c1_decode_tok_s", []).append(v2)
            elif ph == "c8":
                x = run(g.prompts(8, 64, 128256, 2000 + r), 8, a.max_tokens)
                res.setdefault("c8_tok_s", []).append(x["output_tok_s"])
            elif ph == "ttft":
                x = run(g.prompts(1, 512, 128256, 5000 + r), 1, 1)
                res.setdefault("ttft_ms", []).append(x["ttft_ms"])
            res.setdefault(ph + "_cpu_s", []).append(cpu(s.proc.pid) - cpu0)
            if perf:
                perf.send_signal(2); perf.wait()
            print(ph, json.dumps({k: [round(v, 2) for v in vs] for k, vs in res.items()}), file=sys.stderr, flush=True)
    res["rss_mib"] = [g.proc_kb(s.proc.pid, "VmRSS") / 1024]
print(json.dumps({k: [round(v, 3) for v in vs] for k, vs in res.items()}))

#!/usr/bin/python3
"""infera vs llama.cpp's llama-server on the same GGUF file, 2 threads each (issue 31, item 4).

    bench/llm/gguf_side_by_side.py --gguf /tmp/m/bench-1b-Q4_0.gguf [--gguf ...] \\
        --llama-server /work/peers/llama.cpp/build/bin/llama-server [--engines llamacpp,infera] \\
        [--infera build/infera] [--rounds 3] [--out results.json]

Engines: llamacpp (its defaults: the file memory-mapped), llamacpp-no-mmap (the same with
--no-mmap: weights read into its own buffers), llamacpp-fa (the defaults plus --flash-attn:
attention without the [positions x tokens x heads] f32 score matrix a prompt batch
otherwise allocates) and infera (its default: the file copied
onto huge pages; docs/gguf.md, "Weights in memory").

For each file and engine, one server at a time on 127.0.0.1 (an ephemeral port):
  llama-server -m FILE -t T -tb T -c SLOTS*CTX --parallel SLOTS -ngl 0 (continuous batching is
      its default; -c is shared by the slots, so each sequence gets CTX positions)
  infera serve on a model repository made here: MODEL/config.pbtxt (backend "llm",
      default_model_filename the file's name, num_threads T, max_num_seqs SLOTS,
      max_model_len CTX) and MODEL/1/<file> a symbolic link to FILE.
After the server is up and has answered --warmup requests, each round measures
  C=1 and C=8: closed-loop clients (every client sends its next request when the last one
      ends) streaming /v1/completions: PROMPT (64) random token ids, MAX_TOKENS (128) tokens,
      temperature 0, ignore_eos (both servers take that body field); output tok/s = tokens
      received / wall time of the round's requests
  TTFT: one 512-token prompt at a time, max_tokens 1 ... time to the first streamed token
  RSS: VmRSS of the server process (/proc/PID/status) after the round, and VmHWM at the end.
With --fill-cache, after the rounds: SLOTS concurrent requests of CTX - 72 prompt ids and
64 tokens each, so every sequence reaches CTX - 8 positions and together they fill the
whole KV cache (infera given llama.cpp's budget with --infera-kv-bytes: SLOTS x CTX
positions), then VmRSS again (rss_full_mib): RSS at equal context with the cache in use,
not just reserved.
Reported: the median over rounds of each figure, per engine, and infera / llama.cpp ratios
(TTFT and RSS: lower is better, so the ratio target is < 1). JSON to --out (and stdout),
a markdown table to stdout. Prompts are token ids (no tokenizer in the loop), the same ids
for both engines, seeded.

Environment: infera runs with OMP_WAIT_POLICY=passive (its deployed setting) unless the
caller's environment sets the variable; llama-server with libgomp's default (the variable
removed; LLAMACPP_OMP_WAIT_POLICY sets one for it). Until 2026-12-07 llama-server ran
under passive too, which slowed it by a third (docs/benchmarks.md).

Load average at start and end is recorded: on a shared machine the absolute figures move
with the other jobs; run the engines back to back and read the ratios with that in mind.
"""
import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stream_completion(port, model, prompt, max_tokens, logprobs, timeout):
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    if logprobs:
        body["logprobs"] = 1  # infera: one token per SSE chunk
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    first, chunks, usage, buffer = None, 0, None, b""
    while True:
        data = resp.read1(65536)
        if not data:
            break
        buffer += data
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if not event.startswith(b"data: ") or event[6:].strip() == b"[DONE]":
                continue
            obj = json.loads(event[6:])
            if obj.get("usage"):
                usage = obj["usage"].get("completion_tokens")
            elif (obj.get("timings") or {}).get("predicted_n"):
                usage = obj["timings"]["predicted_n"]
            if obj.get("choices"):
                chunks += 1
                if first is None:
                    first = time.perf_counter()
    conn.close()
    end = time.perf_counter()
    return {"start": start, "first": first or end, "end": end, "tokens": usage if usage else chunks}


def closed_loop(port, model, prompts, concurrency, max_tokens, logprobs, timeout):
    results, errors, lock, index = [], [], threading.Lock(), [0]

    def worker():
        while True:
            with lock:
                if index[0] >= len(prompts):
                    return
                prompt = prompts[index[0]]
                index[0] += 1
            try:
                r = stream_completion(port, model, prompt, max_tokens, logprobs, timeout)
                with lock:
                    results.append(r)
            except Exception as e:  # noqa: BLE001 - counted and reported
                errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    t0 = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    wall = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{len(errors)} requests failed, first: {errors[0]}")
    short = [r["tokens"] for r in results if r["tokens"] != max_tokens]
    if short:  # ignore_eos not honoured, or a token count we misread: the figure would lie
        raise RuntimeError(f"{len(short)} responses had {short[:3]} tokens, not {max_tokens}")
    return {"output_tok_s": sum(r["tokens"] for r in results) / wall,
            "ttft_ms": statistics.median((r["first"] - r["start"]) * 1e3 for r in results),
            "tokens": sum(r["tokens"] for r in results), "wall_s": wall}


def proc_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Server:
    """One engine serving one GGUF file; a context manager that always stops it."""

    def __init__(self, engine, gguf, args, workdir):
        self.engine, self.gguf, self.args, self.workdir = engine, gguf, args, workdir
        self.log_path = os.path.join(workdir, f"{engine}.log")
        self.proc = None
        self.model = "gguf"

    def __enter__(self):
        a = self.args
        log = open(self.log_path, "w")
        if self.engine.startswith("llamacpp"):
            self.port = free_port()
            cmd = [a.llama_server, "-m", self.gguf, "-t", str(a.threads), "-tb", str(a.threads),
                   "-c", str(a.slots * a.ctx), "--parallel", str(a.slots), "-ngl", "0",
                   "--host", "127.0.0.1", "--port", str(self.port), "--alias", self.model]
            # --no-mmap: weights read into its own buffers, as infera's default copy
            cmd += [flag for e, flag in VARIANTS if e == self.engine]
        else:
            repo = os.path.join(self.workdir, "repo")
            version = os.path.join(repo, self.model, "1")
            os.makedirs(version, exist_ok=True)
            name = os.path.basename(self.gguf)
            link = os.path.join(version, name)
            if not os.path.lexists(link):
                os.symlink(os.path.abspath(self.gguf), link)
            write_infera_config(os.path.join(repo, self.model), name, a)
            cmd = [a.infera, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
                   "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0"]
        self.cmd = cmd
        env = dict(os.environ)
        if self.engine == "infera":
            env.setdefault("OMP_WAIT_POLICY", "passive")  # as deployed (docs/deploy.md)
        elif "LLAMACPP_OMP_WAIT_POLICY" in env:
            env["OMP_WAIT_POLICY"] = env["LLAMACPP_OMP_WAIT_POLICY"]
        else:
            # llama.cpp's ggml-cpu is built with OpenMP: under passive its threads sleep at
            # every graph barrier (C=1 Q4_0 17.1 -> 11.2 tok/s). Its users run it with
            # libgomp's default (spin, then sleep), so it gets that here.
            env.pop("OMP_WAIT_POLICY", None)
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        self._wait_ready()
        return self

    def _wait_ready(self):
        deadline = time.time() + self.args.load_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.engine} exited ({self.proc.returncode}): {self.tail()}")
            if self.engine == "infera":
                text = open(self.log_path, errors="replace").read()
                if "server is ready" in text:
                    for line in text.splitlines():
                        if "HTTP server listening on" in line:
                            self.port = int(line.rsplit(":", 1)[1].split()[0])
                            return
            else:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                    conn.request("GET", "/health")
                    if conn.getresponse().status == 200:
                        return
                except OSError:
                    pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.engine} not ready after {self.args.load_timeout}s: {self.tail()}")

    def tail(self):
        return open(self.log_path, errors="replace").read()[-1500:]

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def write_infera_config(model_dir, filename, a):
    params = {"num_threads": a.threads, "max_num_seqs": a.slots, "max_model_len": a.ctx,
              "enable_prefix_caching": "false"}
    if a.infera_kv_bytes:
        params["kv_cache_memory_bytes"] = a.infera_kv_bytes
    lines = [f'name: "{os.path.basename(model_dir)}"', 'backend: "llm"', "max_batch_size: 0",
             f'default_model_filename: "{filename}"', "instance_group [ { count: 1 kind: KIND_CPU } ]"]
    lines += [f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}' for k, v in params.items()]
    with open(os.path.join(model_dir, "config.pbtxt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def prompts(n, length, vocab, seed):
    rng = random.Random(seed)
    return [[rng.randrange(256, vocab - 256) for _ in range(length)] for _ in range(n)]


def measure(server, args, vocab):
    logprobs = server.engine == "infera"
    run = lambda ps, c, m: closed_loop(server.port, server.model, ps, c, m, logprobs, args.timeout)  # noqa: E731
    run(prompts(args.warmup, args.prompt, vocab, 99), min(args.warmup, 8), 16)
    rounds = []
    for r in range(args.rounds):
        row = {}
        for c in (1, 8):
            res = run(prompts(c * args.requests_per_client, args.prompt, vocab, 1000 * r + c), c, args.max_tokens)
            row[f"c{c}_tok_s"] = res["output_tok_s"]
        res = run(prompts(args.ttft_requests, 512, vocab, 5000 + r), 1, 1)
        row["ttft_512_ms"] = res["ttft_ms"]
        row["rss_mib"] = proc_kb(server.proc.pid, "VmRSS") / 1024
        rounds.append(row)
        print(f"  {server.engine} round {r}: " + json.dumps({k: round(v, 2) for k, v in row.items()}),
              file=sys.stderr, flush=True)
    out = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    if args.fill_cache:
        res = run(prompts(args.slots, args.ctx - 72, vocab, 7000), args.slots, 64)
        out["rss_full_mib"] = proc_kb(server.proc.pid, "VmRSS") / 1024
        out["fill_tokens"] = res["tokens"]
        print(f"  {server.engine} full cache: VmRSS {out['rss_full_mib']:.1f} MiB", file=sys.stderr, flush=True)
    out["hwm_mib"] = proc_kb(server.proc.pid, "VmHWM") / 1024
    out["rounds"] = rounds
    return out


ROWS = [("c1_tok_s", "output tok/s, C=1", False), ("c8_tok_s", "output tok/s, C=8", False),
        ("ttft_512_ms", "TTFT, 512-token prompt (ms)", True), ("rss_mib", "RSS after warm-up (MiB)", True),
        ("rss_full_mib", "RSS with the KV cache full (MiB, --fill-cache)", True)]


VARIANTS = [("llamacpp-no-mmap", "--no-mmap"), ("llamacpp-fa", "--flash-attn")]  # llama-server with one flag more
ENGINES = ("llamacpp",) + tuple(e for e, _ in VARIANTS) + ("infera",)


def markdown(results):
    variants = [(e, flag) for e, flag in VARIANTS if any(e in engines for engines in results.values())]
    header = "| file | figure | llama.cpp | infera | infera / llama.cpp |"
    rule = "|---|---|---:|---:|---:|"
    for _, flag in variants:
        header += f" llama.cpp {flag} | infera / llama.cpp {flag} |"
        rule += "---:|---:|"
    lines = [header, rule]
    fmt = lambda v: "—" if v is None else f"{v:.1f}"  # noqa: E731
    for name, engines in results.items():
        for key, label, _ in ROWS:
            l, i = (engines.get("llamacpp") or {}).get(key), (engines.get("infera") or {}).get(key)
            ratio = f"{i / l:.2f}" if l and i else "—"
            line = f"| {name} | {label} | {fmt(l)} | {fmt(i)} | {ratio} |"
            for e, _ in variants:
                n = (engines.get(e) or {}).get(key)
                line += f" {fmt(n)} | {f'{i / n:.2f}' if n and i else '—'} |"
            lines.append(line)
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gguf", action="append", required=True)
    p.add_argument("--engines", default="llamacpp,infera")
    p.add_argument("--llama-server", default="/work/peers/llama.cpp/build/bin/llama-server")
    p.add_argument("--infera", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "infera"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--slots", type=int, default=8)
    p.add_argument("--ctx", type=int, default=1024, help="positions per sequence (both engines)")
    p.add_argument("--infera-kv-bytes", default="",
                   help="infera's kv_cache_memory_bytes (e.g. 256MiB: llama.cpp's f16 cache for 8 x 1024 "
                        "positions of the 1 B shape); default: the engine's own")
    p.add_argument("--prompt", type=int, default=64)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--requests-per-client", type=int, default=1)
    p.add_argument("--ttft-requests", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--vocab", type=int, default=128256, help="prompt ids are drawn below this")
    p.add_argument("--timeout", type=float, default=1200)
    p.add_argument("--load-timeout", type=float, default=300)
    p.add_argument("--fill-cache", action="store_true",
                   help="after the rounds, fill every KV position (SLOTS x CTX) and report VmRSS")
    p.add_argument("--out")
    args = p.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e!r} ({', '.join(ENGINES)})")
    args.infera = os.path.abspath(args.infera)
    binaries = {e: args.infera if e == "infera" else args.llama_server for e in ENGINES}
    for e in engines:
        if not os.access(binaries[e], os.X_OK):
            sys.exit(f"{e}: {binaries[e]} is not an executable (--llama-server / --infera)")
    for gguf in args.gguf:
        if not os.path.isfile(gguf):
            sys.exit(f"--gguf {gguf}: no such file")
    results, meta = {}, {"loadavg_start": os.getloadavg(), "args": vars(args)}
    workdir = tempfile.mkdtemp(prefix="gguf-side-by-side.")
    try:
        for gguf in args.gguf:
            name = os.path.basename(gguf)
            results[name] = {}
            for engine in engines:
                print(f"{name}: {engine}", file=sys.stderr, flush=True)
                with Server(engine, gguf, args, workdir) as server:
                    results[name][engine] = measure(server, args, args.vocab)
                    results[name][engine]["command"] = " ".join(server.cmd)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    meta["loadavg_end"] = os.getloadavg()
    doc = {"meta": meta, "results": results}
    text = json.dumps(doc, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    print(markdown(results))


if __name__ == "__main__":
    main()

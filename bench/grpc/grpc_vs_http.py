#!/usr/bin/python3
"""gRPC vs HTTP+JSON, side by side, against one infera process.

Workloads (models of the demo repository):
  simple    add_sub, two INT32 [1,16] inputs (Triton's "simple"): protocol overhead
  identity  identity_fp32 with one image-sized FP32 [150528] input: tensor encoding cost

Starts one infera on loopback (both frontends), then for each repetition and
concurrency runs, back to back against the same process so that all see the same
machine noise:
  grpc   the gRPC load generator (tools/grpc_load/grpc_load_main.cc, raw contents), one TCP
         connection per virtual client, like wrk;
  grpc1  the same with every client on one shared channel (HTTP/2 multiplexing, the way
         Triton's client libraries share a channel per server);
  http   wrk with a checking Lua script (bench/grpc/*.lua, JSON), one connection per
         virtual client.
Each run: a warm-up, then a measured window; every response is checked. Prints every
run, a table of medians, and the server's CPU time per request (user + system time of the
infera process from /proc, over the measured run / requests): what the server costs,
whatever the client sharing the machine costs.

    bench/grpc/grpc_vs_http.py --build build --repo demo-models \
        [--workload simple] [--concurrency 1,8,64] [--duration 10] [--reps 3]
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def start_server(build, repo):
    log = tempfile.NamedTemporaryFile(prefix="infera-grpc-bench-", suffix=".log", delete=False)
    process = subprocess.Popen([os.path.join(build, "infera"), "serve", "--model-repository", repo,
                                "--http-address", "127.0.0.1", "--http-port", "0",
                                "--grpc-address", "127.0.0.1", "--grpc-port", "0"],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        text = open(log.name).read()
        http = re.search(r"HTTP server listening on [^\s]*:(\d+)", text)
        grpc = re.search(r"gRPC server listening on [^\s]*:(\d+)", text)
        if http and grpc and "server is" in text:
            return process, int(http.group(1)), int(grpc.group(1)), log.name
        if process.poll() is not None:
            sys.exit(f"infera exited:\n{text}")
        time.sleep(0.1)
    sys.exit("infera did not start")


def result_of(output):
    match = re.search(r"^RESULT (.*)$", output, re.M)
    if not match:
        sys.exit(f"no RESULT line in:\n{output}")
    return json.loads(match.group(1))


WORKLOADS = {
    # name: (model, extra load generator flags, wrk script)
    "simple": ("simple", [], "simple_infer.lua"),
    "identity": ("identity_fp32", ["--identity-elements", "150528"], "identity_fp32_infer.lua"),
}


def server_cpu_seconds(pid):
    """User + system CPU time the server process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_grpc(build, port, workload, concurrency, warmup, duration, connections=0):
    model, extra, _ = WORKLOADS[workload]
    cmd = [os.path.join(build, "tools", "grpc_load", "infera_grpc_load"), "--target", f"127.0.0.1:{port}",
           "--model", model, "--concurrency", str(concurrency), "--connections", str(connections),
           *extra]
    subprocess.run(cmd + ["--warmup-s", "0", "--duration-s", str(warmup)], capture_output=True)
    cmd += ["--warmup-s", "0", "--duration-s", str(duration)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    result = result_of(out.stdout)
    if out.returncode != 0 or result["errors"]:
        sys.exit(f"gRPC run failed ({' '.join(cmd)}):\n{out.stdout}{out.stderr}")
    return result


def run_http(port, workload, concurrency, warmup, duration):
    model, _, lua = WORKLOADS[workload]
    threads = str(min(concurrency, 2))
    url = f"http://127.0.0.1:{port}/v2/models/{model}/infer"
    script = os.path.join(HERE, lua)
    subprocess.run(["wrk", "-t", threads, "-c", str(concurrency), "-d", f"{warmup}s", "-s", script, url],
                   capture_output=True, text=True)  # warm-up, not measured
    cmd = ["wrk", "-t", threads, "-c", str(concurrency), "-d", f"{duration}s", "-s", script, url]
    out = subprocess.run(cmd, capture_output=True, text=True)
    result = result_of(out.stdout)
    if out.returncode != 0 or result["errors"]:
        sys.exit(f"HTTP run failed ({' '.join(cmd)}):\n{out.stdout}{out.stderr}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--repo", default="demo-models")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="simple")
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10)
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    process, http_port, grpc_port, log = start_server(args.build, args.repo)
    runs = {(p, c): [] for p in ("grpc", "grpc1", "http") for c in levels}
    try:
        for rep in range(args.reps):
            for c in levels:
                results = []
                for proto in ("grpc", "grpc1", "http"):
                    cpu_before = server_cpu_seconds(process.pid)
                    if proto == "http":
                        r = run_http(http_port, args.workload, c, args.warmup, args.duration)
                    else:
                        r = run_grpc(args.build, grpc_port, args.workload, c, args.warmup,
                                     args.duration, 1 if proto == "grpc1" else 0)
                    # Server CPU per request: what the server costs, whatever the client costs.
                    r["server_cpu_us"] = 1e6 * (server_cpu_seconds(process.pid) - cpu_before) / r["requests"]
                    results.append((proto, r))
                for proto, r in results:
                    runs[(proto, c)].append(r)
                    print(f"rep {rep + 1} c={c:<3} {proto:5} {r['throughput_rps']:9.0f} req/s  "
                          f"p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
                          f"server {r['server_cpu_us']:.0f} us CPU/req  "
                          f"({r['requests']} checked, {r['errors']} errors)", flush=True)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        os.unlink(log)

    def med(proto, c, key):
        return statistics.median(r[key] for r in runs[(proto, c)])

    print(f"\n{args.workload}: medians of {args.reps} runs ({args.duration} s each after {args.warmup} s warm-up)")
    print("| concurrency | HTTP+JSON req/s | gRPC req/s (gRPC/HTTP) | gRPC 1 conn req/s (gRPC/HTTP) "
          "| p50 / p99 ms HTTP | gRPC | gRPC 1 conn |")
    print("|---|---|---|---|---|---|---|")

    def latency(proto, c):
        return f"{med(proto, c, 'p50_ms'):.3f} / {med(proto, c, 'p99_ms'):.3f}"

    for c in levels:
        h = med("http", c, "throughput_rps")
        g, g1 = med("grpc", c, "throughput_rps"), med("grpc1", c, "throughput_rps")
        print(f"| {c} | {h:.0f} | {g:.0f} ({g / h:.2f}x) | {g1:.0f} ({g1 / h:.2f}x) | "
              f"{latency('http', c)} | {latency('grpc', c)} | {latency('grpc1', c)} |")
    print("\nserver CPU per request, µs (user + system time of the infera process / requests)")
    print("| concurrency | HTTP+JSON | gRPC | gRPC 1 conn |")
    print("|---|---|---|---|")
    for c in levels:
        print(f"| {c} | " + " | ".join(f"{med(p, c, 'server_cpu_us'):.0f}" for p in ("http", "grpc", "grpc1"))
              + " |")


if __name__ == "__main__":
    main()

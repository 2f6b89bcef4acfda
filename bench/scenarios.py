#!/usr/bin/python3
"""`make bench` scenarios: infera against the HTTP ceiling (nginx), the seeds' baseline
(Flask + Gunicorn + PyTorch) and the in-process limit (LibTorch), and dynamic batching
on vs off. Each scenario starts its sides itself, on ephemeral loopback ports, runs them
alternately in one invocation, and prints medians of repeated runs and their ratios as
Markdown tables (docs/benchmarks.md quotes them).

    bench/scenarios.py --build build --repo demo-models [--repeats 3] [--quick]
                       [overhead] [baseline] [limit] [batching] [instances] [overload] [slo] [observability] [memory] [shm]
                       [pipeline] [analyze] [llm_quant] [kv_dtype] [precision] [console] [allocator] [placement] [transport] [cold_start] [grpc_floor]

Every load comes from `infera bench` (the same requests to every side) except the wrk
rows of the overhead scenario, which calibrate `infera bench` itself against wrk.
Every side runs with OMP_WAIT_POLICY=passive and one intra-op thread per model
instance or worker; results (JSON reports, SVG plots, the tables) go to
BUILD/bench-results/.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMP_WAIT_POLICY="passive")
ARGS = None  # parsed command line
FOREIGN = []  # % of the machine other processes used, per measured level (noise)


# ----------------------------------------------------------------------------- processes

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Process:
    """A side under test: started in its own session, stopped (the whole group) on exit."""

    running = []  # every side started and not yet stopped, for failure reports

    def __init__(self, argv, env=None, log_name="process"):
        Process.running.append(self)
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{log_name}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=env or ENV, start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.proc.args[0]} exited {self.proc.returncode}:\n{self.text()[-3000:]}")

    def stop(self):
        if self in Process.running:
            Process.running.remove(self)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        os.unlink(self.log.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wait_http(port, path, process, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        process.check_alive()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"no 200 from :{port}{path} within {timeout} s:\n{process.text()[-3000:]}")


def ready_or_stopped(proc, urls):
    """`proc` once every (port, path) answers 200; stopped if one does not."""
    try:
        for port, path in urls:
            wait_http(port, path, proc)
    except BaseException:
        proc.stop()
        raise
    return proc


def start_infera(repo, *extra, env=None):
    """`infera serve` on ephemeral ports, once ready (`.port`: its HTTP port)."""
    proc = Process([ARGS.infera, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
                    "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
                    "--metrics-port", "0", *extra], env=env, log_name="infera")
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.proc.poll() is not None:
            break
        match = re.search(r"HTTP server listening on [^\s]*:(\d+)", proc.text())
        if match and "server is ready" in proc.text():
            proc.port = int(match.group(1))
            return proc
        time.sleep(0.05)
    text = proc.text()
    proc.stop()
    raise RuntimeError(f"infera not ready:\n{text[-3000:]}")


def start_nginx(workdir):
    port = free_port()
    with open(os.path.join(ROOT, "bench", "nginx", "kserve_static.conf.in")) as f:
        conf = f.read().replace("@PORT@", str(port)).replace("@DIR@", workdir)
    path = os.path.join(workdir, "nginx.conf")
    with open(path, "w") as f:
        f.write(conf)
    proc = Process(["nginx", "-c", path, "-p", workdir], log_name="nginx")
    proc.port = port
    return ready_or_stopped(proc, [(port, "/")])


def start_flask(repo, models, workers=2, app="flask_kserve_server:app"):
    port = free_port()
    env = dict(ENV, MODEL_REPOSITORY=os.path.abspath(repo), MODELS=",".join(models), TORCH_THREADS="1")
    proc = Process(["gunicorn", "-w", str(workers), "-b", f"127.0.0.1:{port}", "--timeout", "120",
                    "--chdir", os.path.join(ROOT, "bench", "baselines"), app],
                   env=env, log_name="gunicorn")
    proc.port = port
    return ready_or_stopped(proc, [(port, f"/v2/models/{model}") for model in models])


def bench_repo(models, edit=None):
    """A repository with copies of demo models (weights hard-linked), configs edited."""
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    for model in models:
        src = os.path.join(ARGS.repo, model)
        shutil.copytree(src, os.path.join(repo, model), ignore=shutil.ignore_patterns("reference"),
                        copy_function=lambda s, d: os.link(s, d))
        if edit:
            path = os.path.join(repo, model, "config.pbtxt")
            with open(path) as f:
                text = f.read()
            os.unlink(path)  # a hard link into the demo repository
            with open(path, "w") as f:
                f.write(edit(model, text))
    return repo


def two_instances_one_thread(_, text):
    """instance_group count 2, one intra-op thread each: the 2-core setting every side
    of the torch comparisons uses (Gunicorn: 2 workers x 1 torch thread)."""
    return (re.sub(r"(instance_group \[\s*\{\s*count: )\d+", r"\g<1>2", text) +
            'parameters {\n  key: "INTRA_OP_THREAD_COUNT"\n  value: { string_value: "1" }\n}\n')


# --------------------------------------------------------------------------- measuring

def bench(port, model, *args, name="run"):
    """One `infera bench` run; returns its JSON report."""
    out = os.path.join(ARGS.out, f"{name}.json")
    cmd = [ARGS.infera, "bench", "-m", model, "-u", f"127.0.0.1:{port}", "--progress", "off",
           "--json", out, *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if result.returncode not in (0, 1) or not os.path.exists(out):
        sides = "".join(f"\n--- {p.proc.args[0]} (exit status {p.proc.poll()}), log tail:\n{p.text()[-2000:]}"
                        for p in Process.running)
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}{sides}")
    with open(out) as f:
        report = json.load(f)
    report["_command"] = " ".join(["infera", "bench"] + cmd[2:])
    FOREIGN.extend(l.get("foreign_cpu_pct", 0) for l in report["levels"])
    return report


def wrk(port, path="/", lua=None, connections=16, seconds=4):
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if lua:
        cmd += ["-s", lua]
    result = subprocess.run(cmd + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True,
                            timeout=seconds + 60)
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", result.stdout).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", result.stdout)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[p99.group(2)]
    return {"rps": rps, "p99_ms": float(p99.group(1)) * scale}


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def level(report, index=0):
    return report["levels"][index] if report["levels"] else None


def fmt(value, digits=1):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:,.{digits}f}"


def table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


def emit(title, text):
    print(f"\n### {title}\n\n{text}\n", flush=True)
    with open(os.path.join(ARGS.out, "tables.md"), "a") as f:
        f.write(f"\n### {title}\n\n{text}\n")


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


# ----------------------------------------------------------------------------- scenarios

def scenario_overhead():
    """simple (add_sub) through infera vs a static 200 from nginx, same requests, same
    load; plus wrk on both to calibrate the load generator."""
    seconds = "1.5" if ARGS.quick else "4"
    repo = bench_repo(["simple"])
    work = tempfile.mkdtemp(prefix="bench-nginx-")
    lua = os.path.join(work, "post.lua")
    with open(lua, "w") as f:
        data = ",".join(str(i) for i in range(16))
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                f"wrk.body = '{{\"inputs\":[{{\"name\":\"INPUT0\",\"shape\":[1,16],\"datatype\":\"INT32\","
                f"\"data\":[{data}]}},{{\"name\":\"INPUT1\",\"shape\":[1,16],\"datatype\":\"INT32\","
                f"\"data\":[{data}]}}]}}'\n")
    runs = {}
    wrks = {}
    with start_nginx(work) as nginx_proc, start_infera(repo) as infera_proc:
        ports = {"nginx": nginx_proc.port, "infera": infera_proc.port}
        pids = {"nginx": nginx_proc.pid, "infera": infera_proc.pid}
        for rep in range(ARGS.repeats):
            sides = ["nginx", "infera"] if rep % 2 == 0 else ["infera", "nginx"]
            for side in sides:
                for c in (1, 16):
                    r = bench(ports[side], "simple", "--concurrency-range", str(c), "--duration", seconds,
                              "-p", "1000", "--warmup", "1000", "--server-pid", str(pids[side]),
                              name=f"overhead-{side}-c{c}-r{rep}")
                    runs.setdefault((side, c), []).append(r)
            wrks.setdefault("nginx GET /", []).append(wrk(ports["nginx"], "/", seconds=int(float(seconds) + 0.5)))
            for side in sides:
                wrks.setdefault(f"{side} POST simple", []).append(
                    wrk(ports[side], "/v2/models/simple/infer", lua, seconds=int(float(seconds) + 0.5)))
    shutil.rmtree(repo)
    shutil.rmtree(work, ignore_errors=True)
    rows, summary = [], {}
    for (side, c), reports in sorted(runs.items()):
        levels = [level(r) for r in reports]
        row = {"rps": med([l["throughput_per_s"] for l in levels]),
               "p50_us": med([l["latency"]["p50_us"] for l in levels]),
               "p99_us": med([l["latency"]["p99_us"] for l in levels]),
               "cpu_us": med([l.get("server_cpu_us_per_request") for l in levels]),
               "client_cpu": med([l["client_cpu_pct"] for l in levels]),
               "client_us": med([l["client_cpu_pct"] / 100 / l["throughput_per_s"] * 1e6 for l in levels]),
               "server_us": med([l["server"]["request_us"] for l in levels if "server" in l]),
               "inside_overhead_us": med([l["server"]["request_us"] - l["server"]["compute_infer_us"]
                                          for l in levels if "server" in l])}
        summary[f"{side} c={c}"] = row
        rows.append([side, str(c), row["rps"], row["p50_us"], row["p99_us"], row["cpu_us"], row["client_cpu"],
                     row["client_us"], row["server_us"], row["inside_overhead_us"]])
    emit("overhead: simple via infera vs nginx static 200 (infera bench, same requests)",
         table(["server", "conc", "req/s", "P50 µs", "P99 µs", "server CPU µs/req", "bench CPU %",
                "bench CPU µs/req", "in-server µs (stats)", "of which not model µs"], rows))
    wrk_rows = [[name, med([w["rps"] for w in ws]), med([w["p99_ms"] for w in ws]) * 1000]
                for name, ws in wrks.items()]
    emit("overhead: wrk -t1 -c16 (calibration)", table(["target", "req/s", "P99 µs"], wrk_rows))
    n16, i16, n1, i1 = (summary[k] for k in ("nginx c=16", "infera c=16", "nginx c=1", "infera c=1"))
    wrk_nginx = med([w["rps"] for w in wrks["nginx POST simple"]])
    wrk_infera = med([w["rps"] for w in wrks["infera POST simple"]])
    ratios = [
        ["infera / nginx throughput, c=16 (P1: >= 0.5)", f"{i16['rps'] / n16['rps']:.2f}"],
        ["infera / nginx throughput, c=16, wrk", f"{wrk_infera / wrk_nginx:.2f}"],
        ["added latency vs nginx, c=1, P50 (µs)", f"{i1['p50_us'] - n1['p50_us']:.1f}"],
        ["server CPU per request, infera - nginx, c=16 (µs)",
         f"{i16['cpu_us'] - n16['cpu_us']:.1f}" if i16["cpu_us"] and n16["cpu_us"] else "-"],
        ["infera bench / wrk on nginx, c=16 (load generator ceiling)", f"{n16['rps'] / wrk_nginx:.2f}"],
        ["infera bench ceiling on one core (1e6 / bench CPU µs per request, nginx c=16)",
         f"{1e6 / n16['client_us']:,.0f} req/s"],
        ["nginx GET / with wrk vs targets.md 111.7k", f"{med([w['rps'] for w in wrks['nginx GET /']]) / 111700:.2f}"],
    ]
    emit("overhead: ratios (medians)", table(["what", "value"], ratios))
    return {"runs": summary, "wrk": {k: med([w["rps"] for w in v]) for k, v in wrks.items()}}


def best_under(report, p99_limit_us):
    """Highest throughput among levels whose P99 is within the limit (None if none)."""
    ok = [l for l in report["levels"] if l["latency"]["p99_us"] <= p99_limit_us and l["errors"] == 0]
    return max(ok, key=lambda l: l["throughput_per_s"]) if ok else None


def scenario_baseline():
    """The seeds' Flask + Gunicorn + PyTorch (2 sync workers x 1 thread) vs infera
    (2 instances x 1 thread) on the same TorchScript files, KServe v2 JSON both sides."""
    quick = ARGS.quick
    plans = {  # model: (sweep, seconds per level, warm-up ms)
        "ranker": ("1:64:x4", "1" if quick else "2", "500"),
        "resnet18": ("1:4:x2", "2" if quick else "3", "1000"),
    }
    repo = bench_repo(list(plans), two_instances_one_thread)
    # The batch-friendly ranker also as infera would serve it: dynamic batching on.
    copy_model(repo, "ranker", "ranker_batching", "dynamic_batching {\n  max_queue_delay_microseconds: 1000\n}\n",
               instances=2, threads=1)
    sides_of = {"ranker": ["flask", "infera", "infera_batching"], "resnet18": ["flask", "infera"]}
    served = {"infera_batching": "ranker_batching"}  # side -> model name it serves, when not the plan's
    results = {}
    with start_infera(repo) as infera_proc, start_flask(repo, list(plans)) as flask_proc:
        ports = {"infera": infera_proc.port, "flask": flask_proc.port, "infera_batching": infera_proc.port}
        pids = {"infera": infera_proc.pid, "flask": flask_proc.pid, "infera_batching": infera_proc.pid}
        for model, (sweep, seconds, warmup) in plans.items():
            for rep in range(ARGS.repeats):
                sides = sides_of[model] if rep % 2 == 0 else sides_of[model][::-1]
                for side in sides:
                    r = bench(ports[side], served.get(side, model), "--concurrency-range", sweep, "--duration", seconds,
                              "-p", "1000", "--warmup", warmup, "--server-pid", str(pids[side]),
                              name=f"baseline-{model}-{side}-sweep-r{rep}")
                    results.setdefault((model, side, "sweep"), []).append(r)
                # Fixed load: half of what the baseline sustained in the first sweep.
                flask_best = best_under(results[(model, "flask", "sweep")][0], 1e12)
                rate = max(1, round(0.5 * flask_best["throughput_per_s"])) if flask_best else 1
                for side in sides:
                    r = bench(ports[side], served.get(side, model), "--request-rate-range", str(rate), "--duration", seconds,
                              "-p", "1000", "--warmup", warmup, name=f"baseline-{model}-{side}-rate-r{rep}")
                    results.setdefault((model, side, "rate"), []).append(r)
    shutil.rmtree(repo)
    for model in plans:  # both sides' first sweep on one plot
        subprocess.run([ARGS.infera, "bench", "plot", "-o", os.path.join(ARGS.out, f"baseline-{model}.svg"),
                        "--title", f"{model}: infera vs Flask + Gunicorn (KServe v2 JSON)",
                        f"infera={os.path.join(ARGS.out, f'baseline-{model}-infera-sweep-r0.json')}",
                        f"flask={os.path.join(ARGS.out, f'baseline-{model}-flask-sweep-r0.json')}"], check=True)
    rows, ratio_rows, summary = [], [], {}
    for model in plans:
        per_side = {}
        for side in sides_of[model]:
            sweeps = results[(model, side, "sweep")]
            best = [best_under(r, 100_000) for r in sweeps]
            at_max = [r["levels"][-1] for r in sweeps]
            fixed = [level(r) for r in results[(model, side, "rate")]]
            s = {"best_rps": med([b["throughput_per_s"] if b else 0 for b in best]),
                 "best_c": med([b["concurrency"] if b else 0 for b in best]),
                 "max_c": at_max[0]["concurrency"],
                 "max_c_rps": med([l["throughput_per_s"] for l in at_max]),
                 "max_c_p99_ms": med([l["latency"]["p99_us"] for l in at_max]) / 1000,
                 "rate": fixed[0]["request_rate"],
                 "fixed_p50_ms": med([l["latency"]["p50_us"] for l in fixed]) / 1000,
                 "fixed_p99_ms": med([l["latency"]["p99_us"] for l in fixed]) / 1000,
                 "cpu_us": med([l.get("server_cpu_us_per_request") for l in at_max])}
            per_side[side] = s
            rows.append([model, side.replace("_", " + "), s["best_rps"], fmt(s["best_c"], 0), fmt(s["max_c"], 0), s["max_c_rps"],
                         s["max_c_p99_ms"], fmt(s["rate"], 0), s["fixed_p50_ms"], s["fixed_p99_ms"]])
        f = per_side["flask"]
        for side in sides_of[model][1:]:
            i = per_side[side]
            best_ratio = (f"{i['best_rps'] / f['best_rps']:.2f}" if f["best_rps"] else
                          "- (no level of either met it)" if not i["best_rps"] else "only infera met it")
            ratio_rows.append([model, side.replace("_", " + "), best_ratio,
                               f"{f['fixed_p50_ms'] / i['fixed_p50_ms']:.2f}",
                               f"{f['fixed_p99_ms'] / i['fixed_p99_ms']:.2f}",
                               f"{i['max_c_rps'] / f['max_c_rps']:.2f}"])
        summary[model] = per_side
    emit("seed baseline: Flask + Gunicorn + PyTorch vs infera (KServe v2 JSON, 2 x 1 thread each)",
         table(["model", "server", "req/s at P99 <= 100 ms", "at conc", "max conc", "req/s there",
                "P99 ms there", "fixed rate /s", "P50 ms", "P99 ms"], rows))
    emit("seed baseline: ratios infera / Flask (medians)",
         table(["model", "infera side", "throughput at P99 <= 100 ms (P3: MLP >= 10, ResNet-18 >= 1.2)",
                "P50 at fixed load (Flask / infera)", "P99 at fixed load (Flask / infera)",
                "throughput at max conc"], ratio_rows))
    return summary


# glibc returns multi-MB activation buffers to the OS after every call, so each call
# page-faults them in again; two instances doing that at once contend on the process's
# memory map (docs/torch_backend.md, allocator note). The limit scenario gives both of
# its sides the same setting that avoids it, so that it compares execution, not faults.
LIMIT_ENV = dict(ENV, MALLOC_MMAP_THRESHOLD_="1073741824", MALLOC_TRIM_THRESHOLD_="1073741824")


def torch_bench(model, batch, instances):
    binary = os.path.join(ARGS.build, "bench", "micro", "torch_backend_bench")
    iters = {"resnet18": 15, "ranker": 2500 // max(1, batch // 8), "text_encoder": 150}.get(model, 100)
    if ARGS.quick:
        iters = max(3, iters // 4)
    cmd = [binary, "--repo", ARGS.repo, "--model", model, "--batch", str(batch), "--threads", "1",
           "--instances", str(instances), "--iters", str(iters), "--warmup", "3",
           "--repeats", "1"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=LIMIT_ENV)
    match = re.search(r"items_per_s=([\d.]+)", result.stdout)
    if not match:
        raise RuntimeError(f"{' '.join(cmd)}:\n{result.stdout}\n{result.stderr}")
    return float(match.group(1)), " ".join(["torch_backend_bench"] + cmd[1:])


def scenario_limit():
    """infera (binary tensors, closed loop) vs a tight in-process LibTorch loop
    (torch_backend_bench, the backend's own Execute) on the same model, batch and
    threads: 2 instances x 1 intra-op thread, and the same allocator setting
    (LIMIT_ENV), on both sides."""
    cases = [("resnet18", 1, "4"), ("ranker", 64, "8"), ("text_encoder", 16, "8")]
    seconds = "1.5" if ARGS.quick else "4"
    repo = bench_repo(sorted({c[0] for c in cases}), two_instances_one_thread)
    inproc, served, commands = {}, {}, {}
    with start_infera(repo, env=LIMIT_ENV) as infera_proc:
        for rep in range(ARGS.repeats):
            for model, batch, conc in cases:
                # Alternate which side goes first; the idle server costs nothing meanwhile.
                for side in (("loop", "infera") if rep % 2 == 0 else ("infera", "loop")):
                    if side == "loop":
                        value, commands[model] = torch_bench(model, batch, 2)
                        inproc.setdefault(model, []).append(value)
                        continue
                    r = bench(infera_proc.port, model, "-b", str(batch), "--concurrency-range", conc,
                              "--duration", seconds, "-p", "1000", "--input-tensor-format", "binary",
                              "--output-tensor-format", "binary", "--int-range", "0:1000",
                              "--server-pid", str(infera_proc.pid), name=f"limit-{model}-b{batch}-r{rep}")
                    served.setdefault(model, []).append(level(r)["inferences_per_s"])
    shutil.rmtree(repo)
    rows = []
    for model, batch, conc in cases:
        s, loop = med(served[model]), med(inproc[model])
        rows.append([model, str(batch), conc, loop, s, f"{s / loop:.2f}"])
    emit("limit: infera vs in-process LibTorch loop (2 instances x 1 thread, binary tensors, "
         "MALLOC_MMAP_THRESHOLD_ raised on both sides)",
         table(["model", "batch", "bench conc", "in-process items/s", "infera items/s",
                "efficiency (P4: >= 0.9)"], rows))
    return {m: {"in_process": med(inproc[m]), "infera": med(served[m]), "command": commands[m]} for m, _, _ in cases}


def context_switches(pid):
    """Voluntary + involuntary context switches of every thread of `pid` so far."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                total += sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
        except OSError:
            pass  # a thread that ended meanwhile
    return total


def inference_count(port, model):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/models/{model}/stats", timeout=10) as r:
        return json.load(r)["model_stats"][0]["inference_count"]


def scenario_batching():
    """ranker at concurrency 64, batch-1 requests: dynamic_batching off vs on, over HTTP
    JSON, HTTP binary tensors and gRPC, one server with every configuration loaded
    (2 instances x 1 thread each). Issue 18's P2 target: on / off >= 4x, P99 on <= off + 15 ms,
    over binary HTTP and gRPC. Three "on" configurations (docs/scheduling.md, "Batching
    that pays off: second step"): the issue's (max_queue_delay 1 ms, max_batch_size 256:
    64 clients never fill a batch, so each waits the whole delay), max_batch_size 64
    (an instance's share, 32 rows, runs at once: two batches in flight) and
    preferred_batch_size [32] (the same, in Triton's own terms). The frontend bound:
    `simple` (trivial, inline) at the same concurrency over the same protocol, in the
    same server and run; on / off cannot exceed simple / off. Also the server's context
    switches per request (one wake-up per batch, one hand-off per I/O thread per batch)."""
    delay = "  max_queue_delay_microseconds: 1000\n"
    configs = [("ranker", "off", None, ""),
               ("ranker_batching", "on: delay 1 ms (issue)", None, "dynamic_batching {\n" + delay + "}\n"),
               ("ranker_share", "on: delay 1 ms, max_batch_size 64", 64, "dynamic_batching {\n" + delay + "}\n"),
               ("ranker_preferred", "on: delay 1 ms, preferred [32]", None,
                "dynamic_batching {\n  preferred_batch_size: [ 32 ]\n" + delay + "}\n")]
    repo = bench_repo(["ranker", "simple"], lambda model, text: two_instances_one_thread(model, text)
                      if model == "ranker" else text)
    with open(os.path.join(ARGS.repo, "ranker", "config.pbtxt")) as f:
        base = two_instances_one_thread("ranker", f.read())
    for name, _, max_batch, extra in configs[1:]:
        shutil.copytree(os.path.join(ARGS.repo, "ranker"), os.path.join(repo, name),
                        ignore=shutil.ignore_patterns("reference", "config.pbtxt"), copy_function=lambda s, d: os.link(s, d))
        text = base.replace('name: "ranker"', f'name: "{name}"')
        if max_batch:
            text = re.sub(r"max_batch_size: \d+", f"max_batch_size: {max_batch}", text)
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(text + extra)
    seconds = "1.5" if ARGS.quick else "4"
    protocols = [("HTTP JSON", "http", ["--input-tensor-format", "json", "--output-tensor-format", "json"]),
                 ("HTTP binary", "http", ["--input-tensor-format", "binary", "--output-tensor-format", "binary"]),
                 ("gRPC", "grpc", [])]
    models = [(name, state) for name, state, _, _ in configs] + [("simple", "frontend bound (simple)")]
    runs, commands = {}, {}
    with start_infera(repo) as infera_proc:
        port = infera_proc.port
        grpc_port = int(re.search(r"gRPC server listening on [^\s]*:(\d+)", infera_proc.text()).group(1))
        for rep in range(ARGS.repeats):
            order = [(p, m) for p in protocols for m in models]  # alternated: reversed every other repeat
            for (label, protocol, extra), (model, _) in (order if rep % 2 == 0 else order[::-1]):
                switches, count = context_switches(infera_proc.pid), inference_count(port, model)
                r = bench(grpc_port if protocol == "grpc" else port, model, "-i", protocol,
                          "--concurrency-range", "64", "--duration", seconds, "-p", "1000",
                          "--warmup", "1000", "--server-pid", str(infera_proc.pid), *extra,
                          name=f"batching-{model}-{protocol}-{extra[1] if extra else 'raw'}-r{rep}")
                served = inference_count(port, model) - count
                l = level(r)
                l["_switches_per_request"] = (context_switches(infera_proc.pid) - switches) / max(1, served)
                runs.setdefault((label, model), []).append(l)
                commands[(label, model)] = r["_command"]
    shutil.rmtree(repo)
    rows, ratios, summary = [], [], {}
    for label, _, _ in protocols:
        side = {}
        for model, state in models:
            levels = runs[(label, model)]
            s = {"rps": med([l["throughput_per_s"] for l in levels]),
                 "p50_ms": med([l["latency"]["p50_us"] for l in levels]) / 1000,
                 "p99_ms": med([l["latency"]["p99_us"] for l in levels]) / 1000,
                 "batch": med([l["server"]["avg_batch_rows"] for l in levels if l.get("server")]),
                 "cpu_us": med([l.get("server_cpu_us_per_request") for l in levels]),
                 "switches": med([l["_switches_per_request"] for l in levels]),
                 "command": commands[(label, model)]}
            side[state] = s
            rows.append([label, state, s["rps"], s["p50_ms"], s["p99_ms"], s["batch"], s["cpu_us"],
                         f"{s['switches']:.2f}"])
        off, bound = side["off"], side["frontend bound (simple)"]
        for _, state, _, _ in configs[1:]:
            on = side[state]
            effective = on["batch"] is not None and on["batch"] > 1.05
            ratios.append([label, state, f"{on['rps'] / off['rps']:.2f}", f"{bound['rps'] / off['rps']:.2f}",
                           f"{on['rps'] / bound['rps']:.2f}", f"{on['p99_ms'] - off['p99_ms']:+.2f}",
                           fmt(off["cpu_us"]), fmt(on["cpu_us"]),
                           "yes" if effective else "NO: batch-1 executions (dynamic_batching not effective)"])
        summary[label] = side
    emit("batching: ranker, conc 64, batch-1 requests, dynamic batching off vs on (and simple: the frontend bound)",
         table(["protocol", "configuration", "req/s", "P50 ms", "P99 ms", "mean rows per execution",
                "server CPU µs/req", "server context switches/req"], rows))
    emit("batching: ratios (P2: on / off >= 4 and P99 on - off <= +15 ms over HTTP binary and gRPC; "
         "bound = simple / off, the most any batching can give over this frontend)",
         table(["protocol", "configuration", "throughput on / off", "bound simple / off", "on / bound",
                "P99 on - off (ms)", "server CPU µs/req off", "server CPU µs/req on", "batching effective"], ratios))
    return summary


def copy_model(repo, src, name, extra_config, instances=1, threads=None):
    """Adds a copy of demo model `src` named `name` to `repo`: weights hard-linked,
    config renamed, instance count set, `extra_config` (pbtxt) appended."""
    shutil.copytree(os.path.join(ARGS.repo, src), os.path.join(repo, name),
                    ignore=shutil.ignore_patterns("reference", "config.pbtxt"),
                    copy_function=lambda s, d: os.link(s, d))
    with open(os.path.join(ARGS.repo, src, "config.pbtxt")) as f:
        text = f.read().replace(f'name: "{src}"', f'name: "{name}"')
    text = re.sub(r"(instance_group \[\s*\{\s*count: )\d+", rf"\g<1>{instances}", text)
    if threads:
        text += f'parameters {{\n  key: "INTRA_OP_THREAD_COUNT"\n  value: {{ string_value: "{threads}" }}\n}}\n'
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(text + extra_config)


def summarize_levels(levels):
    return {"rps": med([l["throughput_per_s"] for l in levels]),
            "p50_ms": med([l["latency"]["p50_us"] for l in levels]) / 1000,
            "p99_ms": med([l["latency"]["p99_us"] for l in levels]) / 1000,
            "batch": med([l["server"]["avg_batch_rows"] for l in levels if l.get("server")])}


def scenario_instances():
    """ResNet-18, batch-1 requests at concurrency 4: where batching barely helps on this
    CPU (1.0-1.15x in-process), instances are the lever. Same 2 cores, split three ways:
    1 instance x 2 threads, 2 instances x 1 thread (the demo repository's setting), and
    2 x 1 with dynamic batching (to show it does not make things slower)."""
    configs = [("r18_1x2", 1, 2, ""), ("r18_2x1", 2, 1, ""),
               ("r18_2x1_batching", 2, 1, "dynamic_batching {\n  max_queue_delay_microseconds: 2000\n}\n")]
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    for name, instances, threads, extra in configs:
        copy_model(repo, "resnet18", name, extra, instances, threads)
    seconds = "2" if ARGS.quick else "6"
    runs = {}
    with start_infera(repo) as infera_proc:
        for rep in range(ARGS.repeats):
            order = configs if rep % 2 == 0 else configs[::-1]
            for name, *_ in order:
                r = bench(infera_proc.port, name, "--concurrency-range", "4", "--duration", seconds,
                          "--warmup", "1000", "--input-tensor-format", "binary",
                          "--server-pid", str(infera_proc.pid), name=f"instances-{name}-r{rep}")
                runs.setdefault(name, []).append(level(r))
    shutil.rmtree(repo)
    summary, rows = {}, []
    for name, instances, threads, extra in configs:
        s = summarize_levels(runs[name])
        summary[name] = s
        rows.append([f"{instances} x {threads} thread(s)" + (", batching 2 ms" if extra else ""),
                     s["rps"], s["p50_ms"], s["p99_ms"], s["batch"]])
    base = summary["r18_1x2"]["rps"]
    emit("instances: resnet18, batch-1 requests, conc 4, binary tensors, 2 cores split three ways",
         table(["instances x intra-op threads", "req/s", "P50 ms", "P99 ms", "mean rows per execution"], rows))
    emit("instances: ratios", table(["what", "value"], [
        ["2x1 / 1x2 throughput", f"{summary['r18_2x1']['rps'] / base:.2f}"],
        ["2x1 + batching / 2x1 throughput", f"{summary['r18_2x1_batching']['rps'] / summary['r18_2x1']['rps']:.2f}"]]))
    return summary


def scenario_overload():
    """ResNet-18 (2 instances x 1 thread, no dynamic batching, queue bounded at 8 by
    --max-queue-size): measure capacity closed loop, then send 3x that rate open loop
    (Poisson) for 60 s. Reports the share rejected (429), the P99 of admitted requests and
    requests lost (sent - answered, must be 0). (With dynamic_batching on, ResNet-18 runs
    batches of ~8 that take 8x as long on this CPU: same throughput, worse latency.)"""
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    copy_model(repo, "resnet18", "r18", "", instances=2, threads=1)
    seconds = "15" if ARGS.quick else "60"
    with start_infera(repo, "--max-queue-size", "8") as infera_proc:
        cap = level(bench(infera_proc.port, "r18", "--concurrency-range", "4", "--duration", "4",
                          "--input-tensor-format", "binary", name="overload-capacity"))
        rate = max(1, round(3 * cap["throughput_per_s"]))
        r = bench(infera_proc.port, "r18", "--request-rate-range", str(rate), "--request-distribution",
                  "poisson", "--duration", seconds, "--warmup", "0", "--input-tensor-format", "binary",
                  "--max-duration", "200", "--server-pid", str(infera_proc.pid), name="overload")
    shutil.rmtree(repo)
    l, totals = level(r), r["totals"]
    rejected = sum(v["count"] for k, v in l.get("error_counts", {}).items() if "429" in k)
    other = l["errors"] - rejected
    lost = totals["sent"] - totals["ok"] - totals["errors"]
    summary = {"capacity_rps": cap["throughput_per_s"], "offered_rps": rate, "sent": totals["sent"],
               "ok": totals["ok"], "rejected_share": rejected / max(1, l["sent"]),
               "admitted_p50_ms": l["latency"]["p50_us"] / 1000, "admitted_p99_ms": l["latency"]["p99_us"] / 1000,
               "other_errors": other, "lost": lost, "server_requests": r.get("server_requests"),
               "reject_p99_note": "rejections are answered at once (no queueing)"}
    emit(f"overload: resnet18 at 3x capacity for {seconds} s (Poisson, --max-queue-size 8)",
         table(["what", "value"], [
             ["capacity (closed loop, c=4) req/s", fmt(cap["throughput_per_s"])],
             ["offered rate req/s", str(rate)],
             ["sent / answered 200 (whole run)", f"{totals['sent']} / {totals['ok']}"],
             ["share rejected with 429 (measured window)", f"{100 * summary['rejected_share']:.1f} %"],
             ["admitted P50 / P99 ms", f"{summary['admitted_p50_ms']:.0f} / {summary['admitted_p99_ms']:.0f}"],
             ["other errors", str(other)],
             ["lost (sent - ok - errors; must be 0)", str(lost)]]))
    return summary


def scenario_slo():
    """ranker, batch-1 requests, open-loop Poisson rate sweep: the highest rate each
    batching policy sustains with P99 <= 15 ms. Fixed max_queue_delay of 0 / 0.5 / 2 / 8 ms
    (hand tuning) against latency_slo_ms 15 (the SLO-targeting policy), one server with
    every variant loaded (1 instance x 1 thread each, so the policy is what differs)."""
    slo_ms = 15
    variants = [("d0", "dynamic_batching {\n  max_queue_delay_microseconds: 0\n}\n"),
                ("d500", "dynamic_batching {\n  max_queue_delay_microseconds: 500\n}\n"),
                ("d2000", "dynamic_batching {\n  max_queue_delay_microseconds: 2000\n}\n"),
                ("d8000", "dynamic_batching {\n  max_queue_delay_microseconds: 8000\n}\n"),
                ("slo", "dynamic_batching {\n}\n"
                        f'parameters {{\n  key: "latency_slo_ms"\n  value: {{ string_value: "{slo_ms}" }}\n}}\n')]
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    for name, extra in variants:
        copy_model(repo, "ranker", f"ranker_{name}", extra, instances=1, threads=1)
    rates = "8000:40000:+4000" if not ARGS.quick else "8000:32000:+8000"
    seconds = "1.5" if ARGS.quick else "2.5"
    best = {}
    with start_infera(repo) as infera_proc:
        for rep in range(ARGS.repeats):
            order = variants if rep % 2 == 0 else variants[::-1]
            for name, _ in order:
                r = bench(infera_proc.port, f"ranker_{name}", "--request-rate-range", rates,
                          "--request-distribution", "poisson", "--duration", seconds, "--warmup", "500",
                          "--max-duration", "120", name=f"slo-{name}-r{rep}")
                ok = [l for l in r["levels"] if l["latency"]["p99_us"] <= slo_ms * 1000 and l["errors"] == 0
                      and l["throughput_per_s"] >= 0.95 * l["request_rate"]]
                top = max(ok, key=lambda l: l["throughput_per_s"]) if ok else None
                best.setdefault(name, []).append(
                    (top["throughput_per_s"], top["latency"]["p99_us"] / 1000, top["server"]["avg_batch_rows"]
                     if top and top.get("server") else None) if top else (0, None, None))
    shutil.rmtree(repo)
    rows, summary = [], {}
    for name, _ in variants:
        rps = med([b[0] for b in best[name]])
        summary[name] = {"rps_at_slo": rps, "p99_ms": med([b[1] for b in best[name]]),
                         "batch": med([b[2] for b in best[name]])}
        label = f"SLO {slo_ms} ms" if name == "slo" else f"fixed delay {int(name[1:]) / 1000:g} ms"
        rows.append([label, rps, summary[name]["p99_ms"], summary[name]["batch"]])
    best_fixed = max((v["rps_at_slo"], k) for k, v in summary.items() if k != "slo")
    emit(f"slo: ranker, Poisson rate sweep {rates}/s, highest rate served with P99 <= {slo_ms} ms",
         table(["policy", f"req/s at P99 <= {slo_ms} ms", "P99 ms there", "mean rows per execution"], rows))
    emit("slo: ratio", table(["what", "value"], [
        [f"SLO mode / best fixed delay ({best_fixed[1]})",
         f"{summary['slo']['rps_at_slo'] / best_fixed[0]:.2f}" if best_fixed[0] else "-"]]))
    return summary


class OtlpSink:
    """A live OTLP/HTTP collector stand-in on loopback: answers 200 to every POST and
    counts the spans it received (so the tracing side really exports)."""

    def __init__(self):
        import http.server
        import threading
        sink = self
        self.spans = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                sink.spans += body.count(b'"spanId"')
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def scenario_observability():
    """What metrics and tracing cost: `simple` at concurrency 16 (JSON), four servers
    started together and loaded alternately: metrics off (--allow-metrics=false),
    metrics on (the default), metrics on + tracing at the default 1 % and at every request
    (--trace-rate 1), exported to a live collector on loopback."""
    sink = OtlpSink()
    repo = bench_repo(["simple"])
    sides = {"metrics off": ["--allow-metrics=false"], "metrics on (default)": [],
             "metrics + tracing 1 % (default rate)": ["--trace-endpoint", sink.url, "--trace-rate", "0.01"],
             "metrics + tracing every request": ["--trace-endpoint", sink.url, "--trace-rate", "1"]}
    seconds = "1.5" if ARGS.quick else "4"
    procs = {name: start_infera(repo, *extra) for name, extra in sides.items()}
    runs = {}
    try:
        for rep in range(ARGS.repeats):
            order = list(sides) if rep % 2 == 0 else list(sides)[::-1]
            for name in order:
                p = procs[name]
                r = bench(p.port, "simple", "--concurrency-range", "16", "--duration", seconds,
                          "--server-pid", str(p.pid), name=f"observability-{rep}-{list(sides).index(name)}")
                runs.setdefault(name, []).append(level(r))
    finally:
        for p in procs.values():
            p.stop()
        sink.close()
    shutil.rmtree(repo)
    rows, summary = [], {}
    for name in sides:
        levels = runs[name]
        s = {"rps": med([l["throughput_per_s"] for l in levels]),
             "p50_us": med([l["latency"]["p50_us"] for l in levels]),
             "p99_us": med([l["latency"]["p99_us"] for l in levels]),
             "cpu_us": med([l.get("server_cpu_us_per_request") for l in levels])}
        summary[name] = s
        rows.append([name, s["rps"], s["p50_us"], s["p99_us"], s["cpu_us"]])
    off = summary["metrics off"]
    emit("observability: simple, conc 16, metrics and tracing off vs on",
         table(["server", "req/s", "P50 µs", "P99 µs", "server CPU µs/req"], rows))
    emit("observability: ratios", table(["what", "value"], [
        ["metrics on / off throughput", f"{summary['metrics on (default)']['rps'] / off['rps']:.3f}"],
        ["metrics + tracing 1 % / off throughput",
         f"{summary['metrics + tracing 1 % (default rate)']['rps'] / off['rps']:.3f}"],
        ["metrics + tracing every request / off throughput",
         f"{summary['metrics + tracing every request']['rps'] / off['rps']:.3f}"],
        ["server CPU µs/req added by metrics", f"{summary['metrics on (default)']['cpu_us'] - off['cpu_us']:+.1f}"],
        ["server CPU µs/req added by metrics + tracing",
         f"{summary['metrics + tracing every request']['cpu_us'] - off['cpu_us']:+.1f}"],
        ["spans the collector received", str(sink.spans)]]))
    summary["spans_received"] = sink.spans
    return summary


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def scenario_memory():
    """targets.md P7: idle RSS of infera (serving `simple`) against a bare LibTorch process
    (torch_idle: LibTorch initialised, one op run), and RSS growth over 1 M requests
    (`simple` over HTTP, c=16, in rounds of 3 s): growth from the end of the first
    round (allocator and caches warm) to the end of the last."""
    total = 200_000 if ARGS.quick else 1_000_000
    bare = Process([os.path.join(ARGS.build, "bench", "micro", "torch_idle")], log_name="torch_idle")
    deadline = time.time() + 60
    while "ready" not in bare.text() and time.time() < deadline:
        bare.check_alive()
        time.sleep(0.05)
    time.sleep(1)
    bare_kib = rss_kib(bare.pid)
    bare.stop()
    repo = bench_repo(["simple"])
    samples = []
    with start_infera(repo) as infera_proc:
        time.sleep(1)
        idle_kib = rss_kib(infera_proc.pid)
        sent = ok = 0
        i = 0
        while sent < total and i < 100:  # rounds of 3 s until `total` requests were sent
            r = bench(infera_proc.port, "simple", "--concurrency-range", "16", "--duration", "3",
                      "--warmup", "0", "--max-duration", "60", name=f"memory-{i}")
            sent += r["totals"]["sent"]
            ok += r["totals"]["ok"]
            samples.append(rss_kib(infera_proc.pid))
            i += 1
    shutil.rmtree(repo)
    growth = (samples[-1] - samples[0]) / samples[0]
    emit(f"memory: idle RSS and RSS over {total:,} requests (simple, HTTP, c=16)", table(["what", "value"], [
        ["bare LibTorch process (torch_idle) RSS MiB", f"{bare_kib / 1024:.1f}"],
        ["infera idle, serving simple, RSS MiB", f"{idle_kib / 1024:.1f}"],
        ["infera idle - bare LibTorch MiB (P7: <= 20)", f"{(idle_kib - bare_kib) / 1024:+.1f}"],
        ["RSS after each round MiB", " ".join(f"{k / 1024:.1f}" for k in samples[::max(1, len(samples) // 8)])],
        [f"growth round 1 -> round {len(samples)} (P7: < 5 %)", f"{100 * growth:+.2f} %"],
        ["requests sent / ok", f"{sent:,} / {ok:,}"]]))
    return {"bare_mib": bare_kib / 1024, "idle_mib": idle_kib / 1024, "samples_mib": [k / 1024 for k in samples],
            "growth": growth, "sent": sent, "ok": ok}


class ByteCountingProxy:
    """A loopback TCP relay in front of a server that counts the bytes of the connections
    whose first request is a POST (the load connections of `infera bench`; its metadata
    and statistics GETs use their own), both ways: the HTTP bytes on the wire per request,
    headers included. Used in a separate short run, so it adds nothing to the timings."""

    def __init__(self, target_port):
        import threading
        self.target_port = target_port
        self.up = self.down = 0
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)  # accept() polls `stopping`: close() cannot wake it
        self.stopping = threading.Event()
        self.port = self.listener.getsockname()[1]
        self.threads = []
        self.accepting = threading.Thread(target=self._accept)
        self.accepting.start()

    def _accept(self):
        import threading
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            state = {"post": None}
            for src, dst, way in ((client, upstream, "up"), (upstream, client, "down")):
                t = threading.Thread(target=self._pump, args=(src, dst, way, state))
                t.start()
                self.threads.append(t)

    def _pump(self, src, dst, way, state):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if state["post"] is None and way == "up":
                    state["post"] = data.startswith(b"POST")
                if state["post"]:
                    with self.lock:
                        if way == "up":
                            self.up += len(data)
                        else:
                            self.down += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.stopping.set()
        self.accepting.join()
        self.listener.close()
        for t in self.threads:
            t.join(timeout=10)


def wire_bytes(port, model, extra, name):
    """(request bytes, response bytes) per inference request, HTTP headers included,
    from a short closed-loop run (c=1) through ByteCountingProxy."""
    proxy = ByteCountingProxy(port)
    try:
        r = bench(proxy.port, model, "--concurrency-range", "1", "--duration", "1", "-p", "1000",
                  "--warmup", "0", *extra, name=name)
    finally:
        proxy.close()
    sent = max(1, r["totals"]["sent"])
    return proxy.up / sent, proxy.down / sent


PIPELINE_MODELS = ["resnet18", "resnet18_preprocess", "resnet18_top5", "resnet18_classify"]


def scenario_pipeline():
    """Issue 15's comparison: JPEG in, top-5 labels out. infera's resnet18_classify
    ensemble (image_preprocess -> resnet18 -> classify; the JPEG as a binary BYTES tensor)
    vs the seeds' Flask + Gunicorn + PyTorch doing the same work (PIL + torchvision +
    the same TorchScript; flask_classify_server.py, 2 workers x 1 thread) vs the client
    preprocessing itself and sending infera's resnet18 the FP32 tensor (binary, and JSON as
    the seeds did). Same JPEGs (the demo repository's photos), same concurrency sweep;
    throughput, P50/P99, and the bytes each request moves on the wire (HTTP headers
    included; counted by a relay in a separate short run, ByteCountingProxy)."""
    import base64

    import torch
    import torchvision.transforms as T
    from PIL import Image
    from torchvision.transforms.functional import pil_to_tensor
    torch.set_num_threads(1)
    image_dir = os.path.join(ARGS.repo, ".images")
    jpegs = []
    for name in sorted(os.listdir(image_dir)):
        if name.endswith(".jpg"):
            with open(os.path.join(image_dir, name), "rb") as f:
                jpegs.append(f.read())
    transform = T.Compose([T.Resize(256, antialias=True), T.CenterCrop(224), T.ConvertImageDtype(torch.float),
                           T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    start = time.process_time()
    tensors = [transform(pil_to_tensor(Image.open(__import__("io").BytesIO(j)).convert("RGB"))) for j in jpegs]
    client_ms = (time.process_time() - start) / len(jpegs) * 1000
    work = tempfile.mkdtemp(prefix="bench-pipeline-")
    image_file, tensor_file = os.path.join(work, "jpegs.json"), os.path.join(work, "tensors.json")
    with open(image_file, "w") as f:
        json.dump({"data": [{"IMAGE": {"b64": base64.b64encode(j).decode()}} for j in jpegs]}, f)
    with open(tensor_file, "w") as f:
        json.dump({"data": [{"INPUT__0": {"b64": base64.b64encode(t.numpy().tobytes()).decode()}}
                            for t in tensors]}, f)
    repo = bench_repo(PIPELINE_MODELS, lambda m, t: two_instances_one_thread(m, t) if m == "resnet18" else t)
    sweep, seconds = ("1:8:x2", "1.5") if ARGS.quick else ("1:8:x2", "3")
    sides = {  # side: (server, model, extra infera bench flags)
        "infera ensemble (JPEG)": ("infera", "resnet18_classify",
                                   ["--input-data", image_file, "--input-tensor-format", "binary"]),
        "Flask + Gunicorn (JPEG)": ("flask", "resnet18_classify",
                                    ["--input-data", image_file, "--input-tensor-format", "binary"]),
        "client preprocessing + infera resnet18 (binary FP32)": (
            "infera", "resnet18", ["--input-data", tensor_file, "--input-tensor-format", "binary",
                                   "--output-tensor-format", "binary"]),
        "client preprocessing + infera resnet18 (JSON FP32)": (
            "infera", "resnet18", ["--input-data", tensor_file, "--input-tensor-format", "json"]),
    }
    runs = {}
    with start_infera(repo) as infera_proc, start_flask(repo, ["resnet18_classify"],
                                                        app="flask_classify_server:app") as flask_proc:
        procs = {"infera": infera_proc, "flask": flask_proc}
        for rep in range(ARGS.repeats):
            order = list(sides) if rep % 2 == 0 else list(sides)[::-1]
            for side in order:
                server, model, extra = sides[side]
                proc = procs[server]
                r = bench(proc.port, model, "--concurrency-range", sweep, "--duration", seconds, "-p", "1000",
                          "--warmup", "1000", "--server-pid", str(proc.pid), *extra,
                          name=f"pipeline-{list(sides).index(side)}-r{rep}")
                runs.setdefault(side, []).append(r)
        wire = {side: wire_bytes(procs[server].port, model, extra, f"pipeline-wire-{i}")
                for i, (side, (server, model, extra)) in enumerate(sides.items())}
    shutil.rmtree(repo)
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run([ARGS.infera, "bench", "plot", "-o", os.path.join(ARGS.out, "pipeline.svg"),
                    "--title", "JPEG -> top 5: infera ensemble vs Flask + Gunicorn vs client preprocessing",
                    f"infera_ensemble={os.path.join(ARGS.out, 'pipeline-0-r0.json')}",
                    f"flask={os.path.join(ARGS.out, 'pipeline-1-r0.json')}",
                    f"client_prep_binary={os.path.join(ARGS.out, 'pipeline-2-r0.json')}"], check=False)
    rows, summary = [], {}
    for side in sides:
        reports = runs[side]
        best = [best_under(r, 100_000) for r in reports]
        at_max = [r["levels"][-1] for r in reports]
        s = {"best_rps": med([b["throughput_per_s"] if b else 0 for b in best]),
             "best_c": med([b["concurrency"] for b in best if b]),
             "best_p50_ms": med([b["latency"]["p50_us"] / 1000 for b in best if b]),
             "best_p99_ms": med([b["latency"]["p99_us"] / 1000 for b in best if b]),
             "max_c": at_max[0]["concurrency"],
             "max_c_rps": med([l["throughput_per_s"] for l in at_max]),
             "max_c_p50_ms": med([l["latency"]["p50_us"] for l in at_max]) / 1000,
             "max_c_p99_ms": med([l["latency"]["p99_us"] for l in at_max]) / 1000,
             "errors": sum(r["totals"]["errors"] for r in reports),
             "bytes_in": wire[side][0],
             "bytes_out": wire[side][1],
             "cpu_us": med([l.get("server_cpu_us_per_request") for l in at_max])}
        summary[side] = s
        rows.append([side, s["best_rps"], fmt(s["best_c"], 0), s["best_p50_ms"], s["best_p99_ms"], s["max_c_rps"],
                     s["max_c_p99_ms"], fmt(s["bytes_in"], 0), fmt(s["bytes_out"], 0), s["cpu_us"],
                     str(s["errors"])])
    emit(f"pipeline: JPEG -> top 5, {len(jpegs)} photos, concurrency {sweep}, {seconds} s per level, 2 x 1 thread each",
         table(["side", "req/s at P99 <= 100 ms", "at conc", "P50 ms", "P99 ms", "req/s at max conc",
                "P99 ms there", "bytes in / req", "bytes out / req", "server CPU µs/req at max conc", "errors"],
               rows))
    names = list(sides)
    ens, flask, tensor = summary[names[0]], summary[names[1]], summary[names[2]]

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "-"
    emit("pipeline: ratios (medians)", table(["what", "value"], [
        ["infera ensemble / Flask, throughput at P99 <= 100 ms (issue 15: >= 2)", ratio(ens["best_rps"], flask["best_rps"])],
        ["infera ensemble / Flask, throughput at max conc", ratio(ens["max_c_rps"], flask["max_c_rps"])],
        ["infera ensemble / client preprocessing + binary tensor, throughput at P99 <= 100 ms",
         ratio(ens["best_rps"], tensor["best_rps"])],
        ["request bytes: binary FP32 tensor / JPEG", ratio(tensor["bytes_in"], ens["bytes_in"])],
        ["request bytes: JSON FP32 tensor / JPEG", ratio(summary[names[3]]["bytes_in"], ens["bytes_in"])],
        ["client CPU to preprocess one photo in Python (PIL + torchvision, 1 thread; not in the load loop)",
         f"{client_ms:.1f} ms"]]))
    summary["client_preprocess_ms"] = client_ms
def scenario_shm():
    """ResNet-18, one 1x3x224x224 FP32 image per request (602,112 bytes), concurrency 1:
    the same server and model answering binary HTTP, gRPC (raw_input_contents) and both
    with the tensors in system shared memory (`--shared-memory system`: the client
    registers a POSIX shm region, requests carry only its name; the output is written
    back into a region). Sides alternate within each repeat. The same 602,112-byte tensor
    through identity_fp32 (no compute) shows the transport cost alone."""
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    copy_model(repo, "resnet18", "r18", "", 2, 1)
    copy_model(repo, "identity_fp32", "ident", "", 1)
    seconds = "2" if ARGS.quick else "6"
    sides = [("binary HTTP", "http", []), ("gRPC", "grpc", []),
             ("HTTP + system shm", "http", ["--shared-memory", "system", "--output-shared-memory-size", "1048576"]),
             ("gRPC + system shm", "grpc", ["--shared-memory", "system", "--output-shared-memory-size", "1048576"])]
    models = [("r18", []), ("ident", ["--shape", "INPUT0:150528"])]
    runs = {}
    # The bench client registers regions: open them (closed by default, docs/shared_memory.md).
    with start_infera(repo, "--allow-client-shm", "true") as infera_proc:
        grpc_port = int(re.search(r"gRPC server listening on [^\s]*:(\d+)", infera_proc.text()).group(1))
        for rep in range(ARGS.repeats):
            order = sides if rep % 2 == 0 else sides[::-1]
            for model, shape in models:
                for label, protocol, extra in order:
                    port = grpc_port if protocol == "grpc" else infera_proc.port
                    r = bench(port, model, "-i", protocol, "--concurrency-range", "1", "--duration", seconds,
                              "--warmup", "1000", "--input-tensor-format", "binary",
                              "--output-tensor-format", "binary", "--server-pid", str(infera_proc.pid),
                              *shape, *extra, name=f"shm-{model}-{protocol}-{'shm' if extra else 'plain'}-r{rep}")
                    runs.setdefault((model, label), []).append(level(r))
                    runs.setdefault((model, label, "command"), r["_command"])
    shutil.rmtree(repo)
    summary = {}
    titles = {"r18": "resnet18, one 1x3x224x224 FP32 image", "ident": "identity_fp32, the same 602,112 bytes, no compute"}
    for model, _ in models:
        rows = []
        for label, *_ in sides:
            s = summarize_levels(runs[(model, label)])
            s["server_cpu_us"] = med([l.get("server_cpu_us_per_request") for l in runs[(model, label)]])
            s["client_cpu_pct"] = med([l.get("client_cpu_pct") for l in runs[(model, label)]])
            summary[f"{model} {label}"] = s
            rows.append([label, s["rps"], s["p50_ms"] * 1000, s["p99_ms"] * 1000, s["server_cpu_us"],
                         s["client_cpu_pct"]])
        emit(f"shm: {titles[model]}, concurrency 1, same server",
             table(["transport", "req/s", "P50 us", "P99 us", "server CPU us/request", "client CPU %"], rows))
    ratio_rows = []
    for model, _ in models:
        p50 = {label: summary[f"{model} {label}"]["p50_ms"] for label, *_ in sides}
        ratio_rows += [[f"{model}: HTTP shm / binary HTTP P50", f"{p50['HTTP + system shm'] / p50['binary HTTP']:.2f}"],
                       [f"{model}: gRPC shm / gRPC P50", f"{p50['gRPC + system shm'] / p50['gRPC']:.2f}"]]
    emit("shm: ratios", table(["what", "value"], ratio_rows))
    summary["commands"] = sorted({v for k, v in runs.items() if len(k) == 3})
    return summary


def scenario_analyze():
    """Issue 17: `infera analyze` on ResNet-18 and the ranker (max throughput under a P99
    bound), then the configuration it wrote against the demo's hand-written one, both
    served by one server and benched alternately (median of the repeats)."""
    cases = [("ranker", 10.0), ("resnet18", 250.0)]
    point_s = "1" if ARGS.quick else "3"
    seconds = "1" if ARGS.quick else "2"
    rows, summary = [], {}
    for model, p99_ms in cases:
        repo = bench_repo([model])
        out = os.path.join(ARGS.out, f"analyze-{model}")
        cmd = [ARGS.infera, "analyze", "--model-repository", repo, "-m", model, "--objective",
               f"max-throughput:p99<={p99_ms:g}ms", "--out", out, "--time-per-point", point_s,
               "--concurrency", "1:16:x2"]
        started = time.time()
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=ENV)
        took = time.time() - started
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        grid = re.search(r"measured (\d+) points of a full grid of (\d+)", report)
        best = re.search(r"Best: `([^`]*)`", report)
        found = f"{model}_found"
        shutil.copytree(os.path.join(repo, model), os.path.join(repo, found), ignore=shutil.ignore_patterns("config.pbtxt"),
                        copy_function=lambda a, b: os.link(a, b))
        with open(os.path.join(out, "config.pbtxt")) as f:
            config = f.read().replace(f'name: "{model}"', f'name: "{found}"')
        with open(os.path.join(repo, found, "config.pbtxt"), "w") as f:
            f.write(config)
        runs = {}
        with start_infera(repo, "--model-control-mode", "explicit", "--load-model", model,
                          "--load-model", found, env=ENV) as infera_proc:
            for rep in range(ARGS.repeats):
                for m in ([model, found] if rep % 2 == 0 else [found, model]):
                    r = bench(infera_proc.port, m, "--concurrency-range", "1:16:x2", "--percentile", "99",
                              "--latency-threshold", f"{p99_ms:g}", "--warmup", "500", "--duration", seconds,
                              name=f"analyze-{m}-r{rep}")
                    b = best_under(r, p99_ms * 1000)
                    runs.setdefault(m, []).append(b["throughput_per_s"] if b else None)
        shutil.rmtree(repo)
        hand, tuned = med(runs[model]), med(runs[found])
        ratio = tuned / hand if hand and tuned else None
        summary[model] = {"points": grid.group(1), "grid": grid.group(2), "seconds": round(took, 1),
                          "found": best.group(1) if best else None, "demo_rps": hand, "found_rps": tuned,
                          "ratio": ratio, "command": " ".join(["infera"] + cmd[1:])}
        rows.append([model, f"P99 <= {p99_ms:g} ms", f"{grid.group(1)} / {grid.group(2)}", took,
                     best.group(1) if best else "-", hand, tuned, f"{ratio:.2f}" if ratio else "-"])
    emit("analyze: the configuration found vs the demo's hand-written one",
         table(["model", "objective", "points / full grid", "search s", "found",
                "demo config req/s (median)", "found config req/s (median)", "found / demo"], rows))
    return summary
def scenario_llm_quant():
    """Issue 16: LLM weight quantisation. bench/llm/run_llm_bench.sh's `quant` rounds:
    output tok/s and TTFT at C=1/8/16 for the 45.6 M bench model as fp32, bf16, int8 and
    int4 and the fortune demo model as is (bf16), int8 and int4, one server, rows
    round-robin; weight and KV memory from the server log (docs/llm.md, "Weight
    quantisation")."""
    build = os.path.relpath(ARGS.build, ROOT)
    out = subprocess.run([os.path.join(ROOT, "bench", "llm", "run_llm_bench.sh"), build, "1", str(ARGS.repeats),
                          "quant"], env=dict(ENV, INFERA_DEMO_REPO=ARGS.repo), capture_output=True, text=True,
                         check=True).stdout
    medians, memory, section = {}, [], None
    for line in out.splitlines():
        if line.startswith("# medians"):
            section = "medians"
        elif line.startswith("# memory"):
            section = "memory"
        elif section == "medians" and line.startswith("{"):
            r = json.loads(line)
            c, model = r["label"].split()[1:3]
            medians.setdefault(model, {})[c] = r
        elif section == "memory" and line.startswith("model"):
            memory.append(line)
    rows = []
    for model, by_c in medians.items():
        row = [model]
        for c in ("C=1", "C=8", "C=16"):
            r = by_c.get(c)
            row += [r["output_tok_s"], r["ttft_ms"]["p50"]] if r else ["-", "-"]
        rows.append(row)
    emit("llm_quant: output tok/s and TTFT p50 (ms), medians",
         table(["model", "C=1 tok/s", "C=1 TTFT", "C=8 tok/s", "C=8 TTFT", "C=16 tok/s", "C=16 TTFT"], rows))
    emit("llm_quant: memory (server log)", "\n".join(f"- {m}" for m in memory))
    return {"medians": {m: {c: r["output_tok_s"] for c, r in by_c.items()} for m, by_c in medians.items()}}


def scenario_kv_dtype():
    """Issue 16: the LLM's KV-cache dtype (`kv_cache_dtype` fp32 | bf16 | fp16, docs/llm.md)
    side by side in one server on the 45.6 M-parameter bench model (bench/llm/
    make_bench_model.py, prefix caching off): streaming completions with long prompts
    (1024 tokens; --quick: 256) and 64 output tokens at C=1/8/16, the three models in turn
    within every round, and the KV capacity each gets from the same 512 MiB budget (the
    load log). decode tok/s = C x 1000 / TPOT p50 (the decode rate while C run)."""
    prompt = 256 if ARGS.quick else 1024
    dtypes = ("fp32", "bf16", "fp16")
    repo = tempfile.mkdtemp(prefix="bench-kv-")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "llm", "make_bench_model.py"), "--out", repo],
                   check=True, capture_output=True, timeout=300)
    for dtype in dtypes:
        dst = os.path.join(repo, f"bench_kv_{dtype}")
        shutil.copytree(os.path.join(repo, "bench_nocache"), dst, copy_function=lambda s, d: os.link(s, d))
        path = os.path.join(dst, "config.pbtxt")
        with open(path) as f:
            text = f.read().replace('name: "bench_nocache"', f'name: "bench_kv_{dtype}"')
        os.unlink(path)
        with open(path, "w") as f:
            f.write(text + f'parameters {{ key: "kv_cache_dtype" value: {{ string_value: "{dtype}" }} }}\n')
    for name in ("bench", "bench_nocache"):
        shutil.rmtree(os.path.join(repo, name))
    results = {d: {c: [] for c in (1, 8, 16)} for d in dtypes}
    capacity = {}
    with start_infera(repo) as proc:
        for dtype in dtypes:
            m = re.search(rf"model 'bench_kv_{dtype}': .*KV cache \w+ (\d+) blocks x (\d+) tokens = (\d+) tokens "
                          rf"\((\d+) MiB", proc.text())
            capacity[dtype] = (int(m.group(3)), int(m.group(4))) if m else (None, None)
        for _ in range(ARGS.repeats):
            for c in (1, 8, 16):
                for dtype in dtypes:
                    out = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "llm", "openai_bench.py"),
                                          "--port", str(proc.port), "--model", f"bench_kv_{dtype}",
                                          "--concurrency", str(c), "--requests", str(max(2, c)), "--warmup", "1",
                                          "--prompt-tokens", str(prompt), "--max-tokens", "64",
                                          "--seed", str(len(results[dtype][c]))],
                                         capture_output=True, text=True, timeout=1800)
                    results[dtype][c].append(json.loads(out.stdout))
    shutil.rmtree(repo)
    rows = []
    for c in (1, 8, 16):
        base = med([c * 1e3 / r["tpot_ms"]["p50"] for r in results["fp32"][c]])
        for dtype in dtypes:
            runs = results[dtype][c]
            decode = med([c * 1e3 / r["tpot_ms"]["p50"] for r in runs])
            rows.append([str(c), dtype, med([r["output_tok_s"] for r in runs]), decode,
                         f"{decode / base:.2f}x" if base else "-", med([r["ttft_ms"]["p50"] for r in runs]),
                         sum(r["errors"] for r in runs)])
    emit(f"kv_dtype: bench model, {prompt}-token prompts, 64 output tokens (medians of {ARGS.repeats}; load "
         f"average {load_average()})",
         table(["C", "kv_cache_dtype", "output tok/s", "decode tok/s", "decode vs fp32", "TTFT p50 ms", "errors"],
               rows) + "\n\n" +
         table(["kv_cache_dtype", "KV tokens in 512 MiB", "tokens per GiB"],
               [[d, f"{capacity[d][0]:,}" if capacity[d][0] else "-",
                 f"{capacity[d][0] * 1024 // capacity[d][1]:,}" if capacity[d][0] else "-"] for d in dtypes]))
    return {"results": results, "capacity": capacity}


def start_infera_any(repo):
    """`infera serve` once every model has loaded or failed ("server is NOT ready" is
    fine: the precision scenario expects fp16 to fail on LibTorch 1.13)."""
    proc = Process([ARGS.infera, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
                    "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
                    "--metrics-port", "0"], log_name="infera")
    deadline = time.time() + 600
    while time.time() < deadline and proc.proc.poll() is None:
        match = re.search(r"HTTP server listening on [^\s]*:(\d+)", proc.text())
        if match and re.search(r"server is (NOT )?ready", proc.text()):
            proc.port = int(match.group(1))
            return proc
        time.sleep(0.05)
    text = proc.text()
    proc.stop()
    raise RuntimeError(f"infera did not finish loading:\n{text[-3000:]}")


def http_json(port, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST" if body else "GET")
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)


def resnet_top1(port, models, images=64, batch=8):
    """Top-1 agreement with fp32 over `images` seeded smooth synthetic images (the same
    construction as the load-time validation: low-frequency sinusoids, ImageNet-normalised),
    per model in `models`, through the server (binary tensors)."""
    import numpy as np
    rng = np.random.default_rng(2026)
    y, x = np.meshgrid(np.linspace(0, 1, 224), np.linspace(0, 1, 224), indexing="ij")
    argmax = {m: [] for m in models}
    for _ in range(images // batch):
        image = np.zeros((batch, 3, 224, 224))
        for k in range(3):
            fx, fy, phase = rng.uniform(0.5, 6.5, (batch, 3, 1, 1)), rng.uniform(0.5, 6.5, (batch, 3, 1, 1)), \
                rng.uniform(0, 6.28, (batch, 3, 1, 1))
            image += np.sin(6.28 * (fx * x + fy * y) + phase)
        image = np.clip(0.5 + image / 6 + 0.1 * (rng.random(image.shape) - 0.5), 0, 1)
        mean, std = np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1), np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
        blob = ((image - mean) / std).astype(np.float32)
        for m in models:
            header = json.dumps({"inputs": [{"name": "INPUT__0", "datatype": "FP32", "shape": list(blob.shape),
                                             "parameters": {"binary_data_size": blob.nbytes}}],
                                 "parameters": {"binary_data_output": True}}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/{m}/infer", data=header + blob.tobytes(),
                                             headers={"Inference-Header-Content-Length": str(len(header))})
            with urllib.request.urlopen(request, timeout=600) as response:
                length = int(response.headers["Inference-Header-Content-Length"])
                body = response.read()
            argmax[m].append(np.frombuffer(body[length:], dtype=np.float32).reshape(batch, -1).argmax(1))
    ref = np.concatenate(argmax[models[0]])
    return {m: float((np.concatenate(argmax[m]) == ref).mean()) for m in models}


PRECISION_BATCHES = {"resnet18": 8, "text_encoder": 16, "ranker": 64}  # the "best batch" of each


def scenario_precision():
    """Issue 16: ResNet-18, the text encoder and the ranker at fp32 / bf16 / fp16 /
    int8_dynamic (PRECISION, VALIDATE_PRECISION on), 1 instance x 1 thread each, batch 1
    and a large batch, concurrency 1, binary tensors: rows/s, speed-up over fp32 and the
    load-time accuracy figures side by side. Then ResNet-18 at the best precision whose
    measured top-1 agreement (64 synthetic images) is >= 99 % against the seeds' Flask
    baseline (2 x 1 thread each, KServe v2 JSON, concurrency 1..4)."""
    precisions = ["fp32", "bf16", "fp16", "int8_dynamic"]
    repo = tempfile.mkdtemp(prefix="bench-repo-")
    for model in PRECISION_BATCHES:
        for precision in precisions:
            copy_model(repo, model, f"{model}_{precision}",
                       f'parameters {{\n  key: "PRECISION"\n  value: {{ string_value: "{precision}" }}\n}}\n'
                       'parameters {\n  key: "VALIDATE_PRECISION"\n  value: { string_value: "true" }\n}\n',
                       instances=1, threads=1)
    seconds = "2" if ARGS.quick else "4"
    rows, summary = [], {}
    with start_infera_any(repo) as proc:
        index = {e["name"]: e for e in http_json(proc.port, "/v2/repository/index", b"{}")}
        loaded = [f"{m}_{p}" for m in PRECISION_BATCHES for p in precisions
                  if index[f"{m}_{p}"]["state"] == "READY"]
        runs = {}
        for rep in range(ARGS.repeats):
            for name in (loaded if rep % 2 == 0 else loaded[::-1]):
                model = name.rsplit("_", 2)[0] if name.endswith("int8_dynamic") else name.rsplit("_", 1)[0]
                for batch in (1, PRECISION_BATCHES[model]):
                    r = bench(proc.port, name, "-b", str(batch), "--concurrency-range", "1", "--duration", seconds,
                              "--warmup", "500", "--input-tensor-format", "binary", "--input-data", "random",
                              name=f"precision-{name}-b{batch}-r{rep}")
                    runs.setdefault((name, batch), []).append(level(r)["throughput_per_s"] * batch)
        top1 = resnet_top1(proc.port, [f"resnet18_{p}" for p in precisions if f"resnet18_{p}" in loaded])
        for model, best_batch in PRECISION_BATCHES.items():
            base = {b: med(runs[(f"{model}_fp32", b)]) for b in (1, best_batch)}
            for precision in precisions:
                name = f"{model}_{precision}"
                if name not in loaded:
                    rows.append([model, precision, "load failed", "-", "-", "-", "-", "-", "-",
                                 index[name].get("reason", "")[:120].replace("|", "/")])
                    continue
                params = {k: v["string_value"] for k, v in
                          http_json(proc.port, f"/v2/models/{name}/config").get("parameters", {}).items()}
                b1, bb = med(runs[(name, 1)]), med(runs[(name, best_batch)])
                t1 = top1.get(name, params.get("infera.precision.top1_agreement"))
                summary[name] = {"rows_s_b1": b1, f"rows_s_b{best_batch}": bb, "top1": t1, **params}
                rows.append([model, precision, b1, f"{b1 / base[1]:.2f}", f"{best_batch}: {fmt(bb)}",
                             f"{bb / base[best_batch]:.2f}", params.get("infera.precision.cosine", "1"),
                             params.get("infera.precision.max_abs_error", "0"),
                             "-" if t1 is None else (f"{float(t1):.3f}"),
                             params.get("infera.precision.quantized_layers", "")])
    shutil.rmtree(repo)
    emit("precision: rows/s at concurrency 1, 1 instance x 1 thread, binary tensors (medians)",
         table(["model", "PRECISION", "rows/s batch 1", "x fp32", "rows/s at batch", "x fp32",
                "cosine (worst of 32)", "max abs error", "top-1 agreement", "int8 layers / note"], rows))
    # The seeds' baseline at the best precision with top-1 >= 99 %.
    candidates = [p for p in precisions if f"resnet18_{p}" in summary and
                  summary[f"resnet18_{p}"]["top1"] is not None and float(summary[f"resnet18_{p}"]["top1"]) >= 0.99]
    best = max(candidates, key=lambda p: summary[f"resnet18_{p}"]["rows_s_b1"])
    repo = bench_repo(["resnet18"], two_instances_one_thread)
    if best != "fp32":
        path = os.path.join(repo, "resnet18", "config.pbtxt")
        with open(path, "a") as f:
            f.write(f'parameters {{\n  key: "PRECISION"\n  value: {{ string_value: "{best}" }}\n}}\n')
    results = {}
    with start_infera(repo) as infera_proc, start_flask(repo, ["resnet18"]) as flask_proc:
        for rep in range(ARGS.repeats):
            for side, p in ([("flask", flask_proc), ("infera", infera_proc)] if rep % 2 == 0 else
                            [("infera", infera_proc), ("flask", flask_proc)]):
                r = bench(p.port, "resnet18", "--concurrency-range", "1:4:x2", "--duration", seconds, "-p", "1000",
                          "--warmup", "1000", name=f"precision-baseline-{side}-r{rep}")
                results.setdefault(side, []).append(max(l["throughput_per_s"] for l in r["levels"]))
    shutil.rmtree(repo)
    flask_rps, infera_rps = med(results["flask"]), med(results["infera"])
    summary["baseline"] = {"precision": best, "flask_rps": flask_rps, "infera_rps": infera_rps,
                           "ratio": infera_rps / flask_rps, "top1": summary[f"resnet18_{best}"]["top1"]}
    emit(f"precision: ResNet-18 at {best} vs the seeds' Flask baseline (fp32), KServe v2 JSON, 2 x 1 thread each",
         table(["side", "best req/s over conc 1, 2, 4", "top-1 agreement with fp32 (64 images)"],
               [["Flask + Gunicorn + PyTorch (fp32)", flask_rps, "1.000"],
                [f"infera PRECISION {best}", infera_rps, f"{float(summary[f'resnet18_{best}']['top1']):.3f}"],
                ["ratio infera / Flask (target >= 1.8)", f"{infera_rps / flask_rps:.2f}", ""]]))
    return summary


def scenario_console():
    """What the web console's stream costs (docs/console.md): the server's CPU with 0, 1
    and 32 open /v2/console/stream subscribers at 250 ms (idle server, CPU seconds from
    /proc over a window), and `simple` at concurrency 16 with 0 vs 32 subscribers,
    alternately. One snapshot per tick is shared by every subscriber, so 32 should cost
    about what 1 does."""
    import http.client
    import threading

    repo = bench_repo(["simple", "identity_fp32"])
    proc = start_infera(repo)
    window = 2.0 if ARGS.quick else 6.0
    seconds = "1.5" if ARGS.quick else "4"

    def cpu_seconds():
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def open_streams(n):
        conns, stop = [], threading.Event()
        deadline = time.time() + 10
        while len(conns) < n:
            c = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=30)
            c.request("GET", "/v2/console/stream?interval_ms=250")
            r = c.getresponse()
            if r.status == 503 and time.time() < deadline:  # closed ones leave at the next tick
                c.close()
                time.sleep(0.1)
                continue
            assert r.status == 200, r.status
            conns.append((c, r))
        received = [0]

        def drain(r):
            try:
                while not stop.is_set():
                    chunk = r.read1(65536)
                    if not chunk:
                        return
                    received[0] += len(chunk)
            except (OSError, AttributeError, ValueError, http.client.HTTPException):
                return  # closed by close()

        threads = [threading.Thread(target=drain, args=(r,), daemon=True) for _, r in conns]
        for t in threads:
            t.start()

        def close():
            stop.set()
            for c, _ in conns:
                if c.sock:
                    c.sock.shutdown(socket.SHUT_RDWR)
                c.close()
            for t in threads:
                t.join(timeout=5)
        return close, received

    idle, load = {}, {}
    try:
        for rep in range(ARGS.repeats):
            for n in (0, 1, 32):
                close, received = open_streams(n)
                try:
                    time.sleep(0.5)  # first events out
                    before, start_bytes = cpu_seconds(), received[0]
                    time.sleep(window)
                    idle.setdefault(n, []).append(((cpu_seconds() - before) / window * 1e3,
                                                   (received[0] - start_bytes) / window))
                finally:
                    close()
            for n in ((0, 32) if rep % 2 == 0 else (32, 0)):
                close, _ = open_streams(n)
                try:
                    r = bench(proc.port, "simple", "--concurrency-range", "16", "--duration", seconds,
                              "--server-pid", str(proc.pid), name=f"console-{rep}-{n}")
                    load.setdefault(n, []).append(level(r))
                finally:
                    close()
    finally:
        proc.stop()
        shutil.rmtree(repo)
    rows = [[f"{n} subscriber(s)", med([v[0] for v in idle[n]]), med([v[1] / 1024 for v in idle[n]])]
            for n in (0, 1, 32)]
    emit(f"console stream: idle server CPU, 250 ms interval (load average {load_average()})",
         table(["streams", "server CPU ms/s", "KiB/s sent"], rows))
    lrows = []
    for n in (0, 32):
        levels = load[n]
        lrows.append([f"{n} subscribers", med([l["throughput_per_s"] for l in levels]),
                      med([l["latency"]["p99_us"] for l in levels]),
                      med([l.get("server_cpu_us_per_request") for l in levels])])
    emit("console stream: simple, conc 16, 0 vs 32 subscribers",
         table(["side", "req/s", "P99 µs", "server CPU µs/req"], lrows))



# ------------------------------------------------------------- allocator and placement

ALLOCATOR_LIBS = {"jemalloc": "libjemalloc.so.2", "tcmalloc": "libtcmalloc_minimal.so.4"}


def find_shared_library(name):
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
              "/usr/local/lib"):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def allocator_sides():
    """(label, binary, extra env) per allocator: glibc on a binary that links no allocator
    (the build's own when configured with -DINFERA_ALLOCATOR=glibc, else its `infera_glibc`
    target, the same objects linked without one, built here: a link step), and jemalloc and
    tcmalloc LD_PRELOADed onto that same binary, so that only malloc differs."""
    needed = subprocess.run(["readelf", "-d", ARGS.infera], capture_output=True, text=True, timeout=30).stdout
    linked = next((name for name in ALLOCATOR_LIBS if re.search(rf"NEEDED.*lib{name}", needed)), "glibc")
    glibc_binary = ARGS.infera
    if linked != "glibc":
        subprocess.run(["cmake", "--build", ARGS.build, "--target", "infera_glibc"], check=True, timeout=1800,
                       stdout=subprocess.DEVNULL)
        glibc_binary = os.path.join(ARGS.build, "infera_glibc")
    sides = [("glibc", glibc_binary, {})]
    for name, lib in ALLOCATOR_LIBS.items():
        path = find_shared_library(lib)
        if path is None:
            print(f"allocator: {lib} not installed (scripts/install_deps.sh); no {name} side", flush=True)
            continue
        sides.append((name, glibc_binary, {"LD_PRELOAD": path}))
    return sides


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))


def scenario_allocator():
    """The whole server under glibc malloc, jemalloc and tcmalloc, one after the other in
    each repeat (order alternated): simple over HTTP (c=16), the ranker at c=64 without and
    with dynamic batching, resnet18 (c=4, binary) and text_encoder (batch 16, c=4, binary),
    each 2 instances x 1 thread; peak RSS (VmHWM) of each server; then RSS growth over
    1 M simple requests (200 k with --quick) per allocator."""
    sides = allocator_sides()
    repo = bench_repo(["simple", "ranker", "resnet18", "text_encoder"], two_instances_one_thread)
    copy_model(repo, "ranker", "ranker_batching", "dynamic_batching {\n  max_queue_delay_microseconds: 1000\n}\n",
               2, 1)
    seconds = "1.5" if ARGS.quick else "3"
    loads = [("simple c=16", "simple", ["--concurrency-range", "16"]),
             ("ranker c=64", "ranker", ["--concurrency-range", "64"]),
             ("ranker c=64 batching", "ranker_batching", ["--concurrency-range", "64"]),
             ("resnet18 c=4", "resnet18", ["--concurrency-range", "4", "--input-tensor-format", "binary"]),
             ("text_encoder b16 c=4", "text_encoder", ["--concurrency-range", "4", "-b", "16",
                                                       "--input-tensor-format", "binary"])]
    runs, peaks = {}, {}
    for rep in range(ARGS.repeats):
        for label, binary, env in (sides if rep % 2 == 0 else sides[::-1]):
            with start_infera_binary(binary, repo, env=dict(ENV, **env)) as proc:
                for name, model, args in loads:
                    r = bench(proc.port, model, *args, "--duration", seconds, "--warmup", "500",
                              "--server-pid", str(proc.pid), name=f"allocator-{label}-{model}-r{rep}")
                    runs.setdefault((label, name), []).append(level(r))
                peaks.setdefault(label, []).append(peak_rss_kib(proc.pid))
    rows, summary = [], {}
    for name, *_ in loads:
        base = None
        for label, *_ in sides:
            levels = runs[(label, name)]
            rps = med([l["throughput_per_s"] for l in levels])
            cpu = med([l.get("server_cpu_us_per_request") for l in levels])
            p99 = med([l["latency"]["p99_us"] for l in levels]) / 1000
            base = base or rps
            summary[f"{label} {name}"] = {"rps": rps, "cpu_us": cpu, "p99_ms": p99}
            rows.append([name, label, rps, f"{rps / base:.2f}", p99, cpu])
    emit("allocator: req/s, P99 and server CPU per request (2 instances x 1 thread each)",
         table(["load", "allocator", "req/s", "vs first", "P99 ms", "server CPU µs/req"], rows))
    # In process (docs/benchmarks.md "Bottlenecks" item 3): torch_backend_bench, 2 x 1,
    # page faults and CPU time of the child from getrusage.
    import resource
    inproc, bench_binary = {}, os.path.join(ARGS.build, "bench", "micro", "torch_backend_bench")
    cases = [("text_encoder", 16, 25 if ARGS.quick else 100), ("ranker", 64, 75 if ARGS.quick else 300)]
    for rep in range(ARGS.repeats):
        for model, batch, iters in cases:
            for label, _, env in (sides if rep % 2 == 0 else sides[::-1]):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                result = subprocess.run([bench_binary, "--repo", ARGS.repo, "--model", model, "--batch", str(batch),
                                         "--threads", "1", "--instances", "2", "--iters", str(iters), "--warmup", "3",
                                         "--repeats", "1"], capture_output=True, text=True, timeout=600,
                                        env=dict(ENV, **env))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                match = re.search(r"items_per_s=([\d.]+)", result.stdout)
                if not match:
                    raise RuntimeError(f"torch_backend_bench {model}:\n{result.stdout}\n{result.stderr}")
                inproc.setdefault((model, label), []).append(
                    (float(match.group(1)), after.ru_minflt - before.ru_minflt,
                     1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)))
    rows = []
    for model, batch, iters in cases:
        base = None
        for label, *_ in sides:
            runs_ = inproc[(model, label)]
            ips = med([r[0] for r in runs_])
            base = base or ips
            summary[f"{label} inproc {model}"] = ips
            rows.append([f"{model}, batch {batch}, {iters} iterations", label, ips, f"{ips / base:.2f}",
                         med([r[1] for r in runs_]), med([r[2] for r in runs_])])
    emit("allocator: in process (torch_backend_bench, 2 instances x 1 thread)",
         table(["model", "allocator", "items/s", "vs first", "page faults per run", "CPU ms per run"], rows))
    total = 200_000 if ARGS.quick else 1_000_000
    growth_rows = []
    simple_repo = bench_repo(["simple"])
    for label, binary, env in sides:
        samples, sent = [], 0
        with start_infera_binary(binary, simple_repo, env=dict(ENV, **env)) as proc:
            i = 0
            while sent < total and i < 100:
                r = bench(proc.port, "simple", "--concurrency-range", "16", "--duration", "3", "--warmup", "0",
                          "--max-duration", "60", name=f"allocator-growth-{label}-{i}")
                sent += r["totals"]["sent"]
                samples.append(rss_kib(proc.pid))
                i += 1
        growth = (samples[-1] - samples[0]) / samples[0]
        summary[f"{label} growth"] = growth
        summary[f"{label} peak_rss_mib"] = med(peaks[label]) / 1024
        growth_rows.append([label, med(peaks[label]) / 1024, samples[0] / 1024, samples[-1] / 1024,
                            f"{100 * growth:+.2f} %", f"{sent:,}"])
    shutil.rmtree(repo)
    shutil.rmtree(simple_repo)
    emit(f"allocator: peak RSS under the loads above, and RSS over {total:,} simple requests",
         table(["allocator", "peak RSS MiB (VmHWM)", "RSS after round 1 MiB", "RSS at the end MiB", "growth",
                "requests"], growth_rows))
    return summary


def sched_counts(pid):
    """(CPU migrations, involuntary context switches) summed over the threads of `pid`
    (/proc/PID/task/*/sched; zeros where the kernel lacks CONFIG_SCHED_DEBUG)."""
    migrations = involuntary = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/sched") as f:
                text = f.read()
        except OSError:
            continue
        m = re.search(r"se\.nr_migrations\s*:\s*(\d+)", text)
        i = re.search(r"nr_involuntary_switches\s*:\s*(\d+)", text)
        migrations += int(m.group(1)) if m else 0
        involuntary += int(i.group(1)) if i else 0
    return migrations, involuntary


def scenario_placement():
    """ResNet-18 as 2 instances x 1 intra-op thread, binary tensors, concurrency 2 and 4:
    `--cpu-placement none` vs `pinned` (docs/cpu_placement.md), the two servers alternated
    within each repeat. With fewer CPUs than instance threads + I/O (2 vCPUs: I/O and one
    instance share a CPU) and the load generator on the same CPUs, pinning can only trade
    migrations for less freedom; on a machine with spare cores it keeps threads apart."""
    repo = bench_repo(["resnet18"], two_instances_one_thread)
    seconds = "2" if ARGS.quick else "5"
    sides = [("none", []), ("pinned", ["--cpu-placement", "pinned"])]
    runs, plan = {}, ""
    for rep in range(ARGS.repeats):
        for label, extra in (sides if rep % 2 == 0 else sides[::-1]):
            with start_infera(repo, *extra) as proc:
                if label == "pinned":
                    plan = "; ".join(re.findall(r"cpu placement: (?:plan|instance)[^\n]*", proc.text()))
                for conc in ("2", "4"):
                    before = sched_counts(proc.pid)
                    r = bench(proc.port, "resnet18", "--concurrency-range", conc, "--duration", seconds,
                              "--warmup", "1000", "--input-tensor-format", "binary",
                              "--server-pid", str(proc.pid), name=f"placement-{label}-c{conc}-r{rep}")
                    after = sched_counts(proc.pid)
                    l = level(r)
                    sent = max(1, r["totals"]["sent"])
                    l["_migrations_per_req"] = (after[0] - before[0]) / sent
                    l["_involuntary_per_req"] = (after[1] - before[1]) / sent
                    runs.setdefault((label, conc), []).append(l)
    shutil.rmtree(repo)
    rows, summary = [], {}
    for conc in ("2", "4"):
        for label, _ in sides:
            levels = runs[(label, conc)]
            s = summarize_levels(levels)
            s["cpu_us"] = med([l.get("server_cpu_us_per_request") for l in levels])
            s["migrations"] = med([l["_migrations_per_req"] for l in levels])
            s["involuntary"] = med([l["_involuntary_per_req"] for l in levels])
            summary[f"{label} c={conc}"] = s
            base = summary[f"none c={conc}"]["rps"]
            rows.append([conc, label, s["rps"], f"{s['rps'] / base:.2f}", s["p50_ms"], s["p99_ms"], s["cpu_us"],
                         f"{s['migrations']:.3f}", f"{s['involuntary']:.2f}"])
    emit("placement: resnet18 2 x 1 thread, binary tensors, --cpu-placement none vs pinned",
         table(["conc", "placement", "req/s", "vs none", "P50 ms", "P99 ms", "server CPU µs/req",
                "CPU migrations / req", "involuntary switches / req"], rows) +
         f"\n\npinned plan: {plan}")
    return summary


def start_infera_binary(binary, repo, *extra, env=None):
    """start_infera with another binary (e.g. a glibc-allocator build)."""
    saved = ARGS.infera
    ARGS.infera = binary
    try:
        return start_infera(repo, *extra, env=env)
    finally:
        ARGS.infera = saved
TRANSPORTS = [  # (name, infera bench arguments); the port is chosen by "-i grpc"
    ("HTTP JSON", []),
    ("HTTP binary", ["--input-tensor-format", "binary", "--output-tensor-format", "binary"]),
    ("gRPC unary", ["-i", "grpc"]),
    ("gRPC stream", ["-i", "grpc", "--streaming"]),
]


def ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else "-"


def scenario_transport():
    """Issue 18: the four ways into one infera (both frontends) — HTTP JSON, HTTP binary
    tensors, gRPC unary and gRPC streaming (ModelStreamInfer, one stream per slot, closed
    loop) — on `simple` (add_sub INT32 [16] x2), `identity_fp32` (FP32 [150528]) and the
    ranker, at c=1/8/64: req/s, P50/P99, server CPU µs per request (--server-pid) and the
    load generator's own CPU µs per request. The transports run back to back for each
    (model, c), their order rotated in each repeat. TRANSPORT_SERVER=PATH serves with
    another infera binary (e.g. main's, for a "before" table); the load generator is
    always this build's `infera bench`."""
    server_binary = os.environ.get("TRANSPORT_SERVER", ARGS.infera)
    seconds, warmup = ("1", "300") if ARGS.quick else ("2", "500")
    models = {"simple": ["--check"], "identity_fp32": ["--shape", "INPUT0:150528", "--check"], "ranker": []}
    concurrencies = [1, 8, 64]
    repo = bench_repo(list(models))
    runs = {}  # (model, c, transport) -> [level]
    errors = 0
    saved = ARGS.infera
    ARGS.infera = server_binary
    try:
        srv = start_infera(repo)
    finally:
        ARGS.infera = saved
    with srv:
        grpc_port = int(re.search(r"gRPC server listening on [^\s]*:(\d+)", srv.text()).group(1))
        for rep in range(ARGS.repeats):
            for model, extra in models.items():
                for c in concurrencies:
                    shift = rep % len(TRANSPORTS)
                    for name, args in TRANSPORTS[shift:] + TRANSPORTS[:shift]:
                        port = grpc_port if "grpc" in args else srv.port
                        slug = name.lower().replace(" ", "_")
                        report = bench(port, model, "--concurrency-range", str(c), "--duration", seconds,
                                       "--warmup", warmup, "--server-pid", str(srv.pid), *extra, *args,
                                       name=f"transport_{model}_c{c}_{slug}_r{rep}")
                        errors += report["totals"]["errors"]
                        if level(report):
                            runs.setdefault((model, c, name), []).append(level(report))
    shutil.rmtree(repo, ignore_errors=True)

    def m(model, c, name, key):
        levels = runs.get((model, c, name), [])
        if key in ("p50_us", "p99_us"):
            return med([l["latency"][key] for l in levels])
        return med([l.get(key) for l in levels])

    names = [name for name, _ in TRANSPORTS]
    summary = {}
    for model in models:
        rows, cpu_rows, ratio_rows = [], [], []
        for c in concurrencies:
            rps = {n: m(model, c, n, "throughput_per_s") for n in names}
            rows.append([f"c={c}"] + [
                f"{fmt(rps[n], 0)} ({fmt(m(model, c, n, 'p50_us') and m(model, c, n, 'p50_us') / 1e3, 3)} / "
                f"{fmt(m(model, c, n, 'p99_us') and m(model, c, n, 'p99_us') / 1e3, 3)})" for n in names])
            cpu_rows.append([f"c={c}"] + [
                f"{fmt(m(model, c, n, 'server_cpu_us_per_request'))} / {fmt(m(model, c, n, 'client_cpu_us_per_request'))}"
                for n in names])
            server_cpu = {n: m(model, c, n, "server_cpu_us_per_request") for n in names}
            ratio_rows.append([f"c={c}", ratio(rps["gRPC unary"], rps["HTTP JSON"]),
                               ratio(rps["HTTP binary"], rps["HTTP JSON"]),
                               ratio(rps["gRPC stream"], rps["gRPC unary"]),
                               ratio(server_cpu["gRPC unary"], server_cpu["HTTP JSON"]),
                               ratio(server_cpu["gRPC stream"], server_cpu["gRPC unary"])])
            summary[f"{model}_c{c}"] = {n: {"rps": rps[n], "server_cpu_us": server_cpu[n],
                                            "client_cpu_us": m(model, c, n, "client_cpu_us_per_request")}
                                        for n in names}
        emit(f"transport: {model}, req/s (P50 / P99 ms)", table(["load"] + names, rows))
        emit(f"transport: {model}, server / client CPU µs per request",
             table(["load"] + names, cpu_rows))
        emit(f"transport: {model}, ratios",
             table(["load", "gRPC unary ÷ HTTP JSON", "HTTP binary ÷ JSON", "stream ÷ unary",
                    "server CPU gRPC ÷ JSON", "server CPU stream ÷ unary"], ratio_rows))
    emit("transport: sides",
         f"server {server_binary}; load generator {ARGS.infera}; {ARGS.repeats} repeat(s) of {seconds} s per "
         f"run; {errors} request errors in all; load average {load_average()}")
    return summary
def _exec_to_ready_torch_idle():
    """Seconds from exec of torch_idle to its "ready" line (LibTorch loaded, one op run)."""
    start = time.monotonic()
    proc = subprocess.Popen([os.path.join(ARGS.build, "bench", "micro", "torch_idle")], stdout=subprocess.PIPE,
                            env=ENV, start_new_session=True)
    try:
        line = proc.stdout.readline()
        seconds = time.monotonic() - start
        if not line.startswith(b"ready"):
            raise RuntimeError(f"torch_idle printed {line!r}")
        return seconds
    finally:
        proc.kill()
        proc.wait()


def _health_ready(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET /v2/health/ready HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _exec_to_ready_infera(binary, repo):
    """Seconds from exec of `infera serve` to the first 200 of GET /v2/health/ready
    (polled every 10 ms on a fixed port), its peak RSS (VmHWM) then, and its log."""
    port = free_port()
    start = time.monotonic()
    proc = Process([binary, "serve", "--model-repository", repo, "--http-address", "127.0.0.1", "--http-port",
                    str(port), "--grpc-address", "127.0.0.1", "--grpc-port", "0", "--metrics-port", "0"],
                   log_name="infera-cold")
    try:
        deadline = start + 120
        while not _health_ready(port):
            proc.check_alive()
            if time.monotonic() > deadline:
                raise RuntimeError(f"infera not ready in 120 s:\n{proc.text()[-3000:]}")
            time.sleep(0.01)
        seconds = time.monotonic() - start
        with open(f"/proc/{proc.pid}/status") as f:
            hwm_kib = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))
        return seconds, hwm_kib, proc.text()
    finally:
        proc.stop()


def scenario_cold_start():
    """Issue 18 item 6 (docs/cold_start.md): exec -> ready of infera on the demo repository
    against exec -> "ready" of torch_idle (a bare LibTorch process), started alternately,
    N=5 each (2 with --quick); medians, the ratio (target <= 1.5), the peak RSS, and the
    per-model breakdown of infera's log. COLD_START_BASELINE=/path/to/infera adds a
    second infera binary (e.g. main's), alternated with the others, for an A/B;
    COLD_START_BASELINE_REPO gives that binary its own repository (e.g. main's demo
    repository, whose warm-up counts differ), else it serves --repo too."""
    n = 2 if ARGS.quick else 5
    binaries = [("infera", ARGS.infera, ARGS.repo)]
    if os.environ.get("COLD_START_BASELINE"):
        binaries.append(("baseline", os.environ["COLD_START_BASELINE"],
                         os.environ.get("COLD_START_BASELINE_REPO") or ARGS.repo))
    times = {"torch_idle": []}
    hwm = {}
    last_log = ""
    for i in range(n):
        order = [("torch_idle", None, None)] + binaries
        if i % 2:
            order = order[::-1]
        for name, binary, repo in order:
            if binary is None:
                times["torch_idle"].append(_exec_to_ready_torch_idle())
                continue
            seconds, kib, text = _exec_to_ready_infera(binary, repo)
            times.setdefault(name, []).append(seconds)
            hwm.setdefault(name, []).append(kib)
            if name == "infera":
                last_log = text
    base = med(times["torch_idle"])
    rows = [["torch_idle (exec -> ready line)", base, "1.00", " ".join(f"{t:.2f}" for t in times["torch_idle"]), "-"]]
    for name, _, _ in binaries:
        rows.append([f"{name} (exec -> /v2/health/ready 200)", med(times[name]), f"{med(times[name]) / base:.2f}",
                     " ".join(f"{t:.2f}" for t in times[name]), f"{med(hwm[name]) / 1024:.0f}"])
    emit(f"cold_start: exec -> ready, demo repository, N={n} alternated (load average {load_average()})",
         table(["process", "median s", "ratio to torch_idle (target <= 1.5)", "runs s", "peak RSS MiB"],
               [[r[0], f"{r[1]:.2f}", r[2], r[3], r[4]] for r in rows]))
    breakdown = [[m.group(1), m.group(2), m.group(3)] for m in
                 re.finditer(r"loaded model '([^']+)' version \d+ in (\d+) ms(?:: (.*))?$", last_log, re.M)]
    breakdown = [[name, ms, stages or "ensemble"] for name, ms, stages in breakdown]
    summary = re.search(r"startup: .*$", last_log, re.M)
    emit("cold_start: where infera's time went (last run's log)",
         table(["model", "ms", "stages"], breakdown) + ("\n\n" + summary.group(0) if summary else ""))
    return {"median_s": {k: med(v) for k, v in times.items()}, "ratio": med(times["infera"]) / base,
            "peak_rss_mib": {k: med(v) / 1024 for k, v in hwm.items()}}


def process_cpu_s(pid):
    """utime + stime of `pid` (every thread) so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scenario_grpc_floor():
    """Issue 18, second round: gRPC 1.51's own per-call floor against infera's gRPC
    request. Sides: bench/micro/grpc_floor_server (infera's completion-queue structure —
    one queue per thread, one thread per CPU, the same builder settings — serving
    ServerLive and an add_sub ModelInfer with none of infera's code) and infera serving
    `simple` (GRPC_FLOOR_BASELINE=PATH adds a second infera binary, e.g. main's, for A/B;
    GRPC_FLOOR_SERVER_ARGS adds arguments to the floor server, e.g. --channel-arg;
    GRPC_FLOOR_VARIANTS="NAME:ARGS;NAME:ARGS" adds more floor servers, side by side, for
    tuning A/B — ARGS are its flags, and NAME=VALUE words with an upper-case NAME its
    environment, e.g. "t1:--threads 1;lowat:GRPC_EXPERIMENTS=tcp_rcv_lowat").
    Loads, c=8 and c=64, one channel: ServerLive and ModelInfer from infera_grpc_load (the
    completion-queue client, 2 threads) and ModelInfer from `infera bench -i grpc --check`;
    as the reference, infera's HTTP+JSON `simple` from `infera bench --check`. Per run: req/s, server CPU µs and context switches per request (the server's
    /proc/PID over the measured span, as a rate ÷ the load's throughput), the client's CPU
    µs per request. Sides alternate within each repeat; medians."""
    import resource
    build = os.path.dirname(ARGS.infera)
    floor_binary = os.path.join(build, "bench", "micro", "grpc_floor_server")
    load_binary = os.path.join(build, "tools", "grpc_load", "infera_grpc_load")
    seconds, warmup = (1.5, 0.5) if ARGS.quick else (3.0, 1.0)
    repo = bench_repo(["simple"])
    sides = []  # (name, Process, grpc port)

    def start_floor(name, words):
        flags = [w for w in words if not re.match(r"[A-Z][A-Z0-9_]*=", w)]
        env = dict(ENV, **dict(w.split("=", 1) for w in words if re.match(r"[A-Z][A-Z0-9_]*=", w)))
        floor = Process([floor_binary, *flags], env=env, log_name="grpc-floor")
        deadline = time.time() + 30
        while not re.search(r"PORT (\d+)", floor.text()):
            floor.check_alive()
            if time.time() > deadline:
                raise RuntimeError(f"grpc_floor_server did not start:\n{floor.text()}")
            time.sleep(0.05)
        sides.append((name, floor, int(re.search(r"PORT (\d+)", floor.text()).group(1))))

    try:
        start_floor("floor", os.environ.get("GRPC_FLOOR_SERVER_ARGS", "").split())
        binaries = [("infera", ARGS.infera)]
        if os.environ.get("GRPC_FLOOR_BASELINE"):
            binaries.append(("infera baseline", os.environ["GRPC_FLOOR_BASELINE"]))
        for name, binary in binaries:
            saved, ARGS.infera = ARGS.infera, binary
            try:
                srv = start_infera(repo)
            finally:
                ARGS.infera = saved
            sides.append((name, srv, int(re.search(r"gRPC server listening on [^\s]*:(\d+)", srv.text()).group(1))))
        for variant in filter(None, os.environ.get("GRPC_FLOOR_VARIANTS", "").split(";")):
            name, _, words = variant.partition(":")
            start_floor(f"floor {name.strip()}", words.split())

        def run_load(kind, pid, port, c, tag):
            if kind in ("bench", "http"):
                protocol = ["-i", "grpc"] if kind == "bench" else []
                cmd = [ARGS.infera, "bench", "-m", "simple", *protocol, "-u", f"127.0.0.1:{port}",
                       "--progress", "off", "--check", "--concurrency-range", str(c), "--duration",
                       str(seconds), "--warmup", str(int(warmup * 1000)), "--json",
                       os.path.join(ARGS.out, f"grpc_floor_{tag}.json")]
            else:
                cmd = [load_binary, "--target", f"127.0.0.1:{port}", "--concurrency", str(c),
                       "--connections", "1", "--duration-s", str(seconds), "--warmup-s", str(warmup),
                       "--rpc", kind]
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(warmup + (0.3 if kind in ("bench", "http") else 0.1))
            cpu0, ctx0, t0 = process_cpu_s(pid), context_switches(pid), time.time()
            out, _ = proc.communicate(timeout=seconds + 120)
            cpu1, ctx1, t1 = process_cpu_s(pid), context_switches(pid), time.time()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            client_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
            if kind in ("bench", "http"):
                with open(os.path.join(ARGS.out, f"grpc_floor_{tag}.json")) as f:
                    report = json.load(f)
                lvl = level(report)
                if proc.returncode != 0 or lvl is None or report["totals"]["errors"]:
                    raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out}")
                rps, requests = lvl["throughput_per_s"], report["totals"]["sent"]
                FOREIGN.append(lvl.get("foreign_cpu_pct", 0))
            else:
                match = re.search(r"RESULT (\{.*\})", out)
                result = json.loads(match.group(1)) if match else None
                if proc.returncode != 0 or result is None or result["errors"]:
                    raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out}")
                rps = result["throughput_rps"]
                requests = rps * (seconds + warmup)  # the client's whole run, for its own CPU
            span = t1 - t0
            return {"rps": rps, "server_cpu_us": (cpu1 - cpu0) / span / rps * 1e6,
                    "ctx": (ctx1 - ctx0) / span / rps, "client_cpu_us": client_cpu / requests * 1e6}

        loads = [("ServerLive (CQ client)", "server_live"), ("ModelInfer simple (CQ client)", "model_infer"),
                 ("ModelInfer simple (infera bench)", "bench")]
        runs = {}
        for rep in range(ARGS.repeats):
            for load_name, kind in loads:
                for c in (8, 64):
                    order = sides if rep % 2 == 0 else sides[::-1]
                    for name, proc, port in order:
                        tag = f"{name.replace(' ', '_')}_{kind}_c{c}_r{rep}"
                        runs.setdefault((load_name, c, name), []).append(run_load(kind, proc.pid, port, c, tag))
                    # The reference: infera's whole HTTP+JSON request, same model and client.
                    if kind == "bench":
                        srv = next(proc for name, proc, _ in sides if name == "infera")
                        runs.setdefault(("HTTP JSON simple (infera bench)", c, "infera"), []).append(
                            run_load("http", srv.pid, srv.port, c, f"infera_http_c{c}_r{rep}"))
    finally:
        for _, proc, _ in sides:
            proc.stop()
        shutil.rmtree(repo, ignore_errors=True)

    def m(load_name, c, name, key):
        return med([r[key] for r in runs.get((load_name, c, name), [])])

    names = [name for name, _, _ in sides]
    rows, share_rows = [], []
    for load_name, _ in loads:
        for c in (8, 64):
            rows.append([load_name, f"c={c}"] + [
                f"{fmt(m(load_name, c, n, 'server_cpu_us'))} ({fmt(m(load_name, c, n, 'ctx'), 2)}) "
                f"{fmt(m(load_name, c, n, 'rps'), 0)}/s; client {fmt(m(load_name, c, n, 'client_cpu_us'))}"
                for n in names])
            floor_us = m(load_name, c, "floor", "server_cpu_us")
            infera_us = m(load_name, c, "infera", "server_cpu_us")
            share_rows.append([load_name, f"c={c}", floor_us, infera_us,
                               infera_us - floor_us if floor_us and infera_us else None,
                               f"{floor_us / infera_us:.0%}" if floor_us and infera_us else "-"])
    for c in (8, 64):
        http = ("HTTP JSON simple (infera bench)", c, "infera")
        rows.append([http[0], f"c={c}"] + [
            f"{fmt(m(*http, 'server_cpu_us'))} ({fmt(m(*http, 'ctx'), 2)}) {fmt(m(*http, 'rps'), 0)}/s; "
            f"client {fmt(m(*http, 'client_cpu_us'))}" if n == "infera" else "-" for n in names])
    emit("grpc_floor: server CPU µs per request (context switches per request), req/s; client CPU µs per request",
         table(["load", "c"] + names, rows))
    emit("grpc_floor: gRPC core's floor vs infera's share",
         table(["load", "c", "floor µs/req", "infera µs/req", "infera's extra µs/req", "floor ÷ infera"],
               share_rows))
    return {f"{load_name} c={c} {n}": {k: m(load_name, c, n, k) for k in ("rps", "server_cpu_us", "ctx", "client_cpu_us")}
            for load_name, _ in loads for c in (8, 64) for n in names}


SCENARIOS = {
    "overhead": scenario_overhead,
    "baseline": scenario_baseline,
    "limit": scenario_limit,
    "batching": scenario_batching,
    "instances": scenario_instances,
    "overload": scenario_overload,
    "slo": scenario_slo,
    "observability": scenario_observability,
    "memory": scenario_memory,
    "shm": scenario_shm,
    "pipeline": scenario_pipeline,
    "analyze": scenario_analyze,
    "llm_quant": scenario_llm_quant,
    "kv_dtype": scenario_kv_dtype,
    "precision": scenario_precision,
    "console": scenario_console,
    "allocator": scenario_allocator,
    "placement": scenario_placement,
    "transport": scenario_transport,
    "cold_start": scenario_cold_start,
    "grpc_floor": scenario_grpc_floor,
}


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--repo", default="demo-models")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 repeat, short windows (smoke test)")
    parser.add_argument("scenarios", nargs="*", help=f"any of {', '.join(SCENARIOS)} (default: all)")
    ARGS = parser.parse_args()
    ARGS.scenarios = ARGS.scenarios or list(SCENARIOS)
    unknown = [s for s in ARGS.scenarios if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}")
    if ARGS.quick:
        ARGS.repeats = 1
    ARGS.build = os.path.abspath(ARGS.build)
    ARGS.repo = os.path.abspath(ARGS.repo)
    ARGS.infera = os.path.join(ARGS.build, "infera")
    ARGS.out = os.path.join(ARGS.build, "bench-results")
    os.makedirs(ARGS.out, exist_ok=True)
    open(os.path.join(ARGS.out, "tables.md"), "w").close()
    with open("/proc/cpuinfo") as f:
        cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    print(f"machine: {os.cpu_count()} CPUs ({cpu}); load average {load_average()} at start; "
          f"{ARGS.repeats} repeat(s); results in {ARGS.out}", flush=True)
    summary = {}
    for name in ARGS.scenarios:
        start = time.time()
        FOREIGN.clear()
        summary[name] = SCENARIOS[name]()
        summary[name + "_seconds"] = round(time.time() - start, 1)
        noise = (f"other processes took a median {med(FOREIGN):.0f} % (max {max(FOREIGN):.0f} %) of the "
                 f"machine during the measurements" if FOREIGN else "")
        summary[name + "_foreign_cpu_pct"] = med(FOREIGN)
        emit(f"{name}: conditions", f"{time.time() - start:.0f} s; load average {load_average()} at the end; {noise}")
    with open(os.path.join(ARGS.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())

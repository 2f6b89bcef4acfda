#!/usr/bin/python3
"""Container image smoke test: build the image, run it the way a cluster would (non-root,
read-only root filesystem, models mounted read-only), send an inference to `simple`,
stop it with SIGTERM while a slow request is in flight, and check the drain: readiness
turns false at once while requests are still served for --shutdown-delay-secs (when the
binary has the flag), the in-flight request completes, the exit code is 0, the log says
"shutdown complete".

    INFERA_CONTAINER_TEST=1 /usr/bin/python3 tests/container/smoke_test.py
    (ctest: label `container`, run by `make container-test`, not by `make test`)

Exit 77 with the reason when it cannot run here: the variable is not set, no
podman/docker, podman without root, or no base image can be made (ctest counts 77 as a
failure). A failing image build or a failing check is a failure (exit 1).

Environment: INFERA_DEMO_REPO (the demo repository to mount; `make test` sets it; without
it a repository with `simple` only is used), INFERA_CONTAINER_ENGINE=docker|podman,
IMAGE (the tag to build; default: the tag `make image` builds), INFERA_CONTAINER_IMAGE
(test this existing image instead of building one, e.g. in a pipeline that built it).
Prints `RESULT image_bytes=... start_to_ready_s=... stop_s=...` for docs/benchmarks.md.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP = 77

SIMPLE = """name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
"""
# Holds a request for 3 s: in flight when SIGTERM arrives.
SLOW = """name: "smoke_slow"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters { key: "delay_ms" value { string_value: "3000" } }
"""


SIMPLE_REQUEST = {"inputs": [
    {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(1, 17))},
    {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}
# Set in main() when the image's infera has --shutdown-delay-secs.
SHUTDOWN_DELAY_S = 0


def skip(reason):
    print(f"SKIPPED container smoke test: {reason}")
    sys.exit(SKIP)


def fail(message, logs=""):
    print(f"FAILED container smoke test: {message}")
    if logs:
        print("---- container log (last 40 lines) ----")
        print("\n".join(logs.splitlines()[-40:]))
    sys.exit(1)


def choose_engine():
    forced = os.environ.get("INFERA_CONTAINER_ENGINE")
    if forced:
        if not shutil.which(forced):
            skip(f"INFERA_CONTAINER_ENGINE={forced} but {forced} is not installed")
        return forced
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return "docker"
    if shutil.which("podman"):
        return "podman"
    skip("neither podman nor docker is installed (`make image` installs podman on Debian as root)")


def engine_env(engine):
    """podman: this project's private configuration (deploy/image/podman_env.sh)."""
    env = dict(os.environ)
    if engine == "podman":
        out = subprocess.run(["bash", "-c", f"source {ROOT}/deploy/image/podman_env.sh && "
                              "echo $CONTAINERS_CONF && echo $CONTAINERS_STORAGE_CONF"],
                             capture_output=True, text=True, check=True).stdout.split()
        env["CONTAINERS_CONF"], env["CONTAINERS_STORAGE_CONF"] = out[0], out[1]
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def make_repo(tmp):
    repo = os.path.join(tmp, "models")
    demo = os.environ.get("INFERA_DEMO_REPO")
    if demo and os.path.isdir(os.path.join(demo, "simple")):
        shutil.copytree(demo, repo, ignore=shutil.ignore_patterns(".*"))
        source = f"the demo repository ({demo})"
    else:
        os.makedirs(os.path.join(repo, "simple", "1"))
        with open(os.path.join(repo, "simple", "config.pbtxt"), "w") as f:
            f.write(SIMPLE)
        source = "a repository with `simple` only (INFERA_DEMO_REPO not set)"
    os.makedirs(os.path.join(repo, "smoke_slow", "1"))
    with open(os.path.join(repo, "smoke_slow", "config.pbtxt"), "w") as f:
        f.write(SLOW)
    # The container runs as uid 10001: everything must be world-readable.
    for dirpath, dirnames, filenames in os.walk(tmp):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return repo, source


def main():
    if os.environ.get("INFERA_CONTAINER_TEST") != "1":
        skip("it builds the container image (minutes; ~15 cold on 2 cores). "
             "Run it with INFERA_CONTAINER_TEST=1 (make test INFERA_CONTAINER_TEST=1, or "
             "ctest -L container with the variable set).")
    engine = choose_engine()
    if engine == "podman" and os.geteuid() != 0:
        skip("podman here runs as root only (rootless podman is not configured)")
    env = engine_env(engine)

    if engine == "podman":
        base = subprocess.run([os.path.join(ROOT, "deploy/image/base_image.sh")], env=env,
                              capture_output=True, text=True)
        if base.returncode != 0:
            skip(f"cannot make the debian:bookworm-slim base image (no registry, and debootstrap "
                 f"failed): {base.stderr.strip()[-500:]}")

    image = os.environ.get("INFERA_CONTAINER_IMAGE")
    if image:
        print(f"testing the existing image {image} (INFERA_CONTAINER_IMAGE; no build)", flush=True)
    else:
        print(f"building the image with {engine} (deploy/image/build_image.sh)...", flush=True)
        started = time.monotonic()
        build = subprocess.run([os.path.join(ROOT, "deploy/image/build_image.sh")],
                               env=dict(env, INFERA_CONTAINER_ENGINE=engine),
                               capture_output=True, text=True)
        if build.returncode != 0:
            fail("image build failed:\n" + build.stderr[-4000:])
        image = build.stdout.strip().splitlines()[-1]
        print(f"built {image} in {time.monotonic() - started:.0f} s", flush=True)
    size = int(subprocess.run([engine, "image", "inspect", "--format", "{{.Size}}", image],
                              env=env, capture_output=True, text=True, check=True).stdout.strip())

    name = f"infera-smoke-{os.getpid()}"
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="infera-smoke-") as tmp:
        repo, source = make_repo(tmp)
        print(f"models: {source} + smoke_slow (3 s per request)", flush=True)
        run = [engine, "run", "-d", "--name", name, "--read-only", "--stop-timeout", "40",
               "-p", f"127.0.0.1:{port}:8000", "-v", f"{repo}:/models:ro"]
        if engine == "docker":
            run += ["--tmpfs", "/tmp"]  # podman mounts /tmp as tmpfs with --read-only itself
        run += [image, "--model-repository=/models", "--exit-timeout-secs=20"]
        global SHUTDOWN_DELAY_S
        help_text = subprocess.run([engine, "run", "--rm", image, "--help"], env=env,
                                   capture_output=True, text=True).stdout
        if "--shutdown-delay-secs" in help_text:
            SHUTDOWN_DELAY_S = 3
            run.append(f"--shutdown-delay-secs={SHUTDOWN_DELAY_S}")
        t0 = time.monotonic()
        proc = subprocess.run(run, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            fail(f"{' '.join(run)} failed: {proc.stderr.strip()}")
        try:
            check_container(engine, env, name, port, t0, size, image)
        finally:
            subprocess.run([engine, "rm", "-f", name], env=env, capture_output=True)


def logs_of(engine, env, name):
    p = subprocess.run([engine, "logs", name], env=env, capture_output=True, text=True)
    return p.stdout + p.stderr


def check_shutdown_delay(base, engine, env, name):
    """With --shutdown-delay-secs: after SIGTERM readiness turns false at once while
    requests are still served until the delay ends (docs/metrics.md)."""
    last_ready = time.monotonic()
    deadline = last_ready + SHUTDOWN_DELAY_S + 5
    while time.monotonic() < deadline:
        try:
            status, _ = http("GET", f"{base}/v2/health/ready", timeout=2)
        except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
            fail("the server stopped accepting before readiness turned false",
                 logs_of(engine, env, name))
        if status != 200:
            break
        last_ready = time.monotonic()
        time.sleep(0.05)
    else:
        fail("readiness never turned false after SIGTERM", logs_of(engine, env, name))
    sent = time.monotonic()
    status, body = http("POST", f"{base}/v2/models/simple/infer", SIMPLE_REQUEST)
    # SIGTERM came after the last 200 from /ready, so the delay lasts at least until
    # last_ready + delay; only a request sent well before that must succeed.
    if sent < last_ready + SHUTDOWN_DELAY_S - 0.5 and status != 200:
        fail(f"a request during --shutdown-delay-secs got HTTP {status} {body[:200]!r}",
             logs_of(engine, env, name))
    return (f"; readiness false at once, a request {sent - last_ready:.1f} s into the "
            f"{SHUTDOWN_DELAY_S} s shutdown delay served ({status})")


def check_container(engine, env, name, port, t0, size, image):
    base = f"http://127.0.0.1:{port}"
    deadline = t0 + 300
    ready_at = None
    while time.monotonic() < deadline:
        try:
            status, _ = http("GET", f"{base}/v2/health/ready", timeout=2)
            if status == 200:
                ready_at = time.monotonic()
                break
        except (urllib.error.URLError, ConnectionError, socket.timeout, OSError):
            pass
        state = subprocess.run([engine, "inspect", "--format", "{{.State.Running}}", name],
                               env=env, capture_output=True, text=True).stdout.strip()
        if state == "false":
            fail("the container exited before becoming ready", logs_of(engine, env, name))
        time.sleep(0.1)
    if ready_at is None:
        fail("not ready within 300 s", logs_of(engine, env, name))
    start_to_ready = ready_at - t0
    print(f"ready {start_to_ready:.2f} s after `{engine} run`", flush=True)

    # An inference on `simple`: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1.
    a, b = SIMPLE_REQUEST["inputs"][0]["data"], SIMPLE_REQUEST["inputs"][1]["data"]
    status, body = http("POST", f"{base}/v2/models/simple/infer", SIMPLE_REQUEST)
    if status != 200:
        fail(f"infer on simple: HTTP {status} {body[:300]!r}", logs_of(engine, env, name))
    outputs = {o["name"]: o["data"] for o in json.loads(body)["outputs"]}
    if outputs.get("OUTPUT0") != [x + y for x, y in zip(a, b)] or \
       outputs.get("OUTPUT1") != [x - y for x, y in zip(a, b)]:
        fail(f"wrong outputs from simple: {outputs}")
    print("inference on simple: correct", flush=True)

    # How the image runs: non-root, read-only root, passive OpenMP, OpenBLAS selected.
    def exec_(*cmd):
        return subprocess.run([engine, "exec", name, *cmd], env=env, capture_output=True, text=True)
    uid = exec_("id", "-u").stdout.strip()
    if uid != "10001":
        fail(f"runs as uid {uid!r}, expected the non-root 10001")
    if exec_("touch", "/probe-readonly").returncode == 0:
        fail("the root filesystem is writable (run with --read-only)")
    if exec_("touch", "/tmp/probe-writable").returncode != 0:
        fail("/tmp is not writable under --read-only")
    if exec_("printenv", "OMP_WAIT_POLICY").stdout.strip() != "passive":
        fail("OMP_WAIT_POLICY is not passive in the image")
    blas = exec_("readlink", "-f", "/usr/lib/x86_64-linux-gnu/libblas.so.3").stdout.strip()
    if "openblas" not in blas:
        fail(f"libblas.so.3 resolves to {blas!r}, not OpenBLAS")
    if engine == "podman":
        health = subprocess.run(["podman", "healthcheck", "run", name], env=env,
                                capture_output=True, text=True)
        if health.returncode != 0:
            fail(f"HEALTHCHECK failed: {health.stdout}{health.stderr}")
    print("uid 10001, read-only root, writable /tmp, OMP_WAIT_POLICY=passive, OpenBLAS, "
          "healthcheck: ok", flush=True)

    # Drain: a 3 s request is in flight when SIGTERM arrives; it must complete.
    result = {}

    def slow_request():
        try:
            result["status"], result["body"] = http("POST", f"{base}/v2/models/smoke_slow/infer", {
                "inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1.5, 2.5]}]},
                timeout=30)
        except Exception as e:  # noqa: BLE001 - reported below
            result["error"] = repr(e)
    thread = threading.Thread(target=slow_request)
    thread.start()
    time.sleep(0.7)
    stop_t0 = time.monotonic()
    stop = subprocess.Popen([engine, "stop", "--time", "40", name], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    delay_note = ""
    if SHUTDOWN_DELAY_S:
        delay_note = check_shutdown_delay(base, engine, env, name)
    _, stop_err = stop.communicate(timeout=60)
    stop_s = time.monotonic() - stop_t0
    thread.join(timeout=40)
    logs = logs_of(engine, env, name)
    if stop.returncode != 0:
        fail(f"{engine} stop failed: {stop_err}", logs)
    if result.get("status") != 200:
        fail(f"the in-flight request did not survive SIGTERM: {result}", logs)
    code = subprocess.run([engine, "inspect", "--format", "{{.State.ExitCode}}", name], env=env,
                          capture_output=True, text=True).stdout.strip()
    if code != "0":
        fail(f"exit code {code} after SIGTERM, expected 0", logs)
    if "shutdown complete" not in logs:
        fail("the log does not say 'shutdown complete'", logs)
    if stop_s >= 39:
        fail(f"stop took {stop_s:.1f} s: SIGTERM was not handled (SIGKILL after the timeout)", logs)
    print(f"SIGTERM with a request in flight: request completed (200), exit 0, "
          f"'shutdown complete', stopped in {stop_s:.1f} s{delay_note}", flush=True)
    print(f"RESULT image={image} image_bytes={size} image_mb={size / 1e6:.0f} "
          f"start_to_ready_s={start_to_ready:.2f} stop_s={stop_s:.2f}")


if __name__ == "__main__":
    main()

"""Starts the real `infera` binary for black-box tests and talks to it over real sockets.

Every test gets a server on ephemeral loopback ports (--http-port 0 and --grpc-port 0;
the ports are read from the "HTTP/gRPC server listening on" log lines).
`InferaServer.stop()` sends SIGTERM and checks the process exits 0; the log is kept for
failure messages.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("INFERA_BINARY", os.path.join(ROOT, "build", "infera"))
DEMO_REPO = os.environ.get("INFERA_DEMO_REPO", os.path.join(ROOT, "demo-models"))


def demo_repo():
    """Path of the generated demo repository; fails clearly when it is missing."""
    if not os.path.isdir(os.path.join(DEMO_REPO, "simple")):
        raise RuntimeError(f"demo repository missing at {DEMO_REPO}: run `make demo-models`")
    return DEMO_REPO


_SAMPLE_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_ABSENT = object()


def metric_samples(text):
    """Every sample of a Prometheus text exposition, in order: [(name, {label: value}, value)]."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE_LINE.match(line)
        assert m, f"not a sample line: {line!r}"
        samples.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return samples


def metric_value(text, name, default=_ABSENT, **labels):
    """The value of the first sample `name` whose labels include `labels` (label names as
    keyword arguments, values compared as strings). Without a `default`, a missing sample
    fails the test naming it."""
    want = {k: str(v) for k, v in labels.items()}
    for sample_name, got, value in metric_samples(text):
        if sample_name == name and all(got.get(k) == v for k, v in want.items()):
            return value
    if default is _ABSENT:
        raise AssertionError(f"no sample {name} {want}")
    return default


class InferaServer:
    def __init__(self, repository, *extra_args, env=None):
        self.repository = repository
        self.log_file = tempfile.NamedTemporaryFile(prefix="infera-", suffix=".log", delete=False)
        run_env = dict(os.environ)
        run_env.update(env or {})
        self.process = subprocess.Popen(
            [BINARY, "serve", "--model-repository", repository, "--http-address", "127.0.0.1",
             "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
             *([] if "--metrics-port" in extra_args else ["--metrics-port", "0"]), *extra_args],
            stdout=self.log_file, stderr=subprocess.STDOUT, env=run_env)
        self.port = self._wait_for_port("HTTP")
        self.grpc_port = self._wait_for_port("gRPC")

    def _wait_for_port(self, protocol, timeout=30.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            match = re.search(protocol + r" server listening on [^\s]*:(\d+)", self.log())
            if match:
                return int(match.group(1))
            if self.process.poll() is not None:
                raise RuntimeError(f"infera exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.02)
        raise RuntimeError(f"infera did not start listening:\n{self.log()}")

    def log(self):
        with open(self.log_file.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_ready(self, timeout=120.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if "server is ready" in self.log() or "server is NOT ready" in self.log():
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"infera exited early:\n{self.log()}")
            time.sleep(0.05)
        raise RuntimeError(f"infera did not finish loading:\n{self.log()}")

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None):
        """One request on a fresh connection: (status, headers dict, body bytes)."""
        conn = self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def get_json(self, path):
        status, _, body = self.request("GET", path)
        return status, (json.loads(body) if body else None)

    def metrics_text(self):
        """The Prometheus exposition the HTTP port serves at /metrics."""
        status, _, body = self.request("GET", "/metrics")
        assert status == 200, f"/metrics answered {status}"
        return body.decode()

    def metric(self, name, default=_ABSENT, **labels):
        """metric_value() of this server's /metrics now."""
        return metric_value(self.metrics_text(), name, default, **labels)

    def model_gauge(self, name, model):
        """The value of gauge `name` for `model` on /metrics (0 when the series is absent)."""
        return self.metric(name, 0.0, model=model)

    def inference_count(self, model):
        """Requests the server has answered for `model` (its statistics: success + fail),
        or None while the model has no statistics (not loaded)."""
        status, body = self.get_json(f"/v2/models/{model}/stats")
        if status != 200:
            return None
        stats = body["model_stats"][0]["inference_stats"]
        return stats["success"]["count"] + stats["fail"]["count"]

    def infer(self, model, payload, version=None, headers=None):
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        body = payload if isinstance(payload, (bytes, bytearray)) else json.dumps(payload)
        status, response_headers, data = self.request("POST", path, body, headers)
        return status, response_headers, data

    def raw(self, data, read_timeout=10.0, shutdown_write=False):
        """Sends raw bytes on a new socket and returns everything the server sends back."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=read_timeout) as s:
            s.sendall(data)
            if shutdown_write:
                s.shutdown(socket.SHUT_WR)
            chunks = []
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except socket.timeout:
                pass
            return b"".join(chunks)

    def assert_serving(self):
        """The server still answers liveness and a real inference."""
        status, _, _ = self.request("GET", "/v2/health/live")
        assert status == 200, self.log()

    def stop(self, expect_code=0, timeout=60):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                raise AssertionError(f"infera did not exit after SIGTERM:\n{self.log()}")
        assert self.process.returncode == expect_code, (
            f"exit code {self.process.returncode}:\n{self.log()}")
        os.unlink(self.log_file.name)


def copy_model(src_repo, name, dst_repo, config_edit=None, new_name=None):
    """Copies a demo model (weights hard-linked where possible) into another repository,
    optionally rewriting its config.pbtxt text."""
    dst = os.path.join(dst_repo, new_name or name)
    shutil.copytree(os.path.join(src_repo, name), dst, copy_function=_link_or_copy)
    if config_edit or new_name:
        path = os.path.join(dst, "config.pbtxt")
        with open(path) as f:
            text = f.read()
        if new_name:
            text = text.replace(f'name: "{name}"', f'name: "{new_name}"')
        if config_edit:
            text = config_edit(text)
        os.unlink(path)  # may be a hard link into the demo repository
        with open(path, "w") as f:
            f.write(text)
    return dst


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


# The `simple` model (add_sub over two INT32 [16] inputs, Triton's example) as the tests
# that write their own repository declare it; SIMPLE_CONFIG_2_INSTANCES adds a second
# instance.
SIMPLE_CONFIG = """
name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
"""
SIMPLE_CONFIG_2_INSTANCES = SIMPLE_CONFIG + 'instance_group [ { count: 2 kind: KIND_CPU } ]\n'

# The decoupled `repeat_int32` model (the built-in `repeat` backend, Triton's repeat_int32):
# one response (OUT, IDX) per element of IN, DELAY ms before each, WAIT ms before the final
# flag.
REPEAT_CONFIG = """
name: "repeat_int32"
backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] optional: true },
        { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] optional: true } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] },
         { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]
"""


def write_model(repo, name, config, versions=(1,), *, files=None):
    """Writes `repo/name/config.pbtxt` (the text `config`), makes a folder for each of
    `versions`, and writes `files` ({file name: text}, UTF-8) into the first version's
    folder. Existing folders are reused."""
    os.makedirs(os.path.join(repo, name), exist_ok=True)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config)
    for v in versions:
        os.makedirs(os.path.join(repo, name, str(v)), exist_ok=True)
    for file_name, content in (files or {}).items():
        with open(os.path.join(repo, name, str(versions[0]), file_name), "w", encoding="utf-8") as f:
            f.write(content)


def thread_names_by_tid(pid):
    """{tid: name (/proc/PID/task/TID/comm)} of a process's threads; one that ends meanwhile is skipped."""
    names = {}
    task_dir = f"/proc/{pid}/task"
    for task in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{task}/comm", encoding="utf-8") as f:
                names[int(task)] = f.read().strip()
        except FileNotFoundError:  # a thread that just ended
            pass
    return names


def thread_names(pid):
    """The names of a process's threads (see thread_names_by_tid)."""
    return list(thread_names_by_tid(pid).values())


def wait_for(predicate, timeout=30.0, interval=0.02):
    """Polls `predicate` every `interval` seconds until it returns a truthy value and
    returns that value; raises AssertionError when `timeout` seconds pass first."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not reached in time")

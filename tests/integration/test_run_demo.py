"""`make run`'s script (scripts/run_demo.sh), black box: with its three ports moved to
free ones it serves on them, prints its banner only once the server is ready, and every
command in the banner runs as printed and gets a 200 with a JSON answer. Stopped by the
script's PID (SIGTERM, forwarded to the server, which drains)."""

import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time

from infera_server import BINARY, ROOT, demo_repo

SCRIPT = os.path.join(ROOT, "scripts", "run_demo.sh")


def free_ports(n):
    """n distinct ports nothing listens on now (the kernel's ephemeral choice)."""
    sockets = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def get(port, path, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


class RunDemo:
    """scripts/run_demo.sh with its stdout and stderr merged into one ordered stream."""

    def __init__(self, env):
        run_env = dict(os.environ)
        run_env.update(env)
        self.process = subprocess.Popen([SCRIPT, BINARY, demo_repo()], cwd=ROOT, env=run_env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, errors="replace")
        self.lines = []
        self.arrivals = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            self.arrivals.put(line)
        self.arrivals.put(None)

    def wait_for_line(self, text, timeout):
        """The index of the first line containing `text`; fails if the output ends first."""
        deadline = time.time() + timeout
        seen = 0
        while True:
            for i in range(seen, len(self.lines)):
                if text in self.lines[i]:
                    return i
            seen = len(self.lines)
            try:
                if self.arrivals.get(timeout=max(0.01, deadline - time.time())) is None:
                    for i in range(seen, len(self.lines)):
                        if text in self.lines[i]:
                            return i
                    raise AssertionError(f"output ended without {text!r}:\n" + self.output())
            except queue.Empty:
                raise AssertionError(f"no {text!r} in {timeout} s:\n" + self.output())

    def output(self):
        return "\n".join(self.lines)

    def stop(self, server_pid=None):
        """SIGTERM to the script (it forwards it to the server, which drains); then the
        server's process group is gone."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if server_pid:
            try:
                os.killpg(server_pid, 0)
            except ProcessLookupError:
                return
            os.killpg(server_pid, signal.SIGKILL)  # still there: the test fails below
            raise AssertionError(f"the server (pid {server_pid}) outlived the script:\n" + self.output())


def banner_commands(lines):
    """The commands of the banner: blocks after a '# ...' comment line, up to a blank line."""
    start = next(i for i, line in enumerate(lines) if "One request per kind" in line)
    commands, current = [], None
    for line in lines[start + 1:]:
        stripped = line.strip()
        if stripped.startswith("More ("):
            break
        if stripped.startswith("#"):
            current = []
            commands.append((stripped, current))
        elif stripped and current is not None:
            current.append(line[4:])
        elif not stripped:
            current = None
    return [(comment, "\n".join(body)) for comment, body in commands if body]


def test_banner_after_ready_on_moved_ports_and_every_command_answers():
    http_port, grpc_port, metrics_port = free_ports(3)
    demo = RunDemo({"INFERA_HTTP_PORT": str(http_port), "INFERA_GRPC_PORT": str(grpc_port),
                    "INFERA_METRICS_PORT": str(metrics_port)})
    server_pid = None
    try:
        banner = demo.wait_for_line("infera is ready (pid", timeout=300)
        # Readiness was reached before the banner: the server's own "ready" log line comes
        # first in the merged stream, and the health check says so now.
        ready_log = demo.wait_for_line("server is ready", timeout=1)
        assert ready_log < banner, demo.output()
        assert get(http_port, "/v2/health/ready")[0] == 200
        server_pid = int(demo.lines[banner].split("(pid ")[1].split(")")[0])
        demo.wait_for_line("Ctrl-C drains", timeout=10)
        text = "\n".join(demo.lines[banner:])

        # Every port where it says, each one the moved one.
        assert f"http://localhost:{http_port}/console" in text
        assert f"gRPC localhost:{grpc_port}" in text
        assert f"http://localhost:{metrics_port}/metrics" in text
        assert get(http_port, "/console")[0] == 200
        status, metrics = get(metrics_port, "/metrics")
        assert status == 200 and b"nv_inference" in metrics
        with socket.create_connection(("127.0.0.1", grpc_port), timeout=5):
            pass
        for default in (8000, 8001, 8002):
            assert f":{default}" not in text

        commands = banner_commands(demo.lines)
        kinds = " ".join(comment for comment, _ in commands)
        for kind in ("LLM chat", "image classification", "text", "ranking"):
            assert kind in kinds, kinds
        expected = {"LLM chat": "choices", "image classification": "LABELS", "text": "embedding",
                    "ranking": "score"}
        for comment, command in commands:
            # Exactly as printed, in the directory the banner names; curl -f fails on an
            # HTTP status >= 400 and pipefail passes that on.
            result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=ROOT,
                                    capture_output=True, timeout=120)
            assert result.returncode == 0, f"{comment}\n{command}\n{result.stderr!r}\n{result.stdout[:500]!r}"
            answer = json.loads(result.stdout)  # readable: JSON, no binary tensors
            key = next(v for k, v in expected.items() if comment.startswith("# " + k))
            assert key in json.dumps(answer), (comment, answer)
    finally:
        demo.stop(server_pid)
    assert demo.process.returncode == 0, demo.output()  # drained and exited cleanly


def test_a_port_in_use_is_a_clear_error_not_a_banner():
    """The gRPC port taken (by a Triton, say): the server cannot start, the script says
    so in one line naming the port variables, and no banner is printed."""
    http_port, grpc_port, metrics_port = free_ports(3)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", grpc_port))
        taken.listen()
        demo = RunDemo({"INFERA_HTTP_PORT": str(http_port), "INFERA_GRPC_PORT": str(grpc_port),
                        "INFERA_METRICS_PORT": str(metrics_port), "INFERA_READY_TIMEOUT": "120"})
        try:
            demo.wait_for_line("before it was ready", timeout=150)
            demo.process.wait(timeout=30)
        finally:
            demo.stop()
    assert demo.process.returncode != 0
    assert "INFERA_GRPC_PORT" in demo.output()
    assert "infera is ready" not in demo.output()


def test_bad_port_value_is_one_line_exit_2():
    result = subprocess.run([SCRIPT, BINARY, demo_repo()], cwd=ROOT, capture_output=True, text=True,
                            env=dict(os.environ, INFERA_METRICS_PORT="80x"), timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip() == "make run: INFERA_METRICS_PORT=80x is not a port (1 to 65535)"

"""Observability, black box: /metrics scraped by a real Prometheus (Debian package)
matches the load we sent; promtool finds nothing to complain about; spans reach an
OTLP/HTTP receiver with the right parent/child ids; a dead collector adds no latency;
log settings change at run time."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from infera_server import InferaServer, metric_value
from otlp_collector import Collector
from promtool_check import promtool_problems

SIMPLE = """
name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
dynamic_batching { }
"""
PAYLOAD = json.dumps({"inputs": [
    {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]},
    {"name": "INPUT1", "shape": [1, 4], "datatype": "INT32", "data": [1, 1, 1, 1]}]})
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-obs-") as path:
        os.makedirs(os.path.join(path, "simple", "1"))
        with open(os.path.join(path, "simple", "config.pbtxt"), "w") as f:
            f.write(SIMPLE)
        yield path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metrics_port(server):
    import re
    return int(re.search(r"Metrics server listening on [^\s]*:(\d+)", server.log()).group(1))


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return r.read().decode()


def test_metrics_on_both_ports_pass_promtool(repo):
    server = InferaServer(repo, "--metrics-port", "0")
    try:
        server.wait_ready()
        for _ in range(5):
            assert server.infer("simple", PAYLOAD.encode())[0] == 200
        server.infer("simple", b"{bad json")
        on_http = scrape(server.port)
        on_metrics_port = scrape(metrics_port(server))
        for text in (on_http, on_metrics_port):
            assert metric_value(text, "infera_requests_total", model="simple", outcome="success") == 5
            assert metric_value(text, "infera_request_duration_seconds_count", model="simple") == 5
            assert metric_value(text, "infera_model_ready", model="simple", version="1") == 1
            assert metric_value(text, "infera_server_ready") == 1
            assert metric_value(text, "process_resident_memory_bytes") > 0
        assert metric_value(on_http, "infera_http_requests_total", code="400") >= 1
        # Nothing to complain about but Triton's own names (test_triton_metrics.py).
        assert promtool_problems(on_http) == []
        # The metrics port serves nothing else.
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{metrics_port(server)}/v2/health/live", timeout=5)
        assert err.value.code == 404
    finally:
        server.stop()


def prometheus_query(port, query):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def wait_prometheus_ready(port, process, timeout=60):
    """Prometheus takes a few seconds to open its TSDB and listen: wait (bounded) for /-/ready."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert process.poll() is None, f"prometheus exited with {process.returncode}"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"prometheus not ready on port {port} after {timeout} s")


def test_real_prometheus_sees_what_the_load_sent(repo, tmp_path):
    server = InferaServer(repo, "--metrics-port", "0")
    prom_port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(f"""
global: {{ scrape_interval: 1s, evaluation_interval: 1s }}
scrape_configs:
  - job_name: infera
    static_configs: [ {{ targets: ["127.0.0.1:{metrics_port(server)}"] }} ]
""")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--web.listen-address=127.0.0.1:{prom_port}",
         f"--storage.tsdb.path={tmp_path / 'data'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server.wait_ready()
        latencies = []
        conn = server.connection()
        for _ in range(300):  # a short, bounded load
            started = time.time()
            conn.request("POST", "/v2/models/simple/infer", PAYLOAD)
            response = conn.getresponse()
            response.read()
            assert response.status == 200
            latencies.append(time.time() - started)
        conn.close()
        wait_prometheus_ready(prom_port, prometheus)
        # Wait (bounded) until Prometheus has scraped the final counts.
        query = 'sum(infera_requests_total{model="simple",outcome="success"})'
        deadline = time.time() + 60
        while time.time() < deadline and prometheus_query(prom_port, query) != 300:
            time.sleep(0.5)
        assert prometheus_query(prom_port, query) == 300
        assert prometheus_query(prom_port, 'sum(infera_inferences_total{model="simple"})') == 300
        assert prometheus_query(prom_port, 'sum(infera_request_duration_seconds_count{model="simple"})') == 300
        # The aggregatable histogram gives a P99 no larger than the client's slowest
        # request (server time is part of it), rounded up to a bucket bound.
        p99 = prometheus_query(
            prom_port, 'histogram_quantile(0.99, sum by (le) (infera_request_duration_seconds_bucket{model="simple"}))')
        bounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
        ceiling = next(b for b in bounds if b >= max(latencies))
        assert 0 < p99 <= ceiling, (p99, max(latencies))
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        server.stop()


def test_spans_reach_the_collector_with_parent_child_ids(repo):
    collector = Collector()
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{collector.port}/v1/traces",
                          "--trace-rate", "0")
    try:
        server.wait_ready()
        status, headers, _ = server.infer("simple", PAYLOAD.encode(), headers={"traceparent": PARENT})
        assert status == 200
        assert headers["traceparent"].startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
        # Not sampled (flag 00, rate 0): no trace.
        server.infer("simple", PAYLOAD.encode(),
                     headers={"traceparent": PARENT[:-2] + "00"})
        spans = collector.wait_for(lambda s: len(s) >= 5)
        assert collector.requests[0][0] == "/v1/traces"
        roots = [s for s in spans if s["kind"] == 2]
        assert len(roots) == 1, spans
        root = roots[0]
        assert root["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736"
        assert root["parentSpanId"] == "00f067aa0ba902b7"
        children = {s["name"]: s for s in spans if s["kind"] == 1}
        assert set(children) == {"parse", "queue", "compute", "serialize"}
        for child in children.values():
            assert child["traceId"] == root["traceId"]
            assert child["parentSpanId"] == root["spanId"]
            assert int(root["startTimeUnixNano"]) <= int(child["startTimeUnixNano"])
            assert int(child["endTimeUnixNano"]) <= int(root["endTimeUnixNano"])
        assert headers["traceparent"].split("-")[2] == root["spanId"]
    finally:
        server.stop()
        collector.close()


def test_dead_or_hanging_collector_adds_no_latency(repo):
    blackhole = Collector(blackhole=True)  # accepts, never answers: each export waits its timeout
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{blackhole.port}/v1/traces",
                          "--trace-rate", "1")
    try:
        server.wait_ready()
        conn = server.connection()
        slowest = 0
        for _ in range(200):
            started = time.time()
            conn.request("POST", "/v2/models/simple/infer", PAYLOAD)
            response = conn.getresponse()
            response.read()
            assert response.status == 200
            slowest = max(slowest, time.time() - started)
        conn.close()
        # The export timeout is 1 s: had export been on the request path, requests
        # would take that long.
        assert slowest < 0.5, slowest
    finally:
        server.stop()
        blackhole.close()


def test_log_level_changes_at_run_time_and_request_logs_carry_trace_ids(repo):
    collector = Collector()
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{collector.port}/v1/traces",
                          "--log-format", "json", "--allow-admin-api", "logging")
    try:
        server.wait_ready()
        status, _, body = server.request("GET", "/v2/logging")
        assert status == 200 and json.loads(body)["log_verbose_level"] == 0
        status, _, body = server.request("POST", "/v2/logging", json.dumps({"log_verbose_level": 1}))
        assert status == 200 and json.loads(body)["log_verbose_level"] == 1
        server.infer("simple", json.dumps({**json.loads(PAYLOAD), "id": "req-7"}).encode(),
                     headers={"traceparent": PARENT})
        status, _, body = server.request("POST", "/v2/logging", json.dumps({"log_verbose_level": "loud"}))
        assert status == 400 and "log_verbose_level" in json.loads(body)["error"]
        deadline = time.time() + 10
        while time.time() < deadline and "req-7" not in server.log():
            time.sleep(0.05)
        line = next(l for l in server.log().splitlines() if "req-7" in l)
        record = json.loads(line)
        assert record["level"] == "verbose"
        assert "trace_id=4bf92f3577b34da6a3ce929d0e0e4736" in record["msg"]
    finally:
        server.stop()
        collector.close()

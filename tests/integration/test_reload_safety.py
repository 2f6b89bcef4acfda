"""Reloading a version that is already loaded (same model name and version number) and
then serving it, black box (issue 13, finding 0).

A reload loads the new version before the retiring one goes; both have the same
Prometheus labels. The retiring one's unload used to remove the series the new one
records into: a heap use-after-free at the next inference (SIGSEGV, heap corruption, or
a deadlocked I/O thread), and the series vanished from /metrics. Each test reloads,
waits until the old version is gone, infers, and checks the series on /metrics keep
counting every request — before and after the reload — and that the server still
exits 0."""

import json
import os
import re
import tempfile
import time

from infera_server import InferaServer

CONFIG = """
name: "m"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters { key: "delay_ms" value { string_value: "DELAY" } }
"""


def write_model(repo, delay_ms):
    os.makedirs(os.path.join(repo, "m", "1"), exist_ok=True)
    path = os.path.join(repo, "m", "config.pbtxt")
    with open(path + ".tmp", "w") as f:
        f.write(CONFIG.replace("DELAY", str(delay_ms)))
    os.replace(path + ".tmp", path)  # the poller never reads half a file


def infer_ok(server, value):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [value, value]}]}
    status, _, data = server.infer("m", body)
    assert status == 200, (status, data, server.log()[-3000:])
    assert json.loads(data)["outputs"][0]["data"] == [value, value]


def success_count(server):
    status, _, text = server.request("GET", "/metrics")
    assert status == 200
    match = re.search(r'^infera_requests_total\{model="m",outcome="success",version="1"\} (\S+)$',
                      text.decode(), re.M)
    assert match, "the series of m version 1 are missing from /metrics"
    return float(match.group(1))


def wait_for_log(server, needle, count, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.log().count(needle) >= count:
            return
        assert server.process.poll() is None, server.log()
        time.sleep(0.05)
    raise AssertionError(f"'{needle}' not logged {count} times:\n{server.log()}")


def infer_and_check_metrics(server, already):
    """Infers a few times after the reload; the shared series count every request."""
    for i in range(5):
        infer_ok(server, float(i))
        assert success_count(server) == already + i + 1
    assert server.request("GET", "/v2/health/live")[0] == 200


def test_poll_mode_reload_of_a_loaded_version_then_infer():
    with tempfile.TemporaryDirectory(prefix="infera-reload-poll-") as repo:
        write_model(repo, delay_ms=1)
        server = InferaServer(repo, "--model-control-mode", "poll", "--repository-poll-secs", "1")
        try:
            server.wait_ready()
            infer_ok(server, 1.0)
            infer_ok(server, 2.0)
            assert success_count(server) == 2
            write_model(repo, delay_ms=2)  # version 1 again, with a changed config
            # The new load, then the retirement of the one it replaces.
            wait_for_log(server, "loaded model 'm' version 1", 2)
            wait_for_log(server, "unloaded model 'm' version 1", 1)
            infer_and_check_metrics(server, already=2)
        finally:
            server.stop()


def test_explicit_mode_load_with_changed_override_then_infer():
    with tempfile.TemporaryDirectory(prefix="infera-reload-explicit-") as repo:
        write_model(repo, delay_ms=1)
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "m")
        try:
            server.wait_ready()
            infer_ok(server, 1.0)
            assert success_count(server) == 1
            override = {"name": "m", "backend": "fault_injection", "max_batch_size": 4,
                        "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [2]}],
                        "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [2]}],
                        "parameters": {"delay_ms": {"string_value": "2"}}}
            body = json.dumps({"parameters": {"config": json.dumps(override)}})
            # The load answers after the version it replaced has been drained and freed.
            status, _, data = server.request("POST", "/v2/repository/models/m/load", body)
            assert status == 200, data
            assert server.log().count("unloaded model 'm' version 1") == 1
            infer_and_check_metrics(server, already=1)
            # And once more, back to the repository's config (no override).
            status, _, data = server.request("POST", "/v2/repository/models/m/load", "")
            assert status == 200, data
            infer_and_check_metrics(server, already=6)
        finally:
            server.stop()

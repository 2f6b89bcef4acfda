"""Model lifecycle under load, black box: hot reload in poll mode, the repository API in
explicit mode (with admin protection), canary split / stickiness / automatic rollback,
and SIGTERM with a shutdown delay. In every case requests are counted: none may fail
(except a deliberately failing canary's, which must stop at rollback) and none may be
lost."""

import json
import os
import shutil
import tempfile
import threading
import time

import pytest

from infera_server import InferaServer

FAULTY = """
name: "{name}"
backend: "fault_injection"
max_batch_size: 4
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
instance_group [ {{ count: 2 }} ]
parameters {{ key: "delay_ms" value {{ string_value: "2" }} }}
{extra}
"""


def write_model(repo, name, extra="", versions=(1,)):
    os.makedirs(os.path.join(repo, name), exist_ok=True)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(FAULTY.format(name=name, extra=extra))
    for v in versions:
        os.makedirs(os.path.join(repo, name, str(v)), exist_ok=True)


def payload(value, **extra):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [value, value]}]}
    body.update(extra)
    return json.dumps(body).encode()


class Load:
    """Background clients that send to `model` until stopped, counting every outcome."""

    def __init__(self, server, model, clients=4):
        self.server, self.model = server, model
        self.results = []  # (status, model_version or error)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.sent = 0
        self.threads = [threading.Thread(target=self._run, args=(k,)) for k in range(clients)]
        for t in self.threads:
            t.start()

    def _run(self, k):
        conn = self.server.connection(timeout=30)
        i = 0
        while not self.stopping.is_set():
            value = float(k * 100000 + i)
            with self.lock:
                self.sent += 1
            try:
                conn.request("POST", f"/v2/models/{self.model}/infer", payload(value))
                response = conn.getresponse()
                body = json.loads(response.read())
                ok = response.status == 200 and body["outputs"][0]["data"] == [value, value]
                outcome = (200 if ok else response.status, body.get("model_version", body.get("error")))
            except Exception as e:  # noqa: BLE001 - a lost request is the failure we count
                outcome = ("exception", repr(e))
                conn.close()
                conn = self.server.connection(timeout=30)
            with self.lock:
                self.results.append(outcome)
            i += 1
        conn.close()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()
        return self.results


def wait_for(predicate, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_poll_mode_replaces_a_version_under_load_without_failures():
    with tempfile.TemporaryDirectory(prefix="infera-poll-") as repo:
        write_model(repo, "m")
        server = InferaServer(repo, "--model-control-mode", "poll", "--repository-poll-secs", "1")
        try:
            server.wait_ready()
            load = Load(server, "m")
            time.sleep(0.5)
            os.makedirs(os.path.join(repo, "m", "2"))  # a new version appears
            assert wait_for(lambda: server.get_json("/v2/models/m")[1]["versions"] == ["2"])
            time.sleep(0.5)
            results = load.stop()
            assert len(results) == load.sent  # nothing lost
            failed = [r for r in results if r[0] != 200]
            assert not failed, failed[:5]
            versions = [r[1] for r in results]
            assert "1" in versions and "2" in versions and versions[-1] == "2"
            status, index = server.request("POST", "/v2/repository/index", "")[0:3:2]
            entries = json.loads(index)
            assert {"name": "m", "version": "2", "state": "READY", "reason": ""}.items() <= \
                {k: v for e in entries if e.get("version") == "2" for k, v in e.items()}.items()
            # A broken config leaves version 2 serving; the index says why.
            with open(os.path.join(repo, "m", "config.pbtxt"), "a") as f:
                f.write("\nnot_a_field: 1\n")
            assert wait_for(lambda: "reload failed" in server.request("POST", "/v2/repository/index", "")[2].decode())
            assert server.infer("m", payload(1.0))[0] == 200
        finally:
            server.stop()


def test_explicit_mode_repository_api_with_admin_token():
    with tempfile.TemporaryDirectory(prefix="infera-explicit-") as repo:
        write_model(repo, "a")
        write_model(repo, "b")
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "a",
                              "--admin-token", "s3cret")
        auth = {"Authorization": "Bearer s3cret"}
        try:
            server.wait_ready()
            assert server.infer("a", payload(1.0))[0] == 200
            assert server.infer("b", payload(1.0))[0] == 404
            index = json.loads(server.request("POST", "/v2/repository/index", "")[2])
            assert any(e["name"] == "b" and e["reason"] == "not loaded" for e in index)
            assert server.request("POST", "/v2/repository/models/b/load", "")[0] == 401
            assert server.request("POST", "/v2/repository/models/b/load", "",
                                  {"Authorization": "Bearer wrong"})[0] == 401
            status, _, body = server.request("POST", "/v2/repository/models/b/load", "", auth)
            assert status == 200, body
            assert server.infer("b", payload(2.0))[0] == 200
            # Load with a config override (Triton's parameters.config).
            override = json.dumps({"parameters": {"config": json.dumps({
                "name": "b", "backend": "fault_injection", "max_batch_size": 4,
                "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [2]}],
                "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [2]}]})}})
            status, _, body = server.request("POST", "/v2/repository/models/b/load", override, auth)
            assert status == 200, body
            status, _, body = server.request("POST", "/v2/repository/models/b/load",
                                             json.dumps({"parameters": {"config": "{bad"}}), auth)
            assert status == 400 and "config" in json.loads(body)["error"]
            status, _, body = server.request("POST", "/v2/repository/models/a/unload", "", auth)
            assert status == 200, body
            assert server.infer("a", payload(1.0))[0] == 503
            assert server.request("GET", "/v2/health/ready")[0] == 200  # unloaded != required
            assert server.request("POST", "/v2/repository/models/..%2Fetc/load", "", auth)[0] == 400
            assert server.request("POST", "/v2/repository/models/missing/load", "", auth)[0] == 404
        finally:
            server.stop()


def test_repository_api_is_refused_outside_explicit_mode():
    with tempfile.TemporaryDirectory(prefix="infera-none-") as repo:
        write_model(repo, "a")
        server = InferaServer(repo)
        try:
            server.wait_ready()
            status, _, body = server.request("POST", "/v2/repository/models/a/unload", "")
            assert status == 409 and "explicit" in json.loads(body)["error"]
            assert server.infer("a", payload(1.0))[0] == 200
        finally:
            server.stop()


CANARY = """
version_policy {{ specific {{ versions: [ 1, 2 ] }} }}
parameters {{ key: "canary.version" value {{ string_value: "2" }} }}
parameters {{ key: "canary.weight_percent" value {{ string_value: "20" }} }}
parameters {{ key: "canary.min_requests" value {{ string_value: "50" }} }}
parameters {{ key: "canary.window_secs" value {{ string_value: "30" }} }}
{fault}
"""


def send_keyed(server, count, start=0):
    versions = {}
    statuses = []
    conn = server.connection()
    for user in range(start, start + count):
        conn.request("POST", "/v2/models/m/infer", payload(float(user), parameters={"routing_key": f"user{user}"}))
        response = conn.getresponse()
        body = json.loads(response.read())
        statuses.append(response.status)
        versions[user] = body.get("model_version")
    conn.close()
    return versions, statuses


def test_canary_split_is_sticky_and_near_the_weight():
    with tempfile.TemporaryDirectory(prefix="infera-canary-") as repo:
        write_model(repo, "m", CANARY.format(fault=""), versions=(1, 2))
        server = InferaServer(repo)
        try:
            server.wait_ready()
            first, statuses = send_keyed(server, 1000)
            assert set(statuses) == {200}
            share = sum(1 for v in first.values() if v == "2") / len(first)
            assert 0.15 <= share <= 0.25, share
            again, _ = send_keyed(server, 1000)
            assert again == first  # sticky by routing key
            # The header works as a routing key too, and explicit versions are honoured.
            status, _, body = server.infer("m", payload(1.0), version=2)
            assert status == 200 and json.loads(body)["model_version"] == "2"
        finally:
            server.stop()


@pytest.mark.parametrize("fault,why", [
    ('parameters { key: "failure_rate@2" value { string_value: "0.3" } }', "error rate"),
    ('parameters { key: "delay_ms@2" value { string_value: "40" } }', "P99"),
])
def test_bad_canary_is_rolled_back_automatically(fault, why):
    with tempfile.TemporaryDirectory(prefix="infera-rollback-") as repo:
        write_model(repo, "m", CANARY.format(fault=fault), versions=(1, 2))
        server = InferaServer(repo)
        try:
            server.wait_ready()
            rolled_back = False
            sent = 0
            while sent < 4000 and not rolled_back:
                send_keyed(server, 200, start=sent)
                sent += 200
                index = server.request("POST", "/v2/repository/index", "")[2].decode()
                rolled_back = wait_for(lambda: "rolled back" in server.log(), timeout=1.5)
            assert rolled_back, server.log()[-2000:]
            assert why in server.log()
            # After the rollback nothing goes to the canary, and nothing fails.
            versions, statuses = send_keyed(server, 500, start=100000)
            assert set(statuses) == {200}
            assert set(versions.values()) == {"1"}
            metrics = server.request("GET", "/metrics")[2].decode()
            assert 'infera_canary_state{model="m"} 2' in metrics
        finally:
            server.stop()


def test_sigterm_with_shutdown_delay_fails_nothing():
    with tempfile.TemporaryDirectory(prefix="infera-drain-") as repo:
        write_model(repo, "m")
        server = InferaServer(repo, "--shutdown-delay-secs", "2")
        try:
            server.wait_ready()
            load = Load(server, "m")
            time.sleep(0.5)
            server.process.send_signal(15)
            assert wait_for(lambda: server.request("GET", "/v2/health/ready")[0] == 400, timeout=5)
            time.sleep(0.5)  # the load balancer notices; clients move away
            results = load.stop()
            assert len(results) == load.sent
            assert all(r[0] == 200 for r in results), [r for r in results if r[0] != 200][:5]
            server.process.wait(timeout=30)
            assert server.process.returncode == 0
        finally:
            server.stop()

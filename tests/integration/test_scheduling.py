"""Scheduling over HTTP: dynamic batching gives every client its own correct result,
overload is answered with fast 429s (none lost, none answered twice), and priority,
timeout and queue-policy parameters behave as Triton's."""

import json
import tempfile
import threading
import time

import pytest

from infera_server import InferaServer, write_model

ADD_SUB = """
name: "{name}"
backend: "add_sub"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }}, {{ name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }}, {{ name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] }} ]
instance_group [ {{ count: 1 }} ]
{extra}
"""

SLOW = """
name: "{name}"
backend: "fault_injection"
max_batch_size: 4
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
instance_group [ {{ count: 1 }} ]
parameters {{ key: "delay_ms" value {{ string_value: "{delay_ms}" }} }}
{extra}
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-sched-") as repo:
        write_model(repo, "batched", ADD_SUB.format(
            name="batched", extra="dynamic_batching { max_queue_delay_microseconds: 2000 }"))
        write_model(repo, "unbatched", ADD_SUB.format(name="unbatched", extra=""))
        write_model(repo, "slo", ADD_SUB.format(
            name="slo", extra='dynamic_batching { }\nparameters { key: "latency_slo_ms" value { string_value: "20" } }'))
        write_model(repo, "tiny_queue", SLOW.format(
            name="tiny_queue", delay_ms=50,
            extra="dynamic_batching { default_queue_policy { max_queue_size: 2 } }"))
        write_model(repo, "timeouts", SLOW.format(
            name="timeouts", delay_ms=300, extra="""dynamic_batching {
              priority_levels: 2 default_priority_level: 2
              default_queue_policy { allow_timeout_override: true }
              priority_queue_policy { key: 1 value { default_timeout_microseconds: 100000 timeout_action: DELAY } }
            }"""))
        s = InferaServer(repo)
        s.wait_ready()
        assert "server is ready" in s.log(), s.log()
        yield s
        s.stop()


def add_sub_payload(a, b, rows=1, **extra):
    payload = {"inputs": [{"name": "INPUT0", "shape": [rows, 4], "datatype": "INT32", "data": a},
                          {"name": "INPUT1", "shape": [rows, 4], "datatype": "INT32", "data": b}]}
    payload.update(extra)
    return payload


def slow_payload(value, **extra):
    payload = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [value, value]}]}
    payload.update(extra)
    return payload


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    return body["model_stats"][0]


@pytest.mark.parametrize("model", ["batched", "unbatched", "slo"])
def test_concurrent_clients_get_their_own_results(server, model):
    errors = []
    per_client = 25

    def client(k):
        conn = server.connection()
        try:
            for i in range(per_client):
                rows = 1 + (k + i) % 3  # multi-row requests are packed and split back
                a = [k * 10000 + i * 10 + j for j in range(4 * rows)]
                b = [k] * (4 * rows)
                conn.request("POST", f"/v2/models/{model}/infer", json.dumps(add_sub_payload(a, b, rows)))
                response = conn.getresponse()
                body = response.read()
                if response.status != 200:
                    errors.append((k, i, response.status, body))
                    continue
                out = {o["name"]: o for o in json.loads(body)["outputs"]}
                if (out["OUTPUT0"]["data"] != [x + k for x in a] or out["OUTPUT1"]["data"] != [x - k for x in a]
                        or out["OUTPUT0"]["shape"] != [rows, 4]):
                    errors.append((k, i, "wrong result"))
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    s = stats(server, model)
    requests = 16 * per_client
    assert s["inference_stats"]["success"]["count"] == requests
    rows = sum(1 + (k + i) % 3 for k in range(16) for i in range(per_client))
    assert s["inference_count"] == rows
    if model == "unbatched":
        assert s["execution_count"] == requests
    else:
        # Batching at work: fewer executions than requests, none over max_batch_size.
        assert s["execution_count"] < requests
        assert all(b["batch_size"] <= 8 for b in s["batch_stats"])
        assert sum(b["compute_infer"]["count"] for b in s["batch_stats"]) == s["execution_count"]


def test_overload_gets_fast_429s_and_nothing_is_lost(server):
    results = []
    lock = threading.Lock()

    def client(k):
        conn = server.connection()
        try:
            for i in range(5):
                started = time.time()
                conn.request("POST", "/v2/models/tiny_queue/infer", json.dumps(slow_payload(k * 100 + i)))
                response = conn.getresponse()
                body = response.read()
                with lock:
                    results.append((response.status, response.getheader("Retry-After"),
                                    time.time() - started, body, k * 100 + i))
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 60  # every request answered exactly once
    ok = [r for r in results if r[0] == 200]
    rejected = [r for r in results if r[0] == 429]
    assert len(ok) + len(rejected) == 60, [r[0] for r in results]
    assert ok and rejected
    for status, retry_after, elapsed, body, value in rejected:
        assert retry_after is not None and int(retry_after) >= 1
        assert json.loads(body)["error"].startswith("Exceeds maximum queue size: model")  # Triton's text leads
        assert "queue is full" in json.loads(body)["error"]
        assert elapsed < 1.0  # rejected at once, not after queueing
    for status, _, _, body, value in ok:
        assert json.loads(body)["outputs"][0]["data"] == [value, value]
    s = stats(server, "tiny_queue")
    assert s["inference_stats"]["success"]["count"] == len(ok)
    assert s["inference_stats"]["fail"]["count"] == len(rejected)
    server.assert_serving()


def test_request_timeout_and_priority_parameters(server):
    # Occupy the single 300 ms instance, then queue behind it.
    results = {}

    def send(name, payload):
        status, _, body = server.infer("timeouts", payload)
        results[name] = (status, body)

    blocker = threading.Thread(target=send, args=("blocker", slow_payload(1)))
    blocker.start()
    # An event, not a sleep: the blocker is executing (in flight, nothing queued).
    deadline = time.time() + 30
    while not (server.model_gauge("infera_inflight_requests", "timeouts") == 1
               and server.model_gauge("infera_queue_depth", "timeouts") == 0):
        assert time.time() < deadline, "the blocker never started executing"
        time.sleep(0.01)
    expiring = threading.Thread(target=send, args=("expiring", slow_payload(2, parameters={"timeout": 1000})))
    expiring.start()
    expiring.join()
    blocker.join()
    assert results["blocker"][0] == 200
    status, body = results["expiring"]
    assert status == 504, body
    assert "timed out" in json.loads(body)["error"]
    # A priority outside [1, priority_levels] is a clear 400.
    status, _, body = server.infer("timeouts", slow_payload(3, parameters={"priority": 7}))
    assert status == 400 and "priority" in json.loads(body)["error"]
    # Priority 1 (DELAY on timeout) still completes.
    status, _, body = server.infer("timeouts", slow_payload(4, parameters={"priority": 1}))
    assert status == 200, body

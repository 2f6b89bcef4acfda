"""Batching's second step over real sockets (docs/scheduling.md, "Batching that pays off:
second step"):

- an instance's share: with no preferred sizes and more than one instance, a batch runs
  as soon as ceil(max_batch_size / instances) rows are queued, not after the delay (the
  models here wait 30 s otherwise: a request answered at all proves it);
- a batch's responses leave its worker in one hand-off per I/O thread: every client gets
  its own answer, over many keep-alive connections spread over both I/O threads, and a
  client gone mid-batch does not disturb the others.
"""

import concurrent.futures
import http.client
import json
import socket
import tempfile

import pytest

from infera_server import InferaServer, wait_for, write_model

WIDTH = 3


def echo_config(name, delay_us, max_batch=8, instances=2):
    return f"""name: "{name}" backend: "identity" max_batch_size: {max_batch}
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ {WIDTH} ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ {WIDTH} ] }} ]
instance_group [ {{ count: {instances} kind: KIND_CPU }} ]
dynamic_batching {{ max_queue_delay_microseconds: {delay_us} }}
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-batching-completion-") as repo:
        # A share is 4 rows; without it a batch would wait 10 minutes for the delay.
        write_model(repo, "echo_share", echo_config("echo_share", 600_000_000))
        # Short delay: many clients, batches of whatever is queued.
        write_model(repo, "echo_fast", echo_config("echo_fast", 2_000, max_batch=64))
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


def payload(value):
    return {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, WIDTH],
                        "data": [value, value + 0.5, value + 0.25]}]}


def expected(value):
    return [value, value + 0.5, value + 0.25]


def infer_on(conn, model, value):
    """One request on a kept-alive connection: (status, OUTPUT0 data or the error)."""
    conn.request("POST", f"/v2/models/{model}/infer", body=json.dumps(payload(value)))
    response = conn.getresponse()
    body = json.loads(response.read())
    if response.status != 200:
        return response.status, body
    return 200, body["outputs"][0]["data"]


def infer(server, model, value):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        return infer_on(conn, model, value)
    finally:
        conn.close()


def concurrently(call, items):
    with concurrent.futures.ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(call, items, timeout=60))


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    entry = body["model_stats"][0]
    return entry["execution_count"], {b["batch_size"]: b["compute_infer"]["count"] for b in entry["batch_stats"]}


def test_a_share_runs_at_once_not_after_the_delay(server):
    executions0, sizes0 = stats(server, "echo_share")
    values = [float(i) for i in range(4)]
    results = concurrently(lambda v: infer(server, "echo_share", v), values)
    assert results == [(200, expected(v)) for v in values]
    executions1, sizes1 = stats(server, "echo_share")
    assert executions1 == executions0 + 1
    assert sizes1.get(4, 0) == sizes0.get(4, 0) + 1, (sizes0, sizes1)


def test_two_shares_run_as_two_batches_of_a_share(server):
    executions0, sizes0 = stats(server, "echo_share")
    values = [10.0 + i for i in range(8)]
    results = concurrently(lambda v: infer(server, "echo_share", v), values)
    assert results == [(200, expected(v)) for v in values]
    executions1, sizes1 = stats(server, "echo_share")
    assert executions1 == executions0 + 2
    assert sizes1.get(4, 0) == sizes0.get(4, 0) + 2, (sizes0, sizes1)


def test_every_client_gets_its_own_answer_from_coalesced_batches(server):
    # 48 keep-alive connections (spread over both I/O threads), 6 rounds each: every
    # answer must be the client's own input, whichever batch and hand-off carried it.
    clients, rounds = 48, 6

    def client(k):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            return [infer_on(conn, "echo_fast", 1000.0 * k + r) for r in range(rounds)]
        finally:
            conn.close()

    executions0, _ = stats(server, "echo_fast")
    results = concurrently(client, list(range(clients)))
    for k, answers in enumerate(results):
        assert answers == [(200, expected(1000.0 * k + r)) for r in range(rounds)], k
    executions1, _ = stats(server, "echo_fast")
    assert executions1 - executions0 < clients * rounds  # batched: fewer executions than requests


def test_a_client_gone_mid_batch_does_not_disturb_the_others(server):
    body = json.dumps(payload(-1.0)).encode()
    gone = []
    for _ in range(3):  # clients that send a request and close before any answer
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(b"POST /v2/models/echo_fast/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        gone.append(s)
    values = [500.0 + i for i in range(12)]
    with concurrent.futures.ThreadPoolExecutor(len(values)) as pool:
        futures = [pool.submit(infer, server, "echo_fast", v) for v in values]
        for s in gone:
            s.close()
        results = [f.result(timeout=60) for f in futures]
    assert results == [(200, expected(v)) for v in values]
    # The server keeps serving, on fresh and kept-alive connections alike.
    wait_for(lambda: server.request("GET", "/v2/health/ready")[0] == 200)
    assert concurrently(lambda v: infer(server, "echo_share", v), [7.0] * 4) == [(200, expected(7.0))] * 4

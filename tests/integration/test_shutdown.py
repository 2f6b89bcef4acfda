"""SIGTERM loses no admitted request, black box (issue 13, finding 5).

The server stops accepting at once, lets the model administration job in flight finish,
drains the models (queued requests run at once, without waiting for a batch to fill)
and only then stops its transports, so every request it admitted gets its full answer —
over HTTP and gRPC — and it exits 0 without waiting out --exit-timeout-secs.

The old order stopped the transports first (after waiting up to the exit timeout for
in-flight requests) and drained the models afterwards: requests still queued at that
point were executed, and their answers posted to a stopped server and never written.
"""

import json
import os
import re
import socket
import struct
import tempfile
import threading
import time

import grpc

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, demo_repo, write_model

BATCHED = """
name: "batched"
backend: "fault_injection"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "1500" } }
# A partial batch waits up to a minute for company: far longer than the exit timeout.
dynamic_batching { max_queue_delay_microseconds: 60000000 }
"""

# Loading takes a while: its warmup runs the slow model three times.
SLOW_LOADING = """
name: "slow"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "500" } }
model_warmup [ { name: "w" batch_size: 1 count: 3
                 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ]
"""

EXIT_TIMEOUT_SECS = 30


def gauge(server, name, model):
    text = server.request("GET", "/metrics")[2].decode()
    match = re.search(rf'^{name}\{{model="{model}",version="1"\}} (\S+)$', text, re.M)
    return float(match.group(1)) if match else None


def index_state(server, model):
    entries = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    return next((e.get("state") for e in entries if e["name"] == model), None)


def wait_until(predicate, what, server, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        assert server.process.poll() is None, server.log()
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}:\n{server.log()[-3000:]}")


class Outcomes:
    """Runs each call on its own thread and records what it returned or raised."""

    def __init__(self):
        self.results, self.threads, self.lock = {}, [], threading.Lock()

    def start(self, key, call):
        def run():
            try:
                result = call()
            except Exception as e:  # noqa: BLE001 - a lost answer is what the test counts
                result = ("exception", repr(e))
            with self.lock:
                self.results[key] = result
        thread = threading.Thread(target=run)
        thread.start()
        self.threads.append(thread)

    def join(self, timeout):
        deadline = time.time() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.time()))
        return dict(self.results)


def http_infer(server, value):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [value, value]}]}
    conn = server.connection(timeout=120)
    try:
        conn.request("POST", "/v2/models/batched/infer", json.dumps(body))
        response = conn.getresponse()
        data = response.read()
        if response.status != 200:
            return (response.status, data)
        return (200, json.loads(data)["outputs"][0]["data"])
    finally:
        conn.close()


def grpc_infer(stub, value):
    request = pb.ModelInferRequest(model_name="batched")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 2])
    tensor.contents.fp32_contents.extend([value, value])
    response = stub.ModelInfer(request, timeout=120)
    if response.raw_output_contents:
        return ("OK", list(struct.unpack("<2f", response.raw_output_contents[0])))
    return ("OK", list(response.outputs[0].contents.fp32_contents))


def test_sigterm_answers_every_admitted_request_then_exits_0():
    with tempfile.TemporaryDirectory(prefix="infera-shutdown-") as repo:
        write_model(repo, "batched", BATCHED)
        write_model(repo, "slow", SLOW_LOADING)
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "batched",
                              "--exit-timeout-secs", str(EXIT_TIMEOUT_SECS))
        channel = None
        try:
            server.wait_ready()
            channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            outcomes = Outcomes()
            # Eight requests fill a batch, which runs (1.5 s) ...
            for i in range(8):
                outcomes.start(("http", i), lambda v=float(i): http_infer(server, v))
            wait_until(lambda: gauge(server, "infera_inflight_requests", "batched") == 8,
                       "the first batch to run", server)
            # ... three more queue behind it, waiting for a batch that never fills.
            outcomes.start(("http", 8), lambda: http_infer(server, 8.0))
            outcomes.start(("http", 9), lambda: http_infer(server, 9.0))
            outcomes.start(("grpc", 10), lambda: grpc_infer(stub, 10.0))
            wait_until(lambda: gauge(server, "infera_queue_depth", "batched") == 3,
                       "three requests queued", server)
            # A model load in flight on the admin executor.
            outcomes.start("load", lambda: server.request("POST", "/v2/repository/models/slow/load", "")[0:3:2])
            wait_until(lambda: index_state(server, "slow") == "LOADING", "the load to start", server)

            stopped_at = time.time()
            server.process.send_signal(15)
            server.process.wait(timeout=EXIT_TIMEOUT_SECS + 30)
            exit_seconds = time.time() - stopped_at
            results = outcomes.join(timeout=30)

            for i in range(10):
                assert results.get(("http", i)) == (200, [float(i), float(i)]), (i, results, server.log())
            assert results.get(("grpc", 10)) == ("OK", [10.0, 10.0]), (results, server.log())
            assert results.get("load") == (200, b""), (results, server.log())
            assert server.process.returncode == 0, server.log()
            # It drained at once instead of waiting out the exit timeout.
            assert exit_seconds < EXIT_TIMEOUT_SECS, (exit_seconds, server.log())
            log = server.log()
            assert "loaded model 'slow' version 1" in log, log
        finally:
            if channel is not None:
                channel.close()
            server.stop()


def test_sigterm_refuses_queued_model_loads_and_finishes_the_running_one():
    """Loads still waiting for the admin executor at SIGTERM never start (503); the one
    running finishes and is answered."""
    with tempfile.TemporaryDirectory(prefix="infera-shutdown-admin-") as repo:
        for k in range(4):
            write_model(repo, f"slow{k}", SLOW_LOADING.replace('"slow"', f'"slow{k}"'))
        server = InferaServer(repo, "--model-control-mode", "explicit", "--model-load-thread-count", "1")
        try:
            server.wait_ready()
            outcomes = Outcomes()
            outcomes.start("slow0", lambda: server.request("POST", "/v2/repository/models/slow0/load", "")[0])
            wait_until(lambda: index_state(server, "slow0") == "LOADING", "the first load to start", server)
            for k in (1, 2, 3):
                outcomes.start(f"slow{k}",
                               lambda k=k: server.request("POST", f"/v2/repository/models/slow{k}/load", "")[0])
            # One worker: the other three wait in the executor's queue (nothing else
            # shows them; the HTTP in-flight gauge counts them with the running one).
            wait_until(lambda: (gauge_http_inflight(server) or 0) >= 5, "three loads queued", server)
            server.process.send_signal(15)
            server.process.wait(timeout=60)
            results = outcomes.join(timeout=30)
            assert results == {"slow0": 200, "slow1": 503, "slow2": 503, "slow3": 503}, (results, server.log())
            assert server.process.returncode == 0
            log = server.log()
            assert "loaded model 'slow0' version 1" in log
            assert "loaded model 'slow1'" not in log and "loaded model 'slow3'" not in log
        finally:
            server.stop()


def gauge_http_inflight(server):
    text = server.request("GET", "/metrics")[2].decode()
    match = re.search(r"^infera_http_inflight_requests (\S+)$", text, re.M)
    return float(match.group(1)) if match else None


def test_second_signal_exits_at_once():
    """A second SIGTERM during the drain exits at once with 1 (the drain would wait 20 s
    for the request in flight)."""
    with tempfile.TemporaryDirectory(prefix="infera-shutdown-twice-") as repo:
        write_model(repo, "batched", BATCHED.replace('"1500"', '"20000"'))
        server = InferaServer(repo, "--exit-timeout-secs", "60")
        try:
            server.wait_ready()
            outcomes = Outcomes()
            for i in range(8):  # a full batch: runs at once, for 20 s
                outcomes.start(i, lambda v=float(i): http_infer(server, v))
            wait_until(lambda: gauge(server, "infera_inflight_requests", "batched") == 8,
                       "the batch to run", server)
            server.process.send_signal(15)
            wait_until(lambda: "shutting down" in server.log(), "the drain to begin", server)
            started = time.time()
            server.process.send_signal(15)
            server.process.wait(timeout=30)
            assert server.process.returncode == 1, server.log()
            assert time.time() - started < 15
            assert "second signal 15: exiting without draining" in server.log()
            outcomes.join(timeout=30)
        finally:
            server.stop(expect_code=1)


def test_sigterm_lets_an_llm_stream_finish():
    """An OpenAI stream is served by the LLM engine, not a scheduler: the drain must keep
    the engine alive until the HTTP server has written the stream's end, not abort it."""
    fortune = os.path.join(demo_repo(), "fortune")
    assert os.path.isdir(fortune), f"demo LLM missing at {fortune}: run `make demo-models`"
    with tempfile.TemporaryDirectory(prefix="infera-shutdown-llm-") as repo:
        os.symlink(fortune, os.path.join(repo, "fortune"))
        server = InferaServer(repo, "--exit-timeout-secs", "60")
        try:
            server.wait_ready()
            conn = server.connection(timeout=120)
            body = {"model": "fortune", "prompt": "Once upon a time", "max_tokens": 64,
                    "ignore_eos": True, "stream": True}
            conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
            response = conn.getresponse()
            assert response.status == 200
            first = response.readline()  # the stream has begun
            assert first.startswith(b"data: "), first
            server.process.send_signal(15)
            rest = response.read().decode()
            conn.close()
            events = [line[len("data: "):] for line in rest.split("\n") if line.startswith("data: ")]
            assert events[-1] == "[DONE]", events[-3:]
            finish = json.loads(events[-2])["choices"][0]["finish_reason"]
            assert finish == "length", (finish, server.log()[-3000:])
            server.process.wait(timeout=60)
            assert server.process.returncode == 0, server.log()
        finally:
            server.stop()


SLOW_INFER = """
name: "slow_infer"
backend: "fault_injection"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "1500" } }
"""


def closed_by_peer(sock):
    """Blocks until the peer closes `sock`; True when it closed without sending anything."""
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


def test_sigterm_closes_requests_still_being_read_at_once():
    """Issue 26, item 8: a request whose body has not arrived (a slow-loris body) and an
    idle keep-alive connection are not in flight: the drain closes them at once instead
    of waiting the whole exit timeout for them, while a request already handed to its
    model is still answered."""
    with tempfile.TemporaryDirectory(prefix="infera-shutdown-slowloris-") as repo:
        write_model(repo, "slow_infer", SLOW_INFER)
        server = InferaServer(repo, "--exit-timeout-secs", str(EXIT_TIMEOUT_SECS),
                              "--http-read-timeout-secs", "120")
        slow_body = idle = None
        try:
            server.wait_ready()
            # The header and a first byte of a 100 kB body; the rest never comes.
            slow_body = socket.create_connection(("127.0.0.1", server.port), timeout=EXIT_TIMEOUT_SECS + 30)
            slow_body.sendall(b"POST /v2/models/slow_infer/infer HTTP/1.1\r\nHost: x\r\n"
                              b"Content-Length: 100000\r\n\r\n{")
            # A keep-alive connection that has been answered once and now waits.
            idle = server.connection(timeout=EXIT_TIMEOUT_SECS + 30)
            idle.request("GET", "/v2/health/live")
            assert idle.getresponse().read() == b""
            # A request in flight: its model runs for 1.5 s.
            outcomes = Outcomes()
            body = json.dumps({"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "FP32",
                                           "data": [1.0, 2.0]}]})
            outcomes.start("infer", lambda: server.request("POST", "/v2/models/slow_infer/infer", body)[0:3:2])
            wait_until(lambda: gauge(server, "infera_inflight_requests", "slow_infer") == 1,
                       "the request to run", server)

            stopped_at = time.time()
            server.process.send_signal(15)
            # The slow body's connection is closed without an answer, long before the exit
            # timeout (it used to hold the drain for all of it).
            assert closed_by_peer(slow_body), server.log()[-3000:]
            assert closed_by_peer(idle.sock), server.log()[-3000:]
            assert time.time() - stopped_at < 10, server.log()[-3000:]
            server.process.wait(timeout=EXIT_TIMEOUT_SECS + 30)
            exit_seconds = time.time() - stopped_at
            results = outcomes.join(timeout=30)
            status, answer = results.get("infer", (None, None))
            assert status == 200, (results, server.log()[-3000:])
            assert json.loads(answer)["outputs"][0]["data"] == [1.0, 2.0]
            assert server.process.returncode == 0, server.log()
            assert exit_seconds < 10, (exit_seconds, server.log()[-3000:])
        finally:
            for s in (slow_body, idle):
                if s is not None:
                    s.close()
            server.stop()

"""Ensembles (platform "ensemble", docs/pipelines.md), black box over HTTP and gRPC: a
diamond DAG whose values are checked, requested outputs and classification on ensemble
outputs, a failing step named in the error, a timeout reaching the step after a slow one,
client cancellation, statistics, a step model reloaded and unloaded under an ensemble
(explicit mode, where loading the ensemble loads its steps), load errors (cycle, unknown
step, dtype mismatch, 10 000 steps) in the repository index, and `infera bench`."""

import http.client
import json
import re
import socket
import struct
import subprocess
import tempfile
import threading

import grpc
import pytest

from grpc_stubs import pb, stub  # noqa: F401 (stub: pytest fixture)
from infera_server import BINARY, InferaServer, wait_for, write_model

STEP = """
name: "{name}"
backend: "{backend}"
max_batch_size: 8
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }}{second_input} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }}{second_output} ]
{extra}
"""
SECOND_IN = ', { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] }'
SECOND_OUT = ', { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 4 ] }'


def step_config(name, backend, extra=""):
    two = backend == "add_sub"
    return STEP.format(name=name, backend=backend, second_input=SECOND_IN if two else "",
                       second_output=SECOND_OUT if two else "", extra=extra)


def fault(ms=0, rate=0):
    return (f'parameters {{ key: "delay_ms" value {{ string_value: "{ms}" }} }}\n'
            f'parameters {{ key: "failure_rate" value {{ string_value: "{rate}" }} }}')


def step(model, inputs, outputs):
    ins = " ".join(f'input_map {{ key: "{k}" value: "{v}" }}' for k, v in inputs.items())
    outs = " ".join(f'output_map {{ key: "{k}" value: "{v}" }}' for k, v in outputs.items())
    return f'{{ model_name: "{model}" model_version: -1 {ins} {outs} }}'


def ensemble(name, inputs, outputs, steps, max_batch_size=4, dtype="TYPE_FP32", dims="[ 4 ]"):
    ins = ", ".join(f'{{ name: "{n}" data_type: {dtype} dims: {dims} }}' for n in inputs)
    outs = ", ".join(f'{{ name: "{n}" data_type: {dtype} dims: {dims} }}' for n in outputs)
    return (f'name: "{name}"\nplatform: "ensemble"\nmax_batch_size: {max_batch_size}\n'
            f'input [ {ins} ]\noutput [ {outs} ]\n'
            f'ensemble_scheduling {{ step [ {", ".join(steps)} ] }}\n')


# a = add_sub(X, Y) -> (s = X+Y, t = X-Y); b = identity(s); c = fault_injection(t);
# d = add_sub(b, c) -> SUM = 2X, DIFF = 2Y.
DIAMOND = ensemble("diamond", ["X", "Y"], ["SUM", "DIFF"], [
    step("pre", {"INPUT0": "X", "INPUT1": "Y"}, {"OUTPUT0": "s", "OUTPUT1": "t"}),
    step("left", {"INPUT0": "s"}, {"OUTPUT0": "ls"}),
    step("right", {"INPUT0": "t"}, {"OUTPUT0": "rt"}),
    step("post", {"INPUT0": "ls", "INPUT1": "rt"}, {"OUTPUT0": "SUM", "OUTPUT1": "DIFF"}),
])
FAILING = ensemble("failing", ["X"], ["Z"], [
    step("left", {"INPUT0": "X"}, {"OUTPUT0": "m"}),
    step("always_fail", {"INPUT0": "m"}, {"OUTPUT0": "Z"}),
])
SLOW = ensemble("slow_chain", ["X"], ["Z"], [
    step("slow", {"INPUT0": "X"}, {"OUTPUT0": "m"}),
    step("after_slow", {"INPUT0": "m"}, {"OUTPUT0": "Z"}),
])
CYCLE = ensemble("bad_cycle", ["X"], ["Z"], [
    step("left", {"INPUT0": "X"}, {"OUTPUT0": "Z"}),
    step("post", {"INPUT0": "p", "INPUT1": "q"}, {"OUTPUT0": "q", "OUTPUT1": "p"}),
])
UNKNOWN = ensemble("bad_unknown", ["X"], ["Z"], [step("no_such_model", {"INPUT0": "X"}, {"OUTPUT0": "Z"})])
DTYPE = ensemble("bad_dtype", ["X"], ["Z"], [step("left", {"INPUT0": "X"}, {"OUTPUT0": "Z"})], dtype="TYPE_INT32")
HUGE = ensemble("bad_huge", ["X"], ["Z"], [step("left", {"INPUT0": "X"}, {"OUTPUT0": "Z"})] +
                [step("left", {"INPUT0": f"h{i}"}, {"OUTPUT0": f"h{i + 1}"}) for i in range(10000)])


def write_repo(repo, with_bad=True):
    write_model(repo, "pre", step_config("pre", "add_sub"))
    write_model(repo, "left", step_config("left", "identity", "dynamic_batching { }"))
    write_model(repo, "right", step_config("right", "fault_injection", fault()))
    write_model(repo, "post", step_config("post", "add_sub"))
    write_model(repo, "always_fail", step_config("always_fail", "fault_injection", fault(0, 1)))
    write_model(repo, "slow", step_config("slow", "fault_injection", fault(300)))
    write_model(repo, "after_slow", step_config("after_slow", "fault_injection", fault()))
    write_model(repo, "diamond", DIAMOND)
    write_model(repo, "failing", FAILING)
    write_model(repo, "slow_chain", SLOW)
    write_model(repo, "text_identity", """
name: "text_identity"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
""")
    write_model(repo, "text_chain", ensemble("text_chain", ["TEXT"], ["ECHO"], [
        step("text_identity", {"INPUT0": "TEXT"}, {"OUTPUT0": "mid"}),
        step("text_identity", {"INPUT0": "mid"}, {"OUTPUT0": "ECHO"})], max_batch_size=0,
        dtype="TYPE_STRING", dims="[ -1 ]"))
    if with_bad:
        write_model(repo, "bad_cycle", CYCLE)
        write_model(repo, "bad_unknown", UNKNOWN)
        write_model(repo, "bad_dtype", DTYPE)
        write_model(repo, "bad_huge", HUGE)


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-ensemble-") as path:
        write_repo(path)
        yield path


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def diamond_body(x, y, **extra):
    body = {"inputs": [{"name": "X", "shape": [len(x) // 4, 4], "datatype": "FP32", "data": x},
                       {"name": "Y", "shape": [len(y) // 4, 4], "datatype": "FP32", "data": y}]}
    body.update(extra)
    return body


def metrics(server):
    port = int(re.search(r"Metrics server listening on [^\s]*:(\d+)", server.log()).group(1))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/metrics")
        return conn.getresponse().read().decode()
    finally:
        conn.close()


def slow_step_running(server):
    return 'infera_inflight_requests{model="slow",version="1"} 1' in metrics(server)


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    return body["model_stats"][0]


# --- HTTP ------------------------------------------------------------------------------

def test_diamond_values_over_http_json(server):
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.5, -1.0, 10.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    status, _, body = server.infer("diamond", diamond_body(x, y, id="r1"))
    assert status == 200, body
    answer = json.loads(body)
    assert answer["model_name"] == "diamond" and answer["id"] == "r1"
    outputs = {o["name"]: o for o in answer["outputs"]}
    assert outputs["SUM"]["shape"] == [2, 4] and outputs["SUM"]["datatype"] == "FP32"
    assert outputs["SUM"]["data"] == [2 * v for v in x]
    assert outputs["DIFF"]["data"] == [2 * v for v in y]


def test_diamond_binary_requested_output_and_classification(server):
    x = [1.0, 9.0, 3.0, 4.0]
    y = [0.0, 0.0, 0.0, 0.0]
    payload = diamond_body(x, y, outputs=[{"name": "SUM", "parameters": {"binary_data": True}}])
    status, headers, body = server.infer("diamond", payload)
    assert status == 200, body
    header_len = int(headers["Inference-Header-Content-Length"])
    header = json.loads(body[:header_len])
    assert [o["name"] for o in header["outputs"]] == ["SUM"]  # only what was asked
    assert struct.unpack("<4f", body[header_len:]) == tuple(2 * v for v in x)
    status, _, body = server.infer("diamond", diamond_body(
        x, y, outputs=[{"name": "SUM", "parameters": {"classification": 2}}]))
    assert status == 200, body
    out = json.loads(body)["outputs"][0]
    assert out["datatype"] == "BYTES" and out["data"] == ["18.000000:1", "8.000000:3"]


def test_bytes_tensors_through_an_ensemble(server, stub):
    words = ["héllo", "", "a longer sentence"]
    status, _, body = server.infer("text_chain", {"inputs": [
        {"name": "TEXT", "shape": [3], "datatype": "BYTES", "data": words}]})
    assert status == 200, body
    assert json.loads(body)["outputs"][0]["data"] == words
    request = pb.ModelInferRequest(model_name="text_chain")
    request.inputs.add(name="TEXT", datatype="BYTES", shape=[2])
    raw = b"".join(struct.pack("<I", len(w)) + w for w in (b"\x00\xff", b"jpeg?"))
    request.raw_input_contents.append(raw)
    response = stub.ModelInfer(request)
    assert response.raw_output_contents[0] == raw


def test_failing_step_is_named(server):
    status, _, body = server.infer("failing", {"inputs": [
        {"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    assert status == 500, body
    assert "ensemble 'failing' step 1 (model 'always_fail')" in json.loads(body)["error"]
    server.assert_serving()


def test_timeout_reaches_the_step_after_a_slow_one(server):
    before = stats(server, "after_slow")["inference_stats"]["success"]["count"]
    body = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}],
            "parameters": {"timeout": 50000}}
    status, _, data = server.infer("slow_chain", body)
    assert status >= 400, data
    error = json.loads(data)["error"]
    assert "step 1 (model 'after_slow')" in error and "timeout" in error, error
    assert stats(server, "after_slow")["inference_stats"]["success"]["count"] == before
    # Without a timeout the same chain answers.
    body.pop("parameters")
    assert server.infer("slow_chain", body)[0] == 200


def test_client_cancellation_stops_the_pipeline(server):
    before_fail = stats(server, "slow_chain")["inference_stats"]["fail"]["count"]
    before_after = stats(server, "after_slow")["inference_stats"]["success"]["count"]
    body = json.dumps({"inputs": [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})
    request = (f"POST /v2/models/slow_chain/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(request)
        # Once the slow step runs, the client goes away.
        wait_for(lambda: slow_step_running(server))
    wait_for(lambda: stats(server, "slow_chain")["inference_stats"]["fail"]["count"] > before_fail)
    assert stats(server, "after_slow")["inference_stats"]["success"]["count"] == before_after


def test_statistics_of_the_ensemble_and_its_steps(server):
    before = stats(server, "diamond")["inference_stats"]["success"]["count"]
    before_post = stats(server, "post")["inference_stats"]["success"]["count"]
    for _ in range(3):
        assert server.infer("diamond", diamond_body([1.0] * 4, [2.0] * 4))[0] == 200
    entry = stats(server, "diamond")
    assert entry["inference_stats"]["success"]["count"] == before + 3
    assert entry["inference_stats"]["queue"]["ns"] == 0
    assert entry["inference_stats"]["compute_infer"]["ns"] > 0
    assert stats(server, "post")["inference_stats"]["success"]["count"] == before_post + 3


def test_ensemble_config_and_metadata(server):
    status, config = server.get_json("/v2/models/diamond/config")
    assert status == 200
    assert config["platform"] == "ensemble"
    assert [s["model_name"] for s in config["ensemble_scheduling"]["step"]] == ["pre", "left", "right", "post"]
    status, meta = server.get_json("/v2/models/diamond")
    assert status == 200 and [i["name"] for i in meta["inputs"]] == ["X", "Y"]


def test_hostile_requests_to_an_ensemble(server):
    # Wrong shape, missing input, wrong dtype: 400 naming the problem, before any step.
    bad_shape = {"inputs": [{"name": "X", "shape": [1, 5], "datatype": "FP32", "data": [1] * 5},
                            {"name": "Y", "shape": [1, 4], "datatype": "FP32", "data": [1] * 4}]}
    missing = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "FP32", "data": [1] * 4}]}
    wrong_type = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "INT32", "data": [1] * 4},
                             {"name": "Y", "shape": [1, 4], "datatype": "FP32", "data": [1] * 4}]}
    too_big = diamond_body([1.0] * 40, [1.0] * 40)  # 10 rows > max_batch_size 4
    for body in (bad_shape, missing, wrong_type, too_big):
        status, _, data = server.infer("diamond", body)
        assert status == 400, data
    status, _, data = server.infer("diamond", diamond_body([1.0] * 4, [1.0] * 4, parameters={"timeout": -1}))
    assert status == 400 and "timeout" in json.loads(data)["error"]
    status, _, data = server.infer("diamond", diamond_body(
        [1.0] * 4, [1.0] * 4, outputs=[{"name": "NOPE"}]))
    assert status == 400, data
    server.assert_serving()


def test_load_errors_are_in_the_index(server):
    status, _, body = server.request("POST", "/v2/repository/index", "")
    assert status == 200
    reasons = {e["name"]: e.get("reason", "") for e in json.loads(body)}
    assert "step 1 (model 'post'): is on a cycle" in reasons["bad_cycle"]
    assert "step 0 (model 'no_such_model')" in reasons["bad_unknown"]
    assert "TYPE_INT32" in reasons["bad_dtype"] and "step 0 (model 'left')" in reasons["bad_dtype"]
    assert "10001 steps is more than the limit of 256" in reasons["bad_huge"]
    for name in ("diamond", "failing", "slow_chain"):
        assert reasons[name] == "", reasons[name]


def test_metrics_series_for_the_ensemble(server):
    assert server.infer("diamond", diamond_body([1.0] * 4, [2.0] * 4))[0] == 200
    text = metrics(server)
    success = re.search(r'infera_requests_total\{[^}]*model="diamond"[^}]*outcome="success"[^}]*\} (\d+)', text) or \
        re.search(r'infera_requests_total\{[^}]*outcome="success"[^}]*model="diamond"[^}]*\} (\d+)', text)
    assert success and int(success.group(1)) >= 1, [l for l in text.splitlines() if "diamond" in l][:10]
    assert re.search(r'infera_request_duration_seconds_count\{[^}]*model="diamond"', text)


# --- gRPC ------------------------------------------------------------------------------

def grpc_diamond(x, y, **fields):
    request = pb.ModelInferRequest(model_name="diamond", **fields)
    for name, values in (("X", x), ("Y", y)):
        request.inputs.add(name=name, datatype="FP32", shape=[len(values) // 4, 4])
        request.raw_input_contents.append(struct.pack(f"<{len(values)}f", *values))
    return request


def test_diamond_over_grpc(stub):
    x, y = [1.5, 2.5, 3.5, 4.5], [4.0, 3.0, 2.0, 1.0]
    response = stub.ModelInfer(grpc_diamond(x, y))
    assert response.model_name == "diamond"
    names = [o.name for o in response.outputs]
    assert names == ["SUM", "DIFF"]
    assert struct.unpack("<4f", response.raw_output_contents[0]) == tuple(2 * v for v in x)
    assert struct.unpack("<4f", response.raw_output_contents[1]) == tuple(2 * v for v in y)
    config = stub.ModelConfig(pb.ModelConfigRequest(name="diamond")).config
    assert config.platform == "ensemble"
    assert [s.model_name for s in config.ensemble_scheduling.step] == ["pre", "left", "right", "post"]
    assert dict(config.ensemble_scheduling.step[3].input_map) == {"INPUT0": "ls", "INPUT1": "rt"}
    request = grpc_diamond(x, y)
    request.outputs.add(name="DIFF")
    response = stub.ModelInfer(request)
    assert [o.name for o in response.outputs] == ["DIFF"]


def test_failing_step_over_grpc(stub):
    request = pb.ModelInferRequest(model_name="failing")
    request.inputs.add(name="X", datatype="FP32", shape=[1, 4])
    request.raw_input_contents.append(struct.pack("<4f", 1, 2, 3, 4))
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(request)
    assert error.value.code() == grpc.StatusCode.INTERNAL
    assert "step 1 (model 'always_fail')" in error.value.details()


def test_grpc_cancellation(server, stub):
    before_fail = stats(server, "slow_chain")["inference_stats"]["fail"]["count"]
    before_after = stats(server, "after_slow")["inference_stats"]["success"]["count"]
    request = pb.ModelInferRequest(model_name="slow_chain")
    request.inputs.add(name="X", datatype="FP32", shape=[1, 4])
    request.raw_input_contents.append(struct.pack("<4f", 1, 2, 3, 4))
    future = stub.ModelInfer.future(request)
    wait_for(lambda: slow_step_running(server))
    future.cancel()
    wait_for(lambda: stats(server, "slow_chain")["inference_stats"]["fail"]["count"] > before_fail)
    assert stats(server, "after_slow")["inference_stats"]["success"]["count"] == before_after


# --- lifecycle (explicit mode) ----------------------------------------------------------

def test_explicit_load_reload_and_unload_of_a_step():
    with tempfile.TemporaryDirectory(prefix="infera-ensemble-explicit-") as repo:
        write_repo(repo, with_bad=False)
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "diamond")
        try:
            server.wait_ready()
            # Loading the ensemble loaded its steps.
            index = {e["name"]: e for e in json.loads(server.request("POST", "/v2/repository/index", "")[2])}
            for name in ("diamond", "pre", "left", "right", "post"):
                assert index[name].get("state") == "READY", index[name]
            assert index["slow"].get("state") != "READY"
            # Reload a step (a changed config) under traffic: no request fails.
            failures, done, count = [], threading.Event(), [0]

            def traffic():
                conn = server.connection(timeout=30)
                body = json.dumps(diamond_body([1.0] * 4, [3.0] * 4))
                while not done.is_set():
                    conn.request("POST", "/v2/models/diamond/infer", body)
                    response = conn.getresponse()
                    data = response.read()
                    count[0] += 1
                    if response.status != 200:
                        failures.append(data)
            threads = [threading.Thread(target=traffic) for _ in range(3)]
            for t in threads:
                t.start()
            try:
                wait_for(lambda: count[0] > 20)
                override = json.dumps({"parameters": {"config": json.dumps({
                    "name": "right", "backend": "fault_injection", "max_batch_size": 8,
                    "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
                    "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]}],
                    "parameters": {"delay_ms": {"string_value": "1"}}})}})
                status, _, body = server.request("POST", "/v2/repository/models/right/load", override)
                assert status == 200, body
                seen = count[0]
                wait_for(lambda: count[0] > seen + 20)
            finally:
                done.set()
                for t in threads:
                    t.join()
            assert not failures, failures[:3]
            # Unloading a step: the ensemble stays loaded, its requests fail naming the step.
            assert server.request("POST", "/v2/repository/models/right/unload", "")[0] == 200
            status, _, data = server.infer("diamond", diamond_body([1.0] * 4, [1.0] * 4))
            assert status == 503 and "step 2 (model 'right')" in json.loads(data)["error"], data
            # Loading it again: the ensemble serves again.
            assert server.request("POST", "/v2/repository/models/right/load", "")[0] == 200
            assert server.infer("diamond", diamond_body([1.0] * 4, [1.0] * 4))[0] == 200
        finally:
            server.stop()


def test_bench_drives_an_ensemble(server):
    result = subprocess.run([BINARY, "bench", "-u", f"127.0.0.1:{server.port}", "-m", "diamond",
                             "--measurement-interval", "300", "--warmup", "100", "--max-trials", "3",
                             "--max-duration", "30", "--progress", "off", "--concurrency-range", "2"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr

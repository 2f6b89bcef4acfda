"""Dynamic batching's fast path (docs/scheduling.md, "Batch gather and scatter"), black-box
over real sockets: a batch is gathered into one tensor, run once, and scattered back as
views; a worker wakes once per batch, not per arrival.

Every batched model here runs exactly BATCH rows at a time: `preferred_batch_size:
[BATCH]` runs the batch the moment its rows reach BATCH and a 30 s `max_queue_delay`
keeps anything from running before (so BATCH concurrent requests form one batch, checked
in the model's `batch_stats`, not assumed). Results are compared with the same requests
run unbatched:

- the ranker (TorchScript, the demo's): to float tolerance (rtol 1e-5), because
  OpenBLAS picks its sgemm kernel by matrix size, so a row's sums may round differently
  at batch BATCH than at batch 1;
- the identity backend (FP32 and BYTES, ragged rows per request): bit-identical.
"""

import concurrent.futures
import json
import os
import shutil
import socket
import struct
import tempfile

import grpc
import numpy as np
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, copy_model, demo_repo, wait_for, write_model

BATCH = 8
BATCHING = ("dynamic_batching { preferred_batch_size: [ %d ] max_queue_delay_microseconds: 30000000\n"
            "  default_queue_policy { allow_timeout_override: true } }\n" % BATCH)
DENSE, IDS = 13, 8  # the ranker's input widths

ECHO = """name: "echo" backend: "identity" max_batch_size: 16
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
""" + BATCHING
TEXT_ECHO = """name: "text_echo" backend: "identity" max_batch_size: 16
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
""" + BATCHING


def one_instance(text):
    return text.replace("count: 2", "count: 1")


def build_repo(repo):
    demo = demo_repo()
    copy_model(demo, "ranker", repo, one_instance)  # unbatched: the reference
    copy_model(demo, "ranker", repo, lambda text: one_instance(text) + BATCHING, new_name="ranker_batched")
    for model in ("ranker", "ranker_batched"):  # the demo's reference data: not a version
        shutil.rmtree(os.path.join(repo, model, "reference"), ignore_errors=True)
    write_model(repo, "echo", ECHO)
    write_model(repo, "text_echo", TEXT_ECHO)


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-fast-path-") as repo:
        build_repo(repo)
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


# --- requests ----------------------------------------------------------------------------

def ranker_inputs(seed, rows=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, DENSE)).astype(np.float32),
            rng.integers(0, 100, (rows, IDS)).astype(np.int64))


def binary_request(inputs, parameters=None):
    """A KServe v2 binary-tensor body: (body, header length)."""
    header = {"inputs": [], "outputs": [{"name": "score", "parameters": {"binary_data": True}}]}
    blobs = []
    for name, datatype, array in inputs:
        data = array.tobytes()
        header["inputs"].append({"name": name, "datatype": datatype, "shape": list(array.shape),
                                 "parameters": {"binary_data_size": len(data)}})
        blobs.append(data)
    if parameters:
        header["parameters"] = parameters
    head = json.dumps(header).encode()
    return head + b"".join(blobs), len(head)


def http_ranker(server, model, dense, ids, parameters=None):
    """The ranker's scores over HTTP binary tensors: (status, float32 array or error body)."""
    body, header_length = binary_request([("dense_features", "FP32", dense), ("categorical_ids", "INT64", ids)],
                                         parameters)
    status, headers, data = server.infer(model, body, headers={
        "Inference-Header-Content-Length": str(header_length), "Content-Type": "application/octet-stream"})
    if status != 200:
        return status, json.loads(data)
    length = int(headers["Inference-Header-Content-Length"])
    return status, np.frombuffer(data[length:], dtype=np.float32).reshape(dense.shape[0], 1)


def grpc_ranker(stub, model, dense, ids):
    request = pb.ModelInferRequest(model_name=model)
    request.inputs.add(name="dense_features", datatype="FP32", shape=list(dense.shape))
    request.inputs.add(name="categorical_ids", datatype="INT64", shape=list(ids.shape))
    request.raw_input_contents.extend([dense.tobytes(), ids.tobytes()])
    response = stub.ModelInfer(request, timeout=60)
    return np.frombuffer(response.raw_output_contents[0], dtype=np.float32).reshape(dense.shape[0], 1)


def json_infer(server, model, name, datatype, shape, data, parameters=None):
    payload = {"inputs": [{"name": name, "datatype": datatype, "shape": shape, "data": data}]}
    if parameters:
        payload["parameters"] = parameters
    status, _, body = server.infer(model, payload)
    return status, json.loads(body)


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    entry = body["model_stats"][0]
    return entry, {b["batch_size"]: b["compute_infer"]["count"] for b in entry["batch_stats"]}


def concurrently(call, items):
    """Runs call(item) for every item at once; results in item order."""
    with concurrent.futures.ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(call, items, timeout=60))


def check_one_batch(before, after, rows=BATCH, requests=BATCH):
    """Exactly one execution ran since `before`: a batch of `rows` rows from `requests`."""
    (entry0, batches0), (entry1, batches1) = before, after
    assert entry1["execution_count"] == entry0["execution_count"] + 1, (entry0, entry1)
    assert batches1.get(rows, 0) == batches0.get(rows, 0) + 1, (batches0, batches1)
    assert (entry1["inference_stats"]["success"]["count"] ==
            entry0["inference_stats"]["success"]["count"] + requests)


def requests_total(server, model, outcome):
    for line in server.request("GET", "/metrics")[2].decode().splitlines():
        if (line.startswith("infera_requests_total{") and f'model="{model}"' in line
                and f'outcome="{outcome}"' in line):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def assert_close_to_alone(batched, alone):
    # Batch-size-dependent sgemm kernels: equal to float rounding, not bit for bit.
    np.testing.assert_allclose(batched, alone, rtol=1e-5, atol=1e-6)


# --- tests -------------------------------------------------------------------------------

def test_a_burst_over_http_binary_equals_each_request_alone(server):
    inputs = [ranker_inputs(seed) for seed in range(BATCH)]
    alone = [http_ranker(server, "ranker", *x) for x in inputs]
    before = stats(server, "ranker_batched")
    batched = concurrently(lambda x: http_ranker(server, "ranker_batched", *x), inputs)
    check_one_batch(before, stats(server, "ranker_batched"))
    for (status, scores), (status_alone, scores_alone) in zip(batched, alone):
        assert status == 200 and status_alone == 200, (scores, scores_alone)
        assert_close_to_alone(scores, scores_alone)
    # Distinct inputs give distinct scores: a mix-up of rows would not pass.
    assert len({float(s[0, 0]) for _, s in alone}) == BATCH


def test_a_burst_over_grpc_equals_each_request_alone(server):
    inputs = [ranker_inputs(100 + seed) for seed in range(BATCH)]
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        alone = [grpc_ranker(stub, "ranker", *x) for x in inputs]
        before = stats(server, "ranker_batched")
        batched = concurrently(lambda x: grpc_ranker(stub, "ranker_batched", *x), inputs)
    check_one_batch(before, stats(server, "ranker_batched"))
    for scores, scores_alone in zip(batched, alone):
        assert_close_to_alone(scores, scores_alone)


def test_ragged_requests_get_exactly_their_own_rows(server):
    # 1 + 3 + 2 + 2 rows of width 4 make one batch of 8; a width-5 request of 8 rows
    # cannot join it (other shape) and runs as its own batch.
    rng = np.random.default_rng(5)
    sizes = [1, 3, 2, 2]
    arrays = [rng.standard_normal((rows, 4)).astype(np.float32) for rows in sizes]
    wide = rng.standard_normal((BATCH, 5)).astype(np.float32)
    before = stats(server, "echo")
    results = concurrently(lambda a: json_infer(server, "echo", "INPUT0", "FP32", list(a.shape),
                                                a.flatten().tolist()), arrays + [wide])
    entry, batches = stats(server, "echo")
    assert entry["execution_count"] == before[0]["execution_count"] + 2
    assert batches.get(BATCH, 0) == before[1].get(BATCH, 0) + 2, batches
    for array, (status, body) in zip(arrays + [wide], results):
        assert status == 200, body
        output = body["outputs"][0]
        assert output["shape"] == list(array.shape)
        # Bit-identical: JSON floats round-trip float32 exactly.
        assert np.array_equal(np.array(output["data"], dtype=np.float32).reshape(array.shape), array)


def test_ragged_bytes_rows_are_split_by_element(server):
    # BYTES rows of different lengths: the scatter splits the batch output by elements.
    texts = [["a"], ["bb", "ccc", ""], ["dddd", "e"], ["ffffff", "g"]]  # 1 + 3 + 2 + 2 rows
    shaped = [[[t] for t in rows] for rows in texts]
    before = stats(server, "text_echo")
    results = concurrently(lambda rows: json_infer(server, "text_echo", "INPUT0", "BYTES", [len(rows), 1],
                                                   rows), shaped)
    check_one_batch(before, stats(server, "text_echo"), requests=len(texts))
    for rows, (status, body) in zip(shaped, results):
        assert status == 200, body
        assert body["outputs"][0]["shape"] == [len(rows), 1]
        assert body["outputs"][0]["data"] == [t for row in rows for t in row]


def test_a_bad_request_and_an_expiring_one_fail_alone(server):
    # A request whose queue timeout ends long before its batch's 30 s delay is answered
    # at its deadline (504): the arrival woke the worker waiting on the batch's timer.
    dense, ids = ranker_inputs(7)
    status, body = http_ranker(server, "ranker_batched", dense, ids, parameters={"timeout": 200000})
    assert status == 504, body
    assert "timed out" in body["error"], body
    # A malformed request in a burst is refused alone; the others batch and succeed.
    inputs = [ranker_inputs(200 + seed) for seed in range(BATCH)]
    alone = [http_ranker(server, "ranker", *x)[1] for x in inputs]
    bad = (np.zeros((1, DENSE - 1), dtype=np.float32), np.zeros((1, IDS), dtype=np.int64))
    before = stats(server, "ranker_batched")
    results = concurrently(lambda x: http_ranker(server, "ranker_batched", *x), inputs + [bad])
    check_one_batch(before, stats(server, "ranker_batched"))
    status, body = results[-1]
    assert status == 400 and "dense_features" in body["error"], body
    for (status, scores), scores_alone in zip(results[:-1], alone):
        assert status == 200, scores
        assert_close_to_alone(scores, scores_alone)


def test_a_cancelled_queued_request_is_never_run(server):
    before_cancelled = requests_total(server, "ranker_batched", "cancelled")
    before = stats(server, "ranker_batched")
    dense, ids = ranker_inputs(300)
    body, header_length = binary_request([("dense_features", "FP32", dense), ("categorical_ids", "INT64", ids)])
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall((f"POST /v2/models/ranker_batched/infer HTTP/1.1\r\nHost: x\r\n"
                   f"Inference-Header-Content-Length: {header_length}\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        wait_for(lambda: queue_depth(server, "ranker_batched") == 1)
    # The client is gone; the request waits in a batch that has 29 s left. A request
    # with a 1 µs timeout wakes the worker (its deadline precedes the timer), which
    # sweeps the queue: the cancelled request leaves it without running.
    def swept():
        status, _ = http_ranker(server, "ranker_batched", dense, ids, parameters={"timeout": 1})
        assert status == 504
        return requests_total(server, "ranker_batched", "cancelled") == before_cancelled + 1
    wait_for(swept)
    assert queue_depth(server, "ranker_batched") == 0
    after = stats(server, "ranker_batched")
    assert after[0]["execution_count"] == before[0]["execution_count"]  # it never ran
    # The next batch holds only live requests.
    inputs = [ranker_inputs(400 + seed) for seed in range(BATCH)]
    results = concurrently(lambda x: http_ranker(server, "ranker_batched", *x), inputs)
    check_one_batch(after, stats(server, "ranker_batched"))
    assert all(status == 200 for status, _ in results)


def queue_depth(server, model):
    for line in server.request("GET", "/metrics")[2].decode().splitlines():
        if line.startswith("infera_queue_depth{") and f'model="{model}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_shutdown_runs_a_batch_still_waiting_for_its_delay():
    with tempfile.TemporaryDirectory(prefix="infera-fast-path-stop-") as repo:
        build_repo(repo)
        s = InferaServer(repo)
        s.wait_ready()
        try:
            inputs = [ranker_inputs(500 + seed) for seed in range(3)]
            alone = [http_ranker(s, "ranker", *x)[1] for x in inputs]
            with concurrent.futures.ThreadPoolExecutor(len(inputs)) as pool:
                pending = [pool.submit(http_ranker, s, "ranker_batched", *x) for x in inputs]
                wait_for(lambda: queue_depth(s, "ranker_batched") == len(inputs))
                # 3 of 8 rows, 30 s of delay left: shutdown runs them now, and answers.
                s.process.terminate()
                results = [f.result(timeout=25) for f in pending]
            s.process.wait(timeout=30)  # drains and exits 0 (checked by stop())
            for (status, scores), scores_alone in zip(results, alone):
                assert status == 200, scores
                assert_close_to_alone(scores, scores_alone)
        finally:
            s.stop()

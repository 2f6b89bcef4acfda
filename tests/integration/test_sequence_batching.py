"""Sequence batching (docs/sequence_batching.md): stateful models over HTTP and gRPC, with
the semantics Triton's qa/L0_sequence_batcher checks — each correlation id gets its own
running sum while sequences interleave, string and uint64 ids, END releases the slot,
START on an active id restarts it, a request without START is refused with Triton's text,
an idle sequence loses its slot, and 10 000 sequences opened at once are refused beyond
the slots and the bounded backlog while the server keeps serving.

One server for the module, on a repository of builtin `accumulate` models written here.
"""

import json
import queue
import shutil
import struct
import tempfile
import threading

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

CONTROLS = """
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }"""

# Four slots on each of two instances; sequences batch together (row = slot).
ACC_CONFIG = """
name: "acc"
backend: "accumulate"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 2 } ]
sequence_batching {
  max_sequence_idle_microseconds: 30000000
  control_input [ %s,
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] } ]
  direct { }
}
""" % CONTROLS

# One slot, a 300 ms idle time and a numeric CORRID: the slot changes hands quickly.
ONE_SLOT_CONFIG = """
name: "acc_one_slot"
backend: "accumulate"
max_batch_size: 0
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 } ]
sequence_batching {
  max_sequence_idle_microseconds: 300000
  control_input [ %s,
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] } ]
}
""" % CONTROLS

BACKLOG = 4  # --max-queue-size: the requests the backlog holds


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-seq-")
    write_model(repo, "acc", ACC_CONFIG)
    write_model(repo, "acc_one_slot", ONE_SLOT_CONFIG)
    s = InferaServer(repo, "--max-queue-size", str(BACKLOG))
    try:
        s.wait_ready()
        yield s
    finally:
        s.stop()
        shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def http_infer(conn, model, value, sequence_id=None, start=False, end=False, rows=1, extra=None):
    """One request on `conn`: (status, OUTPUT value or the error text)."""
    parameters = dict(extra or {})
    if sequence_id is not None:
        parameters["sequence_id"] = sequence_id
    if start:
        parameters["sequence_start"] = True
    if end:
        parameters["sequence_end"] = True
    shape = [rows, 1] if model == "acc" else [1]
    body = {"parameters": parameters,
            "inputs": [{"name": "INPUT", "datatype": "INT32", "shape": shape, "data": [value] * rows}]}
    conn.request("POST", f"/v2/models/{model}/infer", json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    answer = json.loads(response.read())
    if response.status != 200:
        return response.status, answer["error"]
    return response.status, answer["outputs"][0]["data"][0]


def grpc_request(model, value, sequence_id, start=False, end=False, rid=""):
    request = pb.ModelInferRequest(model_name=model, id=rid)
    request.inputs.add(name="INPUT", datatype="INT32", shape=[1, 1] if model == "acc" else [1])
    request.raw_input_contents.append(struct.pack("<i", value))
    if isinstance(sequence_id, str):
        request.parameters["sequence_id"].string_param = sequence_id
    else:
        request.parameters["sequence_id"].uint64_param = sequence_id
    if start:
        request.parameters["sequence_start"].bool_param = True
    if end:
        request.parameters["sequence_end"].bool_param = True
    return request


def grpc_value(response):
    return struct.unpack("<i", response.raw_output_contents[0])[0]


def run_sequences_concurrently(run_one, ids):
    """Runs run_one(id, index) on a thread per id at once; re-raises the first failure."""
    failures = queue.Queue()
    barrier = threading.Barrier(len(ids))

    def worker(sid, index):
        try:
            barrier.wait()
            run_one(sid, index)
        except BaseException as e:  # noqa: BLE001 (reported below)
            failures.put(e)
    threads = [threading.Thread(target=worker, args=(sid, i)) for i, sid in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not failures.empty():
        raise failures.get()


def test_interleaved_sequences_over_http_each_keep_their_own_sum(server):
    ids = [1001, "alpha", 1002, "beta", 1003, "gamma"]  # uint64 and string ids mixed

    def run_one(sid, index):
        conn = server.connection()
        total = 0
        for step in range(12):
            value = (index + 1) * 100 + step
            total += value
            status, out = http_infer(conn, "acc", value, sid, start=step == 0, end=step == 11)
            assert (status, out) == (200, total), f"sequence {sid} step {step}"
        conn.close()
    run_sequences_concurrently(run_one, ids)


def test_interleaved_sequences_over_grpc_with_string_and_uint64_ids(stub):
    ids = [2001, "delta", 2002, "epsilon"]

    def run_one(sid, index):
        total = 0
        for step in range(12):
            value = index * 7 + step + 1
            total += value
            response = stub.ModelInfer(grpc_request("acc", value, sid, start=step == 0, end=step == 11), timeout=30)
            assert grpc_value(response) == total, f"sequence {sid} step {step}"
    run_sequences_concurrently(run_one, ids)


def test_end_releases_the_id_and_start_on_an_active_id_restarts(server):
    conn = server.connection()
    assert http_infer(conn, "acc", 5, 3001, start=True) == (200, 5)
    assert http_infer(conn, "acc", 3, 3001) == (200, 8)
    assert http_infer(conn, "acc", 10, 3001, start=True) == (200, 10)  # restarted: the old sum is gone
    assert http_infer(conn, "acc", 1, 3001, end=True) == (200, 11)
    status, error = http_infer(conn, "acc", 1, 3001)
    assert status == 400
    assert error == ("inference request for sequence 3001 to model 'acc' must specify the START flag on the "
                     "first request of the sequence")
    assert http_infer(conn, "acc", 2, 3001, start=True, end=True) == (200, 2)  # a fresh one-request sequence
    conn.close()


def test_bad_sequence_requests_get_tritons_errors(server, stub):
    conn = server.connection()
    assert http_infer(conn, "acc", 1) == (
        400, "inference request to model 'acc' must specify a non-zero or non-empty correlation ID")
    assert http_infer(conn, "acc", 1, 0, start=True)[0] == 400
    assert http_infer(conn, "acc", 1, "", start=True)[0] == 400
    assert http_infer(conn, "acc", 1, 4001, start=True, rows=2) == (
        400, "inference request to model 'acc' must specify batch-size 1 due to requirements of sequence batcher")
    assert http_infer(conn, "acc", 1, "never-started") == (
        400, "inference request for sequence never-started to model 'acc' must specify the START flag on the "
             "first request of the sequence")
    assert http_infer(conn, "acc_one_slot", 1, "text", start=True) == (
        400, "sequence batching control 'CORRID' data-type is 'BYTES', but model 'acc_one_slot' expects 'UINT64'")
    status, error = http_infer(conn, "acc", 1, 4002, extra={"sequence_start": 1})
    assert status == 400 and "parameter 'sequence_start' must be a bool" in error
    status, error = http_infer(conn, "acc", 1, -5, start=True)
    assert status == 400 and "must be an unsigned integer or a string" in error
    conn.close()
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(grpc_request("acc", 1, 4003), timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "must specify the START flag" in e.value.details()


def test_idle_sequence_loses_its_slot_to_a_waiting_one(server):
    holder, waiter = server.connection(), server.connection()
    assert http_infer(holder, "acc_one_slot", 7, 5001, start=True) == (200, 7)
    # The only slot is taken: the next sequence waits in the backlog until the first has
    # been idle for 300 ms, then runs with a fresh sum.
    assert http_infer(waiter, "acc_one_slot", 4, 5002, start=True) == (200, 4)
    assert http_infer(waiter, "acc_one_slot", 5, 5002, end=True) == (200, 9)
    status, error = http_infer(holder, "acc_one_slot", 1, 5001)
    assert status == 400 and "must specify the START flag" in error
    holder.close()
    waiter.close()


def test_ten_thousand_sequences_are_bounded_and_the_server_keeps_serving(server, stub):
    count = 10_000
    requests = (grpc_request("acc_one_slot", 1, 10_000 + i, start=True, rid=str(i)) for i in range(count))
    succeeded, refused, other = 0, 0, []
    for answer in stub.ModelStreamInfer(requests, timeout=60):
        if not answer.error_message:
            succeeded += 1
            assert grpc_value(answer.infer_response) == 1
        elif "sequence backlog of model 'acc_one_slot' is full" in answer.error_message:
            refused += 1
        else:
            other.append(answer.error_message)
    assert other == []
    assert succeeded + refused == count
    # The slot and the backlog run; everything else is refused at once. Sequences leave
    # the backlog only as the slot frees (one per 300 ms idle time), so few get through.
    assert 1 <= succeeded <= 100
    conn = server.connection()
    assert http_infer(conn, "acc", 20, 6001, start=True) == (200, 20)
    assert http_infer(conn, "acc", 22, 6001, end=True) == (200, 42)
    status, _, _ = server.request("GET", "/v2/health/ready")
    assert status == 200
    conn.close()

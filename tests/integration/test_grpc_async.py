"""gRPC ModelInfer / ModelStreamInfer on the async completion-queue path (docs/grpc.md,
"Infer path: async completion queues"), black box over real sockets.

What is new on the wire or on the command line: `--grpc-infer-threads N` (its threads exist,
hostile values stop the server at start naming the flag); calls spread over several
connections and threads; image-sized answers (referenced, not copied, by the server) are
byte-exact unary and streamed, for raw and typed requests; a message that is not a
ModelInferRequest is refused unary and answered in band on a stream that goes on; a
deadline that passes while a request waits drops it before it runs.
"""

import queue
import random
import struct
import subprocess
import tempfile
import threading

import grpc
import pytest

from grpc_stubs import pb, pb_grpc, SLOW_CONFIG, slow_request, slow_stats
from infera_server import BINARY, InferaServer, SIMPLE_CONFIG, thread_names, wait_for, write_model

IDENTITY_CONFIG = """
name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""

THREADS = 3
IMAGE = 150528  # 1x3x224x224 FP32: 602,112 bytes


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-async-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        write_model(path, "identity_fp32", IDENTITY_CONFIG)
        write_model(path, "slow", SLOW_CONFIG)
        yield path


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo, "--grpc-infer-threads", str(THREADS))
    s.wait_ready()
    yield s
    s.stop()


def channel_to(server, k=0):
    # Distinct channel arguments: each client its own connection.
    return grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}", options=[
        ("grpc.max_receive_message_length", 8 << 20), ("grpc.max_send_message_length", 8 << 20),
        ("infera.test.client", k)])


@pytest.fixture(scope="module")
def stub(server):
    with channel_to(server) as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def simple_request(a, b, rid):
    request = pb.ModelInferRequest(model_name="simple", id=rid)
    for name in ("INPUT0", "INPUT1"):
        request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
    request.raw_input_contents.extend([struct.pack("<16i", *([a] * 16)), struct.pack("<16i", *([b] * 16))])
    return request


def int32s(response, index):
    return list(struct.unpack(f"<{len(response.raw_output_contents[index]) // 4}i",
                              response.raw_output_contents[index]))


def identity_request(values, rid, typed=False):
    request = pb.ModelInferRequest(model_name="identity_fp32", id=rid)
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[len(values)])
    if typed:
        tensor.contents.fp32_contents.extend(values)
    else:
        request.raw_input_contents.append(struct.pack(f"<{len(values)}f", *values))
    return request


# --- the option --------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "", "1025"])
def test_hostile_thread_counts_stop_the_server_naming_the_flag(repo, value):
    result = subprocess.run([BINARY, "serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0",
                             "--metrics-port", "0", f"--grpc-infer-threads={value}"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "--grpc-infer-threads" in result.stdout + result.stderr


def test_the_server_runs_the_threads_it_was_asked_for(server):
    names = thread_names(server.process.pid)
    assert sorted(n for n in names if n.startswith("grpc-infer-")) == [f"grpc-infer-{i}" for i in range(THREADS)]


# --- many calls over many connections ----------------------------------------------------

def test_unary_calls_and_streams_over_many_connections(server):
    errors = []

    def client(k):
        try:
            with channel_to(server, k) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                if k % 2 == 0:
                    futures = [(i, stub.ModelInfer.future(simple_request(k * 100 + i, i, f"{k}-{i}")))
                               for i in range(60)]
                    for i, future in futures:
                        response = future.result(timeout=60)
                        assert response.id == f"{k}-{i}"
                        assert int32s(response, 0) == [k * 100 + 2 * i] * 16
                        assert int32s(response, 1) == [k * 100] * 16
                else:
                    requests = [simple_request(k * 100 + i, i, f"{k}-{i}") for i in range(60)]
                    answers = {a.infer_response.id: a for a in stub.ModelStreamInfer(iter(requests))}
                    assert len(answers) == 60
                    for i in range(60):
                        answer = answers[f"{k}-{i}"]
                        assert answer.error_message == ""
                        assert int32s(answer.infer_response, 0) == [k * 100 + 2 * i] * 16
        except Exception as e:  # noqa: BLE001 - reported below with the client's number
            errors.append((k, repr(e)))

    clients = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(timeout=120)
    assert errors == []


# --- image-sized answers -----------------------------------------------------------------

@pytest.mark.parametrize("typed", [False, True])
def test_image_sized_answers_are_byte_exact_unary_and_streamed(stub, typed):
    rng = random.Random(18)
    values = [rng.uniform(-1e6, 1e6) for _ in range(IMAGE)]
    expected = struct.pack(f"<{IMAGE}f", *values)
    response = stub.ModelInfer(identity_request(values, "img", typed))
    assert response.id == "img" and list(response.outputs[0].shape) == [IMAGE]
    assert response.outputs[0].datatype == "FP32"
    assert response.raw_output_contents[0] == expected
    requests = [identity_request(values[:n], f"s{n}", typed) for n in (IMAGE, 1, 1024, 1025, 4096)]
    answers = {a.infer_response.id: a for a in stub.ModelStreamInfer(iter(requests))}
    for n in (IMAGE, 1, 1024, 1025, 4096):
        answer = answers[f"s{n}"]
        assert answer.error_message == ""
        assert answer.infer_response.raw_output_contents[0] == expected[:4 * n]


def test_answer_over_the_message_limit_is_resource_exhausted(repo):
    # The identity answer is its request plus a few header bytes (model_version): a limit
    # one byte under the answer lets the request in and stops the answer.
    values = [1.0] * 90000
    request = identity_request(values, "big")
    answer = pb.ModelInferResponse(model_name="identity_fp32", model_version="1", id="big",
                                   raw_output_contents=[request.raw_input_contents[0]])
    answer.outputs.add(name="OUTPUT0", datatype="FP32", shape=[len(values)])
    limit = answer.ByteSize() - 1
    assert request.ByteSize() <= limit
    s = InferaServer(repo, "--grpc-infer-threads", "1", "--grpc-max-message-bytes", str(limit))
    try:
        s.wait_ready()
        with channel_to(s) as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as error:
                stub.ModelInfer(request)
            assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"response of {answer.ByteSize()} bytes exceeds the {limit}-byte" in error.value.details()
            assert "--grpc-max-message-bytes" in error.value.details()
            streamed = identity_request(values, "big-s")
            answers = list(stub.ModelStreamInfer(iter([streamed, identity_request([2.0], "small-s")])))
            by_id = {a.infer_response.id: a for a in answers}
            assert "--grpc-max-message-bytes" in by_id["big-s"].error_message
            assert by_id["small-s"].error_message == ""
    finally:
        s.stop()


# --- messages that are not ModelInferRequests ---------------------------------------------

GARBAGE = b"\x0a\xff\xff\xff\xff\x0f"  # field 1, a length running past the end


def test_unparsable_unary_message_is_refused_and_the_server_goes_on(server, stub):
    with channel_to(server, 100) as channel:
        raw = channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        with pytest.raises(grpc.RpcError) as error:
            raw(GARBAGE, timeout=10)
        assert error.value.code() == grpc.StatusCode.INTERNAL
    assert int32s(stub.ModelInfer(simple_request(1, 2, "after")), 0) == [3] * 16


def test_unparsable_stream_message_is_answered_in_band_and_the_stream_goes_on(server):
    with channel_to(server, 101) as channel:
        raw = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer")
        good = simple_request(4, 5, "good").SerializeToString()
        answers = [pb.ModelStreamInferResponse.FromString(b) for b in raw(iter([GARBAGE, good]), timeout=10)]
    assert len(answers) == 2
    by_id = {a.infer_response.id: a for a in answers}
    assert "not a ModelInferRequest" in by_id[""].error_message
    assert by_id["good"].error_message == "" and int32s(by_id["good"].infer_response, 0) == [9] * 16


# --- deadlines and cancellation on the queue threads ----------------------------------------

def test_a_deadline_passing_in_the_queue_drops_the_request(server, stub):
    before = slow_stats(stub)
    running = stub.ModelInfer.future(slow_request("keep"))
    # `keep` is executing (300 ms) and nothing waits behind it: an event, not a sleep.
    wait_for(lambda: server.model_gauge("infera_inflight_requests", "slow") == 1
             and server.model_gauge("infera_queue_depth", "slow") == 0)
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(slow_request("late"), timeout=0.1)
    assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert running.result(timeout=30).id == "keep"
    after = wait_for(lambda: (lambda s: s if s.inference_stats.fail.count > before.inference_stats.fail.count
                              else None)(slow_stats(stub)))
    assert after.execution_count == before.execution_count + 1  # "late" never ran
    assert after.inference_stats.success.count == before.inference_stats.success.count + 1


def test_a_cancelled_stream_with_requests_queued_leaves_the_server_serving(stub):
    feed = queue.Queue()
    call = stub.ModelStreamInfer(iter(feed.get, None))
    before = slow_stats(stub).execution_count
    for i in range(3):
        feed.put(slow_request(f"q{i}"))
    wait_for(lambda: slow_stats(stub).execution_count > before)
    call.cancel()
    with pytest.raises(grpc.RpcError) as error:
        next(call)
    assert error.value.code() == grpc.StatusCode.CANCELLED
    feed.put(None)
    assert [a.infer_response.id for a in stub.ModelStreamInfer(iter([simple_request(1, 1, "next")]))] == ["next"]

"""Decoupled models over gRPC, as Triton's clients use them (qa/L0_decoupled): the built-in
`repeat` backend (Triton's repeat_int32: one response per element of IN, then the final
flag) over ModelStreamInfer and unary ModelInfer, over real sockets with grpcio.

Triton's stream rules checked: one stream answer per model response, each carrying the
`triton_final_response` parameter; the empty final response only when the request sets
`triton_enable_empty_final_response`; errors in band (`error_message`), the stream going
on; a cancelled stream stops the model (no further responses: the request ends at once,
counted as failed); a client that does not read ends its stream with RESOURCE_EXHAUSTED
instead of growing server memory.
"""

import queue
import struct
import tempfile
import threading
import time

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, REPEAT_CONFIG, SIMPLE_CONFIG, wait_for, write_model

@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-decoupled-") as repo:
        write_model(repo, "repeat_int32", REPEAT_CONFIG)
        write_model(repo, "simple", SIMPLE_CONFIG)
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def repeat_request(values, request_id="", delay=None, wait=None, empty_final=None):
    request = pb.ModelInferRequest(model_name="repeat_int32", id=request_id)
    request.inputs.add(name="IN", datatype="INT32", shape=[len(values)])
    request.raw_input_contents.append(struct.pack(f"<{len(values)}i", *values))
    if delay is not None:
        request.inputs.add(name="DELAY", datatype="UINT32", shape=[len(delay)])
        request.raw_input_contents.append(struct.pack(f"<{len(delay)}I", *delay))
    if wait is not None:
        request.inputs.add(name="WAIT", datatype="UINT32", shape=[1])
        request.raw_input_contents.append(struct.pack("<I", wait))
    if empty_final is not None:
        if isinstance(empty_final, bool):
            request.parameters["triton_enable_empty_final_response"].bool_param = empty_final
        else:
            request.parameters["triton_enable_empty_final_response"].int64_param = empty_final
    return request


def simple_request(request_id):
    request = pb.ModelInferRequest(model_name="simple", id=request_id)
    for name in ("INPUT0", "INPUT1"):
        request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        request.raw_input_contents.append(struct.pack("<16i", *range(16)))
    return request


def out_idx(response):
    """(OUT, IDX) of a repeat response, by output name."""
    values = {}
    for i, output in enumerate(response.outputs):
        fmt = "<i" if output.datatype == "INT32" else "<I"
        values[output.name] = struct.unpack(fmt, response.raw_output_contents[i])[0]
    return values["OUT"], values["IDX"]


def final_flag(answer):
    return answer.infer_response.parameters["triton_final_response"].bool_param


def repeat_stats(server):
    status, body = server.get_json("/v2/models/repeat_int32/stats")
    assert status == 200
    stats = body["model_stats"][0]["inference_stats"]
    return stats["success"]["count"], stats["fail"]["count"]


class Feed:
    """A request iterator the test feeds while the stream is open (None ends it)."""

    def __init__(self):
        self.q = queue.Queue()

    def __iter__(self):
        return iter(self.q.get, None)

    def put(self, request):
        self.q.put(request)

    def close(self):
        self.q.put(None)


def test_one_stream_answer_per_response_without_the_empty_final_by_default(stub):
    answers = list(stub.ModelStreamInfer(iter([repeat_request([10, 20, 30], "a")]), timeout=30))
    assert [a.error_message for a in answers] == ["", "", ""]
    assert [out_idx(a.infer_response) for a in answers] == [(10, 0), (20, 1), (30, 2)]
    assert [a.infer_response.id for a in answers] == ["a", "a", "a"]
    assert [final_flag(a) for a in answers] == [False, False, False]
    assert all(a.infer_response.model_name == "repeat_int32" and a.infer_response.model_version == "1"
               for a in answers)


def test_the_empty_final_response_when_the_client_asks(stub):
    answers = list(stub.ModelStreamInfer(iter([repeat_request([1, 2], "b", empty_final=True)]), timeout=30))
    assert [final_flag(a) for a in answers] == [False, False, True]
    last = answers[-1].infer_response
    assert (last.id, last.model_name, len(last.outputs), len(last.raw_output_contents)) == ("b", "repeat_int32", 0, 0)
    # Asked for but nothing to precede it: the final flag alone.
    empty = list(stub.ModelStreamInfer(iter([repeat_request([], "c", empty_final=True)]), timeout=30))
    assert len(empty) == 1 and final_flag(empty[0]) and not empty[0].infer_response.outputs


def test_requests_interleave_and_each_keeps_its_order(stub):
    """Triton's decoupled test: several requests on one stream, paced differently; the
    client tells them apart by id and finds each one's responses in order."""
    requests = [repeat_request(list(range(k * 10, k * 10 + 5)), f"r{k}", delay=[k], empty_final=True)
                for k in range(6)]
    requests.insert(3, simple_request("plain"))
    answers = list(stub.ModelStreamInfer(iter(requests), timeout=60))
    by_id = {}
    for a in answers:
        assert a.error_message == ""
        by_id.setdefault(a.infer_response.id, []).append(a)
    plain = by_id.pop("plain")
    assert len(plain) == 1 and final_flag(plain[0])  # a model that is not decoupled: one final answer
    for k in range(6):
        mine = by_id[f"r{k}"]
        assert [final_flag(a) for a in mine] == [False] * 5 + [True]
        assert [out_idx(a.infer_response) for a in mine[:-1]] == [(k * 10 + i, i) for i in range(5)]


def test_errors_are_in_band_and_the_stream_goes_on(stub):
    requests = [repeat_request([1, 2, 3], "bad-delay", delay=[1, 2]),
                repeat_request([1], "bad-flag", empty_final=7),
                repeat_request([5], "good", empty_final=True)]
    answers = list(stub.ModelStreamInfer(iter(requests), timeout=30))
    by_id = {}
    for a in answers:
        by_id.setdefault(a.infer_response.id, []).append(a)
    (bad_delay,) = by_id["bad-delay"]
    assert "DELAY holds 2 values" in bad_delay.error_message and final_flag(bad_delay)
    (bad_flag,) = by_id["bad-flag"]
    assert "triton_enable_empty_final_response" in bad_flag.error_message and "bool_param" in bad_flag.error_message
    assert [final_flag(a) for a in by_id["good"]] == [False, True]
    assert out_idx(by_id["good"][0].infer_response) == (5, 0)


def test_unary_model_infer_takes_exactly_one_response(stub):
    response = stub.ModelInfer(repeat_request([42], "one"), timeout=30)
    assert out_idx(response) == (42, 0) and response.id == "one"
    with pytest.raises(grpc.RpcError) as more:
        stub.ModelInfer(repeat_request([1, 2], "two"), timeout=30)
    assert more.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ModelStreamInfer" in more.value.details()
    with pytest.raises(grpc.RpcError) as none:
        stub.ModelInfer(repeat_request([], "none"), timeout=30)
    assert none.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_cancelling_the_stream_stops_the_model(server, stub):
    """1000 responses 50 ms apart (50 s); cancelled after two, the request ends at once —
    counted as failed — and nothing more is produced for it."""
    before_success, before_fail = repeat_stats(server)
    feed = Feed()
    call = stub.ModelStreamInfer(iter(feed))
    feed.put(repeat_request(list(range(1000)), "long", delay=[50]))
    first = [next(call), next(call)]
    assert [out_idx(a.infer_response) for a in first] == [(0, 0), (1, 1)]
    started = time.monotonic()
    call.cancel()
    wait_for(lambda: repeat_stats(server)[1] == before_fail + 1, timeout=10)
    assert time.monotonic() - started < 10
    assert repeat_stats(server)[0] == before_success
    server.assert_serving()
    # The model serves the next stream as before.
    answers = list(stub.ModelStreamInfer(iter([repeat_request([9], "after")]), timeout=30))
    assert [out_idx(a.infer_response) for a in answers] == [(9, 0)]


def test_a_client_that_does_not_read_ends_its_stream(server, stub):
    """300k responses with no delay: far more than the 16 MiB of answers a stream may have
    waiting, so the server ends the stream (RESOURCE_EXHAUSTED) and cancels the request
    rather than queueing without bound."""
    before_fail = repeat_stats(server)[1]
    feed = Feed()
    call = stub.ModelStreamInfer(iter(feed))
    feed.put(repeat_request(list(range(300_000)), "flood"))
    # Nothing is read until the server has given up on the request.
    wait_for(lambda: repeat_stats(server)[1] == before_fail + 1, timeout=120)
    with pytest.raises(grpc.RpcError) as ended:
        for _ in call:
            pass
    assert ended.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "reads this stream too slowly" in ended.value.details()
    feed.close()
    server.assert_serving()


def test_concurrent_streams(stub):
    errors = []

    def run(k):
        try:
            requests = [repeat_request([k, k + 1, k + 2], f"s{k}-{i}", empty_final=True) for i in range(20)]
            answers = list(stub.ModelStreamInfer(iter(requests), timeout=60))
            finals = [a for a in answers if final_flag(a)]
            if len(answers) != 80 or len(finals) != 20 or any(a.error_message for a in answers):
                errors.append((k, len(answers), len(finals)))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=run, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []

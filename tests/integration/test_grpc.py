"""KServe v2 gRPC (and Triton's extensions over gRPC and HTTP), black box.

The client is generated at test time (grpc_stubs.py) from proto/*.proto by Debian's grpc_tools
(`python3 -m grpc_tools.protoc`, a different protoc and a different gRPC implementation
from the server's), so these tests check infera against the protocol, not against its
own generated code. Every RPC, every datatype (typed and raw contents), streaming with
interleaved errors, unknown models, wrong shapes, message limits, cancellation, health,
concurrency; and the HTTP routes for the same extensions (config, stats, index).
"""

import json
import math
import queue
import struct
import tempfile
import threading
import time

import grpc
import pytest

from google.protobuf import json_format
from grpc_stubs import health_pb2, health_pb2_grpc, pb, pb_grpc, SLOW_CONFIG, slow_request, slow_stats
from infera_server import InferaServer, SIMPLE_CONFIG_2_INSTANCES, wait_for, write_model

DATATYPES = {
    # KServe name: (config type, struct format, typed contents field, sample values)
    "BOOL": ("TYPE_BOOL", "?", "bool_contents", [True, False, True]),
    "UINT8": ("TYPE_UINT8", "B", "uint_contents", [0, 255, 7]),
    "UINT16": ("TYPE_UINT16", "H", "uint_contents", [0, 65535, 7]),
    "UINT32": ("TYPE_UINT32", "I", "uint_contents", [0, 4294967295, 7]),
    "UINT64": ("TYPE_UINT64", "Q", "uint64_contents", [0, 18446744073709551615, 7]),
    "INT8": ("TYPE_INT8", "b", "int_contents", [-128, 127, 0]),
    "INT16": ("TYPE_INT16", "h", "int_contents", [-32768, 32767, 0]),
    "INT32": ("TYPE_INT32", "i", "int_contents", [-2147483648, 2147483647, 0]),
    "INT64": ("TYPE_INT64", "q", "int64_contents", [-9223372036854775808, 9223372036854775807, 0]),
    "FP16": ("TYPE_FP16", "e", None, [0.5, -2.0, 65504.0]),
    "FP32": ("TYPE_FP32", "f", "fp32_contents", [0.1, -3.4028234663852886e38, 1e-45]),
    "FP64": ("TYPE_FP64", "d", "fp64_contents", [0.1, -1.7976931348623157e308, 5e-324]),
    "BF16": ("TYPE_BF16", None, None, [1.0, -0.5, 3.0]),
    "BYTES": ("TYPE_STRING", None, "bytes_contents", [b"hello", b"", b"\xff\x00binary"]),
}

ADD_SUB_INT8_CONFIG = """
name: "add_sub_int8"
backend: "add_sub"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT8 dims: [ -1 ] },
        { name: "INPUT1" data_type: TYPE_INT8 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT8 dims: [ -1 ] },
         { name: "OUTPUT1" data_type: TYPE_INT8 dims: [ -1 ] } ]
"""

def identity_config(name, config_type):
    return f"""
name: "{name}"
backend: "identity"
max_batch_size: 0
input [ {{ name: "INPUT0" data_type: {config_type} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: {config_type} dims: [ -1 ] }} ]
"""


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-") as path:
        write_model(path, "simple", SIMPLE_CONFIG_2_INSTANCES, versions=(1, 2))
        write_model(path, "add_sub_int8", ADD_SUB_INT8_CONFIG)
        write_model(path, "slow", SLOW_CONFIG)
        for kserve, (config_type, _, _, _) in DATATYPES.items():
            name = f"identity_{kserve.lower()}"
            write_model(path, name, identity_config(name, config_type))
        yield path


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo, "--log-verbose", "1")
    s.wait_ready()
    yield s
    s.stop()


def channel_to(server):
    return grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}",
                                 options=[("grpc.max_send_message_length", -1),
                                          ("grpc.max_receive_message_length", -1)])


@pytest.fixture(scope="module")
def stub(server):
    with channel_to(server) as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


# --- helpers ---------------------------------------------------------------------------

def pack(kserve, values):
    _, fmt, _, _ = DATATYPES[kserve]
    if kserve == "BYTES":
        return b"".join(struct.pack("<I", len(v)) + v for v in values)
    if kserve == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def add_input(request, name, datatype, shape, values=None, raw=None):
    tensor = request.inputs.add(name=name, datatype=datatype, shape=shape)
    if raw is not None:
        request.raw_input_contents.append(raw)
    elif values is not None:
        getattr(tensor.contents, DATATYPES[datatype][2]).extend(values)
    return tensor


def simple_request(a=None, b=None, rows=1, raw=True, **fields):
    a = a if a is not None else list(range(16 * rows))
    b = b if b is not None else [1] * (16 * rows)
    request = pb.ModelInferRequest(model_name="simple", **fields)
    for name, values in (("INPUT0", a), ("INPUT1", b)):
        if raw:
            add_input(request, name, "INT32", [rows, 16], raw=struct.pack(f"<{len(values)}i", *values))
        else:
            add_input(request, name, "INT32", [rows, 16], values=values)
    return request


def raw_int32(response, index):
    data = response.raw_output_contents[index]
    return list(struct.unpack(f"<{len(data) // 4}i", data))


def expect_error(call, code, needle=""):
    with pytest.raises(grpc.RpcError) as error:
        call()
    assert error.value.code() == code, error.value.details()
    assert needle in error.value.details(), error.value.details()
    return error.value.details()


# --- health and metadata ---------------------------------------------------------------

def test_server_live_ready_and_metadata(server, stub):
    assert stub.ServerLive(pb.ServerLiveRequest()).live
    assert stub.ServerReady(pb.ServerReadyRequest()).ready
    meta = stub.ServerMetadata(pb.ServerMetadataRequest())
    assert meta.name == "infera" and meta.version
    assert list(meta.extensions) == ["binary_tensor_data", "parameters", "model_configuration", "model_repository", "statistics", "logging", "classification", "trace", "system_shared_memory"]
    status, http_meta = server.get_json("/v2")
    assert status == 200 and http_meta["extensions"] == list(meta.extensions)


def test_standard_health_check(server):
    with channel_to(server) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        serving = health_pb2.HealthCheckResponse.SERVING
        assert health.Check(health_pb2.HealthCheckRequest()).status == serving
        assert health.Check(health_pb2.HealthCheckRequest(service="inference.GRPCInferenceService")).status == serving
        expect_error(lambda: health.Check(health_pb2.HealthCheckRequest(service="nope")),
                     grpc.StatusCode.NOT_FOUND, "unknown service 'nope'")


def test_model_metadata_and_readiness(stub):
    meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"))
    assert meta.name == "simple" and list(meta.versions) == ["2"] and meta.platform == "add_sub"
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.inputs] == [
        ("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])]
    assert [t.name for t in meta.outputs] == ["OUTPUT0", "OUTPUT1"]
    assert list(stub.ModelMetadata(pb.ModelMetadataRequest(name="simple", version="2")).versions) == ["2"]
    assert stub.ModelReady(pb.ModelReadyRequest(name="simple")).ready
    assert stub.ModelReady(pb.ModelReadyRequest(name="simple", version="2")).ready
    assert not stub.ModelReady(pb.ModelReadyRequest(name="simple", version="1")).ready  # policy: latest 1
    assert not stub.ModelReady(pb.ModelReadyRequest(name="nope")).ready
    expect_error(lambda: stub.ModelReady(pb.ModelReadyRequest(name="simple", version="x")),
                 grpc.StatusCode.INVALID_ARGUMENT, "invalid model version 'x'")
    expect_error(lambda: stub.ModelMetadata(pb.ModelMetadataRequest(name="nope")),
                 grpc.StatusCode.NOT_FOUND, "Request for unknown model: 'nope' is not found")
    expect_error(lambda: stub.ModelMetadata(pb.ModelMetadataRequest(name="simple", version="1")),
                 grpc.StatusCode.NOT_FOUND, "Request for unknown model: 'simple' version 1 is not found")


def test_model_config_over_grpc_and_http_agree(server, stub):
    config = stub.ModelConfig(pb.ModelConfigRequest(name="simple")).config
    assert config.name == "simple" and config.backend == "add_sub" and config.max_batch_size == 8
    assert [(i.name, i.data_type, list(i.dims)) for i in config.input] == [
        ("INPUT0", 8, [16]), ("INPUT1", 8, [16])]  # TYPE_INT32 is 8
    assert config.instance_group[0].count == 2
    status, http_config = server.get_json("/v2/models/simple/config")
    assert status == 200
    # Triton's JSON: proto field names, defaults printed, int64 as numbers, enums by name.
    expected = json_format.MessageToDict(config, preserving_proto_field_name=True,
                                         including_default_value_fields=True)
    expected["input"][0]["dims"] = [int(d) for d in expected["input"][0]["dims"]]
    assert http_config["input"][0]["dims"] == [16]
    assert http_config["input"][0]["data_type"] == "TYPE_INT32"
    assert http_config["instance_group"][0]["kind"] == "KIND_CPU"
    assert _normalize(http_config) == _normalize(expected)
    assert server.get_json("/v2/models/simple/versions/2/config")[1]["name"] == "simple"
    expect_error(lambda: stub.ModelConfig(pb.ModelConfigRequest(name="nope")), grpc.StatusCode.NOT_FOUND)
    assert server.get_json("/v2/models/nope/config")[0] == 404


def _normalize(value):
    """JSON from protobuf's printer writes 64-bit integers as strings; compare as numbers."""
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


# --- inference -------------------------------------------------------------------------

def test_model_infer_raw(stub):
    request = simple_request(id="req-42")
    request.parameters["foo"].int64_param = 1
    request.parameters["bar"].string_param = "x"
    response = stub.ModelInfer(request)
    assert response.model_name == "simple" and response.model_version == "2" and response.id == "req-42"
    assert [(o.name, o.datatype, list(o.shape)) for o in response.outputs] == [
        ("OUTPUT0", "INT32", [1, 16]), ("OUTPUT1", "INT32", [1, 16])]
    assert not response.outputs[0].HasField("contents")
    assert raw_int32(response, 0) == [i + 1 for i in range(16)]
    assert raw_int32(response, 1) == [i - 1 for i in range(16)]


def test_model_infer_typed_request_answers_raw(stub):
    # As Triton: the answer is always raw_output_contents, whatever form the request used.
    response = stub.ModelInfer(simple_request(raw=False, rows=2, model_version="2"))
    assert list(response.outputs[0].shape) == [2, 16]
    assert not response.outputs[0].HasField("contents")
    assert raw_int32(response, 0) == [i + 1 for i in range(32)]
    assert raw_int32(response, 1) == [i - 1 for i in range(32)]


def test_requested_output_subset(stub):
    request = simple_request()
    request.outputs.add(name="OUTPUT1")
    response = stub.ModelInfer(request)
    assert [o.name for o in response.outputs] == ["OUTPUT1"]
    assert raw_int32(response, 0) == [i - 1 for i in range(16)]


def _as_stored(kserve, values):
    """The values as the datatype stores them (FP32 rounds)."""
    if kserve == "FP32":
        return [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]
    return values


@pytest.mark.parametrize("kserve", sorted(DATATYPES))
def test_every_datatype_typed_contents(stub, kserve):
    _, _, field, values = DATATYPES[kserve]
    request = pb.ModelInferRequest(model_name=f"identity_{kserve.lower()}")
    tensor = request.inputs.add(name="INPUT0", datatype=kserve, shape=[3])
    if field is None:  # FP16 / BF16: the protocol has no typed field for them
        tensor.contents.fp32_contents.extend(values)
        expect_error(lambda: stub.ModelInfer(request), grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents")
        return
    getattr(tensor.contents, field).extend(values)
    response = stub.ModelInfer(request)
    out = response.outputs[0]
    assert out.datatype == kserve and list(out.shape) == [3]
    assert not out.HasField("contents")
    assert list(response.raw_output_contents) == [pack(kserve, values)]


@pytest.mark.parametrize("kserve", sorted(DATATYPES))
def test_every_datatype_raw_contents(stub, kserve):
    _, _, _, values = DATATYPES[kserve]
    blob = pack(kserve, values)
    request = pb.ModelInferRequest(model_name=f"identity_{kserve.lower()}")
    add_input(request, "INPUT0", kserve, [3], raw=blob)
    response = stub.ModelInfer(request)
    assert response.outputs[0].datatype == kserve and list(response.outputs[0].shape) == [3]
    assert list(response.raw_output_contents) == [blob]


def test_non_finite_floats_typed(stub):
    request = pb.ModelInferRequest(model_name="identity_fp64")
    add_input(request, "INPUT0", "FP64", [3], values=[math.nan, math.inf, -math.inf])
    data = struct.unpack("<3d", stub.ModelInfer(request).raw_output_contents[0])
    assert math.isnan(data[0]) and data[1] == math.inf and data[2] == -math.inf


def bad_requests():
    """Bad requests: (id, request, expected code, text the message must contain)."""
    cases = []
    r = simple_request()
    r.inputs[0].shape[:] = [1, 15]
    r.inputs[1].shape[:] = [1, 15]
    r.raw_input_contents[:] = [struct.pack("<15i", *range(15))] * 2
    cases.append(("wrong_shape", r, grpc.StatusCode.INVALID_ARGUMENT, "[1,15]"))
    r = simple_request(raw=False)
    r.inputs[0].shape[:] = [1, 15]
    cases.append(("typed_count_mismatch", r, grpc.StatusCode.INVALID_ARGUMENT, "16 values in int_contents"))
    r = simple_request()
    r.inputs[0].datatype = "FP32"
    cases.append(("wrong_datatype", r, grpc.StatusCode.INVALID_ARGUMENT, "FP32"))
    r = simple_request()
    del r.inputs[1]
    del r.raw_input_contents[1]
    cases.append(("missing_input", r, grpc.StatusCode.INVALID_ARGUMENT, "missing input 'INPUT1'"))
    r = simple_request()
    add_input(r, "EXTRA", "INT32", [1], raw=struct.pack("<i", 1))
    cases.append(("unknown_input", r, grpc.StatusCode.INVALID_ARGUMENT, "EXTRA"))
    r = simple_request()
    del r.raw_input_contents[1]
    cases.append(("raw_count", r, grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents has 1 entries for 2 inputs"))
    r = simple_request()
    r.raw_input_contents[0] = r.raw_input_contents[0][:10]
    cases.append(("raw_size", r, grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents[0]"))
    r = simple_request()
    r.inputs[0].contents.int_contents.extend([1] * 16)
    cases.append(("raw_and_typed", r, grpc.StatusCode.INVALID_ARGUMENT, "use one form"))
    r = simple_request(raw=False)
    r.inputs[0].contents.ClearField("int_contents")
    r.inputs[0].contents.fp32_contents.extend([1.0] * 16)
    cases.append(("typed_wrong_field", r, grpc.StatusCode.INVALID_ARGUMENT, "sets fp32_contents"))
    r = simple_request(raw=False)
    r.inputs[0].contents.int_contents[0] = 1000
    r.inputs[0].datatype = "INT8"
    cases.append(("typed_out_of_range", r, grpc.StatusCode.INVALID_ARGUMENT, "out of range for INT8"))
    cases.append(("batch_too_large", simple_request(rows=9), grpc.StatusCode.INVALID_ARGUMENT, "max_batch_size"))
    r = simple_request()
    r.outputs.add(name="NOPE")
    cases.append(("unknown_output", r, grpc.StatusCode.INVALID_ARGUMENT, "NOPE"))
    r = simple_request()
    r.inputs[0].datatype = "FLOAT"
    cases.append(("bad_datatype_name", r, grpc.StatusCode.INVALID_ARGUMENT, "unknown datatype 'FLOAT'"))
    r = simple_request()
    r.inputs[0].shape[:] = [2 ** 62, 2 ** 62]
    cases.append(("huge_shape", r, grpc.StatusCode.INVALID_ARGUMENT, "INPUT0"))
    r = simple_request()
    r.model_name = "nope"
    cases.append(("unknown_model", r, grpc.StatusCode.NOT_FOUND, "Request for unknown model: 'nope' is not found"))
    r = simple_request(model_version="7")
    cases.append(("unknown_version", r, grpc.StatusCode.NOT_FOUND, "Request for unknown model: 'simple' version 7 is not found"))
    r = simple_request(model_version="seven")
    cases.append(("bad_version", r, grpc.StatusCode.INVALID_ARGUMENT, "invalid model version 'seven'"))
    r = simple_request()
    r.model_name = ""
    cases.append(("no_model_name", r, grpc.StatusCode.INVALID_ARGUMENT, "model_name is empty"))
    return cases


BAD_REQUESTS = bad_requests()


@pytest.mark.parametrize("name,request_,code,needle", BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_requests_get_a_clear_status(stub, name, request_, code, needle):
    expect_error(lambda: stub.ModelInfer(request_), code, needle)
    assert stub.ModelInfer(simple_request()).outputs  # still serving


# --- streaming -------------------------------------------------------------------------

def test_stream_interleaves_good_and_bad_requests_in_band(stub):
    requests, expected = [], {}
    for i in range(60):
        kind = i % 4
        if kind == 0:
            r = simple_request(a=[i] * 16, id=f"r{i}")
        elif kind == 1:
            r = simple_request(id=f"r{i}")
            r.model_name = "nope"
        elif kind == 2:
            r = simple_request(id=f"r{i}")
            r.inputs[0].shape[:] = [1, 15]
        else:
            r = simple_request(a=[i] * 16, id=f"r{i}", raw=False)
        requests.append(r)
        expected[f"r{i}"] = kind
    answers = {}
    for answer in stub.ModelStreamInfer(iter(requests)):
        answers[answer.infer_response.id] = answer
    assert sorted(answers) == sorted(expected)
    for rid, kind in expected.items():
        a, i = answers[rid], int(rid[1:])
        if kind == 0:
            assert a.error_message == "" and raw_int32(a.infer_response, 0) == [i + 1] * 16
        elif kind == 1:
            assert "Request for unknown model: 'nope' is not found" in a.error_message and a.infer_response.model_name == "nope"
        elif kind == 2:
            assert "INPUT0" in a.error_message and "[1,15]" in a.error_message
        else:
            assert a.error_message == "" and raw_int32(a.infer_response, 0) == [i + 1] * 16


class RequestFeed:
    """A request iterator the test feeds by hand (the stream stays open until close())."""

    def __init__(self):
        self._queue = queue.Queue()

    def put(self, request):
        self._queue.put(request)

    def close(self):
        self._queue.put(None)

    def __iter__(self):
        return self

    def __next__(self):
        item = self._queue.get()
        if item is None:
            raise StopIteration
        return item


def test_stream_answers_as_it_goes_then_cancel_leaves_the_server_healthy(stub):
    feed = RequestFeed()
    call = stub.ModelStreamInfer(feed)
    for i in range(3):
        feed.put(simple_request(a=[i] * 16, id=f"s{i}"))
        answer = next(call)  # answered while the stream stays open
        assert answer.infer_response.id == f"s{i}" and raw_int32(answer.infer_response, 0) == [i + 1] * 16
    feed.put(pb.ModelInferRequest(model_name="slow", id="slow-1", inputs=[
        pb.ModelInferRequest.InferInputTensor(name="INPUT0", datatype="INT32", shape=[1])],
        raw_input_contents=[struct.pack("<i", 5)]))
    call.cancel()
    with pytest.raises(grpc.RpcError) as error:
        next(call)
    assert error.value.code() == grpc.StatusCode.CANCELLED
    feed.close()
    # A fresh stream works.
    answers = list(stub.ModelStreamInfer(iter([simple_request(id="after")])))
    assert [a.infer_response.id for a in answers] == ["after"]


def test_cancelling_a_call_reaches_the_scheduler(server, stub):
    before = slow_stats(stub)
    running = stub.ModelInfer.future(slow_request("keep"))
    # Wait for events, not sleeps: `keep` is executing (300 ms), then `abandon` waits in
    # the queue behind it.
    wait_for(lambda: server.model_gauge("infera_inflight_requests", "slow") == 1
             and server.model_gauge("infera_queue_depth", "slow") == 0)
    abandoned = stub.ModelInfer.future(slow_request("abandon"))
    wait_for(lambda: server.model_gauge("infera_queue_depth", "slow") == 1)
    assert abandoned.cancel()
    assert abandoned.cancelled()
    assert running.result(timeout=30).id == "keep"
    wait_for(lambda: "gRPC ModelInfer cancelled by the client" in server.log())
    # The cancelled request is dropped before it runs: one more execution, one failure.
    after = wait_for(lambda: (lambda s: s if s.inference_stats.fail.count > before.inference_stats.fail.count
                              else None)(slow_stats(stub)))
    assert after.execution_count == before.execution_count + 1
    assert after.inference_stats.success.count == before.inference_stats.success.count + 1
    assert after.inference_stats.fail.count == before.inference_stats.fail.count + 1


def test_deadline_exceeded_is_reported_and_server_goes_on(stub):
    expect_error(lambda: stub.ModelInfer(slow_request("late"), timeout=0.05), grpc.StatusCode.DEADLINE_EXCEEDED)
    assert stub.ModelInfer(simple_request()).outputs


# --- concurrency -----------------------------------------------------------------------

def test_many_concurrent_unary_calls_get_their_own_results(stub):
    futures = [(k, stub.ModelInfer.future(simple_request(a=[k] * 16, b=[k % 7] * 16, id=str(k))))
               for k in range(300)]
    for k, future in futures:
        response = future.result(timeout=60)
        assert response.id == str(k) and raw_int32(response, 0) == [k + k % 7] * 16


def test_many_streams_at_once(server):
    errors = []

    def client(k):
        try:
            with channel_to(server) as channel:
                stream_stub = pb_grpc.GRPCInferenceServiceStub(channel)
                requests = [simple_request(a=[k * 100 + i] * 16, b=[k] * 16, id=f"{k}-{i}") for i in range(40)]
                answers = {a.infer_response.id: a for a in stream_stub.ModelStreamInfer(iter(requests))}
                for i in range(40):
                    a = answers[f"{k}-{i}"]
                    if a.error_message or raw_int32(a.infer_response, 0) != [k * 100 + i + k] * 16:
                        errors.append((k, i, a.error_message))
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# --- statistics and repository index (gRPC and HTTP) ------------------------------------

def test_statistics_add_up_over_grpc_and_http(server, stub):
    def stats():
        return stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple", version="2")).model_stats[0]

    before = stats()
    for i in range(5):
        stub.ModelInfer(simple_request(rows=2))
    for i in range(3):
        stub.ModelInfer(simple_request(rows=1))
    expect_error(lambda: stub.ModelInfer(simple_request(rows=9)), grpc.StatusCode.INVALID_ARGUMENT)
    after = stats()
    assert after.name == "simple" and after.version == "2"
    assert after.inference_count - before.inference_count == 13  # rows: 5*2 + 3*1
    assert after.execution_count - before.execution_count == 8
    assert after.inference_stats.success.count - before.inference_stats.success.count == 8
    assert after.inference_stats.fail.count - before.inference_stats.fail.count == 1
    assert after.inference_stats.success.ns > before.inference_stats.success.ns
    assert after.last_inference >= before.last_inference > 1600000000000
    batch = {b.batch_size: b.compute_infer.count for b in after.batch_stats}
    assert batch[2] >= 5 and batch[1] >= 3

    status, body = server.get_json("/v2/models/simple/versions/2/stats")
    assert status == 200
    (http,) = body["model_stats"]
    assert http["name"] == "simple" and http["version"] == "2"
    assert http["inference_count"] == after.inference_count
    assert http["execution_count"] == after.execution_count
    assert http["last_inference"] == after.last_inference
    for stage in ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output"):
        assert http["inference_stats"][stage]["count"] == getattr(after.inference_stats, stage).count, stage
        assert isinstance(http["inference_stats"][stage]["ns"], int)
    assert {b["batch_size"]: b["compute_infer"]["count"] for b in http["batch_stats"]} == batch

    everything = stub.ModelStatistics(pb.ModelStatisticsRequest()).model_stats
    assert {(s.name, s.version) for s in everything} >= {("simple", "2"), ("slow", "1"), ("identity_fp32", "1")}
    status, body = server.get_json("/v2/models/stats")
    assert status == 200 and len(body["model_stats"]) == len(everything)
    assert server.get_json("/v2/models/simple/stats")[1]["model_stats"][0]["version"] == "2"
    expect_error(lambda: stub.ModelStatistics(pb.ModelStatisticsRequest(name="nope")), grpc.StatusCode.NOT_FOUND)
    assert server.get_json("/v2/models/nope/stats")[0] == 404


def test_repository_index_over_grpc_and_http(server, stub):
    models = stub.RepositoryIndex(pb.RepositoryIndexRequest()).models
    rows = [(m.name, m.version, m.state, m.reason) for m in models]
    assert ("simple", "2", "READY", "") in rows and ("slow", "1", "READY", "") in rows
    assert len(rows) == 3 + len(DATATYPES)
    status, _, body = server.request("POST", "/v2/repository/index", "")
    assert status == 200
    http_rows = [(m["name"], m.get("version", ""), m["state"], m["reason"]) for m in json.loads(body)]
    assert http_rows == rows
    status, _, body = server.request("POST", "/v2/repository/index", json.dumps({"ready": True}))
    assert status == 200 and len(json.loads(body)) == len(rows)
    assert server.request("GET", "/v2/repository/index")[0] == 405
    assert server.request("POST", "/v2/repository/index", "{nope")[0] == 400


def test_not_ready_server_and_failed_model_in_the_index():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-bad-") as path:
        write_model(path, "simple", SIMPLE_CONFIG_2_INSTANCES)
        write_model(path, "broken", 'name: "broken"\nbackend: "add_sub"\nmax_batch_size: "x"\n')
        s = InferaServer(path)
        try:
            s.wait_ready()
            with channel_to(s) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                assert stub.ServerLive(pb.ServerLiveRequest()).live
                assert not stub.ServerReady(pb.ServerReadyRequest()).ready  # strict readiness
                health = health_pb2_grpc.HealthStub(channel)
                assert health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.NOT_SERVING
                assert not stub.ModelReady(pb.ModelReadyRequest(name="broken")).ready
                expect_error(lambda: stub.ModelConfig(pb.ModelConfigRequest(name="broken")),
                             grpc.StatusCode.UNAVAILABLE, "max_batch_size")
                index = {m.name: m for m in stub.RepositoryIndex(pb.RepositoryIndexRequest()).models}
                assert index["broken"].state == "UNAVAILABLE" and index["broken"].version == ""
                assert "broken/config.pbtxt" in index["broken"].reason
                ready = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True)).models
                assert [m.name for m in ready] == ["simple"]
                assert stub.ModelInfer(simple_request()).outputs
        finally:
            s.stop()


# --- message limits --------------------------------------------------------------------

def test_message_limit_is_configurable_with_a_clear_error():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-limit-") as path:
        write_model(path, "add_sub_int8", ADD_SUB_INT8_CONFIG)
        s = InferaServer(path, "--grpc-max-message-bytes", "4096")
        try:
            s.wait_ready()
            with channel_to(s) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)

                def int8_request(n, raw):
                    request = pb.ModelInferRequest(model_name="add_sub_int8")
                    for name, value in (("INPUT0", 0), ("INPUT1", 1)):
                        if raw:
                            add_input(request, name, "INT8", [n], raw=struct.pack(f"<{n}b", *([value] * n)))
                        else:
                            add_input(request, name, "INT8", [n], values=[value] * n)
                    return request

                assert stub.ModelInfer(int8_request(100, raw=True)).outputs
                # A request over the limit: refused by gRPC before it is read.
                details = expect_error(lambda: stub.ModelInfer(int8_request(3000, raw=True)),
                                       grpc.StatusCode.RESOURCE_EXHAUSTED)
                assert "4096" in details, details
                # A small request whose answer is over the limit (classified, each 1-byte
                # element becomes a "value:index" string): the error names the flag.
                big_answer = int8_request(300, raw=True)
                for name in ("OUTPUT0", "OUTPUT1"):
                    big_answer.outputs.add(name=name).parameters["classification"].int64_param = 300
                details = expect_error(lambda: stub.ModelInfer(big_answer),
                                       grpc.StatusCode.RESOURCE_EXHAUSTED, "--grpc-max-message-bytes")
                assert stub.ModelInfer(int8_request(100, raw=False)).outputs  # still serving
        finally:
            s.stop()


def test_sigterm_drains_an_open_stream_promptly():
    with tempfile.TemporaryDirectory(prefix="infera-grpc-drain-") as path:
        write_model(path, "simple", SIMPLE_CONFIG_2_INSTANCES)
        s = InferaServer(path, "--exit-timeout-secs", "30")
        s.wait_ready()
        with channel_to(s) as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            feed = RequestFeed()
            call = stub.ModelStreamInfer(feed)
            feed.put(simple_request(id="before-stop"))
            assert next(call).infer_response.id == "before-stop"
            started = time.time()
            s.stop()  # SIGTERM with an idle stream open: must not wait out the 30 s
            assert time.time() - started < 10
            with pytest.raises(grpc.RpcError) as error:
                next(call)
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE
            feed.close()


def test_repository_load_and_unload_over_grpc():
    """Triton's RepositoryModelLoad / RepositoryModelUnload, explicit mode, admin token."""
    with tempfile.TemporaryDirectory(prefix="infera-grpc-repo-") as path:
        write_model(path, "a", identity_config("a", "TYPE_FP32"))
        write_model(path, "b", identity_config("b", "TYPE_FP32"))
        server = InferaServer(path, "--model-control-mode", "explicit", "--load-model", "a",
                              "--admin-token", "tok")
        try:
            server.wait_ready()
            with channel_to(server) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                auth = [("authorization", "Bearer tok")]
                assert not stub.ModelReady(pb.ModelReadyRequest(name="b")).ready
                expect_error(lambda: stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="b")),
                             grpc.StatusCode.UNAUTHENTICATED, "admin token")
                stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="b"), metadata=auth)
                assert stub.ModelReady(pb.ModelReadyRequest(name="b")).ready
                config = json.dumps({"name": "b", "backend": "identity", "max_batch_size": 0,
                                     "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [-1]}],
                                     "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [-1]}]})
                request = pb.RepositoryModelLoadRequest(model_name="b")
                request.parameters["config"].string_param = config
                stub.RepositoryModelLoad(request, metadata=auth)
                meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="b"))
                assert meta.inputs[0].datatype == "INT32"  # the override is what serves
                stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="a"), metadata=auth)
                assert not stub.ModelReady(pb.ModelReadyRequest(name="a")).ready
                expect_error(lambda: stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="a"),
                                                                metadata=auth),
                             grpc.StatusCode.NOT_FOUND, "not loaded")
                expect_error(lambda: stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="../x"),
                                                              metadata=auth),
                             grpc.StatusCode.INVALID_ARGUMENT, "not a valid model name")
        finally:
            server.stop()


def test_repository_load_is_refused_outside_explicit_mode(stub):
    expect_error(lambda: stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="simple")),
                 grpc.StatusCode.FAILED_PRECONDITION, "explicit")


def test_a_models_own_fault_is_internal_not_invalid_argument(tmp_path):
    """A TorchScript model that returns FP64 where its config declares FP32 is the
    model's fault: INTERNAL naming the output, not INVALID_ARGUMENT (the HTTP side, 500,
    and the canary rollback it triggers are in test_lifecycle.py)."""
    import torch  # noqa: PLC0415 - only this test needs LibTorch in Python

    class WrongDtype(torch.nn.Module):
        def forward(self, x):
            return (x * 2).double()

    write_model(str(tmp_path), "wrong_dtype", """
name: "wrong_dtype"
platform: "pytorch_libtorch"
max_batch_size: 4
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
""")
    torch.jit.script(WrongDtype()).save(str(tmp_path / "wrong_dtype" / "1" / "model.pt"))
    server = InferaServer(str(tmp_path))
    try:
        server.wait_ready()
        with channel_to(server) as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            request = pb.ModelInferRequest(model_name="wrong_dtype")
            add_input(request, "INPUT__0", "FP32", [1, 2], raw=struct.pack("<2f", 1.0, 2.0))
            expect_error(lambda: stub.ModelInfer(request), grpc.StatusCode.INTERNAL,
                         "output 'OUTPUT__0': the model returned FP64 but the config declares TYPE_FP32")
            # The server goes on serving.
            assert stub.ServerLive(pb.ServerLiveRequest()).live
    finally:
        server.stop()

"""Triton's trace mode "triton": trace files, black box (issue 28, L0_trace).

- The settings answers Triton's trace_endpoint_test expects, over HTTP and gRPC, for a
  server started as its test.sh starts Triton (--trace-config triton,file=... level=...
  rate=...): trace_mode "triton" and the trace_file read back, TENSORS accepted, the
  model/global precedence and clearing, the refusal of trace_file updates, and Triton's
  "Request for unknown model : X".
- The file: every sampled request (rate, count as Triton counts them) as Triton's JSON
  trace objects, timestamps by Triton's names and in order, HTTP_* or GRPC_* by
  transport; log_frequency makes file.0, file.1, ...; TENSORS writes the tensors' values.
- Hostile: a trace file that is a symbolic link or in a missing directory is a one-line
  start-up error; a link planted at file.N is not followed; out-of-range and network
  trace_file / trace_mode updates are 400 and the server keeps serving.
"""

import json
import os
import struct
import subprocess
import tempfile

import grpc
import pytest

from google.protobuf import json_format
from grpc_stubs import pb, pb_grpc
from infera_server import BINARY, InferaServer, write_model

SIMPLE = """
name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
"""

HTTP_BODY = json.dumps({"inputs": [
    {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]},
    {"name": "INPUT1", "shape": [1, 4], "datatype": "INT32", "data": [1, 1, 1, 1]}]}).encode()

HTTP_POINTS = ["HTTP_RECV_START", "HTTP_RECV_END", "REQUEST_START", "QUEUE_START", "COMPUTE_START",
               "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END",
               "HTTP_SEND_START", "HTTP_SEND_END"]
GRPC_POINTS = [p.replace("HTTP_RECV", "GRPC_WAITREAD").replace("HTTP_SEND", "GRPC_SEND") for p in HTTP_POINTS]


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-trace-file-") as path:
        write_model(path, "simple", SIMPLE, (1,))
        yield path


@pytest.fixture
def out():
    with tempfile.TemporaryDirectory(prefix="infera-traces-") as path:
        yield path


class Server:
    """An infera with a trace file, its HTTP JSON and gRPC trace-setting calls."""

    def __init__(self, repo, *args):
        self.server = InferaServer(repo, "--allow-admin-api", "trace", *args)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.server.grpc_port}")
        grpc.channel_ready_future(self.channel).result(timeout=10)
        self.stub = pb_grpc.GRPCInferenceServiceStub(self.channel)
        self.server.wait_ready()

    def http(self, model=None, settings=None):
        path = f"/v2/models/{model}/trace/setting" if model else "/v2/trace/setting"
        if settings is None:
            status, _, body = self.server.request("GET", path)
        else:
            status, _, body = self.server.request("POST", path, json.dumps(settings).encode())
        return status, json.loads(body)

    def ok(self, model=None, settings=None):
        status, body = self.http(model, settings)
        assert status == 200, body
        return body

    def grpc(self, model="", settings=None):
        request = pb.TraceSettingRequest(model_name=model)
        for name, value in (settings or {}).items():
            entry = request.settings[name]  # None: the entry with no values (clears)
            if value is not None:
                entry.value.extend(value if isinstance(value, list) else [value])
        return {k: list(v.value) for k, v in self.stub.TraceSetting(request).settings.items()}

    def infer_http(self, count=1):
        for _ in range(count):
            status, _, body = self.server.infer("simple", HTTP_BODY)
            assert status == 200, body

    def infer_grpc(self, count=1):
        request = pb.ModelInferRequest(model_name="simple")
        for name, values in (("INPUT0", (1, 2, 3, 4)), ("INPUT1", (1, 1, 1, 1))):
            request.inputs.add(name=name, datatype="INT32", shape=[1, 4])
            request.raw_input_contents.append(struct.pack("<4i", *values))
        for _ in range(count):
            self.stub.ModelInfer(request)

    def stop(self):
        self.channel.close()
        self.server.stop()


def as_lists(settings):
    return {k: (v if isinstance(v, list) else [v]) for k, v in settings.items()}


def traces(path):
    """Trace id -> {"model": header, "timestamps": [(name, ns)], "tensors": [...]}; checks
    the file is one JSON array of Triton's objects."""
    with open(path) as f:
        objects = json.load(f)
    assert isinstance(objects, list)
    found = {}
    for o in objects:
        t = found.setdefault(o["id"], {"model": None, "timestamps": [], "tensors": []})
        if "model_name" in o:
            assert t["model"] is None, o
            t["model"] = o
        elif "timestamps" in o:
            t["timestamps"].extend((s["name"], s["ns"]) for s in o["timestamps"])
        else:
            assert o["activity"] in ("TENSOR_QUEUE_INPUT", "TENSOR_BACKEND_OUTPUT"), o
            t["tensors"].append(o)
    for t in found.values():
        assert t["model"] is not None
    return found


def check_ordered(trace):
    names = [n for n, _ in trace["timestamps"]]
    expected = GRPC_POINTS if names[0].startswith("GRPC") else HTTP_POINTS
    assert names == expected, names
    ns = [v for _, v in trace["timestamps"]]
    assert ns == sorted(ns), trace["timestamps"]
    return "grpc" if expected is GRPC_POINTS else "http"


def start_args(path, *extra):
    return ("--trace-config", f"triton,file={path}", "--trace-config", "level=TIMESTAMPS",
            "--trace-config", "rate=1", *extra)


def initial(path):
    return {"trace_file": path, "trace_level": ["TIMESTAMPS"], "trace_rate": "1", "trace_count": "-1",
            "log_frequency": "0", "trace_mode": "triton"}


def test_settings_answer_as_tritons_endpoint_test_expects(repo, out):
    path = os.path.join(out, "global_unittest.log")
    s = Server(repo, *start_args(path))
    try:
        start = initial(path)
        clear = {"trace_file": None, "trace_level": None, "trace_rate": None, "trace_count": None,
                 "log_frequency": None}
        for transport in ("http", "grpc"):
            # Get: the model follows the global settings; unknown models named Triton's way.
            assert s.ok("simple") == start and s.ok() == start
            assert s.grpc("simple") == as_lists(start) and s.grpc() == as_lists(start)
            status, body = s.http("does-not-exist")
            assert status == 404 and body["error"] == "Request for unknown model : does-not-exist"
            status, body = s.http("does-not-exist", {"trace_rate": "2"})
            assert status == 404 and "Request for unknown model : does-not-exist" in body["error"]
            with pytest.raises(grpc.RpcError) as error:
                s.grpc("does-not-exist")
            assert "Request for unknown model : does-not-exist" in error.value.details()

            # Update: the file is not the client's to choose; levels read back in order.
            if transport == "http":
                status, body = s.http("simple", {"trace_file": "model.log"})
                assert status == 400
                assert "trace file location can not be updated through network protocol" in body["error"]
                glob = s.ok(settings={"trace_level": ["TIMESTAMPS", "TENSORS"]})
            else:
                with pytest.raises(grpc.RpcError) as error:
                    s.grpc("simple", {"trace_file": "model.log"})
                assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                glob = s.grpc(settings={"trace_level": ["TIMESTAMPS", "TENSORS"]})
                glob = {k: v if k == "trace_level" else v[0] for k, v in glob.items()}
            assert glob == dict(start, trace_level=["TIMESTAMPS", "TENSORS"])
            assert s.ok("simple") == glob

            # Clear: a global setting returns to its start value, a model's follows the global.
            s.ok("simple", {"trace_rate": "12", "log_frequency": "34"})
            s.ok(settings={"trace_rate": "56", "trace_count": "78", "trace_level": ["OFF"]})
            off = dict(start, trace_level=["OFF"])
            if transport == "http":
                assert s.ok(settings={"trace_rate": None, "trace_count": None}) == off
                assert s.ok("simple") == dict(off, trace_rate="12", log_frequency="34")
                assert s.ok("simple", {"trace_rate": None, "trace_level": None}) == dict(off, log_frequency="34")
            else:
                assert s.grpc(settings={"trace_rate": None, "trace_count": None}) == as_lists(off)
                assert s.grpc("simple") == as_lists(dict(off, trace_rate="12", log_frequency="34"))
                assert s.grpc("simple", {"trace_rate": None, "trace_level": None}) == \
                    as_lists(dict(off, log_frequency="34"))
            assert s.ok() == off
            # Triton's tearDown: clear everything (trace_file included) for both scopes.
            s.ok("simple", clear)
            s.ok(settings=clear)
        assert s.ok() == start and s.ok("simple") == start
    finally:
        s.stop()


def test_every_sampled_request_is_written_with_ordered_timestamps(repo, out):
    path = os.path.join(out, "trace.json")
    s = Server(repo, *start_args(path))
    try:
        s.infer_http(5)
        s.infer_grpc(5)
        assert not os.path.exists(path + ".0")
    finally:
        s.stop()
    found = traces(path)
    assert sorted(found) == list(range(1, 11))
    transports = [check_ordered(t) for t in found.values()]
    assert transports.count("http") == 5 and transports.count("grpc") == 5
    for t in found.values():
        assert t["model"]["model_name"] == "simple" and t["model"]["model_version"] == 1
        assert t["tensors"] == []


def test_rate_and_log_frequency_as_triton_counts_them(repo, out):
    # The deprecated flags: every 3rd request, a file every 2 traces.
    path = os.path.join(out, "t.log")
    s = Server(repo, "--trace-file", path, "--trace-level", "TIMESTAMPS", "--trace-rate", "3",
               "--trace-log-frequency", "2")
    try:
        assert s.ok()["log_frequency"] == "2"
        s.infer_http(5)
        s.infer_grpc(5)  # requests 3, 6 and 9 are traced
    finally:
        s.stop()
    assert not os.path.exists(path)
    first, second = traces(path + ".0"), traces(path + ".1")
    assert len(first) == 2 and len(second) == 1
    assert not os.path.exists(path + ".2")
    for t in list(first.values()) + list(second.values()):
        check_ordered(t)


def test_trace_count_stops_tracing_and_reads_back_zero(repo, out):
    path = os.path.join(out, "count.log")
    s = Server(repo, *start_args(path))
    try:
        s.infer_http(4)
        assert s.ok(settings={"trace_count": "2"})["trace_count"] == "2"
        s.infer_http(3)
        s.infer_grpc(2)
        assert s.ok("simple")["trace_count"] == "0"
        assert s.grpc()["trace_count"] == ["0"]
    finally:
        s.stop()
    assert len(traces(path)) == 4 + 2


def test_tensors_level_writes_inputs_and_outputs(repo, out):
    path = os.path.join(out, "tensors.json")
    s = Server(repo, "--trace-config", f"triton,file={path}", "--trace-config", "level=TENSORS",
               "--trace-config", "rate=1")
    try:
        assert s.ok()["trace_level"] == ["TENSORS"]
        s.infer_http(1)
        s.ok(settings={"trace_level": ["TIMESTAMPS", "TENSORS"]})
        s.infer_grpc(1)
    finally:
        s.stop()
    found = traces(path)
    assert len(found) == 2
    only_tensors, both = found[1], found[2]
    assert only_tensors["timestamps"] == []
    check_ordered(both)
    for t in (only_tensors, both):
        by_name = {(a["activity"], a["tensor"]["name"]): a["tensor"] for a in t["tensors"]}
        assert by_name[("TENSOR_QUEUE_INPUT", "INPUT0")] == {"name": "INPUT0", "data": "1,2,3,4",
                                                             "shape": "1,4", "dtype": "INT32"}
        assert by_name[("TENSOR_BACKEND_OUTPUT", "OUTPUT0")]["data"] == "2,3,4,5"
        assert by_name[("TENSOR_BACKEND_OUTPUT", "OUTPUT1")]["data"] == "0,1,2,3"


def start_error(repo, *args):
    run = subprocess.run([BINARY, "serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0",
                          "--metrics-port", "0", *args], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0, run.stdout + run.stderr
    return run.stdout + run.stderr


def test_hostile_files_and_settings(repo, out):
    victim = os.path.join(out, "victim")
    with open(victim, "w") as f:
        f.write("keep")
    link = os.path.join(out, "link.json")
    os.symlink(victim, link)
    assert "is a symbolic link" in start_error(repo, "--trace-config", f"triton,file={link}")
    assert "does not exist" in start_error(repo, "--trace-file", os.path.join(out, "no", "t.json"))
    assert "unknown triton trace setting 'url'" in start_error(repo, "--trace-config", "triton,url=x")
    assert "is for trace mode opentelemetry" in start_error(
        repo, "--trace-config", "mode=triton", "--trace-endpoint", "http://127.0.0.1:1/v1/traces")

    # A link planted at the next indexed name is refused, not followed; the next file is used.
    path = os.path.join(out, "t.log")
    os.symlink(victim, path + ".0")
    s = Server(repo, *start_args(path, "--trace-config", "triton,log-frequency=1"))
    try:
        before = s.ok()
        for body, needle in [
            ({"trace_file": "../../etc/cron.d/x"}, "trace file location can not be updated through network protocol"),
            ({"trace_mode": "opentelemetry"}, "trace_mode can not be updated through network protocol"),
            ({"trace_count": "10000000000"}, "must be an integer in [-1, 2147483647]"),
            ({"trace_rate": "10000000000"}, "must be an integer in [0, 2147483647]"),
            ({"log_frequency": "10000000000"}, "must be an integer in [0, 2147483647]"),
            ({"trace_level": ["LOUD"]}, "unknown trace_level 'LOUD'"),
        ]:
            for model in (None, "simple"):
                status, answer = s.http(model, body)
                assert status == 400 and needle in answer["error"], (body, answer)
        assert s.ok() == before
        s.infer_http(3)  # the first trace meets the link and is dropped
        s.server.assert_serving()
    finally:
        s.stop()
    with open(victim) as f:
        assert f.read() == "keep"
    assert os.path.islink(path + ".0")
    assert len(traces(path + ".1")) == 1 and len(traces(path + ".2")) == 1

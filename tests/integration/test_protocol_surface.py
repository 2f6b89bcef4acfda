"""Triton's protocol surface over both transports, black box (issue 14 items 5-7).

- The trace extension: GET/POST /v2[/models/{m}]/trace/setting and gRPC TraceSetting, in
  Triton's shapes; the settings drive which requests are traced; gRPC ModelInfer and
  ModelStreamInfer are traced like HTTP (traceparent metadata, the same stages); hostile
  settings are 400 / INVALID_ARGUMENT and the server keeps serving; the admin guard's
  "trace" category.
- One source for each answer: server and model metadata, config, statistics and the
  repository index fetched over HTTP and gRPC agree (HTTP JSON parsed into the gRPC
  message must equal the gRPC answer), with Triton's JSON shapes; the canary routing key
  works over gRPC (parameter and x-routing-key metadata) exactly as over HTTP.
- Status texts: Triton's "Request for unknown model" wording on both transports; load /
  unload outside explicit mode are 409 / FAILED_PRECONDITION, as docs/grpc.md says.
"""

import http.server
import json
import struct
import tempfile
import threading
import time

import grpc
import pytest

from google.protobuf import json_format
from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

SIMPLE = """
name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
version_policy { all { } }
"""

# A canary that only routes (the judge never acts: min_requests out of reach).
CANARY = """
name: "m"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
version_policy { specific { versions: [ 1, 2 ] } }
parameters { key: "canary.version" value { string_value: "2" } }
parameters { key: "canary.weight_percent" value { string_value: "20" } }
parameters { key: "canary.min_requests" value { string_value: "1000000000000" } }
"""

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
HTTP_BODY = json.dumps({"inputs": [
    {"name": "INPUT0", "shape": [1, 4], "datatype": "INT32", "data": [1, 2, 3, 4]},
    {"name": "INPUT1", "shape": [1, 4], "datatype": "INT32", "data": [1, 1, 1, 1]}]}).encode()
UNKNOWN = "Request for unknown model: 'nope' is not found"


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-surface-") as path:
        write_model(path, "simple", SIMPLE, (1, 2))
        write_model(path, "m", CANARY, (1, 2))
        yield path


class Collector:
    """A tiny OTLP/HTTP receiver: every exported span, in arrival order."""

    def __init__(self):
        self.requests = []
        self.cond = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.cond:
                    outer.requests.append(body)
                    outer.cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.start()

    def spans(self):
        with self.cond:
            return [s for body in self.requests for rs in body["resourceSpans"]
                    for ss in rs["scopeSpans"] for s in ss["spans"]]

    def roots(self):
        return [s for s in self.spans() if s["kind"] == 2]

    def wait_roots(self, count, timeout=20.0):
        """Waits (on the condition, bounded) until `count` root spans have arrived."""
        deadline = time.time() + timeout
        with self.cond:
            while len([s for s in self._all() if s["kind"] == 2]) < count:
                left = deadline - time.time()
                assert left > 0, f"only {len([s for s in self._all() if s['kind'] == 2])} of {count} traces arrived"
                self.cond.wait(left)
        return self.roots()

    def _all(self):
        return [s for body in self.requests for rs in body["resourceSpans"]
                for ss in rs["scopeSpans"] for s in ss["spans"]]

    def close(self):
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()


def attributes(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def grpc_stub(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    grpc.channel_ready_future(channel).result(timeout=10)
    return channel, pb_grpc.GRPCInferenceServiceStub(channel)


def trace_request(model="", **settings):
    request = pb.TraceSettingRequest(model_name=model)
    for name, values in settings.items():
        request.settings[name].value.extend(values)
    return request


def grpc_settings(response):
    return {name: list(value.value) for name, value in response.settings.items()}


def http_settings_as_lists(body):
    return {k: (v if isinstance(v, list) else [v]) for k, v in body.items()}


def infer_request(model="simple", rows=1, **fields):
    request = pb.ModelInferRequest(model_name=model, **fields)
    for name in ("INPUT0", "INPUT1"):
        request.inputs.add(name=name, datatype="INT32", shape=[rows, 4])
        request.raw_input_contents.append(struct.pack("<4i", 1, 2, 3, 4) * rows)
    return request


def canary_request(key=None):
    request = pb.ModelInferRequest(model_name="m")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 2])
    request.raw_input_contents.append(struct.pack("<2f", 1.0, 2.0))
    if key is not None:
        request.parameters["routing_key"].string_param = key
    return request


def fnv1a_side(key, weight=20):
    """The side infera's canary routes `key` to (manager/canary.cc: FNV-1a % 10000)."""
    h = 1469598103934665603
    for c in key.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return "2" if (h % 10000) / 100.0 < weight else "1"


# --- trace extension ----------------------------------------------------------------------

def test_trace_settings_have_tritons_shape_and_agree_across_transports(repo):
    collector = Collector()
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{collector.port}/v1/traces",
                          "--trace-rate", "0.001", "--allow-admin-api", "trace")
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        status, _, body = server.request("GET", "/v2/trace/setting")
        assert status == 200, body
        settings = json.loads(body)
        assert settings == {"trace_level": ["TIMESTAMPS"], "trace_rate": "1000", "trace_count": "-1",
                            "log_frequency": "0", "trace_file": "", "trace_mode": "opentelemetry"}
        assert grpc_settings(stub.TraceSetting(trace_request())) == http_settings_as_lists(settings)
        # A gRPC update is what HTTP reads next, and the other way round.
        updated = stub.TraceSetting(trace_request(trace_rate=["7"], log_frequency=["50"]))
        assert grpc_settings(updated)["trace_rate"] == ["7"]
        assert json.loads(server.request("GET", "/v2/trace/setting")[2])["log_frequency"] == "50"
        status, _, body = server.request("POST", "/v2/models/simple/trace/setting",
                                         json.dumps({"trace_level": ["OFF"], "trace_count": "9"}))
        assert status == 200, body
        model = json.loads(body)
        assert model["trace_level"] == ["OFF"] and model["trace_count"] == "9"
        assert model["trace_rate"] == "7"  # not overridden: follows the global setting
        assert grpc_settings(stub.TraceSetting(trace_request("simple"))) == http_settings_as_lists(model)
        # Clearing: JSON null over HTTP, an empty value list over gRPC.
        cleared = grpc_settings(stub.TraceSetting(trace_request("simple", trace_count=[])))
        assert cleared["trace_count"] == ["-1"] and cleared["trace_level"] == ["OFF"]
        status, _, body = server.request("POST", "/v2/models/simple/trace/setting",
                                         json.dumps({"trace_level": None}))
        assert status == 200 and json.loads(body)["trace_level"] == ["TIMESTAMPS"], body
        assert json.loads(server.request("GET", "/v2/trace/setting")[2])["trace_level"] == ["TIMESTAMPS"]
        meta = json.loads(server.request("GET", "/v2")[2])
        assert "trace" in meta["extensions"]
    finally:
        channel.close()
        server.stop()
        collector.close()


def test_settings_drive_sampling_and_grpc_requests_are_traced(repo):
    collector = Collector()
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{collector.port}/v1/traces",
                          "--trace-rate", "0", "--allow-admin-api", "trace")
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        # trace_rate 1, trace_count 2: the first two requests are traced, then none.
        status, _, body = server.request("POST", "/v2/trace/setting",
                                         json.dumps({"trace_rate": "1", "trace_count": "2"}))
        assert status == 200, body
        for _ in range(4):
            assert server.infer("simple", HTTP_BODY)[0] == 200
        assert json.loads(server.request("GET", "/v2/trace/setting")[2])["trace_count"] == "0"
        # Back to parent-based only; gRPC unary and streaming requests carry a traceparent.
        status, _, body = server.request("POST", "/v2/trace/setting",
                                         json.dumps({"trace_rate": "0", "trace_count": "-1"}))
        assert status == 200, body
        response, call = stub.ModelInfer.with_call(infer_request(id="unary-1"),
                                                    metadata=[("traceparent", PARENT)])
        assert response.model_name == "simple"
        unary_traceparent = dict(call.initial_metadata())["traceparent"]
        assert unary_traceparent.startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
        _, call = stub.ModelInfer.with_call(infer_request(id="not-sampled"),
                                            metadata=[("traceparent", PARENT[:-2] + "00")])
        assert "traceparent" not in dict(call.initial_metadata())
        answers = list(stub.ModelStreamInfer(iter([infer_request(id="s1"), infer_request(id="s2")]),
                                             metadata=[("traceparent", PARENT)]))
        assert [a.error_message for a in answers] == ["", ""]
        # A failing gRPC request is traced with its status and the error.
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(infer_request(model="simple", model_version="9"), metadata=[("traceparent", PARENT)])
        assert error.value.code() == grpc.StatusCode.NOT_FOUND
        roots = collector.wait_roots(6)
        # Spans leave in submission order: the two HTTP traces come before every gRPC one,
        # so no third HTTP trace can still be on its way.
        protocols = [attributes(r)["infera.protocol"] for r in roots]
        assert protocols == ["http", "http", "grpc", "grpc", "grpc", "grpc"], protocols
        grpc_roots = roots[2:]
        by_id = {attributes(r)["infera.request_id"]: r for r in grpc_roots}
        assert set(by_id) == {"unary-1", "s1", "s2", ""}
        for request_id in ("unary-1", "s1", "s2"):
            root = by_id[request_id]
            assert root["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736"
            assert root["parentSpanId"] == "00f067aa0ba902b7"
            assert root["name"] == "infer simple"
            assert attributes(root)["rpc.grpc.status_code"] == "0"
            children = {s["name"] for s in collector.spans()
                        if s["kind"] == 1 and s["parentSpanId"] == root["spanId"]}
            assert children == {"parse", "queue", "compute", "serialize"}
        # The unary answer's traceparent names infera's root span, as HTTP's header does.
        assert unary_traceparent.split("-")[2] == by_id["unary-1"]["spanId"]
        failed = by_id[""]
        assert attributes(failed)["rpc.grpc.status_code"] == "5"
        assert "version 9 is not found" in failed["status"]["message"]
        # HTTP roots carry the same stages (one path for both transports).
        http_root = roots[0]
        assert attributes(http_root)["http.status_code"] == "200"
        assert {s["name"] for s in collector.spans()
                if s["kind"] == 1 and s["parentSpanId"] == http_root["spanId"]} == \
            {"parse", "queue", "compute", "serialize"}
    finally:
        channel.close()
        server.stop()
        collector.close()


def test_hostile_trace_settings_are_refused_and_the_server_keeps_serving(repo):
    collector = Collector()
    server = InferaServer(repo, "--trace-endpoint", f"http://127.0.0.1:{collector.port}/v1/traces",
                          "--allow-admin-api", "trace")
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        before = server.request("GET", "/v2/trace/setting")[2]
        cases = [
            (b"{", "trace settings"),
            (b"[]", "must be a JSON object"),
            (b'{"trace_level": ["TENSORS"]}', "TENSORS is not supported"),
            (b'{"trace_level": "LOUD"}', "unknown trace_level 'LOUD'"),
            (b'{"trace_rate": "-1"}', "must be an integer in [0, 2147483647]"),
            (b'{"trace_rate": "99999999999999999999999"}', "must be an integer"),
            (b'{"trace_rate": {"a": 1}}', "must be a string, an array of strings or null"),
            (b'{"trace_count": "-2"}', "must be an integer in [-1, 2147483647]"),
            (b'{"trace_file": "/tmp/x"}', "trace file location can not be updated through network protocol"),
            (b'{"trace_mode": "triton"}', "trace_mode can not be updated through network protocol"),
            (b'{"nope": "1"}', "unknown trace setting 'nope'"),
            (b"[" * 5000 + b"]" * 5000, "trace settings"),
        ]
        for body, needle in cases:
            status, _, answer = server.request("POST", "/v2/trace/setting", body)
            assert status == 400, (body[:40], status, answer)
            assert needle in json.loads(answer)["error"], (body[:40], answer)
        status, _, answer = server.request("GET", "/v2/models/nope/trace/setting")
        assert status == 404 and json.loads(answer)["error"] == "Request for unknown model : nope"
        assert server.request("DELETE", "/v2/trace/setting")[0] == 405
        assert server.request("GET", "/v2/trace/setting")[2] == before  # nothing changed
        for request, code, needle in [
            (trace_request(trace_level=["TENSORS"]), grpc.StatusCode.INVALID_ARGUMENT, "TENSORS"),
            (trace_request(trace_rate=["1", "2"]), grpc.StatusCode.INVALID_ARGUMENT, "exactly one value"),
            (trace_request("nope"), grpc.StatusCode.NOT_FOUND, "Request for unknown model : nope"),
        ]:
            with pytest.raises(grpc.RpcError) as error:
                stub.TraceSetting(request)
            assert error.value.code() == code and needle in error.value.details(), error.value
        assert server.infer("simple", HTTP_BODY)[0] == 200
        server.assert_serving()
    finally:
        channel.close()
        server.stop()
        collector.close()


def test_trace_without_an_exporter_stays_off(repo):
    server = InferaServer(repo, "--allow-admin-api", "trace")
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        assert json.loads(server.request("GET", "/v2/trace/setting")[2])["trace_level"] == ["OFF"]
        status, _, body = server.request("POST", "/v2/trace/setting", b'{"trace_level": ["TIMESTAMPS"]}')
        assert status == 400 and "--trace-endpoint" in json.loads(body)["error"]
        with pytest.raises(grpc.RpcError) as error:
            stub.TraceSetting(trace_request(trace_level=["TIMESTAMPS"]))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        channel.close()
        server.stop()


def test_trace_category_of_the_admin_guard(repo):
    server = InferaServer(repo, "--admin-token", "s3cret",
                          "--http-restricted-api", "trace:x-trace-key=k1",
                          "--grpc-restricted-protocol", "trace:trace-key=k2")
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        assert server.request("GET", "/v2/trace/setting")[0] == 403
        assert server.request("GET", "/v2/trace/setting", headers={"x-trace-key": "k1"})[0] == 200
        body = b'{"log_frequency": "3"}'
        assert server.request("POST", "/v2/trace/setting", body, {"x-trace-key": "k1"})[0] == 401
        status, _, answer = server.request("POST", "/v2/trace/setting", body,
                                           {"x-trace-key": "k1", "Authorization": "Bearer s3cret"})
        assert status == 200 and json.loads(answer)["log_frequency"] == "3"
        with pytest.raises(grpc.RpcError) as error:
            stub.TraceSetting(trace_request())
        assert error.value.code() == grpc.StatusCode.PERMISSION_DENIED
        read = stub.TraceSetting(trace_request(), metadata=[("triton-grpc-protocol-trace-key", "k2")])
        assert list(read.settings["log_frequency"].value) == ["3"]
        with pytest.raises(grpc.RpcError) as error:
            stub.TraceSetting(trace_request(log_frequency=["4"]),
                              metadata=[("triton-grpc-protocol-trace-key", "k2")])
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        stub.TraceSetting(trace_request(log_frequency=["4"]),
                          metadata=[("triton-grpc-protocol-trace-key", "k2"), ("authorization", "Bearer s3cret")])
        # Inference and metadata are not behind the trace category.
        assert server.infer("simple", HTTP_BODY)[0] == 200
    finally:
        channel.close()
        server.stop()


# --- one source for each answer -----------------------------------------------------------

def parsed_as(message_type, json_text):
    """HTTP's JSON read into the gRPC message type (unknown fields are an error)."""
    message = message_type()
    json_format.Parse(json_text, message, ignore_unknown_fields=False)
    return message


def test_every_answer_agrees_across_transports(repo):
    server = InferaServer(repo)
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        for _ in range(3):
            assert server.infer("simple", HTTP_BODY)[0] == 200
        stub.ModelInfer(infer_request(rows=2))

        body = server.request("GET", "/v2")[2]
        assert parsed_as(pb.ServerMetadataResponse, body) == stub.ServerMetadata(pb.ServerMetadataRequest())

        for version, path in (("", "/v2/models/simple"), ("1", "/v2/models/simple/versions/1")):
            status, _, body = server.request("GET", path)
            assert status == 200, body
            meta = json.loads(body)
            assert all(isinstance(v, str) for v in meta["versions"])  # versions as strings
            assert meta["inputs"][0]["shape"] == [-1, 4]
            assert parsed_as(pb.ModelMetadataResponse, body) == \
                stub.ModelMetadata(pb.ModelMetadataRequest(name="simple", version=version))

        body = server.request("GET", "/v2/models/simple/config")[2]
        config = stub.ModelConfig(pb.ModelConfigRequest(name="simple")).config
        assert parsed_as(type(config), body) == config
        assert json.loads(body)["max_batch_size"] == 8

        for path, request in (("/v2/models/stats", pb.ModelStatisticsRequest()),
                              ("/v2/models/simple/stats", pb.ModelStatisticsRequest(name="simple")),
                              ("/v2/models/simple/versions/2/stats",
                               pb.ModelStatisticsRequest(name="simple", version="2"))):
            body = server.request("GET", path)[2]
            stats = json.loads(body)
            first = stats["model_stats"][0]
            # Triton prints 64-bit counters as JSON numbers over HTTP.
            assert isinstance(first["inference_count"], int)
            assert isinstance(first["inference_stats"]["success"]["ns"], int)
            assert set(first["inference_stats"]) == {"success", "fail", "queue", "compute_input", "compute_infer",
                                                     "compute_output", "cache_hit", "cache_miss"}
            assert parsed_as(pb.ModelStatisticsResponse, body) == stub.ModelStatistics(request)
        counts = {s["version"]: s["inference_count"]
                  for s in json.loads(server.request("GET", "/v2/models/simple/stats")[2])["model_stats"]}
        assert counts == {"1": 0, "2": 5}

        for ready in (False, True):
            body = server.request("POST", "/v2/repository/index", json.dumps({"ready": ready}))[2]
            index = json.loads(body)
            assert isinstance(index, list)  # Triton's HTTP index is a bare array
            assert parsed_as(pb.RepositoryIndexResponse, json.dumps({"models": index})) == \
                stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=ready))
        names = {(e["name"], e.get("version"), e["state"])
                 for e in json.loads(server.request("POST", "/v2/repository/index", "")[2])}
        assert ("simple", "2", "READY") in names and ("m", "1", "READY") in names

        body = server.request("GET", "/v2/trace/setting")[2]
        assert http_settings_as_lists(json.loads(body)) == grpc_settings(stub.TraceSetting(trace_request()))
    finally:
        channel.close()
        server.stop()


def test_errors_use_tritons_wording_on_both_transports(repo):
    server = InferaServer(repo)
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        for path in ("/v2/models/nope", "/v2/models/nope/config", "/v2/models/nope/stats"):
            status, _, body = server.request("GET", path)
            assert status == 404 and json.loads(body)["error"] == UNKNOWN, (path, body)
        status, _, body = server.infer("nope", HTTP_BODY)
        assert status == 404 and json.loads(body)["error"] == UNKNOWN
        status, _, body = server.request("GET", "/v2/models/simple/versions/9")
        assert status == 404
        assert json.loads(body)["error"].startswith("Request for unknown model: 'simple' version 9 is not found")
        for call, request in ((stub.ModelMetadata, pb.ModelMetadataRequest(name="nope")),
                              (stub.ModelConfig, pb.ModelConfigRequest(name="nope")),
                              (stub.ModelStatistics, pb.ModelStatisticsRequest(name="nope")),
                              (stub.ModelInfer, infer_request(model="nope"))):
            with pytest.raises(grpc.RpcError) as error:
                call(request)
            assert error.value.code() == grpc.StatusCode.NOT_FOUND and error.value.details() == UNKNOWN
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelMetadata(pb.ModelMetadataRequest(name="simple", version="9"))
        assert error.value.details().startswith("Request for unknown model: 'simple' version 9 is not found")
        # The duplicate-output text is the same on both transports.
        request = infer_request()
        request.outputs.add(name="OUTPUT0")
        request.outputs.add(name="OUTPUT0")
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(request)
        assert "output 'OUTPUT0' already exists in request" in error.value.details()
        body = json.loads(HTTP_BODY)
        body["outputs"] = [{"name": "OUTPUT0"}, {"name": "OUTPUT0"}]
        status, _, answer = server.infer("simple", json.dumps(body).encode())
        assert status == 400 and "output 'OUTPUT0' already exists in request" in json.loads(answer)["error"]
        # Outside explicit mode the repository API is refused: 409 / FAILED_PRECONDITION.
        assert server.request("POST", "/v2/repository/models/simple/unload", "")[0] == 409
        with pytest.raises(grpc.RpcError) as error:
            stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="simple"))
        assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        channel.close()
        server.stop()


def test_canary_routing_key_over_grpc_matches_http(repo):
    server = InferaServer(repo)
    channel, stub = grpc_stub(server)
    try:
        server.wait_ready()
        keys = [f"user{u}" for u in range(60)]
        expected = {k: fnv1a_side(k) for k in keys}
        assert set(expected.values()) == {"1", "2"}  # both sides are exercised
        by_parameter = {k: stub.ModelInfer(canary_request(k)).model_version for k in keys}
        by_metadata = {k: stub.ModelInfer(canary_request(), metadata=[("x-routing-key", k)]).model_version
                       for k in keys}
        stream = list(stub.ModelStreamInfer(iter([canary_request() for _ in range(3)]),
                                            metadata=[("x-routing-key", keys[0])]))
        over_http = {}
        for k in keys:
            body = json.dumps({"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32",
                                           "data": [1.0, 2.0]}], "parameters": {"routing_key": k}})
            status, _, answer = server.infer("m", body.encode())
            assert status == 200
            over_http[k] = json.loads(answer)["model_version"]
        assert by_parameter == expected
        assert by_metadata == expected
        assert over_http == expected
        assert [a.infer_response.model_version for a in stream] == [expected[keys[0]]] * 3
    finally:
        channel.close()
        server.stop()

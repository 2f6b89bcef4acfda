"""KServe v2 over HTTP, black box: every endpoint, every datatype, JSON and binary
tensors, and every kind of bad input — each must get a 4xx naming the problem while the
server keeps serving."""

import http.client
import json
import math
import socket
import struct
import tempfile
import threading
import time

import pytest

from infera_server import InferaServer, SIMPLE_CONFIG_2_INSTANCES, write_model

DATATYPES = {
    # KServe name: (config type, struct format, sample values)
    "BOOL": ("TYPE_BOOL", "?", [True, False, True]),
    "UINT8": ("TYPE_UINT8", "B", [0, 255, 7]),
    "UINT16": ("TYPE_UINT16", "H", [0, 65535, 7]),
    "UINT32": ("TYPE_UINT32", "I", [0, 4294967295, 7]),
    "UINT64": ("TYPE_UINT64", "Q", [0, 18446744073709551615, 7]),
    "INT8": ("TYPE_INT8", "b", [-128, 127, 0]),
    "INT16": ("TYPE_INT16", "h", [-32768, 32767, 0]),
    "INT32": ("TYPE_INT32", "i", [-2147483648, 2147483647, 0]),
    "INT64": ("TYPE_INT64", "q", [-9223372036854775808, 9223372036854775807, 0]),
    "FP16": ("TYPE_FP16", "e", [0.5, -2.0, 65504.0]),
    "FP32": ("TYPE_FP32", "f", [0.1, -3.4028234663852886e38, 1e-45]),
    "FP64": ("TYPE_FP64", "d", [0.1, -1.7976931348623157e308, 5e-324]),
    "BF16": ("TYPE_BF16", None, [1.0, -0.5, 3.0]),
    "BYTES": ("TYPE_STRING", None, ["hello", "", "ünïcødé ✓"]),
}


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
    with tempfile.TemporaryDirectory(prefix="infera-http-") as path:
        write_model(path, "simple", SIMPLE_CONFIG_2_INSTANCES, versions=(1, 2))
        for kserve, (config_type, _, _) in DATATYPES.items():
            write_model(path, f"identity_{kserve.lower()}", identity_config(f"identity_{kserve.lower()}", config_type))
        yield path


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo, "--http-max-input-size", "1048576", "--http-read-timeout-secs", "2")
    s.wait_ready()
    yield s
    s.stop()


def simple_payload(a=None, b=None, rows=1, **extra):
    a = a or list(range(16 * rows))
    b = b or [1] * (16 * rows)
    payload = {"inputs": [
        {"name": "INPUT0", "shape": [rows, 16], "datatype": "INT32", "data": a},
        {"name": "INPUT1", "shape": [rows, 16], "datatype": "INT32", "data": b}]}
    payload.update(extra)
    return payload


def outputs_by_name(body):
    return {o["name"]: o for o in json.loads(body)["outputs"]}


def error_of(status, body, expected_status):
    assert status == expected_status, body
    return json.loads(body)["error"]


# --- health and metadata -------------------------------------------------------------

def test_health_and_server_metadata(server):
    assert server.request("GET", "/v2/health/live")[0] == 200
    assert server.request("GET", "/v2/health/ready")[0] == 200
    status, meta = server.get_json("/v2")
    assert status == 200
    assert meta["name"] == "infera" and meta["version"]
    assert set(meta["extensions"]) == {"binary_tensor_data", "parameters", "model_configuration",
                                       "model_repository", "statistics", "logging", "classification", "trace", "system_shared_memory"}


def test_model_metadata_and_readiness(server):
    status, meta = server.get_json("/v2/models/simple")
    assert status == 200
    assert meta["name"] == "simple"
    assert meta["versions"] == ["2"]  # default policy: latest 1
    assert meta["platform"] == "add_sub"
    assert meta["inputs"] == [{"name": "INPUT0", "datatype": "INT32", "shape": [-1, 16]},
                              {"name": "INPUT1", "datatype": "INT32", "shape": [-1, 16]}]
    assert [o["name"] for o in meta["outputs"]] == ["OUTPUT0", "OUTPUT1"]
    status, meta = server.get_json("/v2/models/simple/versions/2")
    assert status == 200 and meta["versions"] == ["2"]
    assert server.request("GET", "/v2/models/simple/ready")[0] == 200
    assert server.request("GET", "/v2/models/simple/versions/2/ready")[0] == 200
    status, _, body = server.request("GET", "/v2/models/simple/versions/1/ready")
    assert "Request for unknown model: 'simple' version 1 is not found" in error_of(status, body, 404)
    status, _, body = server.request("GET", "/v2/models/nope/ready")
    assert "Request for unknown model: 'nope' is not found" in error_of(status, body, 404)


def test_unknown_routes_and_methods(server):
    status, _, body = server.request("GET", "/v3/whatever")
    assert "no route" in error_of(status, body, 404)
    status, headers, body = server.request("POST", "/v2/health/live", "")
    assert error_of(status, body, 405) and headers.get("Allow") == "GET"
    status, headers, body = server.request("GET", "/v2/models/simple/infer")
    assert error_of(status, body, 405) and headers.get("Allow") == "POST"
    status, _, body = server.request("GET", "/v2/models/simple/versions/abc")
    assert "invalid model version 'abc'" in error_of(status, body, 400)
    status, _, body = server.request("GET", "/v2/models/%zz")
    assert "percent-escape" in error_of(status, body, 400)


# --- inference -----------------------------------------------------------------------

def test_simple_json_inference_with_id_and_parameters(server):
    status, _, body = server.infer("simple", simple_payload(id="req-42", parameters={"foo": 1, "bar": "x"}))
    assert status == 200, body
    response = json.loads(body)
    assert response["model_name"] == "simple" and response["model_version"] == "2"
    assert response["id"] == "req-42"
    out = outputs_by_name(body)
    assert out["OUTPUT0"]["data"] == [i + 1 for i in range(16)]
    assert out["OUTPUT1"]["data"] == [i - 1 for i in range(16)]
    assert out["OUTPUT0"]["shape"] == [1, 16] and out["OUTPUT0"]["datatype"] == "INT32"


def test_multi_row_batch_and_version_path(server):
    status, _, body = server.infer("simple", simple_payload(rows=3), version=2)
    assert status == 200, body
    out = outputs_by_name(body)
    assert out["OUTPUT0"]["shape"] == [3, 16]
    assert out["OUTPUT0"]["data"] == [i + 1 for i in range(48)]


def test_requested_output_subset(server):
    status, _, body = server.infer("simple", simple_payload(outputs=[{"name": "OUTPUT1"}]))
    assert status == 200, body
    assert list(outputs_by_name(body)) == ["OUTPUT1"]


def test_nested_data_is_accepted(server):
    payload = simple_payload()
    payload["inputs"][0]["data"] = [list(range(16))]
    status, _, body = server.infer("simple", payload)
    assert status == 200, body


def binary_request(header, blobs):
    header_bytes = json.dumps(header).encode()
    return header_bytes + b"".join(blobs), {"Inference-Header-Content-Length": str(len(header_bytes)),
                                            "Content-Type": "application/octet-stream"}


def split_binary_response(headers, body):
    length = int(headers["Inference-Header-Content-Length"])
    return json.loads(body[:length]), body[length:]


def test_simple_binary_in_and_out(server):
    a = struct.pack("<16i", *range(16))
    b = struct.pack("<16i", *([2] * 16))
    body, headers = binary_request({
        "inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": 64}},
                   {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": 64}}],
        "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}, {"name": "OUTPUT1"}]}, [a, b])
    status, response_headers, data = server.infer("simple", body, headers=headers)
    assert status == 200, data
    header, blob = split_binary_response(response_headers, data)
    out = {o["name"]: o for o in header["outputs"]}
    assert out["OUTPUT0"]["parameters"]["binary_data_size"] == 64 and "data" not in out["OUTPUT0"]
    assert struct.unpack("<16i", blob) == tuple(i + 2 for i in range(16))
    assert out["OUTPUT1"]["data"] == [i - 2 for i in range(16)]


def test_binary_data_output_request_parameter(server):
    status, headers, data = server.infer("simple", simple_payload(parameters={"binary_data_output": True}))
    assert status == 200, data
    header, blob = split_binary_response(headers, data)
    assert [o["parameters"]["binary_data_size"] for o in header["outputs"]] == [64, 64]
    assert len(blob) == 128


def pack(kserve, values):
    _, fmt, _ = DATATYPES[kserve]
    if kserve == "BYTES":
        return b"".join(struct.pack("<I", len(v.encode())) + v.encode() for v in values)
    if kserve == "BF16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), fmt), *values)


@pytest.mark.parametrize("kserve", sorted(DATATYPES))
def test_every_datatype_json_round_trip(server, kserve):
    _, _, values = DATATYPES[kserve]
    payload = {"inputs": [{"name": "INPUT0", "shape": [3], "datatype": kserve, "data": values}]}
    status, _, body = server.infer(f"identity_{kserve.lower()}", payload)
    assert status == 200, body
    out = json.loads(body)["outputs"][0]
    assert out["datatype"] == kserve and out["shape"] == [3]
    if kserve == "FP32":
        # Written as the shortest text that parses back to the same float32.
        as_f32 = lambda xs: [struct.unpack("<f", struct.pack("<f", x))[0] for x in xs]  # noqa: E731
        assert as_f32(out["data"]) == as_f32(values)
    else:
        assert out["data"] == values


@pytest.mark.parametrize("kserve", sorted(DATATYPES))
def test_every_datatype_binary_round_trip(server, kserve):
    _, _, values = DATATYPES[kserve]
    blob = pack(kserve, values)
    body, headers = binary_request({"inputs": [{"name": "INPUT0", "shape": [3], "datatype": kserve,
                                                "parameters": {"binary_data_size": len(blob)}}],
                                    "parameters": {"binary_data_output": True}}, [blob])
    status, response_headers, data = server.infer(f"identity_{kserve.lower()}", body, headers=headers)
    assert status == 200, data
    header, out_blob = split_binary_response(response_headers, data)
    assert header["outputs"][0]["parameters"]["binary_data_size"] == len(blob)
    assert out_blob == blob


def test_non_finite_floats(server):
    payload = '{"inputs":[{"name":"INPUT0","shape":[3],"datatype":"FP32","data":[NaN,Infinity,-Infinity]}]}'
    status, _, body = server.infer("identity_fp32", payload.encode())
    assert status == 200, body
    data = json.loads(body)["outputs"][0]["data"]
    assert math.isnan(data[0]) and data[1] == math.inf and data[2] == -math.inf


# --- bad input: a clear 4xx, and the server keeps serving ----------------------------

BAD_INFER_CASES = [
    ("malformed_json", b'{"inputs": [', 400, "JSON"),
    ("not_an_object", b'[1,2,3]', 400, ""),
    ("no_inputs", b'{"outputs": []}', 400, "inputs"),
    ("wrong_shape", json.dumps(simple_payload() | {"inputs": [
        {"name": "INPUT0", "shape": [1, 15], "datatype": "INT32", "data": list(range(15))},
        {"name": "INPUT1", "shape": [1, 15], "datatype": "INT32", "data": list(range(15))}]}).encode(), 400, "[1,15]"),
    ("wrong_datatype", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "FP32", "data": [0.5] * 16},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}).encode(), 400, "FP32"),
    ("missing_input", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}).encode(), 400, "missing input 'INPUT1'"),
    ("unknown_input", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16},
        {"name": "EXTRA", "shape": [1], "datatype": "INT32", "data": [1]}]}).encode(), 400, "EXTRA"),
    ("data_count_mismatch", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1] * 3},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}).encode(), 400, "INPUT0"),
    ("value_out_of_range", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [2**40] * 16},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}).encode(), 400, "INPUT0"),
    ("batch_too_large", json.dumps(simple_payload(rows=9)).encode(), 400, "max_batch_size"),
    ("unknown_output", json.dumps(simple_payload(outputs=[{"name": "NOPE"}])).encode(), 400, "NOPE"),
    ("bad_datatype_name", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1], "datatype": "FLOAT", "data": [1]}]}).encode(), 400, "FLOAT"),
    ("huge_shape", json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [2**62, 2**62], "datatype": "INT32", "data": [1]}]}).encode(), 400, "INPUT0"),
    ("deep_nesting", (b'{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":' + b"[" * 100000 + b"]" * 100000 + b"}]}"), 400, ""),
]


@pytest.mark.parametrize("name,body,status,needle", BAD_INFER_CASES, ids=[c[0] for c in BAD_INFER_CASES])
def test_bad_infer_requests(server, name, body, status, needle):
    got, _, data = server.infer("simple", body)
    message = error_of(got, data, status)
    assert needle in message, message
    server.assert_serving()


def test_unknown_model_and_version(server):
    status, _, body = server.infer("nope", simple_payload())
    assert "Request for unknown model: 'nope' is not found" in error_of(status, body, 404)
    status, _, body = server.infer("simple", simple_payload(), version=7)
    assert "Request for unknown model: 'simple' version 7 is not found" in error_of(status, body, 404)


def test_binary_size_mismatch_and_bad_header_length(server):
    a = struct.pack("<16i", *range(16))
    header = {"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": 64}},
                         {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": 64}}]}
    body, headers = binary_request(header, [a, a[:10]])  # second blob short
    status, _, data = server.infer("simple", body, headers=headers)
    assert "binary" in error_of(status, data, 400)
    body, headers = binary_request(header, [a, a, b"extra"])  # trailing bytes
    status, _, data = server.infer("simple", body, headers=headers)
    assert "binary" in error_of(status, data, 400)
    headers["Inference-Header-Content-Length"] = str(len(body) + 5)
    status, _, data = server.infer("simple", body, headers=headers)
    assert error_of(status, data, 400)
    headers["Inference-Header-Content-Length"] = "twelve"
    status, _, data = server.infer("simple", body, headers=headers)
    assert "Inference-Header-Content-Length" in error_of(status, data, 400)
    server.assert_serving()


def test_body_larger_than_limit_gets_413(server):
    big = b'{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":[' + b"1," * 600000 + b"1]}]}"
    status, _, data = server.infer("simple", big)
    assert "limit" in error_of(status, data, 413)
    server.assert_serving()


def test_unsupported_content_encoding(server):
    status, _, data = server.infer("simple", simple_payload(), headers={"Content-Encoding": "br"})
    assert "'br'" in error_of(status, data, 415)


def test_truncated_body_is_rejected(server):
    body = json.dumps(simple_payload()).encode()
    reply = server.raw(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (len(body) + 100)
                       + body, shutdown_write=True)
    assert reply.startswith(b"HTTP/1.1 400"), reply
    assert b"truncated" in reply
    server.assert_serving()


def test_slow_client_gets_408(server):
    started = time.time()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Le")
        reply = s.recv(65536)
    assert reply.startswith(b"HTTP/1.1 408"), reply
    assert b"not fully received" in reply
    assert time.time() - started < 8
    server.assert_serving()


def test_malformed_http_and_huge_header(server):
    reply = server.raw(b"GARBAGE\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400"), reply
    reply = server.raw(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431"), reply
    server.assert_serving()


def test_expect_100_continue(server):
    body = json.dumps(simple_payload()).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        assert s.recv(65536).startswith(b"HTTP/1.1 100 Continue")
        s.sendall(body)
        reply = s.recv(65536)
    assert reply.startswith(b"HTTP/1.1 200"), reply


# --- connections and concurrency -----------------------------------------------------

def test_keep_alive_and_pipelining(server):
    conn = server.connection()
    for i in range(50):
        conn.request("POST", "/v2/models/simple/infer", json.dumps(simple_payload(a=[i] * 16)))
        response = conn.getresponse()
        assert response.status == 200
        assert outputs_by_name(response.read())["OUTPUT0"]["data"] == [i + 1] * 16
    conn.close()
    # Three pipelined requests in one write: three responses, in order.
    body = json.dumps(simple_payload()).encode()
    one = b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    last = one.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
    reply = server.raw(one + one + last)
    assert reply.count(b"HTTP/1.1 200 OK") == 3, reply


def test_many_concurrent_clients_get_their_own_results(server):
    errors = []

    def client(k):
        try:
            conn = server.connection()
            for i in range(20):
                a = [k * 1000 + i] * 16
                conn.request("POST", "/v2/models/simple/infer", json.dumps(simple_payload(a=a, b=[k] * 16)))
                response = conn.getresponse()
                out = outputs_by_name(response.read())
                if out["OUTPUT0"]["data"] != [k * 1000 + i + k] * 16:
                    errors.append((k, i, out))
            conn.close()
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# --- lifecycle -----------------------------------------------------------------------

def test_bad_model_fails_alone(repo):
    with tempfile.TemporaryDirectory(prefix="infera-bad-") as path:
        write_model(path, "simple", SIMPLE_CONFIG_2_INSTANCES)
        write_model(path, "broken", 'name: "broken"\nbackend: "add_sub"\nmax_batch_size: "x"\n')
        write_model(path, "typo", 'name: "typo"\nbackend: "identity"\ninputz [ ]\n')
        server = InferaServer(path)
        try:
            server.wait_ready()
            assert "server is NOT ready" in server.log()
            status, _, body = server.infer("simple", simple_payload())
            assert status == 200, body
            assert server.request("GET", "/v2/health/ready")[0] == 400  # strict readiness
            status, _, body = server.request("GET", "/v2/models/broken/ready")
            message = error_of(status, body, 400)
            assert "broken/config.pbtxt" in message and "max_batch_size" in message
            status, _, body = server.infer("typo", simple_payload())
            message = error_of(status, body, 503)
            assert "typo/config.pbtxt:3" in message and "inputz" in message
        finally:
            server.stop()


def test_cli_help_and_bad_flags():
    import subprocess
    from infera_server import BINARY
    out = subprocess.run([BINARY, "serve", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for flag in ["--model-repository", "--http-port", "--grpc-port", "--metrics-port", "--log-verbose",
                 "--exit-timeout-secs"]:
        assert flag in out.stdout
    out = subprocess.run([BINARY, "serve", "--model-repository", "/x", "--bogus"], capture_output=True, text=True)
    assert out.returncode == 2 and "unknown flag --bogus" in out.stderr
    out = subprocess.run([BINARY, "serve", "--model-repository", "/definitely/missing", "--http-port", "0"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "does not exist" in out.stderr

"""Triton's generate extension over raw HTTP (docs/protocol/extension_generate.md):
POST /v2/models/{m}[/versions/{v}]/generate (one JSON object) and .../generate_stream
(Server-Sent Events, one per response), for any model (add_sub `simple`, an identity text
model) and for a decoupled one (`repeat`), with hostile bodies and a client that goes away.

The SSE stream is read from the socket by hand (chunked transfer encoding, then
"data: ...\\n\\n" events), as a browser's EventSource or genai-perf would see it.
"""

import json
import socket
import struct
import tempfile
import time

import pytest

from infera_server import InferaServer, REPEAT_CONFIG, SIMPLE_CONFIG, wait_for, write_model

TEXT = """name: "echo_text"
backend: "identity"
max_batch_size: 0
input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]
"""

BINARY = """name: "echo_bytes"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-generate-") as repo:
        write_model(repo, "simple", SIMPLE_CONFIG, versions=(1, 2))
        write_model(repo, "repeat_int32", REPEAT_CONFIG)
        write_model(repo, "echo_text", TEXT)
        write_model(repo, "echo_bytes", BINARY)
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


def post(server, path, body, headers=None):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    status, response_headers, payload = server.request("POST", path, data, headers or {})
    return status, response_headers, payload


def generate(server, model, body, stream=False, version=None, headers=None):
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + \
        ("/generate_stream" if stream else "/generate")
    return post(server, path, body, headers)


def events(payload):
    """The JSON objects of an SSE body ("data: {...}\\n\\n" each)."""
    text = payload.decode()
    assert text == "" or text.endswith("\n\n"), text
    chunks = [c for c in text.split("\n\n") if c]
    assert all(c.startswith("data: ") for c in chunks), text
    return [json.loads(c[len("data: "):]) for c in chunks]


def repeat_stats(server):
    status, body = server.get_json("/v2/models/repeat_int32/stats")
    assert status == 200
    stats = body["model_stats"][0]["inference_stats"]
    return stats["success"]["count"], stats["fail"]["count"]


SIMPLE_BODY = {"INPUT0": list(range(16)), "INPUT1": [1] * 16}


def test_generate_answers_any_model_with_its_outputs_by_name(server):
    status, headers, payload = generate(server, "simple", {**SIMPLE_BODY, "id": "g1"})
    assert status == 200 and headers["Content-Type"] == "application/json"
    answer = json.loads(payload)
    assert answer == {"id": "g1", "model_name": "simple", "model_version": "2",
                      "OUTPUT0": list(range(1, 17)), "OUTPUT1": list(range(-1, 15))}
    status, _, payload = generate(server, "simple", SIMPLE_BODY, version=2)
    assert status == 200 and json.loads(payload)["model_version"] == "2"
    # Version 1 is in the repository but not served (the policy serves the latest).
    status, _, payload = generate(server, "simple", SIMPLE_BODY, version=1)
    assert status in (404, 503) and "version 1" in json.loads(payload)["error"]


def test_scalars_parameters_object_and_text(server):
    status, _, payload = generate(server, "echo_text", {"text_input": "héllo \"world\""})
    assert status == 200
    assert json.loads(payload) == {"model_name": "echo_text", "model_version": "1", "text_output": "héllo \"world\""}
    # Keys of "parameters" that name inputs are inputs too (Triton's mapping).
    status, _, payload = generate(server, "simple", {"parameters": {"INPUT0": list(range(16)), "priority": 0},
                                                     "INPUT1": [2] * 16})
    assert status == 200 and json.loads(payload)["OUTPUT0"] == list(range(2, 18))


def test_generate_stream_of_a_model_that_answers_once(server):
    status, headers, payload = generate(server, "simple", SIMPLE_BODY, stream=True)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    (event,) = events(payload)
    assert event["OUTPUT0"] == list(range(1, 17))


def test_generate_stream_sends_every_response_of_a_decoupled_model(server):
    status, _, payload = generate(server, "repeat_int32", {"IN": [7, 8, 9], "id": "r"}, stream=True)
    assert status == 200
    assert events(payload) == [{"id": "r", "model_name": "repeat_int32", "model_version": "1", "OUT": v, "IDX": i}
                               for i, v in enumerate([7, 8, 9])]
    status, _, payload = generate(server, "repeat_int32", {"IN": []}, stream=True)
    assert status == 200 and events(payload) == []


def test_generate_needs_exactly_one_response(server):
    status, _, payload = generate(server, "repeat_int32", {"IN": 5})
    assert status == 200 and json.loads(payload) == {"model_name": "repeat_int32", "model_version": "1",
                                                     "OUT": 5, "IDX": 0}
    status, _, payload = generate(server, "repeat_int32", {"IN": [5, 6]})
    assert status == 400 and "generate_stream" in json.loads(payload)["error"]


def test_errors_before_the_stream_are_plain_json(server):
    for stream in (False, True):
        status, headers, payload = generate(server, "repeat_int32", {"IN": [1, 2], "DELAY": [1, 2, 3]}, stream=stream)
        assert status == 400 and headers["Content-Type"] == "application/json"
        assert "DELAY holds 3 values" in json.loads(payload)["error"]
        status, _, payload = generate(server, "nope", "not even json", stream=stream)
        assert status == 404 and "Request for unknown model: 'nope'" in json.loads(payload)["error"]


def test_an_error_after_the_first_event_is_an_error_event(server):
    """The request's deadline (`timeout`, µs) passes while the model waits 5 s before its
    second response: the first event, then {"error": ...}, then the end of the stream."""
    status, _, payload = generate(server, "repeat_int32", {"IN": [1, 2], "DELAY": [0, 5000], "timeout": 300_000},
                                  stream=True)
    assert status == 200
    first, error = events(payload)
    assert first["OUT"] == 1
    assert set(error) == {"error"} and "timed out" in error["error"]


HOSTILE = [
    ("malformed JSON", "{\"IN\": [1, 2", "generate request body"),
    ("not an object", "[1, 2, 3]", "must be a JSON object"),
    ("id not a string", {"IN": [1], "id": 5}, "'id' must be a string"),
    ("parameters not an object", {"IN": [1], "parameters": "x"}, "'parameters' must be a JSON object"),
    ("a key twice", {"IN": [1], "parameters": {"IN": [2]}}, "'IN' is given more than once"),
    ("unknown key with an object", {"IN": [1], "sampling": {"t": 1}}, "'sampling' is not an input"),
    ("unknown key with an array", {"IN": [1], "extra": [1, 2]}, "'extra' is not an input"),
    ("unknown key null", {"IN": [1], "extra": None}, "got null"),
    ("string for INT32", {"IN": ["1"]}, "input 'IN' (INT32) element 0: expected an integer"),
    ("fraction for INT32", {"IN": [1.5]}, "expected an integer"),
    ("out of INT32's range", {"IN": [2 ** 31]}, "out of range"),
    ("nested array", {"IN": [[1, 2]]}, "must be a flat array"),
    ("object for an input", {"IN": {"a": 1}}, "must be a JSON scalar or a flat array"),
    ("wrong element count", {"INPUT0": [1, 2, 3], "INPUT1": [1] * 16}, "cannot take them"),
    ("missing input", {"INPUT0": list(range(16))}, "INPUT1"),
    ("deep nesting", "[" * 500 + "]" * 500, "nests deeper"),
    ("invalid UTF-8", b"{\"IN\": \"\xff\"}", "Invalid encoding"),
    ("huge body", "{\"IN\": [" + "0," * (9 << 20) + "0]}", "generate request body"),
]


@pytest.mark.parametrize("name,body,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_bodies_get_a_400_naming_the_problem(server, name, body, message):
    model = "simple" if "INPUT" in str(body)[:20] else "repeat_int32"
    for stream in (False, True):
        status, headers, payload = generate(server, model, body, stream=stream)
        assert status == 400, (name, payload[:200])
        assert message in json.loads(payload)["error"], (name, payload[:300])
    server.assert_serving()


def test_routes_methods_and_encodings(server):
    assert server.request("GET", "/v2/models/simple/generate")[0] == 405
    assert server.request("GET", "/v2/models/simple/generate_stream")[0] == 405
    status, _, payload = generate(server, "simple", SIMPLE_BODY, version=7)
    assert status == 404 and "version 7" in json.loads(payload)["error"]
    # A malformed body wins over an unknown version (decode before the version), not over
    # an unknown model.
    assert generate(server, "simple", "{", version=7)[0] == 400
    assert generate(server, "nope", "{")[0] == 404
    status, _, _ = generate(server, "simple", SIMPLE_BODY, headers={"Content-Encoding": "br"})
    assert status == 415


def test_bytes_outputs_are_json_strings(server):
    status, _, payload = generate(server, "echo_bytes", {"INPUT0": ["ok", "fine"]})
    assert status == 200 and json.loads(payload)["OUTPUT0"] == ["ok", "fine"]


def test_generate_counts_in_the_models_statistics(server):
    before = repeat_stats(server)[0]
    assert generate(server, "repeat_int32", {"IN": 1})[0] == 200
    assert generate(server, "repeat_int32", {"IN": [1, 2]}, stream=True)[0] == 200
    assert repeat_stats(server)[0] == before + 2


def read_chunked_events(sock, count):
    """Reads the response head and then SSE events until `count` were seen; returns them."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, data = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower(), head
    found = []
    while True:
        body = b""
        rest = data
        while True:  # de-chunk what has arrived so far
            line_end = rest.find(b"\r\n")
            if line_end < 0:
                break
            size = int(rest[:line_end], 16)
            if len(rest) < line_end + 2 + size + 2:
                break
            body += rest[line_end + 2:line_end + 2 + size]
            rest = rest[line_end + 2 + size + 2:]
        found = [c for c in body.decode().split("\n\n") if c]
        if len(found) >= count:
            return [json.loads(c[len("data: "):]) for c in found[:count]]
        chunk = sock.recv(65536)
        assert chunk, "the stream ended early"
        data += chunk


def test_closing_a_generate_stream_stops_the_model(server):
    """1000 responses 50 ms apart; the client reads two events and closes the socket: the
    request ends at once (counted as failed) instead of running 50 s for nobody."""
    before_success, before_fail = repeat_stats(server)
    body = json.dumps({"IN": list(range(1000)), "DELAY": [50]}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(b"POST /v2/models/repeat_int32/generate_stream HTTP/1.1\r\nHost: x\r\n"
                 b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    first = read_chunked_events(sock, 2)
    assert [(e["OUT"], e["IDX"]) for e in first] == [(0, 0), (1, 1)]
    started = time.monotonic()
    sock.close()
    wait_for(lambda: repeat_stats(server)[1] == before_fail + 1, timeout=10)
    assert time.monotonic() - started < 10
    assert repeat_stats(server)[0] == before_success
    server.assert_serving()

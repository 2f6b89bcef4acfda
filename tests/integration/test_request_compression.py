"""Request compression over real sockets, as tritonclient sends it.

tritonclient's `request_compression_algorithm="gzip"` sends `gzip.compress(body)` with
`Content-Encoding: gzip`, `"deflate"` sends `zlib.compress(body)` with `Content-Encoding:
deflate`; with binary tensors, Inference-Header-Content-Length is the length of the
*uncompressed* JSON header. The server inflates the body before any route reads it
(http/content_coding.h), bounded by --http-max-input-size before and after inflating.
"""

import gzip
import http.client
import json
import os
import struct
import tempfile
import zlib

import pytest

from infera_server import InferaServer, SIMPLE_CONFIG, write_model

LIMIT = 4 << 20  # --http-max-input-size: the compressed and the inflated body


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-compression-") as repo:
        write_model(repo, "simple", SIMPLE_CONFIG)
        s = InferaServer(repo, "--http-max-input-size", str(LIMIT))
        s.wait_ready()
        yield s
        s.stop()


COMPRESS = {"gzip": gzip.compress, "deflate": zlib.compress}

A = list(range(16))
B = [3] * 16


def json_payload():
    return json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": A},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": B}]}).encode()


def binary_payload():
    """tritonclient's binary tensor body: JSON header, then each input's raw bytes."""
    header = json.dumps({
        "inputs": [{"name": name, "shape": [1, 16], "datatype": "INT32",
                    "parameters": {"binary_data_size": 64}} for name in ("INPUT0", "INPUT1")],
        "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}},
                    {"name": "OUTPUT1", "parameters": {"binary_data": False}}]}).encode()
    return header, header + struct.pack("<16i", *A) + struct.pack("<16i", *B)


def post(server, path, body, headers, conn=None):
    own = conn is None
    conn = conn or server.connection()
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        if own:
            conn.close()


def error_of(status, body, expected):
    assert status == expected, body
    return json.loads(body)["error"]


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_json_infer_body(server, coding):
    status, _, body = post(server, "/v2/models/simple/infer", COMPRESS[coding](json_payload()),
                           {"Content-Encoding": coding, "Content-Type": "application/json"})
    assert status == 200, body
    outputs = {o["name"]: o["data"] for o in json.loads(body)["outputs"]}
    assert outputs == {"OUTPUT0": [a + b for a, b in zip(A, B)], "OUTPUT1": [a - b for a, b in zip(A, B)]}


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_binary_tensor_body_counts_the_uncompressed_header(server, coding):
    header, payload = binary_payload()
    status, headers, body = post(server, "/v2/models/simple/infer", COMPRESS[coding](payload),
                                 {"Content-Encoding": coding, "Inference-Header-Content-Length": str(len(header)),
                                  "Content-Type": "application/octet-stream"})
    assert status == 200, body
    length = int(headers["Inference-Header-Content-Length"])
    outputs = {o["name"]: o for o in json.loads(body[:length])["outputs"]}
    assert list(struct.unpack("<16i", body[length:length + 64])) == [a + b for a, b in zip(A, B)]
    assert outputs["OUTPUT1"]["data"] == [a - b for a, b in zip(A, B)]
    # A header length past the inflated body is the same 400 as without compression.
    status, _, body = post(server, "/v2/models/simple/infer", gzip.compress(payload),
                           {"Content-Encoding": "gzip", "Inference-Header-Content-Length": str(len(payload) + 1)})
    assert status == 400, body


def test_generate_openai_and_repository_routes(server):
    status, _, body = post(server, "/v2/models/simple/generate",
                           gzip.compress(json.dumps({"INPUT0": A, "INPUT1": B}).encode()),
                           {"Content-Encoding": "gzip"})
    assert status == 200 and json.loads(body)["OUTPUT0"] == [a + b for a, b in zip(A, B)], body
    # The OpenAI route parsed the inflated JSON: it names the model it cannot find.
    chat = json.dumps({"model": "no_such_llm", "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, _, body = post(server, "/v1/chat/completions", zlib.compress(chat),
                           {"Content-Encoding": "deflate", "Content-Type": "application/json"})
    assert status == 404 and b"no_such_llm" in body, body
    status, _, body = post(server, "/v1/chat/completions", chat[:-3], {"Content-Encoding": "deflate"})
    assert "deflate body" in error_of(status, body, 400)
    status, _, body = post(server, "/v2/repository/index", gzip.compress(b'{"ready": true}'),
                           {"Content-Encoding": "gzip"})
    assert status == 200 and [m["name"] for m in json.loads(body)] == ["simple"], body


def test_bombs_are_413_and_the_server_still_serves(server):
    # 1 GiB of zeros: 1024 gzip members of 1 MiB each (RFC 1952 allows several), ~1 MiB
    # on the wire.
    bomb = gzip.compress(bytes(1 << 20)) * 1024
    assert len(bomb) < LIMIT
    conn = server.connection()
    try:
        status, _, body = post(server, "/v2/models/simple/infer", bomb, {"Content-Encoding": "gzip"}, conn)
        message = error_of(status, body, 413)
        assert f"maximum allowed value of {LIMIT} bytes" in message and "--http-max-input-size" in message
        # One deflate stream of 8x the limit in zeros, on the same keep-alive connection.
        compressor = zlib.compressobj(1)
        chunk = bytes(1 << 20)
        deflate_bomb = b"".join(compressor.compress(chunk) for _ in range(8 * LIMIT >> 20)) + compressor.flush()
        status, _, body = post(server, "/v2/models/simple/infer", deflate_bomb, {"Content-Encoding": "deflate"}, conn)
        assert "--http-max-input-size" in error_of(status, body, 413)
        status, _, body = post(server, "/v2/models/simple/infer", gzip.compress(json_payload()),
                               {"Content-Encoding": "gzip"}, conn)
        assert status == 200, body
    finally:
        conn.close()
    # A compressed body over the limit is refused before inflating (the body limit).
    incompressible = gzip.compress(os.urandom(LIMIT + 1024), compresslevel=1)
    status, _, body = post(server, "/v2/models/simple/infer", incompressible, {"Content-Encoding": "gzip"})
    assert "exceeds the maximum allowed input size" in error_of(status, body, 413)
    server.assert_serving()


def test_corrupt_truncated_and_unknown_encodings(server):
    compressed = gzip.compress(json_payload())
    conn = server.connection()
    try:
        status, _, body = post(server, "/v2/models/simple/infer", json_payload(), {"Content-Encoding": "gzip"}, conn)
        assert "gzip body is corrupt" in error_of(status, body, 400)
        status, _, body = post(server, "/v2/models/simple/infer", compressed[:-10], {"Content-Encoding": "gzip"}, conn)
        assert "truncated" in error_of(status, body, 400)
        bad_crc = compressed[:-8] + bytes(b ^ 0xFF for b in compressed[-8:-4]) + compressed[-4:]
        status, _, body = post(server, "/v2/models/simple/infer", bad_crc, {"Content-Encoding": "gzip"}, conn)
        assert "incorrect data check" in error_of(status, body, 400)
        status, headers, body = post(server, "/v2/models/simple/infer", compressed, {"Content-Encoding": "br"}, conn)
        assert "'br' is not supported" in error_of(status, body, 415)
        assert headers["Accept-Encoding"] == "gzip, deflate"
        status, _, body = post(server, "/v2/models/simple/infer", json_payload(), {"Content-Encoding": "identity"}, conn)
        assert status == 200, body
    finally:
        conn.close()
    server.assert_serving()


def test_responses_are_identity_even_when_compression_is_accepted(server):
    # Triton compresses infer responses when asked; infera answers identity, which every
    # client accepts (docs/compatibility.md).
    status, headers, body = post(server, "/v2/models/simple/infer", json_payload(),
                                 {"Accept-Encoding": "gzip, deflate"})
    assert status == 200 and "Content-Encoding" not in headers
    assert json.loads(body)["outputs"]

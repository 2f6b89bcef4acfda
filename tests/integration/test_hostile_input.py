"""Hostile input at the edges, black box (issue 13): HTTP/1.1 framing (request smuggling,
duplicate Content-Length, bad Transfer-Encodings, slowloris, thousands of idle
connections, oversize headers), deeply nested JSON on every JSON route, binary tensor
extension offsets and sizes, BYTES length prefixes, gRPC oversize messages and mismatched
raw contents, OpenAI parameters at and past every limit, log injection, invalid UTF-8 in
URLs, and clients that never read their responses.

Each case asserts a 4xx (or a gRPC error) whose message names the problem, that the
server still serves a normal inference afterwards, and, for the memory cases, that the
server's RSS stays within a stated bound. Servers run with short read/write timeouts so
the slow-client cases finish in seconds.
"""

import json
import os
import resource
import socket
import struct
import tempfile
import time

import grpc
import pytest

import llm_testutil as u
from infera_server import InferaServer, SIMPLE_CONFIG, write_model

from grpc_stubs import pb, pb_grpc  # noqa: E402


def identity_config(name, config_type):
    return f"""
name: "{name}"
backend: "identity"
max_batch_size: 0
input [ {{ name: "INPUT0" data_type: {config_type} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: {config_type} dims: [ -1 ] }} ]
"""


WRITE_TIMEOUT_SECS = 2
READ_TIMEOUT_SECS = 2
BUFFER_LIMIT = 32 << 20
GRPC_MAX_MESSAGE = 1 << 20


def small_asan_quarantine():
    """Under ASan (the hardening stage), freed memory waits in a 256 MiB quarantine before
    it is reused or unmapped, so a second wave of 17 MB answers lands on fresh pages and
    test_slow_readers' RSS bound measured the quarantine, not the server. A 4 MiB
    quarantine keeps the bound about the server's memory (use-after-free is still caught
    for anything freed within the last 4 MiB). The release binary ignores the variable."""
    options = os.environ.get("ASAN_OPTIONS")
    return {"ASAN_OPTIONS": options + ":quarantine_size_mb=4"} if options else {}


@pytest.fixture(scope="module")
def server():
    # 2000 idle connections need 2000 descriptors in the server (it inherits the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096 <= hard or hard == resource.RLIM_INFINITY:
        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, hard))
    with tempfile.TemporaryDirectory(prefix="infera-hostile-") as repo:
        write_model(repo, "simple", SIMPLE_CONFIG)
        write_model(repo, "identity_fp32", identity_config("identity_fp32", "TYPE_FP32"))
        write_model(repo, "identity_bytes", identity_config("identity_bytes", "TYPE_STRING"))
        s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "simple",
                         "--load-model", "identity_fp32", "--load-model", "identity_bytes",
                         "--log-verbose", "1", "--http-read-timeout-secs", str(READ_TIMEOUT_SECS),
                         "--http-write-timeout-secs", str(WRITE_TIMEOUT_SECS),
                         "--http-max-buffered-response-bytes", str(BUFFER_LIMIT),
                         "--grpc-max-message-bytes", str(GRPC_MAX_MESSAGE),
                         "--allow-admin-api", "logging",  # so /v2/logging bodies reach the parser
                         env=small_asan_quarantine())
        s.wait_ready()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def llm_server():
    repo = tempfile.mkdtemp(prefix="infera-hostile-llm-")
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 20)
    n = len(vocab)
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", [("<|endoftext|>", n)])
    config = u.tiny_config(vocab_size=n + 1, max_position_embeddings=256, eos_token_id=n)
    u.write_llm_repo(repo, "tiny", config, u.random_weights(config, seed=3), tokenizer,
                     {"eos_token": "<|endoftext|>"},
                     parameters={"kv_cache_memory_bytes": "4MiB", "max_model_len": 128}, kserve=False)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


SIMPLE_PAYLOAD = json.dumps({"inputs": [
    {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
    {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]})


def assert_infer_works(server):
    """The server still serves a normal inference (a fresh connection)."""
    status, _, body = server.infer("simple", SIMPLE_PAYLOAD.encode())
    assert status == 200, body
    assert json.loads(body)["outputs"][0]["data"] == [i + 1 for i in range(16)]


def error_of(status, body, expected_status):
    assert status == expected_status, body
    return json.loads(body)["error"]


def rss_bytes(server):
    with open(f"/proc/{server.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def raw_exchange(server, data, timeout=10.0):
    """Sends `data` on a new socket, returns everything until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
        raise AssertionError(f"server did not close within {timeout} s: {b''.join(chunks)[:300]!r}")


# --- HTTP/1.1 framing -----------------------------------------------------------------

def smuggled_infer(tag):
    body = json.dumps({"id": tag, "inputs": json.loads(SIMPLE_PAYLOAD)["inputs"]}).encode()
    return (b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


CHUNKED_EMPTY = b"0\r\n\r\n"

FRAMING_CASES = [
    ("te_chunked_identity", b"Transfer-Encoding: chunked, identity\r\n", b"", "bad Transfer-Encoding"),
    ("te_xchunked", b"Transfer-Encoding: xchunked\r\n", b"", "bad Transfer-Encoding 'xchunked'"),
    ("te_identity", b"Transfer-Encoding: identity\r\n", b"", "bad Transfer-Encoding 'identity'"),
    ("te_gzip_chunked", b"Transfer-Encoding: gzip, chunked\r\n", CHUNKED_EMPTY, "bad Transfer-Encoding"),
    ("te_twice", b"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", CHUNKED_EMPTY,
     "Transfer-Encoding"),
    ("cl_then_te", b"Content-Length: 0\r\nTransfer-Encoding: chunked\r\n", CHUNKED_EMPTY, "Transfer-Encoding"),
    ("te_then_cl", b"Transfer-Encoding: chunked\r\nContent-Length: 0\r\n", CHUNKED_EMPTY, "Content-Length"),
    ("te_identity_cl", b"Transfer-Encoding: identity\r\nContent-Length: 0\r\n", b"",
     "Content-Length and Transfer-Encoding"),
    ("duplicate_cl", b"Content-Length: 0\r\nContent-Length: 0\r\n", b"", "Content-Length"),
    ("cl_list", b"Content-Length: 0, 0\r\n", b"", "Content-Length"),
    ("conflicting_cl", b"Content-Length: 0\r\nContent-Length: 5\r\n", b"", "Content-Length"),
]


@pytest.mark.parametrize("name,headers,prefix,needle", FRAMING_CASES, ids=[c[0] for c in FRAMING_CASES])
def test_ambiguous_framing_is_400_and_nothing_is_smuggled(server, name, headers, prefix, needle):
    tag = f"smuggled-{name}"
    request = (b"POST /v2/health/live HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + prefix
               + smuggled_infer(tag))
    reply = raw_exchange(server, request)
    assert reply.startswith(b"HTTP/1.1 400 "), reply[:300]
    assert reply.count(b"HTTP/1.1 ") == 1, reply  # the smuggled request got no answer
    assert b"Connection: close" in reply
    body = reply.split(b"\r\n\r\n", 1)[1]
    assert needle in json.loads(body)["error"]
    assert f"id={tag}" not in server.log()  # and was never executed
    assert_infer_works(server)


def chunked(body):
    return hex(len(body))[2:].encode() + b"\r\n" + body + b"\r\n"


def obs_fold_cases():
    infer = json.dumps({"id": "folded-trailer", "inputs": json.loads(SIMPLE_PAYLOAD)["inputs"]}).encode()
    return [
        ("space", b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", "'X-Folded'"),
        ("tab", b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n\tb\r\n\r\n", "'X-Folded'"),
        ("empty_first_line", b"GET /v2/health/live HTTP/1.1\r\nX-Folded:\r\n b\r\nHost: x\r\n\r\n", "'X-Folded'"),
        ("whitespace_only_line", b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n \r\n\r\n", "'Host'"),
        ("before_framing", b"POST /v2/models/simple/infer HTTP/1.1\r\nX-Folded: a\r\n b\r\nHost: x\r\n"
         b"Content-Length: " + str(len(infer)).encode() + b"\r\n\r\n" + infer, "'X-Folded'"),
        ("trailer", b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
         + chunked(infer) + b"0\r\nX-Trailer: a\r\n b\r\n\r\n", "'X-Trailer'"),
    ]


@pytest.mark.parametrize("name,request_bytes,field", obs_fold_cases(), ids=[c[0] for c in obs_fold_cases()])
def test_obs_fold_is_400_naming_it(server, name, request_bytes, field):
    """Issue 26, item 9: a field line continued on a line that starts with a space or tab
    (obs-fold) must be refused (RFC 9112 section 5.2), header or trailer."""
    reply = raw_exchange(server, request_bytes)
    assert reply.startswith(b"HTTP/1.1 400 "), reply[:300]
    assert reply.count(b"HTTP/1.1 ") == 1, reply
    assert b"Connection: close" in reply
    error = json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]
    assert "obs-fold" in error and field in error, error
    assert "id=folded-trailer" not in server.log()  # never executed
    assert_infer_works(server)


def test_whitespace_inside_field_values_is_not_a_fold(server):
    reply = raw_exchange(server, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Spaced: a \t b\t\r\n"
                                 b"Connection: close\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:300]


def test_oversize_headers_get_431(server):
    reply = raw_exchange(server, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b"request header exceeds the limit" in reply
    assert_infer_works(server)


@pytest.mark.parametrize("opening", [
    b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n",  # trickled header
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",  # body
], ids=["header", "body"])
def test_slowloris_is_cut_off_by_the_read_timeout(server, opening):
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(opening)
        reply = b""
        # One byte every 100 ms, never finishing: the read timeout still applies.
        deadline = started + READ_TIMEOUT_SECS + 5
        s.settimeout(0.1)
        while time.monotonic() < deadline:
            try:
                s.sendall(b"X")
            except OSError:
                break
            try:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
            except socket.timeout:
                continue
    elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
    assert b"not fully received within" in reply
    assert elapsed < READ_TIMEOUT_SECS + 5
    assert_infer_works(server)


def test_two_thousand_idle_connections(server):
    before = rss_bytes(server)
    sockets = []
    try:
        for _ in range(2000):
            sockets.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        # The server accepts them all and still answers, while they are open.
        assert_infer_works(server)
        grown = rss_bytes(server) - before
        assert grown < 64 << 20, f"2000 idle connections grew RSS by {grown} bytes"
    finally:
        for s in sockets:
            s.close()
    assert_infer_works(server)


# --- deeply nested JSON on every JSON route --------------------------------------------

DEEP = b"[" * 250000 + b"true" + b"]" * 250000

NESTED_ROUTES = [
    ("/v2/repository/index", b'{"ready":' + DEEP + b"}"),
    ("/v2/logging", b'{"log_info":' + DEEP + b"}"),
    ("/v1/completions", b'{"model":"tiny","prompt":' + DEEP + b"}"),
    ("/v1/chat/completions", b'{"model":"tiny","messages":' + DEEP + b"}"),
    ("/v2/repository/models/simple/load", b'{"parameters":' + DEEP + b"}"),
    ("/v2/models/simple/infer", b'{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"INT32","data":' + DEEP + b"}]}"),
]


@pytest.mark.parametrize("path,body", NESTED_ROUTES, ids=[r[0] for r in NESTED_ROUTES])
def test_deeply_nested_json_is_400_naming_the_limit(server, path, body):
    status, _, data = server.request("POST", path, body, {"Content-Type": "application/json"})
    assert status == 400, data[:300]
    error = json.loads(data)["error"]
    message = error["message"] if isinstance(error, dict) else error
    assert "100 levels" in message, message
    assert_infer_works(server)


def test_nesting_at_the_limit_is_accepted(server):
    # 100 levels in all: the root object, "ready"'s 99 arrays (a type error, not a depth one).
    body = b'{"ready":' + b"[" * 99 + b"true" + b"]" * 99 + b"}"
    status, _, data = server.request("POST", "/v2/repository/index", body)
    assert "must be true or false" in error_of(status, data, 400)


# --- binary tensor extension ----------------------------------------------------------

def binary_infer(server, header, blob, header_length=None, model="simple"):
    header_bytes = json.dumps(header).encode()
    length = len(header_bytes) if header_length is None else header_length
    return server.infer(model, header_bytes + blob, headers={
        "Inference-Header-Content-Length": str(length), "Content-Type": "application/octet-stream"})


def two_inputs(size0, size1):
    return {"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": size0}},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "parameters": {"binary_data_size": size1}}]}


BLOB = struct.pack("<16i", *range(16))

BINARY_CASES = [
    ("size_past_the_body", two_inputs(64, 4096), BLOB * 2, None, "binary"),
    ("negative_size", two_inputs(-64, 64), BLOB * 2, None, "binary_data_size"),
    ("huge_size", two_inputs(2**64 - 1, 64), BLOB * 2, None, "binary_data_size"),
    ("size_2_63", two_inputs(2**63, 64), BLOB * 2, None, "binary_data_size"),
    ("overlapping_short", two_inputs(64, 64), BLOB + BLOB[:32], None, "binary"),
    ("trailing_bytes", two_inputs(64, 64), BLOB * 3, None, "binary"),
    ("size_not_matching_shape", two_inputs(60, 68), BLOB * 2, None, "binary_data_size"),
    ("header_length_past_body", two_inputs(64, 64), BLOB * 2, 10**9, "Inference-Header-Content-Length"),
    ("header_length_negative", two_inputs(64, 64), BLOB * 2, -1, "Inference-Header-Content-Length"),
    ("header_length_cuts_json", two_inputs(64, 64), BLOB * 2, 20, "JSON"),
]


@pytest.mark.parametrize("name,header,blob,header_length,needle", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_extension_offsets_and_sizes(server, name, header, blob, header_length, needle):
    status, _, data = binary_infer(server, header, blob, header_length)
    message = error_of(status, data, 400)
    assert needle in message, message
    assert_infer_works(server)


@pytest.mark.parametrize("prefix", [4, 1000, 2**31, 2**32 - 1], ids=["one_past", "1000", "2^31", "2^32-1"])
def test_bytes_length_prefix_past_the_end(server, prefix):
    element = struct.pack("<I", prefix) + b"abc"
    header = {"inputs": [{"name": "INPUT0", "shape": [1], "datatype": "BYTES",
                          "parameters": {"binary_data_size": len(element)}}]}
    status, _, data = binary_infer(server, header, element, model="identity_bytes")
    message = error_of(status, data, 400)
    assert "INPUT0" in message and ("length" in message or "bytes" in message), message
    assert_infer_works(server)


# --- gRPC -----------------------------------------------------------------------------

def grpc_stub(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}",
                                    options=[("grpc.max_send_message_length", 64 << 20)])
    return channel, pb_grpc.GRPCInferenceServiceStub(channel)


def grpc_simple_request(raw0=BLOB, raw1=BLOB, count=2):
    request = pb.ModelInferRequest(model_name="simple")
    for name in ("INPUT0", "INPUT1"):
        t = request.inputs.add(name=name, datatype="INT32")
        t.shape.extend([1, 16])
    request.raw_input_contents.extend([raw0, raw1][:count])
    return request


GRPC_CASES = [
    ("oversize", lambda: grpc_simple_request(raw0=b"\0" * (2 * GRPC_MAX_MESSAGE)),
     grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max"),
    ("fewer_raw_contents", lambda: grpc_simple_request(count=1), grpc.StatusCode.INVALID_ARGUMENT,
     "raw_input_contents"),
    ("raw_too_short", lambda: grpc_simple_request(raw1=BLOB[:60]), grpc.StatusCode.INVALID_ARGUMENT, "INPUT1"),
    ("raw_too_long", lambda: grpc_simple_request(raw0=BLOB + b"\0\0\0\0"), grpc.StatusCode.INVALID_ARGUMENT,
     "INPUT0"),
]


def grpc_request_with(model, datatype, shape, raw=None, **contents):
    request = pb.ModelInferRequest(model_name=model)
    names = ("INPUT0", "INPUT1") if model == "simple" else ("INPUT0",)
    for name in names:
        t = request.inputs.add(name=name, datatype=datatype)
        t.shape.extend(shape)
        for field, values in contents.items():
            getattr(t.contents, field).extend(values)
        if raw is not None:
            request.raw_input_contents.append(raw)
    return request


GRPC_CASES += [
    ("huge_shape", lambda: grpc_request_with("simple", "INT32", [2**62, 2**62], BLOB),
     grpc.StatusCode.INVALID_ARGUMENT, "invalid shape"),
    ("negative_dim", lambda: grpc_request_with("simple", "INT32", [1, -16], BLOB),
     grpc.StatusCode.INVALID_ARGUMENT, "invalid shape"),
    ("typed_count_short", lambda: grpc_request_with("simple", "INT32", [1, 16], int_contents=[1] * 15),
     grpc.StatusCode.INVALID_ARGUMENT, "int_contents"),
    ("bytes_prefix_past_end", lambda: grpc_request_with("identity_bytes", "BYTES", [1],
                                                        struct.pack("<I", 2**32 - 1) + b"abc"),
     grpc.StatusCode.INVALID_ARGUMENT, "declares 4294967295 bytes"),
    ("bytes_huge_shape", lambda: grpc_request_with("identity_bytes", "BYTES", [2**40], bytes_contents=[b"a"]),
     grpc.StatusCode.INVALID_ARGUMENT, "bytes_contents"),
]


@pytest.mark.parametrize("name,make,code,needle", GRPC_CASES, ids=[c[0] for c in GRPC_CASES])
def test_grpc_oversize_and_mismatched_raw_contents(server, name, make, code, needle):
    channel, stub = grpc_stub(server)
    with channel:
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(make(), timeout=30)
        assert error.value.code() == code, error.value
        assert needle in (error.value.details() or ""), error.value.details()
        ok = stub.ModelInfer(grpc_simple_request(), timeout=30)
        assert len(ok.raw_output_contents) == 2
    assert_infer_works(server)


def test_grpc_more_raw_contents_than_inputs(server):
    channel, stub = grpc_stub(server)
    with channel:
        request = grpc_simple_request()
        request.raw_input_contents.append(BLOB)
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(request, timeout=30)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "raw_input_contents" in error.value.details()


def test_grpc_load_with_a_deeply_nested_config(server):
    channel, stub = grpc_stub(server)
    with channel:
        request = pb.RepositoryModelLoadRequest(model_name="simple")
        request.parameters["config"].string_param = '{"parameters":' + "[" * 250000 + "]" * 250000 + "}"
        with pytest.raises(grpc.RpcError) as error:
            stub.RepositoryModelLoad(request, timeout=30)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "config" in error.value.details()
    assert_infer_works(server)


# --- OpenAI parameters at and past every limit -----------------------------------------

def completion(llm_server, **fields):
    body = {"model": "tiny", "prompt": "hello", "max_tokens": 2, "temperature": 0} | fields
    return llm_server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})


OPENAI_OK = [
    ("max_tokens_1", {"max_tokens": 1}),
    ("temperature_100", {"temperature": 100}),
    ("top_p_1", {"top_p": 1.0}),
    ("stop_16", {"stop": [f"zz{i}" for i in range(16)]}),
    ("logprobs_20", {"logprobs": 20}),
    ("n_1", {"n": 1}),
    ("n_16", {"n": 16}),
    ("prompts_64", {"prompt": ["hello"] * 64}),
    ("top_k_large", {"top_k": 1 << 24}),
    ("min_tokens_max", {"min_tokens": 2}),
    ("logit_bias_edges", {"logit_bias": {"0": -100, "276": 100, "5": 1e300}}),  # 1e300 clamped, as vLLM
    ("nulls", {"temperature": None, "seed": None, "logit_bias": None, "min_tokens": None, "top_p": None}),
]

OPENAI_BAD = [
    ("max_tokens_0", {"max_tokens": 0}, "max_tokens"),
    ("max_tokens_huge", {"max_tokens": 2**63 - 1}, "max_tokens"),
    ("max_tokens_past_context", {"max_tokens": 1000}, "maximum context length"),
    ("max_tokens_string", {"max_tokens": "5"}, "max_tokens"),
    ("n_17", {"n": 17}, "'n'"),
    ("prompts_65", {"prompt": ["hello"] * 65}, "at most 64 prompts"),
    ("choices_past", {"prompt": ["hello"] * 9, "n": 16}, "at most 128 choices"),
    ("best_of_past_n", {"best_of": 2}, "best_of"),
    ("temperature_negative", {"temperature": -0.01}, "temperature"),
    ("temperature_past", {"temperature": 100.01}, "temperature"),
    ("top_p_0", {"top_p": 0}, "top_p"),
    ("top_p_past", {"top_p": 1.01}, "top_p"),
    ("stop_17", {"stop": [f"zz{i}" for i in range(17)]}, "stop"),
    ("stop_empty", {"stop": [""]}, "stop"),
    ("stop_not_strings", {"stop": [1]}, "stop"),
    ("logprobs_21", {"logprobs": 21}, "logprobs"),
    ("logprobs_negative", {"logprobs": -1}, "logprobs"),
    ("top_k_huge", {"top_k": 2**62}, "top_k"),
    ("priority_huge", {"priority": 2**40}, "priority"),
    ("stop_token_ids_many", {"stop_token_ids": [1] * 1025}, "stop_token_ids"),
    ("seed_string", {"seed": "x"}, "seed"),
    ("frequency_penalty_past", {"frequency_penalty": 2.5}, "frequency_penalty"),
    ("repetition_penalty_0", {"repetition_penalty": 0}, "repetition_penalty"),
    # Issue 26 finding 9: numbers of the wrong kind or past every range, each named.
    ("temperature_1e300", {"temperature": 1e300}, "temperature"),
    ("temperature_string", {"temperature": "0.5"}, "'temperature' must be a number"),
    ("top_p_1e300", {"top_p": 1e300}, "top_p"),
    ("min_p_negative", {"min_p": -1e-300}, "min_p"),
    ("presence_penalty_huge", {"presence_penalty": -1e300}, "presence_penalty"),
    ("repetition_penalty_huge", {"repetition_penalty": 1e300}, "repetition_penalty"),
    ("seed_1e300", {"seed": 1e300}, "'seed' must be an integer"),
    ("seed_past_int64", {"seed": 2**64}, "'seed' must be an integer"),
    ("n_fraction", {"n": 1.5}, "'n' must be an integer"),
    ("best_of_1e300", {"best_of": 1e300}, "'best_of' must be an integer"),
    ("logprobs_1e300", {"logprobs": 1e300}, "'logprobs'"),
    ("top_k_fraction", {"top_k": 2.5}, "'top_k' must be an integer"),
    ("max_tokens_1e300", {"max_tokens": 1e300}, "'max_tokens' must be an integer"),
    ("priority_fraction", {"priority": 0.5}, "'priority' must be an integer"),
    ("stream_options_number", {"stream_options": 1}, "'stream_options' must be an object"),
    ("min_tokens_past_max_tokens", {"min_tokens": 3},
     "min_tokens must be less than or equal to max_tokens=2, got 3."),
    ("min_tokens_negative", {"min_tokens": -1}, "min_tokens must be greater than or equal to 0, got -1."),
    ("logit_bias_out_of_vocab", {"logit_bias": {"277": 1, "-1": 1}},
     "token_id(s) [-1, 277] in logit_bias contain out-of-vocab token ids. Vocabulary size: 277"),
    ("logit_bias_not_an_id", {"logit_bias": {"the": 1}}, "'logit_bias' keys must be token ids"),
    ("logit_bias_not_a_number", {"logit_bias": {"5": "1"}}, "'logit_bias' value of token id 5 must be a number"),
    ("logit_bias_many", {"logit_bias": {str(i): 1 for i in range(1025)}}, "'logit_bias' takes at most 1024"),
]


@pytest.mark.parametrize("name,fields", OPENAI_OK, ids=[c[0] for c in OPENAI_OK])
def test_openai_parameters_at_the_limit_are_accepted(llm_server, name, fields):
    status, _, data = completion(llm_server, **fields)
    assert status == 200, data


@pytest.mark.parametrize("name,fields,needle", OPENAI_BAD, ids=[c[0] for c in OPENAI_BAD])
def test_openai_parameters_past_the_limit_are_400(llm_server, name, fields, needle):
    status, _, data = completion(llm_server, **fields)
    assert status == 400, data
    message = json.loads(data)["error"]["message"]
    assert needle in message, message
    status, _, data = completion(llm_server)
    assert status == 200, data


# --- typed infer parameters: the wrong type is a 400 naming it, not ignored ---------------

PARAMETER_BAD = [
    ("timeout_string", {"timeout": "100"}, "parameter 'timeout' must be an integer (microseconds), not a string"),
    ("timeout_1e300", {"timeout": 1e300}, "'timeout' must be an integer (microseconds), not a number"),
    ("timeout_fraction", {"timeout": 1.5}, "'timeout' must be an integer"),
    ("timeout_negative_fraction", {"timeout": -0.5}, "'timeout' must be an integer"),
    ("timeout_bool", {"timeout": True}, "'timeout' must be an integer (microseconds), not a bool"),
    ("timeout_negative", {"timeout": -1}, "'timeout'"),
    ("priority_string", {"priority": "1"}, "parameter 'priority' must be an integer, not a string"),
    ("priority_1e300", {"priority": 1e300}, "'priority' must be an integer"),
    ("priority_bool", {"priority": False}, "'priority' must be an integer"),
    ("binary_data_output_string", {"binary_data_output": "true"}, "'binary_data_output' must be a bool"),
]


@pytest.mark.parametrize("name,parameters,needle", PARAMETER_BAD, ids=[c[0] for c in PARAMETER_BAD])
def test_typed_infer_parameters_of_the_wrong_type_are_400_over_http(server, name, parameters, needle):
    body = dict(json.loads(SIMPLE_PAYLOAD), parameters=parameters)
    status, _, data = server.infer("simple", json.dumps(body).encode())
    assert status == 400, data
    assert needle in json.loads(data)["error"], data
    assert_infer_works(server)


def test_typed_infer_parameters_of_the_wrong_type_are_invalid_argument_over_grpc(server):
    channel, stub = grpc_stub(server)
    with channel:
        for key, kind, value in [("timeout", "string_param", "100"), ("timeout", "double_param", 1e300),
                                 ("timeout", "bool_param", True), ("priority", "double_param", 1.0),
                                 ("priority", "string_param", "high")]:
            request = grpc_simple_request()
            setattr(request.parameters[key], kind, value)
            with pytest.raises(grpc.RpcError) as error:
                stub.ModelInfer(request, timeout=30)
            assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (key, kind)
            assert f"parameter '{key}' must be an integer" in error.value.details(), error.value.details()
        # The unsigned form of an integer is one.
        request = grpc_simple_request()
        request.parameters["timeout"].uint64_param = 1000000
        stub.ModelInfer(request, timeout=30)
    assert_infer_works(server)


# --- log injection and invalid UTF-8 -------------------------------------------------

def test_request_id_cannot_forge_a_log_line(server):
    forged = "E1201 00:00:00.000000 forged.cc:1] FORGED-LINE"
    payload = json.loads(SIMPLE_PAYLOAD) | {"id": "inject\n" + forged + "\r\x1b[2J"}
    status, _, body = server.infer("simple", json.dumps(payload).encode())
    assert status == 200, body
    deadline = time.monotonic() + 10
    while "FORGED-LINE" not in server.log():
        assert time.monotonic() < deadline, "the request was not logged"
        time.sleep(0.02)
    lines = [line for line in server.log().splitlines() if "FORGED-LINE" in line]
    assert len(lines) == 1, lines
    assert not lines[0].startswith("E1201"), lines
    assert "id=inject\\nE1201" in lines[0], lines[0]
    assert "\x1b" not in lines[0]


@pytest.mark.parametrize("target", [b"/v2/models/%FF%FEbad/ready", b"/v2/models/\xff\xfe\xc3/infer",
                                    b"/v2/models/caf%C3%A9%ED%A0%80/versions/1"])
def test_invalid_utf8_in_the_url_gives_valid_json(server, target):
    method = b"POST" if target.endswith(b"infer") else b"GET"
    reply = raw_exchange(server, method + b" " + target + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
    head, body = reply.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 4"), head
    message = json.loads(body.decode("utf-8"))["error"]  # strict UTF-8: raises if invalid
    assert "\ufffd" in message or "bad" in message, message
    assert_infer_works(server)


@pytest.mark.parametrize("path,body", [
    ("/v1/completions", b'{"model": "a\xff\xfe", "prompt": "x"}'),
    ("/v1/chat/completions", b'{"model": "tiny", "messages": [{"role": "user", "content": "\xc3"}]}'),
    ("/v2/logging", b'{"log_format": "\xff"}'),
    ("/v2/repository/index", b'{"\xff": true}'),
])
def test_invalid_utf8_in_json_bodies_is_400_with_a_json_error(server, path, body):
    status, _, data = server.request("POST", path, body, {"Content-Type": "application/json"})
    assert status == 400, data
    error = json.loads(data.decode("utf-8"))["error"]  # strict UTF-8
    message = error["message"] if isinstance(error, dict) else error
    assert "encoding" in message, message
    assert_infer_works(server)


# --- clients that never read their responses -------------------------------------------

def test_slow_readers_hold_bounded_memory_and_time_out(server):
    """Eight clients send a 6 MiB FP32 request for a JSON answer (~17 MB each) and never
    read it, twice. While they hang, the server holds at most
    --http-max-buffered-response-bytes (32 MiB) plus one answer (the rest get 503), the
    write timeout closes them, and the second wave reuses the first wave's memory: RSS
    after it is within two answers + 16 MiB of RSS after the first (without the bounds
    each wave would add 8 answers, ~140 MB, for as long as the clients like)."""
    values = 1536 * 1024
    header = {"inputs": [{"name": "INPUT0", "shape": [values], "datatype": "FP32",
                          "parameters": {"binary_data_size": values * 4}}],
              "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": False}}]}
    header_bytes = json.dumps(header).encode()
    blob = struct.pack(f"<{values}f", *([0.123456789] * values))
    request = (b"POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\n"
               b"Inference-Header-Content-Length: " + str(len(header_bytes)).encode() + b"\r\n"
               b"Content-Type: application/octet-stream\r\nContent-Length: "
               + str(len(header_bytes) + len(blob)).encode() + b"\r\n\r\n" + header_bytes + blob)
    # One full answer read normally, for its size.
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(request.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n"))
        answer = b""
        while chunk := s.recv(1 << 20):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    one_answer = len(answer)
    assert one_answer > 16 << 20
    held_bound = BUFFER_LIMIT + one_answer

    def wave():
        timeouts_before = server.metric("infera_http_write_timeouts_total")
        clients = []
        try:
            for _ in range(8):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(request)
                clients.append(s)
            # Bounded wait: the write timeout closes the reader of the admitted answer.
            deadline = time.monotonic() + WRITE_TIMEOUT_SECS + 30
            while True:
                held = server.metric("infera_http_buffered_response_bytes")
                assert held <= held_bound, f"{held} bytes of unread responses held (bound {held_bound})"
                if held == 0 and server.metric("infera_http_write_timeouts_total") > timeouts_before:
                    break
                assert time.monotonic() < deadline, "slow readers were not cut off"
                time.sleep(0.05)
            assert_infer_works(server)
        finally:
            for s in clients:
                s.close()

    wave()
    after_first = rss_bytes(server)
    assert server.metric("infera_http_rejected_over_buffer_limit_total") >= 1
    wave()
    grown = rss_bytes(server) - after_first
    bound = 2 * one_answer + (16 << 20)
    assert grown < bound, f"RSS grew by {grown} bytes in the second wave (bound {bound})"
    assert_infer_works(server)

"""Triton's generate / generate_stream and decoupled ModelStreamInfer on an LLM, as Triton's
vLLM backend is used: inputs `text_input` (BYTES), `stream` (BOOL), `sampling_parameters`
(a JSON string), `exclude_input_in_output` (BOOL); output `text_output` (one chunk per
response when streaming, the whole text otherwise).

The LLM backend is decoupled (docs/request_path.md): one response per detokenised chunk.
"""

import json
import socket
import struct
import tempfile

import grpc
import pytest

import llm_testutil as u
from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, wait_for
from otlp_collector import Collector

# A long context so that the cancellation test's generation (6,000 tokens, about a second
# on this model) outlasts a client that leaves after its first chunk, even on a busy machine.
CONFIG = u.tiny_config(vocab_size=320, max_position_embeddings=8192)
WEIGHTS = u.random_weights(CONFIG, seed=5)
MODEL = "tiny"
PROMPT = "Once upon a time"
SAMPLING = json.dumps({"max_tokens": 24, "temperature": 0, "ignore_eos": True})


@pytest.fixture(scope="module")
def collector():
    c = Collector()
    yield c
    c.close()


@pytest.fixture(scope="module")
def server(collector):
    with tempfile.TemporaryDirectory(prefix="infera-generate-llm-") as repo:
        vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 60)
        tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", [("<|endoftext|>", 316)])
        u.write_llm_repo(repo, MODEL, CONFIG, WEIGHTS, tokenizer, {"eos_token": "<|endoftext|>"},
                         parameters={"max_num_seqs": 8, "block_size": 4, "kv_cache_memory_bytes": "8MiB"},
                         instances=1)
        # Rate 0: only requests whose traceparent says sampled are traced.
        s = InferaServer(repo, "--trace-endpoint", collector.endpoint, "--trace-rate", "0")
        s.wait_ready()
        yield s
        s.stop()


def generate(server, body, stream=False):
    path = f"/v2/models/{MODEL}/" + ("generate_stream" if stream else "generate")
    return server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})


def events(payload):
    chunks = [c for c in payload.decode().split("\n\n") if c]
    assert all(c.startswith("data: ") for c in chunks), payload
    return [json.loads(c[len("data: "):]) for c in chunks]


def whole_text(server):
    status, _, payload = generate(server, {"text_input": PROMPT, "exclude_input_in_output": True,
                                           "sampling_parameters": SAMPLING})
    assert status == 200, payload
    answer = json.loads(payload)
    assert answer["model_name"] == MODEL and answer["model_version"] == "1"
    assert isinstance(answer["text_output"], str) and answer["text_output"]
    return answer["text_output"]


def test_generate_returns_the_whole_text(server):
    assert whole_text(server) == whole_text(server)  # greedy: the same text twice


def test_generate_stream_sends_chunks_that_add_up_to_the_text(server):
    status, headers, payload = generate(server, {"text_input": PROMPT, "exclude_input_in_output": True,
                                                 "sampling_parameters": SAMPLING,
                                                 "parameters": {"stream": True}}, stream=True)
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    chunks = events(payload)
    assert len(chunks) > 1
    assert all("error" not in c for c in chunks)
    assert "".join(c.get("text_output", "") for c in chunks) == whole_text(server)


def test_generate_stream_without_stream_is_one_event(server):
    status, _, payload = generate(server, {"text_input": PROMPT, "exclude_input_in_output": True,
                                           "sampling_parameters": SAMPLING, "stream": False}, stream=True)
    assert status == 200
    (event,) = events(payload)
    assert event["text_output"] == whole_text(server)


def test_generate_with_stream_needs_generate_stream(server):
    status, _, payload = generate(server, {"text_input": PROMPT, "sampling_parameters": SAMPLING, "stream": True})
    assert status == 400 and "generate_stream" in json.loads(payload)["error"]


def test_hostile_generate_bodies(server):
    for body, message in (({"text_input": 5}, "expected a string"),
                          ({"text_input": PROMPT, "stream": "yes"}, "expected true or false"),
                          ({"text_input": PROMPT, "sampling_parameters": {"max_tokens": 2}}, "sampling_parameters")):
        status, _, payload = generate(server, body)
        assert status == 400 and message in json.loads(payload)["error"], payload


def grpc_request(request_id, stream=True):
    request = pb.ModelInferRequest(model_name=MODEL, id=request_id)
    for name, datatype, value in (("text_input", "BYTES", PROMPT.encode()), ("sampling_parameters", "BYTES",
                                                                             SAMPLING.encode())):
        request.inputs.add(name=name, datatype=datatype, shape=[1])
        request.raw_input_contents.append(struct.pack("<I", len(value)) + value)
    for name, value in (("stream", stream), ("exclude_input_in_output", True)):
        request.inputs.add(name=name, datatype="BOOL", shape=[1])
        request.raw_input_contents.append(bytes([value]))
    request.parameters["triton_enable_empty_final_response"].bool_param = True
    return request


def text_of(response):
    for i, output in enumerate(response.outputs):
        if output.name == "text_output":
            raw = response.raw_output_contents[i]
            return raw[4:4 + struct.unpack("<I", raw[:4])[0]].decode()
    return ""


def test_model_stream_infer_streams_tokens_with_the_final_flag(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        answers = list(stub.ModelStreamInfer(iter([grpc_request("g1")]), timeout=120))
    assert all(a.error_message == "" for a in answers)
    finals = [a.infer_response.parameters["triton_final_response"].bool_param for a in answers]
    assert finals[-1] and not any(finals[:-1]) and len(answers) > 2
    assert "".join(text_of(a.infer_response) for a in answers) == whole_text(server)


def generation_tokens(server):
    for line in server.request("GET", "/metrics")[2].decode().splitlines():
        if line.startswith("vllm:generation_tokens_total{") and f'model_name="{MODEL}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def failed(server):
    status, body = server.get_json(f"/v2/models/{MODEL}/stats")
    return body["model_stats"][0]["inference_stats"]["fail"]["count"] if status == 200 else 0


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_a_client_that_goes_away_stops_the_generation(server, transport):
    """6,000 tokens asked for; the client leaves after the first chunk: the request ends
    (failed, cancelled) and the token counter stops below 6,000."""
    long_sampling = json.dumps({"max_tokens": 6000, "temperature": 0, "ignore_eos": True})
    before_tokens, before_fail = generation_tokens(server), failed(server)
    if transport == "http":
        body = json.dumps({"text_input": PROMPT, "sampling_parameters": long_sampling, "stream": True}).encode()
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        sock.sendall(b"POST /v2/models/" + MODEL.encode() + b"/generate_stream HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        data = b""
        while b"data: " not in data:
            data += sock.recv(65536)
        sock.close()
    else:
        channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        request = grpc_request("long")
        request.raw_input_contents[1] = struct.pack("<I", len(long_sampling)) + long_sampling.encode()
        call = stub.ModelStreamInfer(iter([request]))
        next(call)
        call.cancel()
        channel.close()
    wait_for(lambda: failed(server) == before_fail + 1, timeout=30)
    # The request has ended, cancelled (a finished one would not count as failed): what it
    # generated is counted, and it stopped before its 6,000 tokens.
    generated = generation_tokens(server) - before_tokens
    assert generated < 6000, generated
    server.assert_serving()


CALLER_SPAN = "00f067aa0ba902b7"
_trace_ids = iter(range(1, 1 << 30))


def traceparent():
    trace_id = f"{0x5bf92f3577b34da6 << 64 | next(_trace_ids):032x}"
    return trace_id, f"00-{trace_id}-{CALLER_SPAN}-01"


def one_trace(collector, trace_id):
    """The trace's SERVER root (under the caller's span) and its children, once exported."""
    spans = collector.wait_for(lambda s: any(x["traceId"] == trace_id and x["kind"] == 2 for x in s))
    spans = [s for s in spans if s["traceId"] == trace_id]
    roots = [s for s in spans if s["kind"] == 2]
    assert len(roots) == 1, spans
    root = roots[0]
    assert root["name"] == f"infer {MODEL}" and root["parentSpanId"] == CALLER_SPAN, root
    children = [s for s in spans if s is not root]
    for child in children:
        assert child["parentSpanId"] == root["spanId"], child
        assert int(root["startTimeUnixNano"]) <= int(child["startTimeUnixNano"])
        assert int(child["endTimeUnixNano"]) <= int(root["endTimeUnixNano"]), (child, root)
    attributes = {a["key"]: next(iter(a["value"].values())) for a in root["attributes"]}
    return attributes, sorted(c["name"] for c in children)


@pytest.mark.parametrize("stream", [False, True])
def test_generate_is_traced_like_an_infer(server, collector, stream):
    """generate and generate_stream on an LLM go through the one pipeline: a sampled
    request is one trace, its root under the caller's span, with the model's queue and
    compute spans; the root ends with the request (a stream's last event)."""
    trace_id, parent = traceparent()
    body = {"text_input": PROMPT, "sampling_parameters": SAMPLING}
    status, _, payload = server.request("POST", f"/v2/models/{MODEL}/" + ("generate_stream" if stream else "generate"),
                                        json.dumps(body), {"Content-Type": "application/json", "traceparent": parent})
    assert status == 200, payload
    attributes, children = one_trace(collector, trace_id)
    assert attributes["infera.model"] == MODEL
    assert attributes["infera.protocol"] == "http", attributes  # as a KServe infer over HTTP
    assert {"queue", "compute"} <= set(children), children


def test_model_stream_infer_is_traced(server, collector):
    trace_id, parent = traceparent()
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        answers = list(stub.ModelStreamInfer(iter([grpc_request("traced")]), timeout=120,
                                             metadata=(("traceparent", parent),)))
    assert answers and all(a.error_message == "" for a in answers)
    attributes, children = one_trace(collector, trace_id)
    assert attributes["infera.model"] == MODEL and attributes["infera.protocol"] == "grpc", attributes
    assert {"queue", "compute"} <= set(children), children

"""The LLM's request path over real sockets (issue 25): the `llm` backend is decoupled, so a
KServe `text_input` request reaches the engine like an OpenAI one — it stops generating when
its client leaves or its `timeout` passes, and one instance serves concurrent requests.

Every "generation stops" check reads the engine's own token counter on /metrics
(`vllm:generation_tokens_total`): after the request is seen to end (the engine's running
gauge back to 0, its abort counted), a short sentinel request runs and the counter grows by
exactly the sentinel's tokens — the abandoned generation produces nothing more.
"""

import json
import socket
import tempfile
import time

import pytest

import llm_testutil as u
from infera_server import InferaServer, wait_for

MODEL = "llm"
LONG = 12000  # max_tokens of a generation that must be stopped: seconds of work


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-llm-decoupled-")
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
    n = len(vocab)
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", [("<|endoftext|>", n)])
    # Big enough that LONG tokens take seconds on this machine (4 layers x 256, contexts
    # up to 12k tokens), small enough to load at once.
    config = u.tiny_config(vocab_size=n + 1, max_position_embeddings=16384, eos_token_id=n, hidden_size=256,
                           intermediate_size=512, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2)
    weights = u.random_weights(config, seed=3)
    params = {"max_num_seqs": 8, "kv_cache_memory_bytes": "128MiB", "num_threads": 1}
    u.write_llm_repo(repo, MODEL, config, weights, tokenizer, {"eos_token": "<|endoftext|>"}, parameters=params)
    u.write_llm_repo(repo, "batched", config, weights, tokenizer, {"eos_token": "<|endoftext|>"},
                     parameters=dict(params, max_model_len=256), max_batch_size=4)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


# ------------------------------------------------------------------------------ helpers

def vllm(server, name, model=MODEL, **labels):
    """The value of vLLM-named series `name` for `model` (labels must match too)."""
    return server.metric(name, model_name=model, **labels)


def generated(server, model=MODEL):
    return vllm(server, "vllm:generation_tokens_total", model)


def aborted(server, model=MODEL):
    return vllm(server, "vllm:request_success_total", model, finished_reason="abort")


def running(server, model=MODEL):
    return vllm(server, "vllm:num_requests_running", model)


def kserve_body(prompt, max_tokens, stream=None, timeout_us=None, exclude=None):
    inputs = [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": [prompt]},
              {"name": "sampling_parameters", "shape": [1], "datatype": "BYTES",
               "data": [json.dumps({"max_tokens": max_tokens, "ignore_eos": True, "temperature": 0})]}]
    if stream is not None:
        inputs.append({"name": "stream", "shape": [1], "datatype": "BOOL", "data": [stream]})
    if exclude is not None:
        inputs.append({"name": "exclude_input_in_output", "shape": [1], "datatype": "BOOL", "data": [exclude]})
    body = {"inputs": inputs}
    if timeout_us is not None:
        body["parameters"] = {"timeout": timeout_us}
    return json.dumps(body).encode()


def open_request(server, path, body):
    """Sends a POST on a raw socket and returns the socket (the answer is not read)."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return sock


def assert_generation_stopped(server, before_tokens, before_aborted):
    """The abandoned generation has ended in the engine (counted as an abort, nothing
    running), generated far fewer than LONG tokens, and generates nothing more: a sentinel
    request afterwards moves the counter by exactly its own tokens."""
    wait_for(lambda: aborted(server) == before_aborted + 1 and running(server) == 0, timeout=60)
    stopped_at = generated(server)
    assert stopped_at - before_tokens < LONG / 2, stopped_at - before_tokens
    status, _, data = server.infer(MODEL, kserve_body("after", 3))
    assert status == 200, data
    assert generated(server) == stopped_at + 3
    return stopped_at - before_tokens


# -------------------------------------------------------------------------------- tests

def test_kserve_client_disconnect_stops_generation(server):
    before_tokens, before_aborted = generated(server), aborted(server)
    sock = open_request(server, f"/v2/models/{MODEL}/infer", kserve_body("Hello", LONG))
    wait_for(lambda: generated(server) > before_tokens, timeout=60)  # it is generating
    sock.close()
    assert_generation_stopped(server, before_tokens, before_aborted)


def test_openai_stream_disconnect_stops_generation(server):
    before_tokens, before_aborted = generated(server), aborted(server)
    body = json.dumps({"model": MODEL, "prompt": "Hello", "max_tokens": LONG, "ignore_eos": True,
                       "stream": True}).encode()
    sock = open_request(server, "/v1/completions", body)
    received = b""
    while b"data: " not in received:
        chunk = sock.recv(4096)
        assert chunk, received
        received += chunk
    sock.close()
    assert_generation_stopped(server, before_tokens, before_aborted)


def test_kserve_timeout_ends_generation(server):
    before_tokens, before_aborted = generated(server), aborted(server)
    start = time.monotonic()
    status, _, data = server.infer(MODEL, kserve_body("Hello", LONG, timeout_us=1_000_000))
    elapsed = time.monotonic() - start
    assert status == 504, data
    assert elapsed < 30, elapsed
    assert assert_generation_stopped(server, before_tokens, before_aborted) > 0  # it did start


def test_one_instance_serves_concurrent_requests(server):
    # A long request holds no worker: a short one sent after it is answered first.
    before_tokens, before_aborted = generated(server), aborted(server)
    long_request = open_request(server, f"/v2/models/{MODEL}/infer", kserve_body("Hello", LONG))
    wait_for(lambda: generated(server) > before_tokens, timeout=60)
    status, _, data = server.infer(MODEL, kserve_body("Hi", 4, exclude=True))
    assert status == 200, data
    out = json.loads(data)["outputs"][0]
    assert out["name"] == "text_output" and len(out["data"]) == 1
    long_request.setblocking(False)
    with pytest.raises(BlockingIOError):  # the long one is still generating: no answer yet
        long_request.recv(1)
    long_request.setblocking(True)
    long_request.close()
    assert_generation_stopped(server, before_tokens, before_aborted)
    # KServe requests to an LLM count in its statistics like any model's.
    status, stats = server.get_json(f"/v2/models/{MODEL}/stats")
    assert status == 200 and stats["model_stats"][0]["inference_stats"]["success"]["count"] >= 2


def test_kserve_text_matches_openai(server):
    params = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}
    status, _, data = server.infer(MODEL, kserve_body("Hello", 6))
    assert status == 200, data
    full = json.loads(data)["outputs"][0]["data"][0]
    status, _, data = server.request("POST", "/v1/completions", json.dumps(dict(params, model=MODEL, prompt="Hello")),
                                     {"Content-Type": "application/json"})
    assert status == 200, data
    assert full == "Hello" + json.loads(data)["choices"][0]["text"]


def test_stream_over_unary_infer_is_refused_naming_the_streaming_calls(server):
    status, _, data = server.infer(MODEL, kserve_body("Hello", 24, stream=True))
    assert status == 400, data
    assert "generate_stream" in json.loads(data)["error"], data
    # The refusal does not wait for the generation to end: its second chunk stops it. (The
    # engine ends the short request above, and counts it, possibly after the 400 is out.)
    wait_for(lambda: running(server) == 0, timeout=60)
    before_tokens, before_aborted = generated(server), aborted(server)
    status, _, data = server.infer(MODEL, kserve_body("Hello", LONG, stream=True))
    assert status == 400 and "generate_stream" in json.loads(data)["error"], data
    assert_generation_stopped(server, before_tokens, before_aborted)
    status, _, data = server.infer(MODEL, kserve_body("Hello", 4, stream=True, exclude=False))
    assert status == 400, data
    assert "exclude_input_in_output=false is not allowed with stream=true" in json.loads(data)["error"], data


def test_a_batch_of_prompts_is_one_response(server):
    body = {"inputs": [{"name": "text_input", "shape": [2, 1], "datatype": "BYTES", "data": ["Hello", "Bye"]},
                       {"name": "sampling_parameters", "shape": [2, 1], "datatype": "BYTES",
                        "data": [json.dumps({"max_tokens": 3, "ignore_eos": True})] * 2}]}
    status, _, data = server.infer("batched", body)
    assert status == 200, data
    out = json.loads(data)["outputs"][0]
    assert out["shape"] == [2, 1], out
    assert out["data"][0].startswith("Hello") and out["data"][1].startswith("Bye"), out
    body["inputs"].append({"name": "stream", "shape": [2, 1], "datatype": "BOOL", "data": [True, True]})
    status, _, data = server.infer("batched", body)
    assert status == 400, data
    assert "one generation per request" in json.loads(data)["error"], data


@pytest.mark.parametrize("inputs,needle", [
    ([{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["x"]},
      {"name": "sampling_parameters", "shape": [1], "datatype": "BYTES", "data": ["{not json"]}],
     "sampling_parameters"),
    ([{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["x"]},
      {"name": "sampling_parameters", "shape": [1], "datatype": "BYTES", "data": ['{"n": 3}']}], "'n'"),
    ([{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": ["x"]},
      {"name": "sampling_parameters", "shape": [1], "datatype": "BYTES", "data": ['{"max_tokens": 99999}']}],
     "maximum context length"),
])
def test_hostile_kserve_requests_get_a_400_naming_the_problem(server, inputs, needle):
    status, _, data = server.infer("batched", {"inputs": [dict(t, shape=[1] + t["shape"]) for t in inputs]})
    assert status == 400, data
    assert needle in json.loads(data)["error"], data
    server.assert_serving()

"""Black-box tests of the OpenAI-compatible API (and the KServe view of an LLM) on tiny
random models: response shapes, usage, SSE streaming, stop strings, seeds, chat
templates, errors, cancellation on client disconnect, KServe text_input/text_output, and
the LLM's Prometheus series on /metrics against the usage the API returned.
"""

import concurrent.futures
import http.client
import json
import socket
import tempfile
import time

import pytest

import llm_testutil as u
from infera_server import InferaServer, metric_samples
from promtool_check import promtool_problems

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-openai-")
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
    n = len(vocab)
    added = [("<|endoftext|>", n), ("<|im_start|>", n + 1), ("<|im_end|>", n + 2)]
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", added)
    config = u.tiny_config(vocab_size=n + 3, max_position_embeddings=4096, eos_token_id=n)
    weights = u.random_weights(config, seed=9)
    tok_config = {"eos_token": "<|endoftext|>", "chat_template": CHATML}
    u.write_llm_repo(repo, "chat", config, weights, tokenizer, tok_config,
                     parameters={"max_num_seqs": 8, "kv_cache_memory_bytes": "16MiB"})
    u.write_llm_repo(repo, "plain", config, weights, tokenizer, {"eos_token": "<|endoftext|>"},
                     parameters={"kv_cache_memory_bytes": "4MiB", "max_model_len": 64}, kserve=False)
    # Only test_prometheus_series_match_the_api_usage uses it: its counters are exact.
    u.write_llm_repo(repo, "metered", config, weights, tokenizer, {"eos_token": "<|endoftext|>"},
                     parameters={"kv_cache_memory_bytes": "4MiB", "block_size": 4}, kserve=False)
    # One sequence at a time: a request that is not cancelled blocks the next one.
    u.write_llm_repo(repo, "single", config, weights, tokenizer, tok_config,
                     parameters={"max_num_seqs": 1, "kv_cache_memory_bytes": "16MiB"}, kserve=False)
    s = InferaServer(repo)
    s.wait_ready()
    s.eos_token_id = n
    yield s
    s.stop()


def post(server, path, body):
    status, headers, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, headers, data


def sse_events(data):
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


def test_models_lists_only_llms(server):
    status, body = server.get_json("/v1/models")
    assert status == 200
    assert body["object"] == "list"
    assert sorted(m["id"] for m in body["data"]) == ["chat", "metered", "plain", "single"]
    assert all(m["object"] == "model" for m in body["data"])
    status, model = server.get_json("/v1/models/plain")
    assert status == 200 and model["max_model_len"] == 64
    # The LLM is a model of the repository: KServe metadata knows it too.
    status, meta = server.get_json("/v2/models/chat")
    assert status == 200 and meta["platform"] == "llm"
    assert [t["name"] for t in meta["outputs"]] == ["text_output"]


def test_completion_shape_and_usage(server):
    status, _, data = post(server, "/v1/completions",
                           {"model": "chat", "prompt": "Hello", "max_tokens": 5, "ignore_eos": True})
    assert status == 200, data
    r = json.loads(data)
    assert r["object"] == "text_completion" and r["id"].startswith("cmpl-") and r["model"] == "chat"
    choice = r["choices"][0]
    assert choice["finish_reason"] == "length" and choice["index"] == 0 and isinstance(choice["text"], str)
    usage = r["usage"]
    assert usage["completion_tokens"] == 5
    assert usage["total_tokens"] == usage["prompt_tokens"] + 5


def test_token_id_prompt_and_echo(server):
    status, _, data = post(server, "/v1/completions",
                           {"model": "chat", "prompt": [72, 101, 108], "max_tokens": 3, "echo": True,
                            "temperature": 0, "ignore_eos": True})
    assert status == 200, data
    r = json.loads(data)
    assert r["usage"]["prompt_tokens"] == 3
    assert r["choices"][0]["text"].startswith("Hel")


def test_seeded_sampling_is_reproducible(server):
    body = {"model": "chat", "prompt": "seed test", "max_tokens": 12, "temperature": 1.0, "top_k": 20,
            "top_p": 0.9, "seed": 1234, "ignore_eos": True}
    texts = [json.loads(post(server, "/v1/completions", body)[2])["choices"][0]["text"] for _ in range(2)]
    assert texts[0] == texts[1]


def test_stop_string_cuts_the_text(server):
    base = {"model": "chat", "prompt": "The quick", "max_tokens": 24, "temperature": 0, "ignore_eos": True}
    full = json.loads(post(server, "/v1/completions", base)[2])["choices"][0]["text"]
    stop = full[5:7]
    assert len(stop) == 2
    r = json.loads(post(server, "/v1/completions", dict(base, stop=[stop]))[2])
    cut = full[:full.index(stop)]
    assert r["choices"][0]["text"] == cut
    assert r["choices"][0]["finish_reason"] == "stop"


def test_streaming_sse_matches_the_unstreamed_text(server):
    body = {"model": "chat", "prompt": "Stream me", "max_tokens": 16, "temperature": 0, "ignore_eos": True}
    whole = json.loads(post(server, "/v1/completions", body)[2])["choices"][0]["text"]
    status, headers, data = post(server, "/v1/completions",
                                 dict(body, stream=True, stream_options={"include_usage": True}))
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    events = sse_events(data)
    assert "".join(e["choices"][0]["text"] for e in events if e["choices"]) == whole
    assert events[-2]["choices"][0]["finish_reason"] == "length"
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] == 16


def test_chat_completion_and_stream(server):
    messages = [{"role": "system", "content": "Be short."}, {"role": "user", "content": "Hi there"}]
    status, _, data = post(server, "/v1/chat/completions",
                           {"model": "chat", "messages": messages, "max_tokens": 6, "temperature": 0,
                            "ignore_eos": True})
    assert status == 200, data
    r = json.loads(data)
    assert r["object"] == "chat.completion" and r["choices"][0]["message"]["role"] == "assistant"
    # <|im_start|>system\nBe short.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n
    assert r["usage"]["prompt_tokens"] > 10
    status, _, data = post(server, "/v1/chat/completions",
                           {"model": "chat", "messages": messages, "max_tokens": 6, "temperature": 0,
                            "ignore_eos": True, "stream": True})
    events = sse_events(data)
    assert events[0]["object"] == "chat.completion.chunk"
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    streamed = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    assert streamed == r["choices"][0]["message"]["content"]


def test_logit_bias_and_min_tokens_steer_the_output(server):
    def complete(**fields):
        status, _, data = post(server, "/v1/completions", {"model": "chat", "prompt": "Once upon a time",
                                                           "max_tokens": 8, "temperature": 0, "logprobs": 0,
                                                           "return_tokens_as_token_ids": True} | fields)
        assert status == 200, data
        return json.loads(data)
    # +100 on one token: greedy picks it every time.
    forced = complete(logit_bias={"65": 100})
    assert forced["choices"][0]["logprobs"]["tokens"] == ["token_id:65"] * 8, forced
    # EOS forced: the completion ends at once; with min_tokens 3, not before 3 tokens.
    eos_token = f"token_id:{server.eos_token_id}"
    eos = {str(server.eos_token_id): 100}
    ended = complete(logit_bias=eos)
    assert ended["choices"][0]["finish_reason"] == "stop", ended
    assert ended["choices"][0]["logprobs"]["tokens"] in ([], [eos_token]), ended
    held = complete(logit_bias=eos, min_tokens=3)
    assert held["choices"][0]["finish_reason"] == "stop", held
    tokens = held["choices"][0]["logprobs"]["tokens"]
    assert len(tokens) >= 3 and eos_token not in tokens[:3] and tokens[3:] in ([], [eos_token]), held
    # min_tokens = max_tokens: the length ends it, EOS never sampled.
    full = complete(logit_bias=eos, min_tokens=8)
    assert full["choices"][0]["finish_reason"] == "length", full
    assert len(full["choices"][0]["logprobs"]["tokens"]) == 8, full


@pytest.mark.parametrize("path,body,status,needle", [
    ("/v1/completions", {"model": "nope", "prompt": "x"}, 404, "does not exist"),
    ("/v1/completions", {"model": "chat", "prompt": "x", "temperature": -1}, 400, "temperature"),
    ("/v1/completions", {"model": "chat"}, 400, "prompt"),
    ("/v1/completions", {"model": "plain", "prompt": "x" * 10, "max_tokens": 100}, 400,
     "maximum context length"),
    ("/v1/completions", {"model": "chat", "prompt": [1, 99999]}, 400, "vocabulary"),
    ("/v1/chat/completions", {"model": "plain", "messages": [{"role": "user", "content": "x"}]}, 400,
     "chat_template"),
    ("/v1/chat/completions", {"model": "chat", "messages": [{"role": "robot", "content": "x"}]}, 400, "role"),
    ("/v1/completions", {"model": "simple_missing", "prompt": "x", "n": 17}, 400, "'n'"),
])
def test_errors_are_openai_shaped(server, path, body, status, needle):
    got, _, data = post(server, path, body)
    assert got == status, data
    error = json.loads(data)["error"]
    assert needle in error["message"]
    assert error["code"] == status and "type" in error


def test_bad_json_and_methods(server):
    status, _, data = server.request("POST", "/v1/completions", "{not json", {"Content-Type": "application/json"})
    assert status == 400 and "error" in json.loads(data)
    status, _, _ = server.request("GET", "/v1/completions")
    assert status == 405
    status, _, _ = server.request("GET", "/v1/nothing")
    assert status == 404


def test_client_disconnect_cancels_generation(server):
    # "single" runs one sequence at a time. Start a long streamed generation, read one
    # chunk, hang up: the engine must drop it, so far fewer than its 4000 tokens are ever
    # generated (counted by the server itself), and the next request is served.
    before = value(server.metrics_text(), "infera_llm_generation_tokens_total", "single")
    body = json.dumps({"model": "single", "prompt": "long", "max_tokens": 4000, "ignore_eos": True,
                       "stream": True}).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    received = b""
    while b"data: " not in received:
        chunk = sock.recv(4096)
        assert chunk, received
        received += chunk
    sock.close()
    status, _, data = post(server, "/v1/completions",
                           {"model": "single", "prompt": "after", "max_tokens": 3, "ignore_eos": True})
    assert status == 200, data
    generated = value(server.metrics_text(), "infera_llm_generation_tokens_total", "single") - before
    # Uncancelled, the first request alone would generate 4000 (a full run takes ~1 s on
    # this tiny model; the cancelled one stops within a few steps of the hang-up).
    assert 3 < generated < 2000, generated


def test_kserve_infer_with_vllm_tensor_names(server):
    def infer(text, params, exclude=None):
        inputs = [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": [text]},
                  {"name": "sampling_parameters", "shape": [1], "datatype": "BYTES", "data": [json.dumps(params)]}]
        if exclude is not None:
            inputs.append({"name": "exclude_input_in_output", "shape": [1], "datatype": "BOOL", "data": [exclude]})
        status, _, data = server.infer("chat", {"inputs": inputs})
        assert status == 200, data
        out = json.loads(data)["outputs"][0]
        assert out["name"] == "text_output" and out["datatype"] == "BYTES"
        return out["data"][0]

    params = {"max_tokens": 6, "temperature": 0, "ignore_eos": True}
    full = infer("Hello", params)
    generated = infer("Hello", params, exclude=True)
    assert full == "Hello" + generated
    completion = json.loads(post(server, "/v1/completions", dict(params, model="chat", prompt="Hello"))[2])
    assert completion["choices"][0]["text"] == generated
    # Concurrent KServe requests are batched by the engine (one decoupled instance).
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda _: infer("Hello", params, exclude=True), range(4))) == [generated] * 4


# ------------------------------------------------------------------------------- metrics

def series(text, name, model):
    """{labels-string-without-model: value} of `name` for model="<model>"."""
    return {",".join(f'{k}="{v}"' for k, v in labels.items() if k != "model"): value
            for sample, labels, value in metric_samples(text)
            if sample == name and labels.get("model") == model}


def value(text, name, model):
    values = series(text, name, model)
    assert len(values) == 1, (name, values)
    return next(iter(values.values()))


def test_prometheus_series_match_the_api_usage(server):
    shared = [(i * 7) % 200 + 3 for i in range(12)]  # 3 blocks of 4: the second request hits them
    prompts = [shared + [5, 6], shared + [7, 8, 9], "Hello there", [11, 12, 13]]
    usages = []
    for i, prompt in enumerate(prompts):
        status, _, data = post(server, "/v1/completions", {"model": "metered", "prompt": prompt,
                                                           "max_tokens": 3 + i, "temperature": 0, "ignore_eos": True})
        assert status == 200, data
        usages.append(json.loads(data)["usage"])
    status, _, data = post(server, "/v1/completions", {"model": "metered", "prompt": "streamed", "max_tokens": 5,
                                                       "temperature": 0, "ignore_eos": True, "stream": True,
                                                       "stream_options": {"include_usage": True}})
    assert status == 200
    usages.append(sse_events(data)[-1]["usage"])
    assert usages[1]["prompt_tokens_details"]["cached_tokens"] == 12

    # The gauges settle at the end of the engine's step, just after the last callback.
    deadline = time.time() + 5
    while True:
        text = server.metrics_text()
        if value(text, "infera_llm_running_sequences", "metered") == 0 or time.time() > deadline:
            break
        time.sleep(0.02)
    n = len(usages)
    assert value(text, "infera_llm_prompt_tokens_total", "metered") == sum(x["prompt_tokens"] for x in usages)
    assert value(text, "infera_llm_generation_tokens_total", "metered") == sum(x["completion_tokens"] for x in usages)
    for histogram in ("time_to_first_token", "e2e_request_latency", "queue_time"):
        assert value(text, f"infera_llm_{histogram}_seconds_count", "metered") == n, histogram
        buckets = series(text, f"infera_llm_{histogram}_seconds_bucket", "metered")
        assert buckets['le="+Inf"'] == n
    # Every token after a request's first is one inter-token gap.
    assert value(text, "infera_llm_inter_token_latency_seconds_count", "metered") == \
        sum(x["completion_tokens"] - 1 for x in usages)
    assert value(text, "infera_llm_prefix_cache_queries_total", "metered") == sum(x["prompt_tokens"] for x in usages)
    assert value(text, "infera_llm_prefix_cache_hits_total", "metered") == 12
    assert value(text, "infera_llm_preemptions_total", "metered") == 0
    assert value(text, "infera_llm_running_sequences", "metered") == 0
    assert value(text, "infera_llm_waiting_sequences", "metered") == 0
    assert value(text, "infera_llm_kv_cache_usage_ratio", "metered") == 0
    # Every LLM of the repository has its own series.
    assert value(text, "infera_llm_kv_cache_usage_ratio", "chat") >= 0

    assert promtool_problems(text) == []  # the vLLM names' colons are vLLM's (test_vllm_metrics.py)

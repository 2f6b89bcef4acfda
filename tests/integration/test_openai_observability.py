"""The OpenAI routes on the one request path, black box: every /v1 request is traced like
a KServe infer (OTLP spans at a collector stand-in, their parent/child structure, the
response's traceparent) and counted in the model's statistics and Prometheus series —
each generation (choice) once, successes and failures by reason, with queue and compute
times.

Completions and chat run on a tiny random LLM written by the test; embeddings on the
demo repository's text_embed pipeline (INFERA_DEMO_REPO)."""

import json
import re
import socket
import tempfile
import time

import pytest

import llm_testutil as u
from infera_server import InferaServer, copy_model, demo_repo
from otlp_collector import Collector

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
EMBEDDING_MODELS = ["text_tokenize", "text_embed_encoder", "text_pool", "text_embed"]
CALLER_SPAN = "00f067aa0ba902b7"
GENERATION_STAGES = ["tokenize", "queue", "prefill", "decode", "detokenize"]


@pytest.fixture(scope="module")
def collector():
    c = Collector()
    yield c
    c.close()


@pytest.fixture(scope="module")
def server(collector):
    repo = tempfile.mkdtemp(prefix="infera-openai-obs-")
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
    n = len(vocab)
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2",
                                            [("<|endoftext|>", n), ("<|im_start|>", n + 1), ("<|im_end|>", n + 2)])
    config = u.tiny_config(vocab_size=n + 3, max_position_embeddings=4096, eos_token_id=n)
    weights = u.random_weights(config, seed=5)
    tok_config = {"eos_token": "<|endoftext|>", "chat_template": CHATML}
    # "chat" is traced; "counted" is only for the statistics tests (its counters are exact).
    u.write_llm_repo(repo, "chat", config, weights, tokenizer, tok_config,
                     parameters={"max_num_seqs": 8, "kv_cache_memory_bytes": "16MiB"}, kserve=False)
    u.write_llm_repo(repo, "counted", config, weights, tokenizer, tok_config,
                     parameters={"max_num_seqs": 8, "kv_cache_memory_bytes": "16MiB", "max_model_len": 2048},
                     kserve=False)
    for model in EMBEDDING_MODELS:
        copy_model(demo_repo(), model, repo)
    # Rate 0: only requests whose traceparent says sampled are traced.
    s = InferaServer(repo, "--trace-endpoint", collector.endpoint, "--trace-rate", "0")
    s.wait_ready()
    assert "server is ready" in s.log(), s.log()
    yield s
    s.stop()


_trace_ids = iter(range(1, 1 << 30))


def traceparent(sampled=True):
    trace_id = f"{0x4bf92f3577b34da6 << 64 | next(_trace_ids):032x}"
    return trace_id, f"00-{trace_id}-{CALLER_SPAN}-{'01' if sampled else '00'}"


def post(server, path, body, headers=None):
    return server.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})


def sse_events(data):
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


def attributes(span):
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def traced(collector, trace_id, headers):
    """The trace's root and children, once exported; checks what every trace shares: one
    SERVER root under the caller's span, named by the response's traceparent, every
    other span its child and inside it."""
    spans = collector.wait_for(lambda s: any(x["traceId"] == trace_id and x["kind"] == 2 for x in s))
    spans = [s for s in spans if s["traceId"] == trace_id]
    roots = [s for s in spans if s["kind"] == 2]
    assert len(roots) == 1, spans
    root = roots[0]
    assert root["parentSpanId"] == CALLER_SPAN
    assert attributes(root)["infera.protocol"] == "openai"
    assert headers["traceparent"] == f"00-{trace_id}-{root['spanId']}-01"
    children = [s for s in spans if s is not root]
    for child in children:
        assert child["kind"] == 1 and child["parentSpanId"] == root["spanId"], child
        assert int(root["startTimeUnixNano"]) <= int(child["startTimeUnixNano"]) <= int(child["endTimeUnixNano"])
        assert int(child["endTimeUnixNano"]) <= int(root["endTimeUnixNano"]), (child, root)
    return root, children


def check_generations(children, num_choices):
    """Each choice's stages: queue, prefill and decode once each, back to back (tokenize
    before the queue and detokenize ending with the decode when the engine reports
    them), every one marked with its choice's index."""
    stages = [c for c in children if c["name"] in GENERATION_STAGES]
    by_choice = {}
    for span in stages:
        by_choice.setdefault(int(attributes(span)["infera.choice"]), {}).setdefault(span["name"], []).append(span)
    assert sorted(by_choice) == list(range(num_choices)), by_choice.keys()
    for choice, named in by_choice.items():
        assert all(len(v) == 1 for v in named.values()), (choice, named)
        assert {"queue", "prefill", "decode"} <= set(named), (choice, sorted(named))
        s = {name: v[0] for name, v in named.items()}
        start, end = (lambda x: int(s[x]["startTimeUnixNano"])), (lambda x: int(s[x]["endTimeUnixNano"]))
        assert end("queue") == start("prefill") and end("prefill") == start("decode"), s
        if "tokenize" in s:
            assert end("tokenize") == start("queue")
        if "detokenize" in s:
            assert end("detokenize") == end("decode")
    return by_choice


def names(children):
    return sorted(c["name"] for c in children if c["name"] not in GENERATION_STAGES)


# ------------------------------------------------------------------------- tracing

def test_a_completion_is_one_trace_with_each_choices_stages(server, collector):
    trace_id, parent = traceparent()
    status, headers, data = post(server, "/v1/completions",
                                 {"model": "chat", "prompt": ["Hello", "there"], "n": 2, "max_tokens": 3,
                                  "ignore_eos": True}, {"traceparent": parent})
    assert status == 200, data
    root, children = traced(collector, trace_id, headers)
    assert root["name"] == "infer chat"
    attrs = attributes(root)
    assert attrs["infera.model"] == "chat" and attrs["http.status_code"] == "200"
    assert attrs["infera.request_id"] == json.loads(data)["id"]
    assert "message" not in root["status"]
    assert names(children) == ["parse", "serialize"]
    check_generations(children, 4)


def test_a_streamed_completion_is_traced_until_its_end(server, collector):
    trace_id, parent = traceparent()
    status, headers, data = post(server, "/v1/completions",
                                 {"model": "chat", "prompt": "Hello", "max_tokens": 4, "ignore_eos": True,
                                  "stream": True}, {"traceparent": parent})
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    events = sse_events(data)
    root, children = traced(collector, trace_id, headers)
    assert attributes(root)["infera.request_id"] == events[0]["id"]
    assert names(children) == ["parse"]  # chunks are rendered as the tokens come: no serialize
    check_generations(children, 1)


def test_chat_streamed_and_not(server, collector):
    for stream in (False, True):
        trace_id, parent = traceparent()
        status, headers, data = post(server, "/v1/chat/completions",
                                     {"model": "chat", "messages": [{"role": "user", "content": "Hi"}], "n": 2,
                                      "max_tokens": 3, "ignore_eos": True, "stream": stream},
                                     {"traceparent": parent})
        assert status == 200, data
        root, children = traced(collector, trace_id, headers)
        assert attributes(root)["infera.request_id"].startswith("chatcmpl-")
        assert names(children) == (["parse"] if stream else ["parse", "serialize"])
        check_generations(children, 2)


def test_embeddings_are_one_trace_with_the_models_queue_and_compute(server, collector):
    trace_id, parent = traceparent()
    status, headers, data = post(server, "/v1/embeddings", {"model": "text_embed", "input": ["a cat", "a dog", "tea"]},
                                 {"traceparent": parent})
    assert status == 200, data
    root, children = traced(collector, trace_id, headers)
    assert root["name"] == "infer text_embed"
    attrs = attributes(root)
    assert attrs["infera.model"] == "text_embed" and attrs["http.status_code"] == "200"
    assert attrs["infera.request_id"] == json.loads(data)["id"]
    stages = sorted(c["name"] for c in children)
    # One KServe request per max_batch_size texts: a queue and a compute span each.
    assert stages.count("parse") == 1 and stages.count("serialize") == 1, stages
    assert stages.count("queue") == stages.count("compute") >= 1, stages
    assert set(stages) == {"parse", "queue", "compute", "serialize"}


def test_errors_are_traced_and_unsampled_requests_are_not(server, collector):
    trace_id, parent = traceparent()
    status, headers, _ = post(server, "/v1/completions", {"model": "nope", "prompt": "x"}, {"traceparent": parent})
    assert status == 404
    root, children = traced(collector, trace_id, headers)
    assert attributes(root)["http.status_code"] == "404"
    assert root["status"]["code"] == 2 and "does not exist" in root["status"]["message"]
    assert names(children) == ["parse"]

    quiet_id, quiet = traceparent(sampled=False)
    status, headers, _ = post(server, "/v1/completions", {"model": "chat", "prompt": "x", "max_tokens": 1},
                              {"traceparent": quiet})
    assert status == 200 and "traceparent" not in headers
    status, headers, _ = post(server, "/v1/embeddings", {"model": "text_embed", "input": "x"}, {"traceparent": quiet})
    assert status == 200 and "traceparent" not in headers
    # Spans leave in the order their requests end: once a later trace has arrived, the
    # unsampled requests' would have too.
    later_id, later = traceparent()
    status, headers, _ = post(server, "/v1/embeddings", {"model": "text_embed", "input": "y"}, {"traceparent": later})
    traced(collector, later_id, headers)
    assert not [s for s in collector.spans() if s["traceId"] == quiet_id]


# ---------------------------------------------------------------------- statistics

def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    entry = body["model_stats"][0]
    s = entry["inference_stats"]
    return {"success": s["success"]["count"], "success_ns": s["success"]["ns"], "fail": s["fail"]["count"],
            "queue": s["queue"]["count"], "queue_ns": s["queue"]["ns"],
            "compute": s["compute_infer"]["count"], "compute_ns": s["compute_infer"]["ns"],
            "inferences": entry["inference_count"], "executions": entry["execution_count"]}


def series(server, model):
    """{name or name{outcome}: value} of the model's per-model series on /metrics."""
    status, _, data = server.request("GET", "/metrics")
    assert status == 200
    found = {}
    for line in data.decode().splitlines():
        m = re.match(r'^(infera_[a-z0-9_]+)\{([^}]*)\} (\S+)$', line)
        if not m or f'model="{model}"' not in m.group(2):
            continue
        outcome = re.search(r'outcome="([a-z_]+)"', m.group(2))
        key = m.group(1) + (f"{{{outcome.group(1)}}}" if outcome else "")
        if "le=" not in m.group(2):
            found[key] = float(m.group(3))
    return found


def delta(after, before, key):
    return after.get(key, 0) - before.get(key, 0)


def wait_for_series(server, model, key, value, timeout=20):
    """Polls /metrics until the model's series `key` reaches `value` (or the timeout)."""
    deadline = time.time() + timeout
    while True:
        found = series(server, model)
        if found.get(key, 0) >= value or time.time() > deadline:
            return found
        time.sleep(0.02)


def test_each_generation_is_one_request_in_the_statistics(server):
    before, metrics_before = stats(server, "counted"), series(server, "counted")
    base = {"model": "counted", "max_tokens": 3, "ignore_eos": True}
    requests = [("/v1/completions", dict(base, prompt="Hello"), 1),
                ("/v1/completions", dict(base, prompt=["Hello", [5, 6, 7]], n=2), 4),
                ("/v1/completions", dict(base, prompt="Hello", stream=True), 1),
                ("/v1/chat/completions", dict(base, messages=[{"role": "user", "content": "Hi"}]), 1),
                ("/v1/chat/completions", dict(base, messages=[{"role": "user", "content": "Hi"}], n=2, stream=True), 2)]
    for path, body, _ in requests:
        status, _, data = post(server, path, body)
        assert status == 200, data
    generations = sum(g for _, _, g in requests)
    after, metrics_after = stats(server, "counted"), series(server, "counted")
    # Counted before each answer was written: no wait needed.
    for key in ("success", "queue", "compute", "inferences", "executions"):
        assert after[key] - before[key] == generations, key
    assert after["fail"] == before["fail"]
    queue_ns, compute_ns = after["queue_ns"] - before["queue_ns"], after["compute_ns"] - before["compute_ns"]
    assert queue_ns > 0 and compute_ns > 0
    # Request read → ended is the queue (→ first engine step) plus the compute (→ ended).
    assert after["success_ns"] - before["success_ns"] == queue_ns + compute_ns
    assert delta(metrics_after, metrics_before, "infera_requests_total{success}") == generations
    assert delta(metrics_after, metrics_before, "infera_request_duration_seconds_count") == generations
    assert delta(metrics_after, metrics_before, "infera_queue_duration_seconds_count") == generations
    # The engine's own series count the same generations (recorded on the engine's
    # side, which need not be before the answer was written: waited for).
    e2e = "infera_llm_e2e_request_latency_seconds_count"
    metrics_after = wait_for_series(server, "counted", e2e, metrics_before.get(e2e, 0) + generations)
    assert delta(metrics_after, metrics_before, e2e) == generations


def test_failures_are_counted_once_by_reason(server):
    before, metrics_before = stats(server, "counted"), series(server, "counted")
    # Refused at admission: the prompt and max_tokens do not fit max_model_len (2048).
    status, _, data = post(server, "/v1/completions", {"model": "counted", "prompt": [5] * 2100, "max_tokens": 1})
    assert status == 400 and b"context length" in data, data
    # Refused before a model is known (not the model's): malformed body, bad field, unknown model.
    assert post(server, "/v1/completions", {"model": "counted", "prompt": "x", "top_p": 0})[0] == 400
    assert server.request("POST", "/v1/completions", b"{not json", {"Content-Type": "application/json"})[0] == 400
    assert post(server, "/v1/completions", {"model": "nope", "prompt": "x"})[0] == 404
    after, metrics_after = stats(server, "counted"), series(server, "counted")
    assert after["fail"] - before["fail"] == 1
    assert after["success"] == before["success"]
    assert delta(metrics_after, metrics_before, "infera_requests_total{bad_request}") == 1

    # The client goes away mid-stream: the generation is cancelled, counted once.
    body = json.dumps({"model": "counted", "prompt": "long", "max_tokens": 2000, "ignore_eos": True,
                       "stream": True}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        received = b""
        while b"data: " not in received:
            chunk = sock.recv(4096)
            assert chunk, received
            received += chunk
    wanted = metrics_before.get("infera_requests_total{cancelled}", 0) + 1
    metrics_after = wait_for_series(server, "counted", "infera_requests_total{cancelled}", wanted)
    assert metrics_after.get("infera_requests_total{cancelled}", 0) == wanted
    after = stats(server, "counted")
    assert after["fail"] - before["fail"] == 2
    assert after["success"] == before["success"]
    for outcome in ("success", "rejected", "timeout", "backend_error"):
        assert delta(metrics_after, metrics_before, f"infera_requests_total{{{outcome}}}") == 0, outcome

"""Metrics of the OpenAI/LLM path, black box, on the demo LLM (fortune): /v1 requests are
counted in infera_requests_total like KServe requests; the LLM series are also exported
under vLLM's names (types, labels, bucket bounds as vLLM's); completions (streamed and
not, chat and text, one hitting a stop string, one aborted by a client disconnect, one
refused) move every counter and histogram by exactly what was sent; vLLM dashboard
queries evaluate through Prometheus' own engine (promtool test rules); and the metric
tables of docs/llm.md and docs/metrics.md list exactly what /metrics exports.
"""

import json
import os
import re
import socket
import subprocess
import tempfile
import time

import pytest

from infera_server import InferaServer, copy_model, demo_repo, metric_samples
from promtool_check import promtool_problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "fortune"
MAX_MODEL_LEN = 512  # the demo's config.pbtxt

# vLLM's bucket bounds (vllm/v1/metrics/loggers.py).
TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
        80.0, 160.0, 640.0, 2560.0]
ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
REQUEST = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
           960.0, 1920.0, 7680.0]
TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500]  # build_1_2_5_buckets(512)
VLLM_HISTOGRAMS = {
    "vllm:time_to_first_token_seconds": TTFT,
    "vllm:time_per_output_token_seconds": ITL,
    "vllm:inter_token_latency_seconds": ITL,
    "vllm:e2e_request_latency_seconds": REQUEST,
    "vllm:request_queue_time_seconds": REQUEST,
    "vllm:request_prompt_tokens": TOKENS,
    "vllm:request_generation_tokens": TOKENS,
    "vllm:request_prefill_time_seconds": REQUEST,
    "vllm:request_decode_time_seconds": REQUEST,
    "vllm:request_inference_time_seconds": REQUEST,
}
VLLM_OTHERS = {
    "vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge",
    "vllm:gpu_cache_usage_perc": "gauge", "vllm:kv_cache_usage_perc": "gauge",
    "vllm:prompt_tokens_total": "counter", "vllm:generation_tokens_total": "counter",
    "vllm:request_success_total": "counter", "vllm:num_preemptions_total": "counter",
    "vllm:prefix_cache_queries_total": "counter", "vllm:prefix_cache_hits_total": "counter",
}


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-vllm-metrics-")
    copy_model(demo_repo(), MODEL, repo)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


# ----------------------------------------------------------------------------- helpers

def parse(text):
    """{(name, frozenset(labels)): value} and {family: type} of an exposition text."""
    types = dict(line.split(" ")[2:4] for line in text.splitlines() if line.startswith("# TYPE "))
    samples = {(name, frozenset(labels.items())): value for name, labels, value in metric_samples(text)}
    return samples, types


def get(samples, name, **labels):
    """The one sample of `name` whose labels include `labels`."""
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and want <= ls]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def vllm(samples, name, **labels):
    return get(samples, name, model_name=MODEL, engine="0", **labels)


def infera(samples, name, **labels):
    return get(samples, name, model=MODEL, **labels)


def post(server, path, body):
    status, _, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, data


def sse_events(data):
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


def wait_for(server, predicate, what, timeout=20):
    """Scrapes until predicate(samples) holds (bounded); returns the samples."""
    deadline = time.time() + timeout
    while True:
        samples, _ = parse(server.metrics_text())
        if predicate(samples):
            return samples
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def idle(samples):
    return vllm(samples, "vllm:num_requests_running") == 0 and vllm(samples, "vllm:num_requests_waiting") == 0


def histogram_quantile(q, buckets):
    """Prometheus' histogram_quantile over [(le, cumulative count)] sorted by le (+Inf last)."""
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_count) / (count - prev_count)
        prev_le, prev_count = le, count
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------- tests

def test_vllm_names_types_labels_and_buckets(server):
    text = server.metrics_text()
    samples, types = parse(text)
    for name, bounds in VLLM_HISTOGRAMS.items():
        assert types.get(name) == "histogram", name
        les = sorted(float(dict(ls)["le"]) for (n, ls), _ in samples.items()
                     if n == name + "_bucket" and ("model_name", MODEL) in ls)
        assert les == bounds + [float("inf")], (name, les)
        vllm(samples, name + "_count")
        vllm(samples, name + "_sum")
    for name, kind in VLLM_OTHERS.items():
        assert types.get(name) == kind, name
    for reason in ("stop", "length", "abort"):  # exist before any request, as in vLLM
        vllm(samples, "vllm:request_success_total", finished_reason=reason)
    # No sample keeps infera's `model` label under a vLLM name.
    assert not [k for k in samples if k[0].startswith("vllm:") and any(l[0] == "model" for l in k[1])]
    assert promtool_problems(text) == []


def test_completions_move_every_series_by_exactly_what_was_sent(server, tmp_path):
    before = wait_for(server, idle, "an idle engine")
    prompt = "Why did the chicken"
    usages = []  # of the requests that end normally
    # A: text, whole answer, hits max_tokens.
    status, data = post(server, "/v1/completions",
                        {"model": MODEL, "prompt": prompt, "max_tokens": 4, "ignore_eos": True, "temperature": 0})
    assert status == 200, data
    a = json.loads(data)
    assert a["choices"][0]["finish_reason"] == "length"
    usages.append(a["usage"])
    # B: text, streamed, hits max_tokens.
    status, data = post(server, "/v1/completions",
                        {"model": MODEL, "prompt": prompt, "max_tokens": 5, "ignore_eos": True, "stream": True,
                         "stream_options": {"include_usage": True}})
    assert status == 200, data
    events = sse_events(data)
    assert events[-2]["choices"][0]["finish_reason"] == "length"
    usages.append(events[-1]["usage"])
    # C and D: chat, whole and streamed.
    messages = [{"role": "user", "content": "Tell me a fortune"}]
    status, data = post(server, "/v1/chat/completions",
                        {"model": MODEL, "messages": messages, "max_tokens": 3, "ignore_eos": True})
    assert status == 200, data
    usages.append(json.loads(data)["usage"])
    status, data = post(server, "/v1/chat/completions",
                        {"model": MODEL, "messages": messages, "max_tokens": 3, "ignore_eos": True, "stream": True,
                         "stream_options": {"include_usage": True}})
    assert status == 200, data
    usages.append(sse_events(data)[-1]["usage"])
    # E: ends on a stop string: A's first character, greedy again, so the first token holds
    # it. The prompt is shorter than one KV block (16 tokens), so no prefix-cache hit makes
    # E's prefill compute differently from A's: the same logits, the same greedy tokens.
    assert a["usage"]["prompt_tokens"] < 16
    status, data = post(server, "/v1/completions",
                        {"model": MODEL, "prompt": prompt, "max_tokens": 4, "ignore_eos": True, "temperature": 0,
                         "stop": [a["choices"][0]["text"][0]]})
    assert status == 200, data
    e = json.loads(data)
    assert e["choices"][0]["finish_reason"] == "stop", e
    usages.append(e["usage"])
    # F: refused at admission (prompt + max_tokens > max_model_len): counted, never reaches the engine.
    status, data = post(server, "/v1/completions", {"model": MODEL, "prompt": prompt, "max_tokens": MAX_MODEL_LEN})
    assert status == 400, data
    # G: streamed, the client hangs up after the first chunk: the engine aborts it.
    body = json.dumps({"model": MODEL, "prompt": prompt, "max_tokens": 400, "ignore_eos": True,
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
    delta = lambda name, **labels: vllm(after, name, **labels) - vllm(before, name, **labels)  # noqa: E731
    after = wait_for(server, lambda s: idle(s) and infera(s, "infera_requests_total", outcome="cancelled")
                     > infera(before, "infera_requests_total", outcome="cancelled"), "the aborted request")
    ended = len(usages) + 1  # + the aborted one

    # infera_requests_total counts /v1 requests with KServe's outcome semantics.
    outcome = lambda o: (infera(after, "infera_requests_total", outcome=o)  # noqa: E731
                         - infera(before, "infera_requests_total", outcome=o))
    assert outcome("success") == len(usages)
    assert outcome("cancelled") == 1
    assert outcome("bad_request") == 1
    assert outcome("rejected") == outcome("timeout") == outcome("backend_error") == 0
    for histogram in ("infera_request_duration_seconds_count", "infera_queue_duration_seconds_count"):
        assert infera(after, histogram) - infera(before, histogram) == len(usages), histogram
    # ... and Triton's statistics extension agrees.
    status, stats = server.get_json(f"/v2/models/{MODEL}/stats")
    assert status == 200
    inference = stats["model_stats"][0]["inference_stats"]
    assert inference["success"]["count"] == infera(after, "infera_requests_total", outcome="success")

    # Requests ended, by reason (vLLM's and infera's names agree).
    assert delta("vllm:request_success_total", finished_reason="length") == 4
    assert delta("vllm:request_success_total", finished_reason="stop") == 1
    assert delta("vllm:request_success_total", finished_reason="abort") == 1
    for reason in ("stop", "length", "abort", "error"):
        assert infera(after, "infera_llm_requests_finished_total", finished_reason=reason) == \
            vllm(after, "vllm:request_success_total", finished_reason=reason)

    # Tokens: the aborted request had A's prompt.
    prompt_tokens = sum(u["prompt_tokens"] for u in usages) + usages[0]["prompt_tokens"]
    completion_tokens = sum(u["completion_tokens"] for u in usages)
    assert delta("vllm:prompt_tokens_total") == prompt_tokens
    assert delta("vllm:request_prompt_tokens_sum") == prompt_tokens
    generated = delta("vllm:generation_tokens_total")
    aborted_tokens = generated - completion_tokens
    assert 1 <= aborted_tokens < 400, aborted_tokens
    assert delta("vllm:request_generation_tokens_sum") == generated
    for name in ("vllm:request_prompt_tokens_count", "vllm:request_generation_tokens_count",
                 "vllm:e2e_request_latency_seconds_count", "vllm:time_to_first_token_seconds_count",
                 "vllm:request_queue_time_seconds_count", "vllm:request_prefill_time_seconds_count",
                 "vllm:request_decode_time_seconds_count", "vllm:request_inference_time_seconds_count"):
        assert delta(name) == ended, name  # every request here produced a token
    # inference = prefill + decode, per request (up to rounding)
    assert delta("vllm:request_inference_time_seconds_sum") == pytest.approx(
        delta("vllm:request_prefill_time_seconds_sum") + delta("vllm:request_decode_time_seconds_sum"), abs=1e-6)
    # Every token after a request's first is one inter-token gap (both names).
    assert delta("vllm:inter_token_latency_seconds_count") == generated - ended
    assert delta("vllm:time_per_output_token_seconds_count") == generated - ended
    # Same measurement under both names.
    for infera_name, vllm_name in (("infera_llm_generation_tokens_total", "vllm:generation_tokens_total"),
                                   ("infera_llm_time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_sum"),
                                   ("infera_llm_kv_cache_usage_ratio", "vllm:gpu_cache_usage_perc"),
                                   ("infera_llm_kv_cache_usage_ratio", "vllm:kv_cache_usage_perc"),
                                   ("infera_llm_preemptions_total", "vllm:num_preemptions_total")):
        assert infera(after, infera_name) == vllm(after, vllm_name), vllm_name
    assert vllm(after, "vllm:num_preemptions_total") == 0
    assert vllm(after, "vllm:gpu_cache_usage_perc") == 0  # idle: no block in use

    # A vLLM dashboard's queries, evaluated by Prometheus' engine over the scraped change.
    promql_rules_test(tmp_path, before, after)


def promql_rules_test(tmp_path, before, after):
    series, ttft = [], []
    for (name, labels), value in sorted(after.items(), key=lambda kv: str(kv[0])):
        if not name.startswith("vllm:") or ("model_name", MODEL) not in labels:
            continue
        d = value - before.get((name, labels), 0)
        label_text = ",".join(f'{k}="{v}"' for k, v in sorted(labels))
        # 0 0 d, 30 s apart: rate() over the last minute sees exactly the change d.
        series.append({"series": f"{name}{{{label_text}}}", "values": f"0 0 {d!r}"})
        if name == "vllm:time_to_first_token_seconds_bucket":
            le = dict(labels)["le"]
            ttft.append((float("inf") if le == "+Inf" else float(le), d))
    ttft.sort()
    p99 = histogram_quantile(0.99, ttft)
    p50 = histogram_quantile(0.5, ttft)
    generated = next(after[k] - before.get(k, 0) for k in after if k[0] == "vllm:generation_tokens_total")

    def within(expr, expected):
        low, high = expected * (1 - 1e-9), expected * (1 + 1e-9)
        return {"expr": f"({expr} >= bool {low!r}) * ({expr} <= bool {high!r})", "eval_time": "1m",
                "exp_samples": [{"labels": "{}", "value": 1}]}

    tests = [{"interval": "30s", "input_series": series, "promql_expr_test": [
        within("histogram_quantile(0.99, sum by(le) (rate(vllm:time_to_first_token_seconds_bucket[1m])))", p99),
        within('histogram_quantile(0.5, sum by(le) (rate(vllm:time_to_first_token_seconds_bucket{model_name="fortune"}[1m])))',
               p50),
        within('sum(rate(vllm:generation_tokens_total{model_name="fortune"}[1m]))', generated / 60),
        {"expr": 'sum by(finished_reason) (increase(vllm:request_success_total{model_name="fortune"}[1m]))',
         "eval_time": "1m", "exp_samples": [
             {"labels": '{finished_reason="abort"}', "value": 1},
             {"labels": '{finished_reason="error"}', "value": 0},
             {"labels": '{finished_reason="length"}', "value": 4},
             {"labels": '{finished_reason="stop"}', "value": 1}]},
        {"expr": 'vllm:num_requests_waiting{model_name="fortune"}', "eval_time": "1m",
         "exp_samples": [{"labels": 'vllm:num_requests_waiting{engine="0",model_name="fortune"}', "value": 0}]},
    ]}]
    path = tmp_path / "vllm_dashboard_test.yml"
    path.write_text(json.dumps({"rule_files": [], "evaluation_interval": "30s", "tests": tests}))
    check = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def doc_table(path, heading):
    """Rows (cells) of the first table after `heading` in a Markdown document."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header


def names_in(cell):
    return re.findall(r"`((?:vllm:|infera_)[a-z0-9_:]+)", cell)


@pytest.mark.parametrize("doc,heading", [("docs/llm.md", "## Metrics"), ("docs/metrics.md", "## LLMs (label `model`)")])
def test_docs_list_exactly_the_llm_series_exported(server, doc, heading):
    _, types = parse(server.metrics_text())
    exported = {n: t for n, t in types.items() if n.startswith(("vllm:", "infera_llm_"))}
    documented = {}
    for cells in doc_table(doc, heading):
        infera_names, kind, vllm_names = names_in(cells[0]), cells[1], names_in(cells[2])
        assert infera_names, cells
        for name in infera_names + vllm_names:
            documented[name] = kind
    assert documented == exported

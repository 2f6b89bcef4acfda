"""The bottleneck diagnosis (docs/diagnosis.md) over real sockets: each class produced
by a fault-injection model and a load shape, the JSON contract, `infera diagnose`, and
hostile input (unknown model, bad window).

The server runs in explicit mode and each scenario loads its own model right before
its load, so the default window (the version's life since load) covers that load and
nothing else. Loads are bounded request counts; the tests assert classes, never
timings. The CLI, idle and gRPC tests read models an earlier scenario loaded (pytest
runs a file's tests in order).
"""

import json
import os
import socket
import subprocess
import tempfile
import threading

import pytest

from infera_server import BINARY, InferaServer, copy_model, demo_repo, wait_for, write_model

FAULT = """
name: "{name}"
backend: "fault_injection"
max_batch_size: {max_batch}
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
instance_group [ {{ count: {instances} kind: KIND_CPU }} ]
parameters {{ key: "delay_ms" value {{ string_value: "{delay}" }} }}
{extra}
"""

MODELS = {
    # 1 instance, 30 ms per execution, 8 clients at once: requests queue (2.4 s of work,
    # so the moments between the load and the first request barely dilute utilisation).
    "queued": dict(max_batch=0, instances=1, delay=30, extra=""),
    # 1 instance, 20 ms per execution, one client at a time: compute is the time (20 ms,
    # so a worker's wake-up on a loaded machine stays a small share of it).
    "computed": dict(max_batch=0, instances=1, delay=20, extra=""),
    # dynamic batching on, but single requests one at a time: batches of 1.
    "unbatched": dict(max_batch=8, instances=1, delay=20, extra="dynamic_batching { }"),
    # 200 ms per execution: clients that hang up get their requests cancelled.
    "abandoned": dict(max_batch=0, instances=1, delay=200, extra=""),
    # 1 instance, 30 ms per execution: a short burst after idle seconds.
    "bursty": dict(max_batch=0, instances=1, delay=30, extra=""),
}

# The demo LLM with one sequence at a time: concurrent requests wait for the batch slot.
NARROW = 'key: "max_num_seqs" value: { string_value: "1" }'
# The demo text pipeline (an ensemble) and its steps.
EMBED_STEPS = ["text_tokenize", "text_embed_encoder", "text_pool"]
# ... with a per-step token budget of 16: a long prompt holds it for many steps.
BUDGET = 'key: "max_num_batched_tokens" value: { string_value: "16" }'
NO_PREFIX_CACHE = '\nparameters { key: "enable_prefix_caching" value: { string_value: "false" } }\n'


def no_instances_advised(d):
    """No action of an LLM's diagnosis touches instances (one engine serves them all)."""
    return not any("instance" in a["action"] for a in d["actions"])


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-diagnosis-")
    for name, params in MODELS.items():
        write_model(repo, name, FAULT.format(name=name, **params))
    # identity with large JSON tensors: decode/encode dominate.
    copy_model(demo_repo(), "identity_fp32", repo, new_name="jsonheavy")
    copy_model(demo_repo(), "identity_fp32", repo, new_name="slowread")
    # The fortune LLM with a KV cache of 10 blocks of 16 tokens: a 100-token generation
    # needs 7, so any two that overlap cannot both stay resident and one is preempted.
    copy_model(demo_repo(), "fortune", repo, new_name="tinykv",
               config_edit=lambda text: text.replace('"64MiB"', '"480KiB"').replace(
                   'key: "max_model_len" value: { string_value: "512" }',
                   'key: "max_model_len" value: { string_value: "128" }'))
    copy_model(demo_repo(), "fortune", repo, new_name="llm_ok")
    copy_model(demo_repo(), "fortune", repo, new_name="llm_narrow",
               config_edit=lambda text: text.replace('key: "max_num_seqs" value: { string_value: "8" }', NARROW))
    copy_model(demo_repo(), "fortune", repo, new_name="llm_prompts", config_edit=lambda text: text + NO_PREFIX_CACHE)
    copy_model(demo_repo(), "fortune", repo, new_name="llm_budget",
               config_edit=lambda text: text.replace('key: "max_num_batched_tokens" value: { string_value: "512" }',
                                                     BUDGET) + NO_PREFIX_CACHE)
    for name in EMBED_STEPS + ["text_embed"]:
        copy_model(demo_repo(), name, repo)
    s = InferaServer(repo, "--model-control-mode", "explicit")
    s.wait_ready()
    yield s
    s.stop()


def load(server, name):
    status, _, body = server.request("POST", f"/v2/repository/models/{name}/load", "")
    assert status == 200, body


def infer_fault(server, name, conn=None):
    payload = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 2] if MODELS[name]["max_batch"]
                                      else [2], "data": [1.0, 2.0]}]})
    own = conn is None
    conn = conn or server.connection()
    try:
        conn.request("POST", f"/v2/models/{name}/infer", body=payload)
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, body
    finally:
        if own:
            conn.close()


def diagnosis(server, name, query=""):
    status, body = server.get_json(f"/v2/models/{name}/diagnosis{query}")
    assert status == 200, body
    return body


def run_clients(count, work):
    errors = []

    def client(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors


def test_queueing_with_one_saturated_instance(server):
    load(server, "queued")

    def client(_):
        conn = server.connection()
        for _ in range(10):
            infer_fault(server, "queued", conn)
        conn.close()

    run_clients(8, client)
    d = diagnosis(server, "queued")
    assert d["bottleneck"]["class"] == "queueing", d
    assert d["requests"] == 80
    names = [e["name"] for e in d["evidence"]]
    assert "instance_utilisation" in names and "queue_share" in names
    assert d["actions"][0]["action"].startswith("add ")
    assert "instance_group count 1 ->" in d["actions"][0]["action"]
    # The contract the console renders.
    for key in ("model", "version", "window_seconds", "requests", "bottleneck", "evidence", "actions", "stages",
                "batch_sizes", "instances", "rejections", "timeouts", "client"):
        assert key in d, key
    assert d["model"] == "queued" and d["version"] == "1"
    assert d["instances"]["count"] == 1
    assert d["batch_sizes"] == {"1": 80}
    assert d["stages"]["queue"]["count"] == 80
    assert d["stages"]["decode"]["count"] == 80 and d["stages"]["encode"]["count"] == 80
    assert d["stages"]["write"]["count"] == 80


def test_compute_bound_with_serial_requests(server):
    load(server, "computed")
    conn = server.connection()
    for _ in range(25):
        infer_fault(server, "computed", conn)
    conn.close()
    d = diagnosis(server, "computed")
    assert d["bottleneck"]["class"] == "compute_bound", d
    assert d["evidence"][0]["name"] == "compute_share"


def test_batching_ineffective_with_single_requests(server):
    load(server, "unbatched")
    conn = server.connection()
    for _ in range(40):
        infer_fault(server, "unbatched", conn)
    conn.close()
    d = diagnosis(server, "unbatched")
    assert d["bottleneck"]["class"] == "batching_ineffective", d
    assert d["mean_batch_size"] == 1.0
    # One client at a time: no queue delay can help, and the answer says so.
    assert any("several rows per request" in a["action"] for a in d["actions"]), d["actions"]


def test_serialisation_bound_with_large_json_tensors(server):
    load(server, "jsonheavy")
    # 100k JSON numbers in; the answer comes back as binary (400 KB), so the write to
    # this Python reader stays small next to the JSON decode even on a loaded machine.
    values = [float(i % 1000) / 7.0 for i in range(100000)]
    payload = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [len(values)], "data": values}],
                          "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]})
    conn = server.connection()
    for _ in range(20):
        conn.request("POST", "/v2/models/jsonheavy/infer", body=payload)
        response = conn.getresponse()
        assert response.status == 200
        response.read()
    conn.close()
    d = diagnosis(server, "jsonheavy")
    assert d["bottleneck"]["class"] == "serialisation_bound", d
    assert any("binary tensors" in a["action"] for a in d["actions"])
    assert d["stages"]["decode"]["share"] >= 0.3


def test_client_bound_when_clients_hang_up(server):
    load(server, "abandoned")
    payload = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [2], "data": [1, 2]}]})
    request = (f"POST /v2/models/abandoned/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(payload)}\r\n\r\n{payload}").encode()
    sockets = []
    for _ in range(24):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(request)
        sockets.append(s)
    # Every request has reached the model before its client hangs up.
    wait_for(lambda: diagnosis(server, "abandoned", "?window=300")["stages"]["decode"]["count"] == 24)
    for s in sockets:
        s.close()

    def all_answered():
        d = diagnosis(server, "abandoned")
        return d if d["requests"] == 24 else None

    d = wait_for(all_answered)
    assert d["bottleneck"]["class"] == "client_bound", d
    gone = d["client"]["cancelled"] + d["client"]["write_failures"]
    assert gone >= 23, d["client"]
    assert d["evidence"][0]["name"] == "client_disconnects"


def binary_infer_request(values):
    """An HTTP request to slowread with a binary FP32 input of `values` zeros, asking
    for a binary output (the response body is about 4 bytes per value)."""
    header = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [values],
                                     "parameters": {"binary_data_size": 4 * values}}],
                         "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]}).encode()
    body = header + bytes(4 * values)
    return (f"POST /v2/models/slowread/infer HTTP/1.1\r\nHost: x\r\n"
            f"Inference-Header-Content-Length: {len(header)}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def test_client_bound_when_a_client_reads_slowly(server):
    load(server, "slowread")
    for _ in range(19):
        reply = server.raw(binary_infer_request(4), shutdown_write=True)
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    # One 16 MB answer to a client with a small receive buffer that reads nothing for
    # half a second after sending: more than the socket buffers hold, so the server's
    # write waits on the reader.
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", server.port))
    s.sendall(binary_infer_request(4 << 20))
    threading.Event().wait(0.5)  # the load shape: a reader that stalls
    received = 0
    while received < (16 << 20):
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        received += len(chunk)
    s.close()
    d = wait_for(lambda: (lambda d: d if d["stages"]["write"]["count"] == 20 else None)(diagnosis(server, "slowread")))
    assert d["bottleneck"]["class"] == "client_bound", d
    assert "read slowly" in d["bottleneck"]["summary"]
    assert d["client"]["write_share"] >= 0.5


def completion(server, model, prompt, max_tokens):
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
                       "ignore_eos": True})
    status, _, data = server.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    assert status == 200, data
    return json.loads(data)


def test_kv_cache_bound_llm_with_tiny_kv_cache(server):
    load(server, "tinykv")

    def client(i):
        body = json.dumps({"model": "tinykv", "prompt": f"fortune {i} says", "max_tokens": 100, "temperature": 0,
                           "ignore_eos": True})
        status, _, data = server.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        assert status == 200, data

    run_clients(8, client)
    d = diagnosis(server, "tinykv")
    assert d["bottleneck"]["class"] == "kv_cache_bound", d
    assert d["llm"]["preemptions"] > 0
    assert any("kv_cache_memory_bytes" in a["action"] for a in d["actions"])
    assert no_instances_advised(d), d["actions"]


# Regression (issue 30): after OpenAI traffic the LLM was "queueing, add 1 instance" at 0 %
# utilisation. Two clients well under max_num_seqs: the engine keeps up (128 tokens a
# generation, so a wake-up of the engine's loop stays a small share of it).
def test_healthy_llm_after_openai_traffic(server):
    load(server, "llm_ok")

    def client(i):
        for k in range(6):
            completion(server, "llm_ok", f"fortune {i} {k} says", 128)

    run_clients(2, client)
    # The engine counts a generation finished just after its answer went out.
    d = wait_for(lambda: (lambda d: d if d["llm"]["finished"] == 12 else None)(diagnosis(server, "llm_ok")))
    assert d["bottleneck"]["class"] == "healthy", d
    assert no_instances_advised(d), d["actions"]
    assert d["requests"] == 12 and d["llm"]["finished"] == 12
    assert d["llm"]["ttft_ms"] > 0 and d["llm"]["tpot_ms"] > 0
    assert d["llm"]["output_tokens_per_request"] == 128
    assert d["evidence"][0]["name"] == "ttft_ms"


def load_until(server, model, clients, work, wanted, timeout=30):
    """Runs `clients` threads calling work(i, k) until `model`'s diagnosis has class
    `wanted` (the engine's gauges are sampled once a second), then stops them."""
    stop = threading.Event()
    errors = []

    def client(i):
        k = 0
        try:
            while not stop.is_set():
                work(i, k)
                k += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    try:
        return wait_for(lambda: (lambda d: d if d["bottleneck"]["class"] == wanted else None)(
            diagnosis(server, model)), timeout=timeout)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors


# One sequence at a time and six clients: the batch is full and requests queue for it.
# The statistics' queue stage is long here (the old rules said "add an instance"); the
# engine's figures say decode_bound. Clients send until the diagnosis has seen the full
# batch (the gauges are sampled once a second), then stop.
def test_decode_bound_llm_with_a_full_batch(server):
    load(server, "llm_narrow")
    d = load_until(server, "llm_narrow", 6, lambda i, k: completion(server, "llm_narrow", f"fortune {i} {k} says", 32),
                   "decode_bound")
    assert d["llm"]["num_running_peak"] == 1 == d["llm"]["max_num_seqs"], d["llm"]
    assert no_instances_advised(d), d["actions"]
    assert any("raise max_num_seqs from 1 to 2" in a["action"] for a in d["actions"]), d["actions"]
    stats = d["stages"]
    assert stats["queue"]["share"] >= 0.3  # what the old rules misread as instance saturation


# Free batch slots and KV blocks, but a token budget of 16 per step: six clients' long
# prompts enter the batch one chunk at a time and the others queue for the budget.
def test_queueing_llm_held_by_its_token_budget(server):
    load(server, "llm_budget")
    d = load_until(server, "llm_budget", 6,
                   lambda i, k: completion(server, "llm_budget", f"fortune {i} {k} " + "you will find a new friend " * 20,
                                           8), "queueing")
    assert d["llm"]["num_running_peak"] < d["llm"]["max_num_seqs"], d["llm"]
    assert any("raise max_num_batched_tokens from 16 to 32" in a["action"] for a in d["actions"]), d["actions"]
    assert no_instances_advised(d), d["actions"]


# Long prompts, two tokens generated: the time to first token is the prompt's computation.
def test_prefill_bound_llm_with_long_prompts(server):
    load(server, "llm_prompts")
    prompt_tokens = []
    for i in range(10):
        reply = completion(server, "llm_prompts", f"fortune {i} " + "you will find a new friend " * 40, 2)
        prompt_tokens.append(reply["usage"]["prompt_tokens"])
    assert min(prompt_tokens) >= 100, prompt_tokens
    d = diagnosis(server, "llm_prompts")
    assert d["bottleneck"]["class"] == "prefill_bound", d
    assert d["llm"]["prefill_ms"] > d["llm"]["queue_ms"]
    assert any("enable_prefix_caching" in a["action"] for a in d["actions"]), d["actions"]
    assert no_instances_advised(d), d["actions"]


# Regression (issue 30): a short burst in the default 60 s window read "instances are
# saturated (utilisation 10 %)". Idle seconds, a burst of 160 requests of 30 ms from 8
# clients on one instance (4.8 s of work), idle seconds again: utilisation is over the
# seconds that carried traffic. Those are whole sampler seconds, so the burst's first and
# last count whole: 4.8 s busy reads over 5 to 7 s, never over the whole window.
def test_burst_judged_on_its_busy_seconds(server):
    load(server, "bursty")
    wait_for(lambda: diagnosis(server, "bursty")["window_seconds"] >= 6, timeout=30)

    def client(_):
        conn = server.connection()
        for _ in range(20):
            infer_fault(server, "bursty", conn)
        conn.close()

    run_clients(8, client)
    burst_end = diagnosis(server, "bursty")["window_seconds"]
    d = wait_for(lambda: (lambda d: d if d["window_seconds"] >= burst_end + 4 else None)(diagnosis(server, "bursty")),
                 timeout=30)
    assert d["requests"] == 160
    busy, traffic = d["instances"]["busy_seconds"], d["traffic_seconds"]
    assert d["window_seconds"] >= 14
    assert busy <= traffic <= busy + 2.5, d
    assert d["instances"]["utilisation"] >= 0.6, d["instances"]
    # The whole window's reading would have been about 4.8 s of 14+: below 40 %.
    assert busy / d["window_seconds"] < 0.4
    assert d["bottleneck"]["class"] == "queueing", d
    assert d["actions"][0]["action"].startswith("add "), d["actions"]
    # Whatever the summary says, it says it with its figure: "saturated" at 80 % or more.
    assert ("instances are saturated" in d["bottleneck"]["summary"]) == (d["instances"]["utilisation"] >= 0.8)


# An ensemble does no work of its own: judged by its slowest step, named in the verdict.
def test_ensemble_judged_by_its_slowest_step(server):
    for name in EMBED_STEPS + ["text_embed"]:
        load(server, name)
    for i in range(25):
        body = json.dumps({"model": "text_embed", "input": [f"a sentence number {i}"]})
        status, _, data = server.request("POST", "/v1/embeddings", body, {"Content-Type": "application/json"})
        assert status == 200, data
    d = diagnosis(server, "text_embed")
    steps = {s["model"]: s for s in d["steps"]}
    assert sorted(steps) == sorted(EMBED_STEPS), d["steps"]
    assert all(s["requests"] == 25 for s in steps.values()), d["steps"]
    slowest = max(steps.values(), key=lambda s: s["mean_latency_us"])
    assert d["slowest_step"] == slowest["model"]
    assert d["bottleneck"]["summary"].startswith(f"the slowest step is '{slowest['model']}'"), d["bottleneck"]
    assert d["bottleneck"]["class"] == slowest["class"]
    assert all(a["action"].startswith(f"in '{slowest['model']}': ") for a in d["actions"]), d["actions"]


def test_idle_without_traffic(server):
    d = diagnosis(server, "queued", "?window=1")
    # The queueing load above is more than a second old by now, or still inside: either
    # way a 1-second window holds fewer than 20 requests.
    assert d["bottleneck"]["class"] == "idle", d
    assert d["window_seconds"] <= 2.0


def test_cli_table_and_json(server):
    url = f"http://127.0.0.1:{server.port}"
    # perf_analyzer's form (-u HOST:PORT, --model-name); http://HOST:PORT is accepted too.
    table = subprocess.run([BINARY, "diagnose", "-u", f"127.0.0.1:{server.port}", "--model-name", "computed"],
                           capture_output=True, text=True, timeout=30)
    assert table.returncode == 0, table.stderr
    assert "BOTTLENECK  compute_bound" in table.stdout
    assert "STAGES (mean per request)" in table.stdout and "ACTIONS" in table.stdout
    js = subprocess.run([BINARY, "diagnose", "--url", url, "-m", "computed", "--json", "--window", "300"],
                        capture_output=True, text=True, timeout=30)
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["bottleneck"]["class"] == "compute_bound"
    missing = subprocess.run([BINARY, "diagnose", "--url", url, "-m", "nope"], capture_output=True, text=True,
                             timeout=30)
    assert missing.returncode == 1 and "404" in missing.stderr
    # A bad flag: one line naming it, then where help is; no help dump.
    for args, named in ((["--window", "0"], "--window"), (["--bogus"], "--bogus"), (["-u", "nowhere"], "HOST:PORT")):
        bad = subprocess.run([BINARY, "diagnose", "-u", url, "-m", "computed"] + args, capture_output=True, text=True,
                             timeout=30)
        assert bad.returncode == 2, bad
        lines = bad.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith("infera diagnose: ") and named in lines[0], lines
        assert lines[1] == "see 'infera diagnose --help'"
        assert bad.stdout == ""
    helped = subprocess.run([BINARY, "diagnose", "--help"], capture_output=True, text=True, timeout=30)
    assert helped.returncode == 0 and "-u, --url HOST:PORT" in helped.stdout
    assert max(len(line) for line in helped.stdout.splitlines()) <= 100
    # An LLM's table shows the engine's figures.
    llm = subprocess.run([BINARY, "diagnose", "-u", url, "--model", "llm_ok", "--window", "300"], capture_output=True,
                         text=True, timeout=30)
    assert llm.returncode == 0, llm.stderr
    assert "TTFT" in llm.stdout and "TPOT" in llm.stdout and "KV cache peak" in llm.stdout


def test_hostile_requests(server):
    # Unknown model: the same status and text as the other model endpoints.
    status, body = server.get_json("/v2/models/nope/diagnosis")
    stats_status, stats_body = server.get_json("/v2/models/nope/stats")
    assert status == 404 == stats_status
    assert body == stats_body
    assert server.get_json("/v2/models/queued/versions/9/diagnosis")[0] == 404
    assert server.get_json("/v2/models/queued/versions/x/diagnosis")[0] == 400
    for query in ("?window=0", "?window=301", "?window=abc", "?window=", "?window=1e3", "?window=5&window=6",
                  "?window=" + "9" * 40):
        status, body = server.get_json(f"/v2/models/queued/diagnosis{query}")
        assert status == 400 and "window" in body["error"], (query, body)
    status, body = server.get_json("/v2/models/queued/diagnosis?x=1")
    assert status == 400 and "'x'" in body["error"]
    assert server.request("POST", "/v2/models/queued/diagnosis", "{}")[0] == 405
    assert server.get_json("/v2/models/%zz/diagnosis")[0] == 400
    server.assert_serving()
    assert server.get_json("/v2/models/queued/diagnosis")[0] == 200


def test_grpc_infer_records_decode_and_encode(server):
    from grpc_stubs import pb, pb_grpc
    from test_grpc import channel_to

    before = diagnosis(server, "computed", "?window=300")["stages"]
    with channel_to(server) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        request = pb.ModelInferRequest(model_name="computed")
        request.inputs.add(name="INPUT0", datatype="FP32", shape=[2]).contents.fp32_contents.extend([1.0, 2.0])
        for _ in range(3):
            stub.ModelInfer(request)
    after = diagnosis(server, "computed", "?window=300")["stages"]
    assert after["decode"]["count"] == before["decode"]["count"] + 3
    assert after["encode"]["count"] == before["encode"]["count"] + 3
    # gRPC writes are flow-controlled inside the library: no write time is recorded.
    assert after["write"]["count"] == before["write"]["count"]

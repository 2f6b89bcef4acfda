"""API keys at the edge (issue 29, docs/api_keys.md), against the real binary over real
sockets: HTTP (KServe, OpenAI, the official `openai` npm client) and gRPC (grpcio with
metadata). Keys from --api-key-file (hashed at rest) and --api-key; rights read / infer /
admin, model globs, request and token quotas, per-key metrics, the file's reload, and
that health and the metrics port stay open while the key never reaches the log.
"""

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import grpc
import pytest

import llm_testutil as u
from grpc_stubs import health_pb2, health_pb2_grpc, pb, pb_grpc
from infera_server import ROOT, InferaServer, copy_model, demo_repo, metric_value

CLIENTS = os.path.join(ROOT, "tests", "clients")
VOCAB, MERGES = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
N = len(VOCAB)
TOKENIZER = u.byte_level_tokenizer_json(VOCAB, MERGES, "gpt2", [("<|endoftext|>", N)])
CONFIG = u.tiny_config(vocab_size=N + 1, max_position_embeddings=1024, eos_token_id=N)
WEIGHTS = u.random_weights(CONFIG, seed=29)
TOK_CONFIG = {"eos_token": "<|endoftext|>",
              "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}
PARAMETERS = {"max_num_seqs": 8, "kv_cache_memory_bytes": "16MiB"}

KEYS = {  # id: (key, rest of the line)
    "reader": ("inf-reader-0001", "rights=read models=*"),
    "team": ("inf-team-0002", "rights=read,infer models=simp*,tiny"),
    "scoped": ("inf-scoped-0003", "rights=read,infer models=simple"),
    "ops": ("inf-ops-0004", "rights=read,admin models=*"),
    "rps": ("inf-rps-0005", "rights=read,infer models=* rps=0.01"),
    "tok": ("inf-tok-0006", "rights=read,infer models=tiny tokens_per_min=6"),
    "gen": ("inf-gen-0009", "rights=read,infer models=tiny_kserve tokens_per_min=6"),
    "grpcgen": ("inf-grpcgen-0010", "rights=read,infer models=tiny_kserve tokens_per_min=6"),
    "embed": ("inf-embed-0011", "rights=read,infer models=text_embed"),
}
FLAG_KEY = "inf-flag-0007"


def key_line(key_id, key, rest):
    return f"{key_id} sha256:{hashlib.sha256(key.encode()).hexdigest()} {rest}\n"


def write_keys(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# test keys\n" + "".join(lines))
    os.replace(tmp, path)


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-api-keys-")
    u.write_llm_repo(repo, "tiny", CONFIG, WEIGHTS, TOKENIZER, TOK_CONFIG, parameters=PARAMETERS, kserve=False)
    u.write_llm_repo(repo, "tiny_kserve", CONFIG, WEIGHTS, TOKENIZER, TOK_CONFIG, parameters=PARAMETERS)
    for name in ("simple", "text_embed", "text_tokenize", "text_embed_encoder", "text_pool"):
        copy_model(demo_repo(), name, repo)
    keys = os.path.join(repo, "..", os.path.basename(repo) + "-keys.txt")
    write_keys(keys, [key_line(i, k, rest) for i, (k, rest) in KEYS.items()])
    audit = os.path.join(repo, "..", os.path.basename(repo) + "-audit.jsonl")
    s = InferaServer(repo, "--api-key-file", keys, "--admin-token", "inf-admin-token-0008",
                     "--audit-log-file", audit, env={"INFERA_API_KEY": FLAG_KEY})
    s.audit_path = audit
    s.wait_ready()
    s.metrics_port = int(re.search(r"Metrics server listening on [^\s]*:(\d+)", s.log()).group(1))
    yield s
    log = s.log()
    s.stop()
    for key, _ in KEYS.values():
        assert key not in log
    assert FLAG_KEY not in log


def call(server, method, path, body=None, key=None, headers=None):
    """(status, headers, parsed JSON or raw bytes)."""
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {key}"
    if body is not None:
        h["Content-Type"] = "application/json"
    status, headers, data = server.request(method, path, None if body is None else json.dumps(body), h)
    try:
        return status, headers, json.loads(data)
    except ValueError:
        return status, headers, data


SIMPLE = {"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
                     {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}


def test_http_kserve_rights_scopes_and_refusals(server):
    team = KEYS["team"][0]
    # Health stays open; everything else needs a key.
    assert call(server, "GET", "/v2/health/ready")[0] == 200
    assert call(server, "GET", "/v2/health/live")[0] == 200
    status, headers, body = call(server, "POST", "/v2/models/simple/infer", SIMPLE)
    assert status == 401 and headers.get("WWW-Authenticate") == "Bearer"
    assert "missing API key" in body["error"]
    status, headers, body = call(server, "GET", "/v2", key="inf-nope")
    assert status == 401 and headers.get("WWW-Authenticate") == "Bearer"
    assert "inf-nope" not in json.dumps(body)
    # Read and infer within the key's globs.
    assert call(server, "GET", "/v2", key=team)[0] == 200
    assert call(server, "GET", "/v2/models/simple/config", key=team)[0] == 200
    status, _, body = call(server, "POST", "/v2/models/simple/infer", SIMPLE, key=team)
    assert status == 200, body
    assert body["outputs"][0]["data"][:3] == [1, 2, 3]
    # A model outside the globs, a right the key lacks: 403 with one message for both.
    status, _, wrong_model = call(server, "POST", "/v2/models/ranker/infer", SIMPLE, key=team)
    assert status == 403
    status, _, wrong_right = call(server, "POST", "/v2/models/simple/infer", SIMPLE, key=KEYS["reader"][0])
    assert status == 403
    assert wrong_model == wrong_right
    # Triton's generate routes need the infer right on the model too.
    for route in ("generate", "generate_stream"):
        assert call(server, "POST", f"/v2/models/tiny/{route}", {"text_input": "Hi"})[0] == 401
        assert call(server, "POST", f"/v2/models/tiny/{route}", {"text_input": "Hi"}, key=KEYS["scoped"][0])[0] == 403
        assert call(server, "POST", f"/v2/models/tiny/{route}", {"text_input": "Hi"}, key=KEYS["reader"][0])[0] == 403
    # The flag key (env INFERA_API_KEY) may read and infer on every model.
    assert call(server, "POST", "/v2/models/simple/infer", SIMPLE, key=FLAG_KEY)[0] == 200
    # Listings show only the key's models.
    status, _, index = call(server, "POST", "/v2/repository/index", {}, key=team)
    assert status == 200 and sorted(m["name"] for m in index) == ["simple", "tiny"]
    # An aggregate read over every model needs models=*.
    assert call(server, "GET", "/v2/models/stats", key=team)[0] == 403
    assert call(server, "GET", "/v2/models/stats", key=KEYS["reader"][0])[0] == 200


@pytest.mark.parametrize("parameter", ["api_key", "key", "access_token", "API_KEY"])
def test_key_in_query_string_is_refused(server, parameter):
    status, _, body = call(server, "GET", f"/v2/models/simple?{parameter}={KEYS['team'][0]}",
                           key=KEYS["team"][0])
    assert status == 400
    assert "not accepted in the query string" in body["error"]
    assert KEYS["team"][0] not in json.dumps(body)


def test_admin_right_is_the_admin_credential(server):
    # /v2/logging is closed by default; a key with the admin right (or --admin-token) opens it.
    assert call(server, "GET", "/v2/logging", key=KEYS["team"][0])[0] == 403
    assert call(server, "GET", "/v2/logging")[0] == 401
    assert call(server, "GET", "/v2/logging", key=KEYS["ops"][0])[0] == 200
    assert call(server, "GET", "/v2/logging", key="inf-admin-token-0008")[0] == 200


def audit_lines(server):
    with open(server.audit_path) as f:
        return [json.loads(line) for line in f]


def test_refused_authentications_and_admin_actions_are_audited_with_the_key_id(server):
    before = len(audit_lines(server))
    team = KEYS["team"][0]
    assert call(server, "POST", "/v2/models/simple/infer", SIMPLE, key="inf-not-a-key")[0] == 401
    assert call(server, "POST", "/v2/models/ranker/infer", SIMPLE, key=team)[0] == 403
    assert call(server, "GET", "/v2/models/simple?api_key=" + team)[0] == 400
    assert call(server, "POST", "/v2/models/simple/infer", SIMPLE, key=team)[0] == 200
    assert call(server, "POST", "/v2/logging", {"log_verbose_level": 0}, key=KEYS["ops"][0])[0] == 200
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        assert grpc_code(stub.ModelInfer, simple_grpc_request(), metadata=metadata(KEYS["reader"][0])) == \
            grpc.StatusCode.PERMISSION_DENIED
    lines = audit_lines(server)[before:]
    seen = [(e["transport"], e["action"], e["target"], e["credential"], e["outcome"].split(":")[0]) for e in lines]
    assert seen == [
        ("http", "auth.infer", "simple", "unknown-key", "denied"),
        ("http", "auth.infer", "ranker", "key:team", "denied"),
        ("http", "auth.read", "simple", "none", "denied"),  # the key was in the query string
        ("http", "logging.update", "server", "key:ops", "ok"),
        ("grpc", "auth.infer", "simple", "key:reader", "denied"),
    ], lines
    assert all(e["peer"].startswith("127.0.0.1:") for e in lines)
    with open(server.audit_path) as f:
        text = f.read()
    for key, _ in KEYS.values():
        assert key not in text
    assert "inf-not-a-key" not in text


def test_openai_routes(server):
    team, scoped = KEYS["team"][0], KEYS["scoped"][0]
    status, _, models = call(server, "GET", "/v1/models", key=team)
    assert status == 200 and [m["id"] for m in models["data"]] == ["tiny"]
    status, _, models = call(server, "GET", "/v1/models", key=scoped)
    assert status == 200 and models["data"] == []
    body = {"model": "tiny", "prompt": "Hello", "max_tokens": 2, "temperature": 0, "ignore_eos": True}
    status, headers, err = call(server, "POST", "/v1/completions", body)
    assert status == 401 and headers.get("WWW-Authenticate") == "Bearer"
    assert "message" in err["error"]  # OpenAI's error shape
    assert call(server, "POST", "/v1/completions", body, key=scoped)[0] == 403
    status, _, done = call(server, "POST", "/v1/completions", body, key=team)
    assert status == 200, done
    assert done["usage"]["completion_tokens"] == 2


def test_request_quota_is_429_with_retry_after(server):
    key = KEYS["rps"][0]
    assert call(server, "GET", "/v2", key=key)[0] == 200
    status, headers, body = call(server, "GET", "/v2", key=key)
    assert status == 429, body
    assert 1 <= int(headers["Retry-After"]) <= 100
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.ServerMetadata(pb.ServerMetadataRequest(), metadata=[("authorization", f"Bearer {key}")])
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_token_quota_charges_usage_then_refuses(server):
    key = KEYS["tok"][0]
    body = {"model": "tiny", "prompt": "Hello there", "max_tokens": 8, "temperature": 0, "ignore_eos": True}
    status, _, done = call(server, "POST", "/v1/completions", body, key=key)
    assert status == 200, done
    assert done["usage"]["prompt_tokens"] + done["usage"]["completion_tokens"] > 6
    status, headers, err = call(server, "POST", "/v1/completions", body, key=key)
    assert status == 429, err
    assert int(headers["Retry-After"]) >= 1
    assert "tokens per minute" in err["error"]["message"]


def tokens_charged(server, key_id):
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    return {kind: metric_value(text, "infera_api_key_tokens_total", 0.0, key=key_id, kind=kind)
            for kind in ("prompt", "completion")}


GENERATE = {"text_input": "Hello there", "exclude_input_in_output": True,
            "sampling_parameters": json.dumps({"max_tokens": 8, "temperature": 0, "ignore_eos": True})}


def test_triton_generate_charges_the_keys_tokens_then_refuses(server):
    # The tensor path (KServe generate / infer, gRPC) spends the same key's tokens as /v1.
    key = KEYS["gen"][0]
    status, _, done = call(server, "POST", "/v2/models/tiny_kserve/generate", GENERATE, key=key)
    assert status == 200, done
    charged = tokens_charged(server, "gen")
    assert charged["completion"] == 8 and charged["prompt"] > 0, charged
    status, headers, err = call(server, "POST", "/v2/models/tiny_kserve/generate_stream", GENERATE, key=key)
    assert status == 429, err
    assert int(headers["Retry-After"]) >= 1


def test_grpc_infer_on_an_llm_charges_the_keys_tokens(server):
    key = KEYS["grpcgen"][0]
    request = pb.ModelInferRequest(model_name="tiny_kserve")
    for name, value in (("text_input", b"Hello there"),
                        ("sampling_parameters", json.dumps({"max_tokens": 5, "temperature": 0,
                                                            "ignore_eos": True}).encode())):
        request.inputs.add(name=name, datatype="BYTES", shape=[1]).contents.bytes_contents.append(value)
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        stub.ModelInfer(request, metadata=metadata(key))
        charged = tokens_charged(server, "grpcgen")
        assert charged["completion"] == 5 and charged["prompt"] > 0, charged
        with pytest.raises(grpc.RpcError) as refused:
            stub.ModelInfer(request, metadata=metadata(key))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert re.search(r"tokens per minute \(retry after [1-9][0-9]* s\)", refused.value.details()), \
            refused.value.details()


def test_embeddings_charge_the_prompt_tokens(server):
    body = {"model": "text_embed", "input": ["the quick brown fox", "jumps"]}
    status, _, done = call(server, "POST", "/v1/embeddings", body, key=KEYS["embed"][0])
    assert status == 200, done
    assert done["usage"]["prompt_tokens"] > 0
    assert tokens_charged(server, "embed") == {"prompt": done["usage"]["prompt_tokens"], "completion": 0}


def metadata(key):
    return [("authorization", f"Bearer {key}")]


def grpc_code(fn, *args, **kwargs):
    with pytest.raises(grpc.RpcError) as err:
        fn(*args, **kwargs)
    return err.value.code()


def simple_grpc_request(model="simple"):
    request = pb.ModelInferRequest(model_name=model)
    for name, data in (("INPUT0", range(16)), ("INPUT1", [1] * 16)):
        tensor = request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        tensor.contents.int_contents.extend(data)
    return request


def test_grpc(server):
    team = KEYS["team"][0]
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        # Health stays open.
        assert stub.ServerLive(pb.ServerLiveRequest()).live
        assert stub.ServerReady(pb.ServerReadyRequest()).ready
        health = health_pb2_grpc.HealthStub(channel)
        assert health.Check(health_pb2.HealthCheckRequest()).status == health_pb2.HealthCheckResponse.SERVING
        # No key, an unknown key, a wrong model, a wrong right.
        assert grpc_code(stub.ServerMetadata, pb.ServerMetadataRequest()) == grpc.StatusCode.UNAUTHENTICATED
        assert grpc_code(stub.ModelInfer, simple_grpc_request(), metadata=metadata("inf-nope")) == \
            grpc.StatusCode.UNAUTHENTICATED
        assert grpc_code(stub.ModelInfer, simple_grpc_request("ranker"), metadata=metadata(team)) == \
            grpc.StatusCode.PERMISSION_DENIED
        assert grpc_code(stub.ModelInfer, simple_grpc_request(), metadata=metadata(KEYS["reader"][0])) == \
            grpc.StatusCode.PERMISSION_DENIED
        assert grpc_code(stub.RepositoryModelUnload, pb.RepositoryModelUnloadRequest(model_name="simple"),
                         metadata=metadata(team)) == grpc.StatusCode.PERMISSION_DENIED
        # Within the key's rights and globs.
        response = stub.ModelInfer(simple_grpc_request(), metadata=metadata(team))
        assert response.model_name == "simple"
        assert stub.ModelMetadata(pb.ModelMetadataRequest(name="simple"), metadata=metadata(team)).name == "simple"
        index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), metadata=metadata(team))
        assert sorted(m.name for m in index.models) == ["simple", "tiny"]
        # A stream without a key ends UNAUTHENTICATED; with one, each message is checked.
        assert grpc_code(lambda: list(stub.ModelStreamInfer(iter([simple_grpc_request()])))) == \
            grpc.StatusCode.UNAUTHENTICATED
        answers = list(stub.ModelStreamInfer(iter([simple_grpc_request(), simple_grpc_request("ranker")]),
                                             metadata=metadata(team)))
        assert answers[0].error_message == "" and answers[0].infer_response.model_name == "simple"
        assert "not allowed" in answers[1].error_message


def test_metrics_port_is_open_and_counts_per_key(server):
    call(server, "GET", "/v2", key=KEYS["reader"][0])
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=30) as response:
        text = response.read().decode()
    assert re.search(r'infera_api_key_requests_total\{key="reader"\} [1-9]', text)
    assert re.search(r'infera_api_key_tokens_total\{key="team",kind="completion"\} [1-9]', text)
    assert re.search(r'infera_api_key_rejected_total\{key="team",reason="models"\} [1-9]', text)
    assert re.search(r'infera_auth_failures_total\{reason="missing"\} [1-9]', text)
    assert re.search(r'infera_auth_failures_total\{reason="query_string"\} [1-9]', text)
    for key, _ in KEYS.values():
        assert key not in text
    # The main port's /metrics is an aggregate read: a key with models=*.
    assert call(server, "GET", "/metrics")[0] == 401
    assert call(server, "GET", "/metrics", key=KEYS["reader"][0])[0] == 200


def test_openai_npm_client(server):
    subprocess.run([os.path.join(CLIENTS, "npm_install.sh")], check=True, timeout=600)
    env = dict(os.environ, INFERA_TEST_API_KEY=KEYS["team"][0], INFERA_TEST_SCOPED_KEY=KEYS["scoped"][0])
    result = subprocess.run(["node", os.path.join(CLIENTS, "openai_client.mjs"),
                             f"http://127.0.0.1:{server.port}/v1", "auth", "tiny"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["listed"] == ["tiny"]
    assert report["usage"]["completion_tokens"] == 2
    assert report["error_401"]["status"] == 401 and report["error_403"]["status"] == 403


def wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_key_file_reload():
    repo = tempfile.mkdtemp(prefix="infera-api-keys-reload-")
    copy_model(demo_repo(), "simple", repo)
    keys = os.path.join(repo, "..", os.path.basename(repo) + "-keys.txt")
    write_keys(keys, [key_line("old", "inf-old-1", "rights=read models=*")])
    server = InferaServer(repo, "--api-key-file", keys)
    try:
        server.wait_ready()
        assert call(server, "GET", "/v2", key="inf-old-1")[0] == 200
        write_keys(keys, [key_line("new", "inf-new-2", "rights=read models=*")])
        assert wait_for(lambda: call(server, "GET", "/v2", key="inf-new-2")[0] == 200)
        assert call(server, "GET", "/v2", key="inf-old-1")[0] == 401
        # A bad replacement keeps the keys and logs one ERROR naming the line.
        write_keys(keys, [key_line("new", "inf-new-2", "rights=read models=*"), "broken sha256:zz\n"])
        # (the file is checked by requests, at most once a second)
        assert wait_for(lambda: call(server, "GET", "/v2", key="inf-new-2")[0] == 200
                        and "API keys not reloaded" in server.log())
        assert call(server, "GET", "/v2", key="inf-new-2")[0] == 200
        assert server.log().count("API keys not reloaded") == 1
        assert "line 3" in server.log()
    finally:
        server.stop()


def test_bad_key_file_is_a_start_error():
    repo = tempfile.mkdtemp(prefix="infera-api-keys-bad-")
    keys = os.path.join(repo, "keys.txt")
    with open(keys, "w") as f:
        f.write("a sha256:" + "0" * 64 + " rights=read models=*\nb sha256:12 rights=read models=*\n")
    result = subprocess.run([os.path.join(ROOT, "build", "infera") if not os.environ.get("INFERA_BINARY")
                             else os.environ["INFERA_BINARY"], "serve", "--model-repository", repo,
                             "--api-key-file", keys, "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "line 2" in result.stdout + result.stderr


def test_api_key_create_command():
    binary = os.environ.get("INFERA_BINARY", os.path.join(ROOT, "build", "infera"))
    result = subprocess.run([binary, "api-key", "create", "--id", "cli", "--models", "simple"],
                            capture_output=True, text=True, timeout=30, check=True)
    key = re.search(r"(inf-[A-Za-z0-9_-]{43})", result.stdout).group(1)
    line = result.stdout.strip().splitlines()[-1]
    assert line == key_line("cli", key, "rights=read,infer models=simple").strip()

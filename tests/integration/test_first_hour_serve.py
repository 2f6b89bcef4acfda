"""What a new user meets first with `infera serve`, black box (issue 30):

  - --strict-readiness (Triton's flag): with false, one broken model no longer takes the
    server out of readiness (HTTP /v2/health/ready, the --http-health-port, gRPC
    ServerReady and grpc.health.v1), while the broken model's own readiness still says
    it does not serve; by default (true) the server is not ready;
  - a bad flag or value prints one line and a pointer to --help (exit 2), never the whole
    help; `infera serve --help`, `infera --help` and every tools/llm binary's --help fit
    100 columns and say what is served;
  - a missing or unusable model repository: the error, exit 1, no "shutdown complete";
  - /v1/models lists every model the /v1 routes serve — the demo's LLM and its embedding
    pipeline text_embed — each with infera_kind, and nothing they do not serve.
"""

import http.client
import json
import os
import re
import subprocess
import tempfile

import grpc
import pytest

from grpc_stubs import health_pb2, health_pb2_grpc, pb, pb_grpc
from infera_server import BINARY, InferaServer, copy_model, demo_repo

TOOLS = os.path.join(os.path.dirname(BINARY), "tools", "llm")
LLM_TOOLS = ["llm_eval", "llm_logits", "llm_tokenize", "llm_matmul_bench"]
COLUMNS = 100

GOOD = """
name: "good"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
"""
BROKEN = 'name: "broken"\nbackend: "identity"\nmax_batch_size: "x"\n'


@pytest.fixture(scope="module")
def good_and_broken():
    with tempfile.TemporaryDirectory(prefix="infera-first-hour-") as repo:
        for name, config in (("good", GOOD), ("broken", BROKEN)):
            os.makedirs(os.path.join(repo, name, "1"))
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(config)
        yield repo


def run(*args, timeout=60):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def grpc_readiness(server):
    """(ServerReady.ready, grpc.health.v1 Check is SERVING) of `server`."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        ready = pb_grpc.GRPCInferenceServiceStub(channel).ServerReady(pb.ServerReadyRequest(), timeout=10).ready
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        return ready, health.status == health_pb2.HealthCheckResponse.SERVING


def health_port_ready(server):
    port = int(re.search(r"Health server listening on [^\s]*:(\d+)", server.log()).group(1))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/v2/health/ready")
        return conn.getresponse().status
    finally:
        conn.close()


# --- --strict-readiness ----------------------------------------------------------------

@pytest.mark.parametrize("flag", [["--strict-readiness=false"], ["--strict-readiness", "false"],
                                  ["--strict-readiness=0"]], ids=["equals", "space", "zero"])
def test_relaxed_readiness_is_ready_with_a_broken_model(good_and_broken, flag):
    server = InferaServer(good_and_broken, *flag, "--http-health-port", "0")
    try:
        server.wait_ready()
        assert "server is ready (--strict-readiness=false; a model failed to load)" in server.log(), server.log()
        assert server.request("GET", "/v2/health/ready")[0] == 200
        assert health_port_ready(server) == 200
        assert grpc_readiness(server) == (True, True)
        # Each model's own readiness still tells which serve.
        assert server.request("GET", "/v2/models/good/ready")[0] == 200
        status, _, body = server.request("GET", "/v2/models/broken/ready")
        assert status != 200 and "max_batch_size" in json.loads(body)["error"], (status, body)
        status, _, _ = server.infer("good", {"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "FP32",
                                                         "data": [1, 2]}]})
        assert status == 200
    finally:
        server.stop()


@pytest.mark.parametrize("flag", [[], ["--strict-readiness=true"], ["--strict-readiness", "1"]],
                         ids=["default", "true", "one"])
def test_strict_readiness_is_not_ready_with_a_broken_model(good_and_broken, flag):
    server = InferaServer(good_and_broken, *flag, "--http-health-port", "0")
    try:
        server.wait_ready()
        assert "server is NOT ready" in server.log(), server.log()
        assert server.request("GET", "/v2/health/ready")[0] != 200
        assert health_port_ready(server) != 200
        assert grpc_readiness(server) == (False, False)
        assert server.request("GET", "/v2/models/good/ready")[0] == 200
    finally:
        server.stop()


# --- the command line ------------------------------------------------------------------

def assert_one_line_error(result, command, problem):
    lines = result.stderr.splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) <= 2, result.stderr
    assert lines[0].startswith(f"{command}: ") and problem in lines[0], result.stderr
    assert lines[-1] == f"see '{command} --help'", result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("args, problem", [
    (["--bogus"], "unknown flag --bogus"),
    (["--model-repository", "/m", "--bogus"], "unknown flag --bogus"),
    (["--model-repository", "/m", "--http-port", "abc"], "--http-port: 'abc' is not an integer"),
    (["--model-repository", "/m", "--http-port"], "--http-port needs a value"),
    (["--model-repository", "/m", "--strict-readiness=maybe"], "--strict-readiness: must be true or false"),
    ([], "--model-repository is required"),
])
def test_serve_bad_flag_is_one_line(args, problem):
    assert_one_line_error(run(BINARY, "serve", *args), "infera serve", problem)


def assert_fits(text, what):
    long = [line for line in text.splitlines() if len(line) > COLUMNS]
    assert not long, f"{what}: {len(long)} lines over {COLUMNS} columns, e.g. {long[0]!r}"


def test_serve_help_fits_and_says_what_is_served():
    result = run(BINARY, "serve", "--help")
    assert result.returncode == 0 and result.stderr == ""
    assert_fits(result.stdout, "infera serve --help")
    for served in ["KServe v2", "gRPC", "OpenAI", "/v1/chat/completions", "/v1/embeddings", "/console",
                   "LLM", "--model-repository", "--strict-readiness"]:
        assert served in result.stdout, served
    assert run(BINARY, "serve", "-h").stdout == result.stdout


def test_top_level_usage_fits_and_mentions_llms():
    result = run(BINARY, "--help")
    assert result.returncode == 0
    assert_fits(result.stdout, "infera --help")
    for word in ["serve", "bench", "analyze", "diagnose", "OpenAI", "LLM", "/console"]:
        assert word in result.stdout, word
    # bench's line uses docs/cli.md's flag names (perf_analyzer's -m/--model-name, -u HOST:PORT).
    assert "infera bench -m/--model-name MODEL [-u HOST:PORT]" in result.stdout, result.stdout
    assert_one_line_error(run(BINARY, "bogus-command"), "infera", "unknown command 'bogus-command'")


@pytest.mark.parametrize("tool", LLM_TOOLS)
def test_llm_tool_help_and_bad_flag(tool):
    path = os.path.join(TOOLS, tool)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} not built")
    for flag in ("--help", "-h"):
        result = run(path, flag)
        assert result.returncode == 0, (flag, result.stderr)
        assert result.stdout.startswith(f"Usage: {tool}"), result.stdout
        assert_fits(result.stdout, f"{tool} {flag}")
    first = ["DIR"] if tool == "llm_tokenize" else []
    assert_one_line_error(run(path, *first, "--bogus", "1"), tool, "--bogus")


# --- a repository that cannot be served --------------------------------------------------

def test_missing_repository_is_the_last_word():
    for repository, problem in [("/definitely/missing", "does not exist"), (BINARY, "is not a directory")]:
        result = run(BINARY, "serve", "--model-repository", repository, "--http-port", "0", "--grpc-port", "0",
                     "--metrics-port", "0")
        output = result.stdout + result.stderr
        assert result.returncode == 1, output
        assert problem in output, output
        assert "shutdown complete" not in output and "shutting down" not in output, output
        assert problem in output.strip().splitlines()[-1], output


# --- /v1/models ---------------------------------------------------------------------------

# The demo's LLM, its embedding pipeline (and steps) and a tensor model.
DEMO_MODELS = ["fortune", "text_tokenize", "text_embed_encoder", "text_pool", "text_embed", "simple"]


@pytest.fixture(scope="module")
def demo_server():
    with tempfile.TemporaryDirectory(prefix="infera-first-hour-demo-") as repo:
        for model in DEMO_MODELS:
            copy_model(demo_repo(), model, repo)
        server = InferaServer(repo)
        try:
            server.wait_ready()
            assert "server is ready" in server.log(), server.log()
            yield server
        finally:
            server.stop()


def post(server, path, body):
    status, _, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, json.loads(data)


def test_v1_models_lists_llms_and_embedding_models_with_their_kind(demo_server):
    status, body = demo_server.get_json("/v1/models")
    assert status == 200 and body["object"] == "list", body
    kinds = {m["id"]: m["infera_kind"] for m in body["data"]}
    assert kinds == {"fortune": "llm", "text_embed": "embedding"}, body
    for m in body["data"]:  # OpenAI's shape
        assert m["object"] == "model" and m["owned_by"] == "infera" and isinstance(m["created"], int), m
        assert m["status"] == "ready"
    assert "max_model_len" in next(m for m in body["data"] if m["id"] == "fortune")
    status, one = demo_server.get_json("/v1/models/text_embed")
    assert status == 200 and one["id"] == "text_embed" and one["infera_kind"] == "embedding", one
    status, err = demo_server.get_json("/v1/models/simple")
    assert status == 404 and "not served by the OpenAI API" in err["error"]["message"], err
    assert demo_server.get_json("/v1/models/nope")[0] == 404


def test_v1_models_is_what_the_v1_routes_serve(demo_server):
    """Every model of the repository: /v1/embeddings answers exactly the models listed as
    embedding models, /v1/completions exactly the LLMs."""
    listed = {m["id"]: m["infera_kind"] for m in demo_server.get_json("/v1/models")[1]["data"]}
    status, index = post(demo_server, "/v2/repository/index", {})
    assert status == 200 and sorted(m["name"] for m in index) == sorted(DEMO_MODELS), index
    for model in DEMO_MODELS:
        status, answer = post(demo_server, "/v1/embeddings", {"model": model, "input": "a first hour"})
        assert (status == 200) == (listed.get(model) == "embedding"), (model, status, answer)
        status, answer = post(demo_server, "/v1/completions", {"model": model, "prompt": "Hi", "max_tokens": 1})
        assert (status == 200) == (listed.get(model) == "llm"), (model, status, answer)

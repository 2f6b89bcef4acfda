"""Configuration bounds, path confinement and the admin guard, black box (issue 13,
finding 7 and the admin part of 11; issue 26, findings 6 and 7: configs refused while
their versions load are 400 / INVALID_ARGUMENT, not a retryable 503, over HTTP and gRPC;
non-finite canary numbers, unknown canary keys and a non-finite --trace-rate are refused).

Each hostile config goes through the explicit-mode load API's config override (Triton's
parameters.config): the answer is a 400 naming the field and its bound, the server keeps
serving, stays ready, and its RSS does not jump. Warmup files must stay in the model's
warmup/ folder, and the error must not tell whether a file outside exists. The admin
routes answer 401/403 without the token or restricted-API header and 200 with them."""

import json
import os
import subprocess
import tempfile

import grpc
import pytest

from infera_server import BINARY, InferaServer, copy_model, demo_repo
from test_grpc import channel_to, expect_error, pb, pb_grpc

MODEL = """
name: "{name}"
backend: "fault_injection"
max_batch_size: 4
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
{extra}
"""

# What a hostile override starts from (protobuf JSON, as Triton's load API takes).
BASE = {"name": "b", "backend": "fault_injection", "max_batch_size": 4,
        "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [2]}],
        "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [2]}]}
BYTES_BASE = {"name": "b", "backend": "identity", "max_batch_size": 0,
              "input": [{"name": "INPUT0", "data_type": "TYPE_STRING", "dims": [-1]}],
              "output": [{"name": "OUTPUT0", "data_type": "TYPE_STRING", "dims": [-1]}]}
LLM_BASE = {"name": "b", "backend": "llm", "max_batch_size": 0,
            "input": [{"name": "text_input", "data_type": "TYPE_STRING", "dims": [1]}],
            "output": [{"name": "text_output", "data_type": "TYPE_STRING", "dims": [-1]}]}
TORCH_BASE = {"name": "b", "platform": "pytorch_libtorch", "max_batch_size": 4,
              "input": [{"name": "INPUT__0", "data_type": "TYPE_FP32", "dims": [2]}],
              "output": [{"name": "OUTPUT__0", "data_type": "TYPE_FP32", "dims": [2]}]}


def warmup(dims, data_type="TYPE_FP32", count=1, **source):
    return [{"name": "w", "batch_size": 1, "count": count,
             "inputs": {"INPUT0": {"data_type": data_type, "dims": dims, **(source or {"zero_data": True})}}}]


def params(**values):
    return {k: {"string_value": v} for k, v in values.items()}


# (id, config, substrings the 400 must contain: the field and the bound)
HOSTILE = [
    ("max_batch_size", {**BASE, "max_batch_size": 2147483647}, ["max_batch_size", "65536"]),
    ("priority_levels_million", {**BASE, "dynamic_batching": {"priority_levels": "1000000"}},
     ["dynamic_batching.priority_levels", "256"]),
    ("priority_levels_max", {**BASE, "dynamic_batching": {"priority_levels": "18446744073709551615"}},
     ["dynamic_batching.priority_levels", "256"]),
    ("instances_per_group", {**BASE, "instance_group": [{"count": 1000000}]},
     ["instance_group[0].count", "64"]),
    ("instance_groups", {**BASE, "instance_group": [{"count": 64}] * 64},
     ["instance_group", "4096 instances", "per model"]),
    ("queue_delay", {**BASE, "dynamic_batching": {"max_queue_delay_microseconds": "9223372036854775807"}},
     ["max_queue_delay_microseconds", "3600000000"]),
    ("queue_timeout", {**BASE, "dynamic_batching": {
        "default_queue_policy": {"default_timeout_microseconds": "18446744073709551615"}}},
     ["default_timeout_microseconds", "86400000000"]),
    ("warmup_dims", {**BASE, "input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1]}],
                     "model_warmup": warmup(["1099511627776"])},
     ["model_warmup[0].inputs[INPUT0].dims", "268435456"]),
    ("warmup_bytes", {**BYTES_BASE, "model_warmup": warmup(["2147483648"], "TYPE_STRING")},
     ["model_warmup[0].inputs[INPUT0].dims", "268435456"]),
    ("warmup_count", {**BASE, "model_warmup": warmup([2], count=4294967295)},
     ["model_warmup[0].count", "1000"]),
    ("llm_num_threads", {**LLM_BASE, "parameters": params(num_threads="100000")}, ["num_threads"]),
    ("llm_kv_cache_wraps", {**LLM_BASE, "parameters": params(kv_cache_memory_bytes="17179869184GiB")},
     ["kv_cache_memory_bytes"]),
    ("llm_kv_cache_beyond_memory", {**LLM_BASE, "parameters": params(kv_cache_memory_bytes="1048576GiB")},
     ["kv_cache_memory_bytes", "95% of this machine's memory"]),
    ("llm_max_num_seqs", {**LLM_BASE, "parameters": params(max_num_seqs="2147483647")},
     ["max_num_seqs", "4096"]),
    ("torch_threads", {**TORCH_BASE, "parameters": params(INTRA_OP_THREAD_COUNT="100000")},
     ["INTRA_OP_THREAD_COUNT", "4 per core"]),
    # Issue 26, finding 7: "nan" parsed and passed every bound (then a NaN cast to an
    # integer, or a rollback threshold that never fires); misspelt keys were ignored.
    ("canary_weight_nan", {**BASE, "parameters": params(**{"canary.version": "1", "canary.weight_percent": "nan"})},
     ["canary.weight_percent", "[0, 100]"]),
    ("canary_weight_inf", {**BASE, "parameters": params(**{"canary.version": "1", "canary.weight_percent": "inf"})},
     ["canary.weight_percent"]),
    ("canary_threshold_nan", {**BASE, "parameters": params(**{"canary.version": "1",
                                                              "canary.max_error_rate_percent": "NaN"})},
     ["canary.max_error_rate_percent"]),
    ("canary_p99_nan", {**BASE, "parameters": params(**{"canary.version": "1",
                                                        "canary.max_p99_increase_percent": "-nan"})},
     ["canary.max_p99_increase_percent"]),
    ("canary_version_fraction", {**BASE, "parameters": params(**{"canary.version": "1.5"})},
     ["canary.version", "is not an integer"]),
    ("canary_unknown_key", {**BASE, "parameters": params(**{"canary.version": "1", "canary.wieght_percent": "50"})},
     ["parameters[canary.wieght_percent] is not a canary setting"]),
    ("fault_injection_delay_nan", {**BASE, "parameters": params(delay_ms="nan")}, ["parameters[delay_ms]"]),
]


def rss_bytes(server):
    with open(f"/proc/{server.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def load(server, name, config=None, headers=None):
    body = "" if config is None else json.dumps({"parameters": {"config": json.dumps(config)}})
    status, _, data = server.request("POST", f"/v2/repository/models/{name}/load", body, headers)
    return status, (json.loads(data)["error"] if data and status != 200 else "")


def infer_ok(server, model):
    body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1.0, 2.0]}]}
    return server.infer(model, body)[0] == 200


@pytest.fixture(scope="module")
def explicit_server():
    with tempfile.TemporaryDirectory(prefix="infera-limits-") as repo:
        for name in ("a", "b"):
            os.makedirs(os.path.join(repo, name, "1"))
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(MODEL.format(name=name, extra=""))
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "a")
        try:
            server.wait_ready()
            yield server
        finally:
            server.stop()


@pytest.mark.parametrize("config,expected", [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_config_override_is_a_400_naming_field_and_bound(explicit_server, config, expected):
    server = explicit_server
    before = rss_bytes(server)
    status, error = load(server, "b", config)
    assert status == 400, (status, error)
    for part in expected:
        assert part in error, (part, error)
    # The server keeps serving, stays ready, and did not allocate what the config asked.
    assert infer_ok(server, "a")
    assert server.request("GET", "/v2/health/ready")[0] == 200
    assert rss_bytes(server) - before < 64 << 20
    index = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    assert any(e["name"] == "b" and e["reason"] == "not loaded" for e in index), index


def test_loading_a_name_not_in_the_repository_leaves_the_server_ready(explicit_server):
    server = explicit_server
    status, error = load(server, "no_such_model")
    assert status == 404 and "not in the repository" in error, (status, error)
    assert server.request("GET", "/v2/health/ready")[0] == 200
    assert infer_ok(server, "a")


def test_request_timeout_past_a_day_is_a_400_not_an_instant_504(explicit_server):
    server = explicit_server
    for timeout in (9223372036854775, 86400000001):
        body = {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1.0, 2.0]}],
                "parameters": {"timeout": timeout}}
        status, _, data = server.infer("a", body)
        assert status == 400, (status, data)
        assert "'timeout'" in json.loads(data)["error"] and "86400000000" in json.loads(data)["error"]
    assert infer_ok(server, "a")


def test_warmup_file_outside_the_warmup_folder_is_refused_without_an_oracle(explicit_server):
    server = explicit_server
    model_dir = os.path.join(server.repository, "b")
    os.makedirs(os.path.join(model_dir, "warmup"), exist_ok=True)
    for link, target in (("to_passwd", "/etc/passwd"), ("to_nothing", "/no/such/file/anywhere")):
        if not os.path.islink(os.path.join(model_dir, "warmup", link)):
            os.symlink(target, os.path.join(model_dir, "warmup", link))
    base = {**BASE, "input": [{"name": "INPUT0", "data_type": "TYPE_UINT8", "dims": [-1]}],
            "output": [{"name": "OUTPUT0", "data_type": "TYPE_UINT8", "dims": [-1]}]}

    def error_for(path):
        config = {**base, "model_warmup": warmup([4], "TYPE_UINT8", input_data_file=path)}
        status, error = load(server, "b", config)
        return status, error.replace(path, "<path>")

    # Lexically outside: a 400 at validation, the same text whether the file exists or not.
    for existing, missing in (("/etc/passwd", "/etc/no_such_file"),
                              ("../../../../etc/passwd", "../../../../etc/no_such_file")):
        status, error = error_for(existing)
        assert status == 400 and "inside the model's warmup/ folder" in error, error
        assert (status, error) == error_for(missing)
        assert "root:" not in error
    # A symbolic link that leads out: refused at load (a 400: the config's fault, not a
    # retryable 503), again the same for both targets.
    linked = error_for("to_passwd")
    assert linked[0] == 400 and "inside the model's warmup/ folder" in linked[1], linked
    assert linked == error_for("to_nothing")
    assert "/etc/passwd" not in linked[1]
    # A refused override changes nothing: a is untouched and the server stays ready.
    assert infer_ok(server, "a")
    assert server.request("GET", "/v2/health/ready")[0] == 200


def ensemble_over_a(**changes):
    """An override making b an ensemble of one step, model a (INPUT0 -> OUTPUT0)."""
    step = {"model_name": "a", "input_map": {"INPUT0": "X"}, "output_map": {"OUTPUT0": "Y"}}
    step.update(changes.pop("step", {}))
    config = {"name": "b", "platform": "ensemble", "max_batch_size": 4,
              "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [2]}],
              "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [2]}],
              "ensemble_scheduling": {"step": [step]}}
    config.update(changes)
    return config


# Issue 26, finding 6: configs refused while their versions load (the ensemble plan, a
# file the config names) were answered 503, which a client retries. (id, override, the
# 400's substrings)
REFUSED_AT_LOAD = [
    ("ensemble_unknown_step", ensemble_over_a(step={"model_name": "no_such_model"}),
     ["step 0 (model 'no_such_model')"]),
    ("ensemble_dtype", ensemble_over_a(input=[{"name": "X", "data_type": "TYPE_INT32", "dims": [2]}]),
     ["TYPE_INT32", "step 0 (model 'a')"]),
    ("ensemble_map_key", ensemble_over_a(step={"input_map": {"NOPE": "X"}}),
     ["input_map key 'NOPE' is not an input of model 'a'"]),
    ("ensemble_batching", ensemble_over_a(max_batch_size=8), ["max_batch_size 4 is less than the ensemble's 8"]),
    ("ensemble_graph_cycle", ensemble_over_a(ensemble_scheduling={"step": [
        {"model_name": "a", "input_map": {"INPUT0": "p"}, "output_map": {"OUTPUT0": "q"}},
        {"model_name": "a", "input_map": {"INPUT0": "q"}, "output_map": {"OUTPUT0": "p"}},
        {"model_name": "a", "input_map": {"INPUT0": "X"}, "output_map": {"OUTPUT0": "Y"}}]}),
     ["is on a cycle"]),
    ("label_filename_outside", {**BASE, "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [2],
                                                    "label_filename": "../a/config.pbtxt"}]},
     ["label_filename", "inside the model directory"]),
    ("classify_labels_outside", {
        "name": "b", "backend": "classify", "max_batch_size": 4,
        "input": [{"name": "logits", "data_type": "TYPE_FP32", "dims": [2]}],
        "output": [{"name": "labels", "data_type": "TYPE_STRING", "dims": [1]}],
        "parameters": params(top_k="1", labels="../a/config.pbtxt")},
     ["parameters[labels]", "inside the model directory"]),
]


@pytest.mark.parametrize("transport", ["http", "grpc"])
@pytest.mark.parametrize("config,expected", [c[1:] for c in REFUSED_AT_LOAD], ids=[c[0] for c in REFUSED_AT_LOAD])
def test_configs_refused_at_load_are_400_and_invalid_argument(explicit_server, transport, config, expected):
    server = explicit_server
    if transport == "http":
        status, error = load(server, "b", config)
        assert status == 400, (status, error)
    else:
        with channel_to(server) as channel:
            request = pb.RepositoryModelLoadRequest(model_name="b")
            request.parameters["config"].string_param = json.dumps(config)
            error = expect_error(lambda: pb_grpc.GRPCInferenceServiceStub(channel).RepositoryModelLoad(request),
                                 grpc.StatusCode.INVALID_ARGUMENT)
    for part in expected:
        assert part in error, (part, error)
    # Refused as a whole: nothing changed, the server is ready and a still answers.
    assert infer_ok(server, "a")
    assert server.request("GET", "/v2/health/ready")[0] == 200
    index = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    assert any(e["name"] == "b" and e["reason"] == "not loaded" for e in index), index


@pytest.mark.parametrize("rate", ["nan", "-nan", "inf", "1e-300", "1.5"])
def test_trace_rate_must_be_a_finite_fraction(rate):
    with tempfile.TemporaryDirectory(prefix="infera-trace-rate-") as repo:
        result = subprocess.run([BINARY, "serve", "--model-repository", repo, "--http-port", "0",
                                 "--grpc-port", "0", "--metrics-port", "0", "--trace-rate", rate],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode != 0, result.stdout + result.stderr
        assert "--trace-rate" in result.stdout + result.stderr, result.stdout + result.stderr


def test_max_tokens_past_the_bound_is_a_400():
    with tempfile.TemporaryDirectory(prefix="infera-limits-llm-") as repo:
        copy_model(demo_repo(), "fortune", repo)
        server = InferaServer(repo)
        try:
            server.wait_ready()
            for max_tokens in (9223372036854775807, 16777217):
                body = json.dumps({"model": "fortune", "prompt": "hi", "max_tokens": max_tokens})
                status, _, data = server.request("POST", "/v1/completions", body,
                                                 {"Content-Type": "application/json"})
                assert status == 400, (status, data)
                assert b"max_tokens" in data, data
            body = json.dumps({"model": "fortune", "prompt": "hi", "max_tokens": 2})
            assert server.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})[0] == 200
        finally:
            server.stop()


CANARY = """
version_policy { specific { versions: [ 1, 2 ] } }
parameters { key: "canary.version" value { string_value: "2" } }
parameters { key: "canary.weight_percent" value { string_value: "20" } }
"""


def canary_repo(repo):
    os.makedirs(os.path.join(repo, "m", "1"))
    os.makedirs(os.path.join(repo, "m", "2"))
    with open(os.path.join(repo, "m", "config.pbtxt"), "w") as f:
        f.write(MODEL.format(name="m", extra=CANARY))


def test_canary_promotion_is_not_open_by_default():
    with tempfile.TemporaryDirectory(prefix="infera-guard-") as repo:
        canary_repo(repo)
        server = InferaServer(repo)
        try:
            server.wait_ready()
            status, _, body = server.request("POST", "/v2/repository/models/m/canary/promote", "")
            assert status == 403 and "--admin-token" in json.loads(body)["error"], (status, body)
            # Logging is closed too without any credential configured (issue 26).
            assert server.request("GET", "/v2/logging")[0] == 403
        finally:
            server.stop()


def test_admin_token_guards_promotion_and_logging():
    with tempfile.TemporaryDirectory(prefix="infera-guard-") as repo:
        canary_repo(repo)
        server = InferaServer(repo, "--admin-token", "s3cret")
        try:
            server.wait_ready()
            right = {"Authorization": "Bearer s3cret"}
            wrong = {"Authorization": "Bearer s3cre"}
            for method, path, body in (("GET", "/v2/logging", None),
                                       ("POST", "/v2/logging", json.dumps({"log_info": True})),
                                       ("POST", "/v2/repository/models/m/canary/promote", "")):
                status, headers, _ = server.request(method, path, body)
                assert status == 401 and headers.get("WWW-Authenticate") == "Bearer", (path, status)
                assert server.request(method, path, body, wrong)[0] == 401, path
                assert server.request(method, path, body, right)[0] == 200, path
            assert server.request("POST", "/v2/repository/index", "")[0] == 200  # a read
            assert "SECURITY" not in server.log()
        finally:
            server.stop()


def test_restricted_api_header_and_token_together_over_http_and_grpc():
    with tempfile.TemporaryDirectory(prefix="infera-guard-") as repo:
        for name in ("a", "b"):
            os.makedirs(os.path.join(repo, name, "1"))
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(MODEL.format(name=name, extra=""))
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "a",
                              "--admin-token", "tok",
                              "--http-restricted-api", "model-repository,logging:X-Admin-Key=k1",
                              "--grpc-restricted-protocol", "model-repository:admin-key=k2")
        try:
            server.wait_ready()
            token = {"Authorization": "Bearer tok"}
            header = {"X-Admin-Key": "k1"}
            path = "/v2/repository/models/b/load"
            status, _, body = server.request("POST", path, "", token)
            assert status == 403 and "expecting header 'x-admin-key'" in json.loads(body)["error"]
            assert server.request("POST", path, "", {**token, "X-Admin-Key": "k2"})[0] == 403
            assert server.request("POST", path, "", header)[0] == 401
            assert server.request("POST", path, "", {**token, **header})[0] == 200
            assert server.request("POST", "/v2/repository/index", "")[0] == 403
            assert server.request("POST", "//v2//repository/index", "")[0] == 403  # no other spelling
            assert server.request("POST", "/v2/repository/index", "", header)[0] == 200
            assert server.request("GET", "/v2/logging", None, token)[0] == 403
            assert server.request("GET", "/v2/logging", None, {**token, **header})[0] == 200
            with channel_to(server) as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                auth = [("authorization", "Bearer tok")]
                unload = pb.RepositoryModelUnloadRequest(model_name="b")
                expect_error(lambda: stub.RepositoryModelUnload(unload, metadata=auth),
                             grpc.StatusCode.PERMISSION_DENIED, "triton-grpc-protocol-admin-key")
                expect_error(lambda: stub.RepositoryModelUnload(
                    unload, metadata=auth + [("triton-grpc-protocol-admin-key", "k1")]),
                    grpc.StatusCode.PERMISSION_DENIED, "triton-grpc-protocol-admin-key")
                expect_error(lambda: stub.RepositoryModelUnload(
                    unload, metadata=[("triton-grpc-protocol-admin-key", "k2")]),
                    grpc.StatusCode.UNAUTHENTICATED, "admin token")
                expect_error(lambda: stub.RepositoryIndex(pb.RepositoryIndexRequest()),
                             grpc.StatusCode.PERMISSION_DENIED, "triton-grpc-protocol-admin-key")
                stub.RepositoryModelUnload(unload, metadata=auth + [("triton-grpc-protocol-admin-key", "k2")])
                assert not stub.ModelReady(pb.ModelReadyRequest(name="b")).ready
            assert "SECURITY" not in server.log()
        finally:
            server.stop()


def test_explicit_mode_without_a_guard_warns_loudly():
    with tempfile.TemporaryDirectory(prefix="infera-guard-") as repo:
        os.makedirs(os.path.join(repo, "a", "1"))
        with open(os.path.join(repo, "a", "config.pbtxt"), "w") as f:
            f.write(MODEL.format(name="a", extra=""))
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "a")
        try:
            server.wait_ready()
            warning = [line for line in server.log().splitlines() if "SECURITY" in line]
            assert warning and warning[0].startswith("W"), server.log()  # a WARNING line
            assert "--admin-token" in warning[0]
        finally:
            server.stop()

"""Warm-up and the graph executor (docs/cold_start.md, "Second step"): frozen TorchScript
modules run on LibTorch's simple executor (GRAPH_EXECUTOR auto), so one warm-up call is
enough. Over real sockets: the log says which executor each model got, the answers right
after ready equal those of the profiling executor and of the demo's Python reference,
and a bad GRAPH_EXECUTOR value makes the model UNAVAILABLE with a message naming it.
No timing is asserted."""

import json
import os
import re
import shutil
import struct
import tempfile

import pytest

from infera_server import InferaServer, demo_repo

LOADED = re.compile(r"pytorch: loaded .*/([a-z_]+)/1/model\.pt \(.*optimize_for_inference (\w+), "
                    r"(\w+) graph executor, precision fp32\)")


def parameter(key, value):
    return f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'


def copy_ranker(root, name, extra):
    """The demo ranker under `name`, one intra-op thread (bit-exact comparisons), one
    warm-up call, plus `extra` config text."""
    source = os.path.join(demo_repo(), "ranker")
    os.makedirs(os.path.join(root, name, "1"))
    shutil.copy(os.path.join(source, "1", "model.pt"), os.path.join(root, name, "1", "model.pt"))
    with open(os.path.join(source, "config.pbtxt")) as f:
        config = f.read().replace('name: "ranker"', f'name: "{name}"')
    warmup = config.find("model_warmup")
    assert warmup >= 0, config
    config = config[:warmup] + re.sub(r"count: \d+", "count: 1", config[warmup:], count=1)
    with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
        f.write(config + parameter("INTRA_OP_THREAD_COUNT", "1") + extra)


@pytest.fixture(scope="module")
def server():
    root = tempfile.mkdtemp(prefix="infera-warmup-")
    copy_ranker(root, "r_auto", "")
    copy_ranker(root, "r_simple", parameter("GRAPH_EXECUTOR", "simple"))
    copy_ranker(root, "r_profiling", parameter("GRAPH_EXECUTOR", "profiling"))
    copy_ranker(root, "r_unfrozen", parameter("OPTIMIZE_FOR_INFERENCE", "false"))
    copy_ranker(root, "r_bad", parameter("GRAPH_EXECUTOR", "fastest"))
    s = InferaServer(root)
    s.wait_ready()
    yield s
    s.stop()
    shutil.rmtree(root)


def reference_request():
    """The demo ranker's reference inputs (demo-models/ranker/reference) as a JSON request,
    and its optimised-module outputs from Python."""
    ref = os.path.join(demo_repo(), "ranker", "reference")
    with open(os.path.join(ref, "manifest.json")) as f:
        manifest = json.load(f)
    formats = {"FP32": "f", "INT64": "q"}

    def read(entry):
        with open(os.path.join(ref, entry["file"]), "rb") as f:
            data = f.read()
        return list(struct.unpack(f"<{len(data) // struct.calcsize(formats[entry['datatype']])}"
                                  f"{formats[entry['datatype']]}", data))

    inputs = [{"name": e["name"], "datatype": e["datatype"], "shape": e["shape"], "data": read(e)}
              for e in manifest["inputs"]]
    expected = {e["name"]: read(e) for e in manifest["outputs"]["optimized"]}
    return {"inputs": inputs}, expected


def scores(server, model, request):
    status, _, body = server.infer(model, request)
    assert status == 200, (model, body)
    return {o["name"]: o["data"] for o in json.loads(body)["outputs"]}


def test_log_names_each_models_executor(server):
    log = server.log()
    executors = {m.group(1): (m.group(2), m.group(3)) for m in LOADED.finditer(log)}
    assert executors == {
        "r_auto": ("applied", "simple"),
        "r_simple": ("applied", "simple"),
        "r_profiling": ("applied", "profiling"),
        "r_unfrozen": ("off", "profiling"),
    }, log


def test_answers_right_after_ready_match_the_profiling_executor_and_python(server):
    request, expected = reference_request()
    # The first request each model serves after its single warm-up call.
    first = {m: scores(server, m, request) for m in ("r_auto", "r_simple", "r_profiling", "r_unfrozen")}
    # Same frozen graph, same kernels, one thread: bit-for-bit equal.
    assert first["r_auto"] == first["r_simple"] == first["r_profiling"], first
    for name, values in expected.items():
        assert first["r_auto"][name] == pytest.approx(values, rel=1e-5, abs=1e-6), (first["r_auto"], expected)
        assert first["r_unfrozen"][name] == pytest.approx(values, rel=1e-4, abs=1e-5), (first["r_unfrozen"], expected)
    # And later answers do not change (the profiling executor's second run compiles a plan).
    for model in ("r_auto", "r_profiling"):
        for _ in range(3):
            assert scores(server, model, request) == first[model], model


def test_bad_graph_executor_value_names_the_parameter(server):
    entries = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    states = {e["name"]: (e.get("state"), e.get("reason", "")) for e in entries}
    state, reason = states["r_bad"]
    assert state == "UNAVAILABLE", states
    assert "'GRAPH_EXECUTOR' has value 'fastest', expected one of auto, simple, profiling" in reason, reason
    for name in ("r_auto", "r_simple", "r_profiling", "r_unfrozen"):
        assert states[name][0] == "READY", states

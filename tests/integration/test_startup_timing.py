"""Cold start (docs/cold_start.md): a repository of several models loaded in parallel,
one of them a real TorchScript model and some failing, ends with every model in the
state and with the message it had when loaded one at a time, and the log says where the
time went: one line per loaded version with its stages, and one start-up summary line.
No timing is asserted, only that the fields are there and sane."""

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from infera_server import BINARY, InferaServer, demo_repo, write_model

FAULTY = """
name: "{name}"
backend: "fault_injection"
max_batch_size: 4
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }} ]
instance_group [ {{ count: {instances} }} ]
parameters {{ key: "delay_ms" value {{ string_value: "20" }} }}
parameters {{ key: "failure_rate" value {{ string_value: "{failure_rate}" }} }}
model_warmup [ {{ name: "w" batch_size: 1 count: 2
                 inputs {{ key: "INPUT0" value {{ data_type: TYPE_FP32 dims: [ 2 ] zero_data: true }} }} }} ]
"""
IDENTITY = """
name: "{name}"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
"""
CHAIN = """
name: "a_chain"
platform: "ensemble"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 4 ] } ]
ensemble_scheduling { step [
  { model_name: "z_ident" model_version: -1 input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "Y" } } ] }
"""
LOADED = re.compile(r"loaded model '([^']+)' version (\d+) in (\d+) ms(?:: (.*))?$", re.M)
STAGE = re.compile(r"([a-z][a-z -]*?) (\d+) ms")


@pytest.fixture(scope="module")
def repo():
    root = tempfile.mkdtemp(prefix="infera-startup-")
    ranker = os.path.join(demo_repo(), "ranker")
    os.makedirs(os.path.join(root, "ranker", "1"))
    shutil.copy(os.path.join(ranker, "config.pbtxt"), os.path.join(root, "ranker", "config.pbtxt"))
    shutil.copy(os.path.join(ranker, "1", "model.pt"), os.path.join(root, "ranker", "1", "model.pt"))
    # A TorchScript model whose file is missing.
    os.makedirs(os.path.join(root, "no_file", "1"))
    with open(os.path.join(ranker, "config.pbtxt")) as f:
        config = f.read().replace('name: "ranker"', 'name: "no_file"')
    with open(os.path.join(root, "no_file", "config.pbtxt"), "w") as f:
        f.write(config)
    write_model(root, "slow_pair", FAULTY.format(name="slow_pair", instances=2, failure_rate=0))
    write_model(root, "bad_warmup", FAULTY.format(name="bad_warmup", instances=3, failure_rate=1))
    write_model(root, "z_ident", IDENTITY.replace("{name}", "z_ident"))
    write_model(root, "a_chain", CHAIN)
    write_model(root, "bad_config", "name: \"bad_config\"\nbackend: \"no_such_backend\"\n")
    yield root
    shutil.rmtree(root)


def index(server):
    entries = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    return {e["name"]: (e.get("state"), e.get("reason", "")) for e in entries}


def start(repo, threads):
    server = InferaServer(repo, "--model-load-thread-count", str(threads))
    server.wait_ready()
    return server


def test_parallel_start_ends_like_the_sequential_one(repo):
    states = {}
    logs = {}
    for threads in (1, 4):
        server = start(repo, threads)
        try:
            states[threads] = index(server)
            logs[threads] = server.log()
            assert server.request("GET", "/v2/health/live")[0] == 200
            assert server.request("GET", "/v2/health/ready")[0] != 200  # models failed
        finally:
            server.stop()
    assert states[4] == states[1], (states, logs[4])
    final = states[4]
    for name in ("ranker", "slow_pair", "z_ident", "a_chain"):
        assert final[name][0] == "READY", (name, final, logs[4])
    assert final["no_file"][0] == "UNAVAILABLE" and "does not exist" in final["no_file"][1], final
    assert final["bad_warmup"][0] == "UNAVAILABLE", final
    assert "warmup sample 'w' failed: fault_injection: injected failure" in final["bad_warmup"][1], final
    assert final["bad_config"][0] == "UNAVAILABLE" and "no_such_backend" in final["bad_config"][1], final
    assert "server is NOT ready" in logs[4]


def test_log_says_where_the_time_went(repo):
    server = start(repo, 2)
    try:
        log = server.log()
    finally:
        server.stop()
    lines = {m.group(1): m for m in LOADED.finditer(log)}
    assert set(lines) == {"ranker", "slow_pair", "z_ident", "a_chain"}, log
    for name, m in lines.items():
        assert int(m.group(2)) == 1 and int(m.group(3)) >= 0, m.group(0)
    # The TorchScript model: its own stages, then its instance.
    stages = dict((k, int(v)) for k, v in STAGE.findall(lines["ranker"].group(4)))
    for stage in ("read", "deserialise", "optimise", "create", "warm-up"):
        assert stage in stages and stages[stage] >= 0, (stage, lines["ranker"].group(0))
    assert "1 instance:" in lines["ranker"].group(4), lines["ranker"].group(0)
    # Two instances of one model, warmed two at a time (two loader threads).
    pair = lines["slow_pair"].group(4)
    assert "backend load" in pair and "2 instances:" in pair, pair
    per_instance = re.search(r"per instance (\d+) / (\d+) ms, (\d+) at a time", pair)
    assert per_instance and per_instance.group(3) == "2", pair
    assert lines["a_chain"].group(4) is None  # an ensemble has no stages of its own
    summary = re.search(r"startup: ready ([\d.]+) s after the process started: ([\d.]+) s before Server::Start "
                        r"\(dynamic linking, static initialisers\), ([\d.]+) s HTTP/gRPC/metrics, ([\d.]+) s models "
                        r"\((\d+) versions on 2 loader threads, (\d+) failed\); critical path \(the longest load\): "
                        r"'([^']+)' version 1 from (\d+) to (\d+) ms of the models' (\d+) \((.*)\)$", log, re.M)
    assert summary, log
    ready, before, transports, models = (float(summary.group(i)) for i in range(1, 5))
    assert ready >= before + transports + models - 0.02, summary.group(0)
    # Every version that got as far as loading; bad_warmup and no_file failed there.
    assert int(summary.group(5)) == 6 and int(summary.group(6)) == 2, summary.group(0)
    assert summary.group(7) in ("ranker", "slow_pair", "bad_warmup", "no_file", "z_ident"), summary.group(0)
    assert int(summary.group(8)) <= int(summary.group(9)) <= int(summary.group(10)), summary.group(0)


@pytest.mark.parametrize("value,expected", [("-1", "--model-load-thread-count"), ("65", "--model-load-thread-count"),
                                            ("many", "'many'"), ("", "--model-load-thread-count")])
def test_bad_load_thread_count_is_refused_by_name(repo, value, expected):
    result = subprocess.run([BINARY, "serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0",
                             "--metrics-port", "0", f"--model-load-thread-count={value}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result

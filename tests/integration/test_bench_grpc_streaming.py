"""`infera bench -i grpc`, unary (ModelInfer) and `--streaming` (ModelStreamInfer),
against a real infera over
loopback: runs check every answer and their counts add up with the server's own
statistics; errors (status codes, errors carried on a stream, streams the server ends)
are counted by kind; open-loop rates hold over gRPC; --streaming outside gRPC is a usage
error."""

import json
import os
import subprocess
import tempfile

import pytest

from infera_server import BINARY, InferaServer, copy_model, demo_repo, wait_for

FAST = ["--measurement-interval", "300", "--warmup", "200", "--max-trials", "4",
        "--max-duration", "60", "--progress", "off"]


def run_bench(server, *args, timeout=120):
    return subprocess.run([BINARY, "bench", "-i", "grpc", "-u", f"127.0.0.1:{server.grpc_port}", *FAST, *args],
                          capture_output=True, text=True, timeout=timeout)


def small_repo(directory):
    for model in ("simple", "identity_fp32"):
        copy_model(demo_repo(), model, directory)
    return directory


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-stream-repo-") as repo:
        srv = InferaServer(small_repo(repo), env={"OMP_WAIT_POLICY": "passive"})
        srv.wait_ready()
        yield srv
        srv.stop()


@pytest.fixture()
def out_dir():
    with tempfile.TemporaryDirectory(prefix="infera-bench-stream-") as d:
        yield d


def test_streaming_run_checks_every_answer_and_matches_the_server(server, out_dir):
    before = server.inference_count("simple")
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "simple", "--streaming", "--concurrency-range", "1:8:x8", "--duration", "0.5",
                       "--check", "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.load(open(path))
    assert report["protocol"] == "grpc" and report["streaming"] is True
    assert "grpc streaming" in result.stdout
    totals = report["totals"]
    assert totals["sent"] > 0
    assert totals["sent"] == totals["ok"] and totals["errors"] == 0
    assert [level["concurrency"] for level in report["levels"]] == [1, 8]
    for level in report["levels"]:
        assert level["latency"]["count"] == level["ok"] > 0
        assert level["client_cpu_us_per_request"] > 0
    # Every request the load generator counted reached the server, none more.
    assert server.inference_count("simple") - before == totals["sent"]


def test_streaming_large_tensors_are_checked(server, out_dir):
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "identity_fp32", "--shape", "INPUT0:150528", "--streaming",
                       "--concurrency-range", "4", "--duration", "0.5", "--check", "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    totals = json.load(open(path))["totals"]
    assert totals["ok"] > 0 and totals["errors"] == 0


def test_check_fails_wrong_answers_on_a_stream(server, out_dir):
    data = {"data": [{"INPUT0": list(range(16)), "INPUT1": [1] * 16}],
            "validation_data": [{"OUTPUT0": [i + 2 for i in range(16)]}]}  # off by one
    path = os.path.join(out_dir, "data.json")
    json.dump(data, open(path, "w"))
    result = run_bench(server, "-m", "simple", "--streaming", "--input-data", path, "--check", "--duration", "0.3")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "x check" in result.stdout and "OUTPUT0[0] is 1, expected 2" in result.stdout


def test_errors_in_stream_answers_are_counted(server, out_dir):
    """Requests the server rejects come back as error_message on the stream (which goes
    on): each is counted as `grpc stream error`, and the server agrees on the total."""
    bad = {"content": list(range(15)), "shape": [15]}  # simple takes [16]
    data_path = os.path.join(out_dir, "bad.json")
    json.dump({"data": [{"INPUT0": bad, "INPUT1": bad}]}, open(data_path, "w"))
    before = server.inference_count("simple")
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "simple", "--streaming", "--input-data", data_path,
                       "--concurrency-range", "2", "--duration", "0.3", "--json", path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no request succeeded" in result.stderr
    report = json.load(open(path))
    totals = report["totals"]
    assert totals["ok"] == 0 and totals["errors"] == totals["sent"] > 0
    kinds = report["levels"][0]["error_counts"]
    assert list(kinds) == ["grpc stream error"], kinds
    assert "does not match" in kinds["grpc stream error"]["example"]
    assert "grpc stream error" in result.stdout
    assert server.inference_count("simple") - before == totals["sent"]


def test_open_loop_rate_is_accurate_over_grpc(server, out_dir):
    """The driver's timed sends go out on time over gRPC, and the answers come back at
    the same rate."""
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "simple", "--request-rate-range", "200", "--measurement-interval", "1000",
                       "--duration", "2", "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    level = json.load(open(path))["levels"][0]
    assert level["send_rate_per_s"] == pytest.approx(200, rel=0.1)
    assert level["throughput_per_s"] == pytest.approx(200, rel=0.1)
    assert level["errors"] == 0


def test_unary_run_checks_every_answer_and_matches_the_server(server, out_dir):
    before = server.inference_count("simple")
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "simple", "--concurrency-range", "1:16:x16", "--duration", "0.5",
                       "--check", "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.load(open(path))
    assert report["protocol"] == "grpc" and report["streaming"] is False
    totals = report["totals"]
    assert totals["sent"] == totals["ok"] > 0 and totals["errors"] == 0
    assert [level["concurrency"] for level in report["levels"]] == [1, 16]
    for level in report["levels"]:
        assert level["latency"]["count"] == level["ok"] > 0
    assert server.inference_count("simple") - before == totals["sent"]


def test_unary_errors_are_counted_by_status_code(server, out_dir):
    bad = {"content": list(range(15)), "shape": [15]}  # simple takes [16]
    data_path = os.path.join(out_dir, "bad.json")
    json.dump({"data": [{"INPUT0": bad, "INPUT1": bad}]}, open(data_path, "w"))
    path = os.path.join(out_dir, "r.json")
    result = run_bench(server, "-m", "simple", "--input-data", data_path, "--concurrency-range", "4",
                       "--duration", "0.3", "--json", path)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.load(open(path))
    totals = report["totals"]
    assert totals["ok"] == 0 and totals["errors"] == totals["sent"] > 0
    kinds = report["levels"][0]["error_counts"]
    assert list(kinds) == ["grpc INVALID_ARGUMENT"], kinds


def test_streams_ended_by_the_server_are_counted(out_dir):
    """The server shutting down ends the open streams: requests outstanding or sent
    afterwards fail as `grpc stream ended`, every request is still accounted for, and
    the run ends within its bounds."""
    with tempfile.TemporaryDirectory(prefix="infera-stream-repo-") as repo:
        srv = InferaServer(small_repo(repo), env={"OMP_WAIT_POLICY": "passive"})
        srv.wait_ready()
        path = os.path.join(out_dir, "r.json")
        bench = subprocess.Popen(
            [BINARY, "bench", "-i", "grpc", "-u", f"127.0.0.1:{srv.grpc_port}", "-m", "simple", "--streaming",
             "--concurrency-range", "4", "--warmup", "0", "--duration", "2", "--request-timeout", "5000",
             "--progress", "off", "--json", path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: srv.inference_count("simple") > 20, timeout=30)
            srv.stop()
            stdout, stderr = bench.communicate(timeout=60)
        finally:
            if bench.poll() is None:
                bench.kill()
                bench.communicate()
    assert bench.returncode == 0, stdout + stderr  # some requests succeeded
    report = json.load(open(path))
    totals = report["totals"]
    assert totals["ok"] > 0 and totals["errors"] > 0
    assert totals["sent"] == totals["ok"] + totals["errors"]
    kinds = set()
    for level in report["levels"]:
        kinds |= set(level["error_counts"])
    # A request the server read while shutting down may be answered with an error on
    # its stream before the stream ends.
    assert "grpc stream ended" in kinds and kinds <= {"grpc stream ended", "grpc stream error"}, kinds
    assert "grpc stream ended" in stdout


@pytest.mark.parametrize("args", [
    ["--streaming"],
    ["-i", "http", "--streaming"],
    ["--service-kind", "openai", "--streaming"],
])
def test_streaming_needs_grpc(args):
    result = subprocess.run([BINARY, "bench", "-m", "simple", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "--streaming" in result.stderr and "needs -i grpc" in result.stderr

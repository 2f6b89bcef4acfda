"""`infera bench` against a real infera, black box: short, bounded runs whose counts must
add up (sent = ok + errors, and the server's own statistics agree), whose reports parse,
and whose checks catch what they should."""

import csv
import json
import os
import subprocess
import tempfile
import xml.dom.minidom

import pytest

from infera_server import BINARY, InferaServer, demo_repo

# Short windows: these tests check the instrument, not the server's speed.
FAST = ["--measurement-interval", "300", "--warmup", "200", "--max-trials", "4",
        "--max-duration", "60", "--progress", "off"]


def run_bench(port, *args, timeout=120):
    result = subprocess.run([BINARY, "bench", "-u", f"127.0.0.1:{port}", *FAST, *args],
                            capture_output=True, text=True, timeout=timeout)
    return result


# Every port ephemeral: other servers (and other engineers' tests) may run meanwhile.
EXTRA_PORTS = ["--metrics-port", "0"]


@pytest.fixture(scope="module")
def server():
    srv = InferaServer(demo_repo(), *EXTRA_PORTS, env={"OMP_WAIT_POLICY": "passive"})
    srv.wait_ready()
    yield srv
    srv.stop()


@pytest.fixture()
def out_dir():
    with tempfile.TemporaryDirectory(prefix="infera-bench-") as d:
        yield d


def test_closed_loop_counts_add_up_and_match_the_server(server, out_dir):
    before = server.inference_count("simple")
    report_path = os.path.join(out_dir, "r.json")
    result = run_bench(server.port, "-m", "simple", "--concurrency-range", "1:4:x2", "--check",
                       "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.load(open(report_path))
    totals = report["totals"]
    assert totals["sent"] > 0
    assert totals["sent"] == totals["ok"] + totals["errors"]
    assert totals["errors"] == 0
    assert [level["concurrency"] for level in report["levels"]] == [1, 2, 4]
    for level in report["levels"]:
        assert level["sent"] >= level["ok"] + level["errors"] - level["concurrency"]
        assert level["latency"]["count"] == level["ok"]
        assert 0 < level["latency"]["p50_us"] <= level["latency"]["p99_us"] <= level["latency"]["max_us"]
        assert level["throughput_per_s"] > 0
    after = server.inference_count("simple")
    if before is not None:  # the statistics endpoint is there: it saw every request
        assert report["server_stats_available"]
        assert after - before == totals["sent"]
        assert totals["server_requests"] == totals["sent"]
        server_side = report["levels"][0]["server"]
        assert server_side["requests"] > 0
        assert server_side["request_us"] >= server_side["queue_us"]
    assert "total:" in result.stdout and "p99" in result.stdout


def test_reports_csv_json_svg_are_well_formed(server, out_dir):
    paths = {ext: os.path.join(out_dir, f"r.{ext}") for ext in ("csv", "json", "svg")}
    result = run_bench(server.port, "-m", "simple", "--concurrency-range", "2", "-f", paths["csv"],
                       "--json", paths["json"], "--plot", paths["svg"],
                       "--input-tensor-format", "binary", "--output-tensor-format", "binary", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = list(csv.DictReader(open(paths["csv"])))
    assert len(rows) == 1 and rows[0]["Concurrency"] == "2"
    assert float(rows[0]["Inferences/Second"]) > 0 and float(rows[0]["p99 latency"]) > 0
    report = json.load(open(paths["json"]))
    assert report["input_format"] == "binary" and report["check"] is True
    svg = xml.dom.minidom.parse(paths["svg"])
    assert svg.documentElement.tagName == "svg"
    assert len(svg.getElementsByTagName("circle")) == 3  # P50, P90, P99 of one level


def test_open_loop_rate_is_accurate(server, out_dir):
    report_path = os.path.join(out_dir, "r.json")
    result = run_bench(server.port, "-m", "simple", "--request-rate-range", "200",
                       "--measurement-interval", "1000", "--duration", "2", "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.load(open(report_path))
    level = report["levels"][0]
    assert level["request_rate"] == 200
    assert level["send_rate_per_s"] == pytest.approx(200, rel=0.1)
    assert level["throughput_per_s"] == pytest.approx(200, rel=0.1)
    assert "send_lag" in level
    totals = report["totals"]
    assert totals["sent"] == totals["ok"] + totals["errors"]


def test_batch_size_and_poisson_on_a_torch_model(server, out_dir):
    report_path = os.path.join(out_dir, "r.json")
    result = run_bench(server.port, "-m", "ranker", "-b", "4", "--request-rate-range", "50",
                       "--request-distribution", "poisson", "--duration", "1",
                       "--input-tensor-format", "binary", "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    level = json.load(open(report_path))["levels"][0]
    assert level["distribution"] == "poisson"
    assert level["inferences_per_s"] == pytest.approx(4 * level["throughput_per_s"])
    assert level["errors"] == 0


def test_rejections_are_counted_as_errors(out_dir):
    """A server with a one-slot queue rejects (429) under load: every request is still
    accounted for, by kind, and the server agrees on the total."""
    srv = InferaServer(demo_repo(), "--max-queue-size", "1", *EXTRA_PORTS,
                       env={"OMP_WAIT_POLICY": "passive"})
    try:
        srv.wait_ready()
        before = srv.inference_count("text_encoder")
        report_path = os.path.join(out_dir, "r.json")
        result = run_bench(srv.port, "-m", "text_encoder", "--int-range", "0:8192",
                           "--concurrency-range", "16", "--duration", "1", "--json", report_path)
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.load(open(report_path))
        totals = report["totals"]
        assert totals["errors"] > 0 and totals["ok"] > 0
        assert totals["sent"] == totals["ok"] + totals["errors"]
        kinds = report["levels"][0]["error_counts"]
        assert "http 429" in kinds, kinds
        assert "errors:" in result.stdout
        if before is not None:
            # Rejected requests may or may not reach the model's statistics; successes do.
            assert srv.inference_count("text_encoder") - before >= totals["ok"]
    finally:
        srv.stop()


def test_check_catches_wrong_outputs(server, out_dir):
    """validation_data that does not match what the model computes fails the run."""
    data = {"data": [{"INPUT0": list(range(16)), "INPUT1": [1] * 16}],
            "validation_data": [{"OUTPUT0": [i + 2 for i in range(16)]}]}  # off by one
    path = os.path.join(out_dir, "data.json")
    json.dump(data, open(path, "w"))
    result = run_bench(server.port, "-m", "simple", "--input-data", path, "--check", "--duration", "0.3")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "check" in result.stdout and "OUTPUT0[0] is 1, expected 2" in result.stdout
    data["validation_data"] = [{"OUTPUT0": [i + 1 for i in range(16)]}]
    json.dump(data, open(path, "w"))
    result = run_bench(server.port, "-m", "simple", "--input-data", path, "--check", "--duration", "0.3")
    assert result.returncode == 0, result.stdout + result.stderr


def test_usage_errors_exit_2(server):
    assert run_bench(server.port).returncode == 2  # no -m
    missing = run_bench(server.port, "-m", "no_such_model")
    assert missing.returncode == 2 and "404" in missing.stderr
    too_big = run_bench(server.port, "-m", "simple", "-b", "9")  # max_batch_size 8
    assert too_big.returncode == 2 and "max_batch_size" in too_big.stderr
    unreachable = subprocess.run([BINARY, "bench", "-m", "simple", "-u", "127.0.0.1:1"],
                                 capture_output=True, text=True, timeout=30)
    assert unreachable.returncode == 2 and "cannot reach" in unreachable.stderr


def test_openai_streaming_reports_ttft_and_tpot(out_dir):
    """--service-kind openai against the demo LLM: every stream ends with [DONE], carries
    the requested tokens, and TTFT <= latency."""
    repo = demo_repo()
    llm = next((m for m in sorted(os.listdir(repo))
                if os.path.isfile(os.path.join(repo, m, "config.pbtxt"))
                and 'backend: "llm"' in open(os.path.join(repo, m, "config.pbtxt")).read()), None)
    # A missing prerequisite is a failure, not a skip (ctest would count a skip as a pass).
    assert llm is not None, f"no LLM in the demo repository {repo}: run `make demo-models`"
    srv = InferaServer(repo, *EXTRA_PORTS, env={"OMP_WAIT_POLICY": "passive"})
    try:
        srv.wait_ready()
        report_path = os.path.join(out_dir, "r.json")
        result = run_bench(srv.port, "-m", llm, "--service-kind", "openai", "--input-tokens", "16",
                           "--output-tokens", "8", "--concurrency-range", "2", "--duration", "1",
                           "--json", report_path)
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.load(open(report_path))
        level = report["levels"][0]
        assert level["errors"] == 0 and level["ok"] > 0
        assert level["output_tokens"] == 8 * level["ok"]
        assert 0 < level["ttft"]["p50_us"] <= level["latency"]["max_us"]
        assert level["tpot"]["count"] == level["ok"]
        assert "TTFT p50" in result.stdout
        totals = report["totals"]
        assert totals["sent"] == totals["ok"] + totals["errors"]
    finally:
        srv.stop()


def bench_in_demo_parent(port, *args):
    """Runs bench from the folder holding the demo repository, so that its default image
    folder (demo-models/.images under the current directory) is the demo's photos."""
    repo = demo_repo()
    extra = [] if os.path.basename(repo) == "demo-models" else ["--images", os.path.join(repo, ".images")]
    return subprocess.run([BINARY, "bench", "-u", f"127.0.0.1:{port}", *FAST, *extra, *args],
                          capture_output=True, text=True, timeout=180, cwd=os.path.dirname(repo))


def test_image_pipeline_gets_the_demo_photos_by_default(server, out_dir):
    """The JPEG pipeline's BYTES input gets real images, not random bytes: no errors, and
    the output says which images."""
    report_path = os.path.join(out_dir, "r.json")
    result = bench_in_demo_parent(server.port, "-m", "resnet18_classify", "--duration", "1",
                                  "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.load(open(report_path))
    assert report["totals"]["ok"] > 0 and report["totals"]["errors"] == 0, report["totals"]
    assert "IMAGE: the 8 images of " in result.stdout and ".images" in result.stdout
    # Over gRPC too (the configuration comes from gRPC's ModelConfig).
    grpc = subprocess.run([BINARY, "bench", "-i", "grpc", "-u", f"127.0.0.1:{server.grpc_port}", *FAST,
                           "--images", os.path.join(demo_repo(), ".images"), "-m", "resnet18_classify",
                           "--duration", "0.5", "--json", report_path],
                          capture_output=True, text=True, timeout=180)
    assert grpc.returncode == 0, grpc.stdout + grpc.stderr
    assert json.load(open(report_path))["totals"]["errors"] == 0
    assert "IMAGE: the 8 images of " in grpc.stdout
    # Without any image folder: one clear line, not a run of failures.
    missing = run_bench(server.port, "-m", "resnet18_classify", "--images", os.path.join(out_dir, "none"))
    assert missing.returncode == 2 and missing.stderr.startswith("infera bench: --images: "), missing.stderr


def test_table_printed_once_with_labelled_client_cpu(server):
    result = run_bench(server.port, "-m", "simple", "--concurrency-range", "1:2", "--duration", "0.3")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("infera bench: model simple") == 1, out
    headers = [line for line in out.splitlines() if "p99" in line and "req/s" in line]
    assert len(headers) == 1, out
    assert "client cpu" in headers[0] and "client us/req" in headers[0]
    rows = [line for line in out.splitlines() if line.split() and line.split()[0] in ("1", "2")
            and len(line.split()) >= 12]
    assert [row.split()[0] for row in rows] == ["1", "2"], out  # each level's row once
    assert out.count("total:") == 1


def test_count_windows_and_verbose(server, out_dir):
    report_path = os.path.join(out_dir, "r.json")
    result = run_bench(server.port, "-m", "simple", "--measurement-mode", "count_windows",
                       "--measurement-request-count", "1000", "-p", "50", "-v", "--max-trials", "3",
                       "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    windows = [line for line in result.stderr.splitlines() if ": window " in line]
    assert windows, result.stderr
    for line in windows:  # "c=1: window 1: 0.412 s, 1003 ok + 0 errors, ..."
        ok, errors = line.split(", ")[1].split(" ok + ")
        assert int(ok) + int(errors.split()[0]) >= 1000, line
    level = json.load(open(report_path))["levels"][0]
    assert level["ok"] >= 1000 * level["windows"]


def test_string_data_sync_async_and_max_threads(server):
    result = run_bench(server.port, "-m", "text_embed", "--string-data", "The quick brown fox.",
                       "--sync", "--async", "--max-threads", "8", "--duration", "0.5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors" in result.stdout.split("total:")[1]
    notes = [line for line in result.stderr.splitlines() if "no effect" in line]
    assert len(notes) == 2, result.stderr  # once for --sync/--async, once for --max-threads
    assert all(line.startswith("infera bench: --") for line in notes)


def test_request_intervals_set_the_gaps(server, out_dir):
    gaps = os.path.join(out_dir, "gaps.txt")
    with open(gaps, "w") as f:
        f.write("5000\n15000\n")  # 10 ms on average: 100 requests/s
    report_path = os.path.join(out_dir, "r.json")
    result = run_bench(server.port, "-m", "simple", "--request-intervals", gaps,
                       "--measurement-interval", "1000", "--duration", "2", "--json", report_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"\nopen loop (request intervals from {gaps}); latency in ms" in result.stdout, result.stdout
    level = json.load(open(report_path))["levels"][0]
    assert level["request_rate"] == 100 and level["distribution"] == "intervals"
    assert level["send_rate_per_s"] == pytest.approx(100, rel=0.1)


def test_bad_flag_or_value_is_two_lines_and_exit_2(server):
    for args, problem in ((["-m", "simple", "--measurement-mode", "windows"],
                           "--measurement-mode: 'windows' must be time_windows or count_windows"),
                          (["-m", "simple", "--no-such-flag"], "unknown flag '--no-such-flag'"),
                          (["-m", "simple", "-b", "two"], "--batch-size: 'two' is not a number")):
        result = run_bench(server.port, *args)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 2, result.stderr
        assert lines[0].startswith(f"infera bench: {problem}"), lines[0]
        assert lines[1] == "see 'infera bench --help'"


def test_plot_names_with_equals_and_one_line_errors(tmp_path):
    """`infera bench plot` draws saved reports; a series named like analyze's configurations
    ("instances=1") works, and a bad argument is one line plus where to look."""
    report = {"levels": [
        {"concurrency": 1, "throughput_per_s": 100.0, "latency": {"p50_us": 900.0, "p99_us": 1500.0}},
        {"concurrency": 4, "throughput_per_s": 350.0, "latency": {"p50_us": 1100.0, "p99_us": 2400.0}},
    ]}
    (tmp_path / "a.json").write_text(json.dumps(report))
    out = tmp_path / "cmp.svg"
    result = subprocess.run([BINARY, "bench", "plot", "-o", str(out), "--title", "cmp",
                             f"instances=1={tmp_path}/a.json",
                             f"baseline={tmp_path}/a.json"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    svg = out.read_text()
    xml.dom.minidom.parseString(svg)  # well-formed
    for label in ("instances=1 P50", "instances=1 P99", "baseline P50", "baseline P99"):
        assert f">{label}</text>" in svg, label
    for bad in (["-o", str(out), "no-equals.json"], ["-o", str(out), f"x={tmp_path}/missing.json"], [],
                [f"x={tmp_path}/a.json"]):
        result = subprocess.run([BINARY, "bench", "plot", *bad], capture_output=True, text=True, timeout=30)
        assert result.returncode == 2, bad
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 2 and lines[0].startswith("infera bench plot: "), result.stderr
        assert lines[1] == "see 'infera bench --help'", result.stderr

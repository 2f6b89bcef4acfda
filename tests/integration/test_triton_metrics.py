"""Triton's metric families (nv_inference_*), black box: the names, types, help texts and
labels Triton core exports; after a few infer requests (batch 1 and 3, one refused) every
family equals what the statistics extension (/v2/models/simple/versions/1/stats) reports;
Triton-style dashboard queries evaluate through Prometheus' own engine (promtool test
rules); promtool's only lint findings on them are Triton's own naming; and docs/metrics.md
lists exactly the families exported.
"""

import json
import os
import re
import subprocess
import tempfile

import pytest

from infera_server import SIMPLE_CONFIG, InferaServer, metric_samples, write_model
from promtool_check import promtool_problems

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "simple"
LABELS = {"model": MODEL, "version": "1"}

# Triton core's families (src/metrics.cc): name -> (type, help).
TRITON_FAMILIES = {
    "nv_inference_request_success": ("counter", "Number of successful inference requests, all batch sizes"),
    "nv_inference_request_failure": ("counter", "Number of failed inference requests, all batch sizes"),
    "nv_inference_count": ("counter", "Number of inferences performed (does not include cached requests)"),
    "nv_inference_exec_count": ("counter", "Number of model executions performed (does not include cached requests)"),
    "nv_inference_request_duration_us": (
        "counter", "Cumulative inference request duration in microseconds (includes cached requests)"),
    "nv_inference_queue_duration_us": (
        "counter", "Cumulative inference queuing duration in microseconds (includes cached requests)"),
    "nv_inference_compute_input_duration_us": (
        "counter", "Cumulative compute input duration in microseconds (does not include cached requests)"),
    "nv_inference_compute_infer_duration_us": (
        "counter", "Cumulative compute inference duration in microseconds (does not include cached requests)"),
    "nv_inference_compute_output_duration_us": (
        "counter", "Cumulative inference compute output duration in microseconds (does not include cached requests)"),
    "nv_inference_pending_request_count": (
        "gauge", "Instantaneous number of pending requests awaiting execution per-model."),
}
REASONS = ("REJECTED", "CANCELED", "BACKEND", "OTHER")


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-triton-metrics-")
    write_model(repo, MODEL, SIMPLE_CONFIG)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def payload(rows, width=16):
    data = list(range(width)) * rows
    return json.dumps({"inputs": [
        {"name": "INPUT0", "shape": [rows, width], "datatype": "INT32", "data": data},
        {"name": "INPUT1", "shape": [rows, width], "datatype": "INT32", "data": data}]}).encode()


def triton_samples(text):
    """{(name, reason or None): value} of the nv_ samples of simple/1."""
    found = {}
    for name, labels, value in metric_samples(text):
        if name.startswith("nv_") and labels.get("model") == MODEL and labels.get("version") == "1":
            assert set(labels) - {"model", "version"} <= {"reason"}, (name, labels)
            found[(name, labels.get("reason"))] = value
    return found


def stats(server):
    status, _, body = server.request("GET", f"/v2/models/{MODEL}/versions/1/stats")
    assert status == 200, body
    (model,) = json.loads(body)["model_stats"]
    return model


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def test_families_have_tritons_names_types_help_and_labels(server):
    text = server.metrics_text()
    for name, (kind, help_text) in TRITON_FAMILIES.items():
        assert f"# TYPE {name} {kind}\n" in text, name
        assert f"# HELP {name} {help_text}\n" in text, name
    samples = triton_samples(text)
    for reason in REASONS:  # every reason exists from the start, as in Triton
        assert ("nv_inference_request_failure", reason) in samples, reason
    for name in TRITON_FAMILIES:
        if name != "nv_inference_request_failure":
            assert (name, None) in samples, name


def test_families_equal_the_statistics_extension(server, tmp_path):
    before = triton_samples(server.metrics_text())
    for rows in (1, 1, 3, 1, 2):
        status, _, body = server.infer(MODEL, payload(rows))
        assert status == 200, body
    status, _, body = server.infer(MODEL, payload(1, width=5))  # wrong shape: refused
    assert status == 400, body
    after = triton_samples(server.metrics_text())
    s = stats(server)
    infer = s["inference_stats"]

    assert after[("nv_inference_request_success", None)] == infer["success"]["count"]
    assert after[("nv_inference_count", None)] == s["inference_count"]
    assert after[("nv_inference_exec_count", None)] == s["execution_count"]
    failures = sum(after[("nv_inference_request_failure", r)] for r in REASONS)
    assert failures == infer["fail"]["count"] == 1
    assert after[("nv_inference_request_failure", "OTHER")] == 1  # a bad request is Triton's OTHER
    for family, stage in (("nv_inference_request_duration_us", "success"), ("nv_inference_queue_duration_us", "queue"),
                          ("nv_inference_compute_input_duration_us", "compute_input"),
                          ("nv_inference_compute_infer_duration_us", "compute_infer"),
                          ("nv_inference_compute_output_duration_us", "compute_output")):
        assert close(after[(family, None)], infer[stage]["ns"] / 1000), (family, after[(family, None)], infer[stage])
    assert after[("nv_inference_pending_request_count", None)] == 0  # nothing queued now

    # What this test sent, counted exactly (the module's other tests sent no inference).
    delta = {k: v - before[k] for k, v in after.items()}
    assert delta[("nv_inference_request_success", None)] == 5
    assert delta[("nv_inference_count", None)] == 8
    assert delta[("nv_inference_request_duration_us", None)] > 0

    promql_rules_test(tmp_path, before, after)


def promql_rules_test(tmp_path, before, after):
    """Triton dashboard queries over the scraped change, evaluated by Prometheus' engine."""
    series = []
    for (name, reason), value in sorted(after.items(), key=str):
        labels = dict(LABELS, **({"reason": reason} if reason else {}))
        label_text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        # 30 s apart: the value before, twice, then after (a gauge: its value throughout).
        start = value if name == "nv_inference_pending_request_count" else before[(name, reason)]
        series.append({"series": f"{name}{{{label_text}}}", "values": f"{start!r} {start!r} {value!r}"})

    def delta(name, reason=None):
        return after[(name, reason)] - before[(name, reason)]

    def within(expr, expected):
        low, high = expected * (1 - 1e-9), expected * (1 + 1e-9)
        return {"expr": f"({expr} >= bool {low!r}) * ({expr} <= bool {high!r})", "eval_time": "1m",
                "exp_samples": [{"labels": "{}", "value": 1}]}

    success = after[("nv_inference_request_success", None)]
    queue_us = after[("nv_inference_queue_duration_us", None)]
    window_us = delta("nv_inference_request_duration_us")
    tests = [{"interval": "30s", "input_series": series, "promql_expr_test": [
        # Triton's dashboards: request rate, average queue time per request (lifetime and
        # over the window), inference rate, failures by reason.
        within(f'sum(rate(nv_inference_request_success{{model="{MODEL}"}}[1m]))',
               delta("nv_inference_request_success") / 60),
        within('sum(nv_inference_queue_duration_us / nv_inference_request_success)', queue_us / success),
        within(f'sum(rate(nv_inference_request_duration_us{{model="{MODEL}"}}[1m]) / '
               f'rate(nv_inference_request_success{{model="{MODEL}"}}[1m]))',
               window_us / delta("nv_inference_request_success")),
        within('sum(rate(nv_inference_count[1m]))', delta("nv_inference_count") / 60),
        {"expr": 'sum by (reason) (increase(nv_inference_request_failure[1m]))', "eval_time": "1m",
         "exp_samples": [{"labels": f'{{reason="{r}"}}', "value": delta("nv_inference_request_failure", r)}
                         for r in sorted(REASONS)]},
        {"expr": f'nv_inference_pending_request_count{{model="{MODEL}"}}', "eval_time": "1m",
         "exp_samples": [{"labels": f'nv_inference_pending_request_count{{model="{MODEL}",version="1"}}',
                          "value": 0}]},
    ]}]
    path = tmp_path / "triton_dashboard_test.yml"
    path.write_text(json.dumps({"rule_files": [], "evaluation_interval": "30s", "tests": tests}))
    check = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_promtool_finds_only_tritons_naming(server):
    assert promtool_problems(server.metrics_text()) == []


def test_docs_list_exactly_the_triton_families_exported(server):
    with open(os.path.join(ROOT, "docs", "metrics.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Triton's families"):]
    section = section[:section.index("\n## ", 1)]
    documented = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `nv_"):
            documented[re.match(r"`(nv_[a-z_]+)", cells[0]).group(1)] = cells[1]
    exported = {name: kind for name, kind in
                (line.split(" ")[2:4] for line in server.metrics_text().splitlines() if line.startswith("# TYPE nv_"))}
    assert documented == exported


def test_tritons_latency_summaries_with_custom_quantiles():
    """Triton's --metrics-config summary_latencies=true + summary_quantiles (its qa
    metrics_config_test: the *_summary families exist, each configured quantile is
    exported): one observation per request, microseconds; histogram_latencies is
    accepted with a warning naming it."""
    repo = tempfile.mkdtemp(prefix="infera-triton-metrics-config-")
    write_model(repo, MODEL, SIMPLE_CONFIG)
    s = InferaServer(repo, "--metrics-config=summary_latencies=true",
                     "--metrics-config", "summary_quantiles=0.2:0.05,0.7:0.01",
                     "--metrics-config=histogram_latencies=true")
    try:
        s.wait_ready()
        log = s.log()
        assert "--metrics-config histogram_latencies=true: accepted for Triton compatibility and not acted on" in log
        assert "summary_latencies=true: accepted" not in log
        for _ in range(3):
            status, _, body = s.infer(MODEL, payload(1))
            assert status == 200, body
        text = s.metrics_text()
        assert "nv_inference_request_duration_us" in text  # the counters stay
        samples = {(name, labels.get("quantile")): value for name, labels, value in metric_samples(text)
                   if labels.get("model") == MODEL}
        for family in ("nv_inference_request_summary_us", "nv_inference_queue_summary_us",
                       "nv_inference_compute_input_summary_us", "nv_inference_compute_infer_summary_us",
                       "nv_inference_compute_output_summary_us"):
            assert f"# TYPE {family} summary\n" in text, family
            assert samples[(family + "_count", None)] == 3, family
            for quantile in ("0.2", "0.7"):
                assert (family, quantile) in samples, (family, quantile)
            assert (family, "0.5") not in samples, family
        assert samples[("nv_inference_request_summary_us_sum", None)] > 0
        # Triton's names carry the type ("..._summary_us"), which promtool's lint flags;
        # anything else it finds is ours.
        assert [p for p in promtool_problems(text) if "should not include type 'summary'" not in p] == []
    finally:
        s.stop()


def test_unknown_metrics_config_key_is_refused_in_one_line(tmp_path):
    result = subprocess.run([os.environ["INFERA_BINARY"], "serve", "--model-repository", str(tmp_path),
                             "--metrics-config=no_such_key=1"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "unknown key" in result.stderr and "--metrics-config" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2, result.stderr

"""Operator assets: Prometheus rules (promtool check + unit tests), the Grafana dashboard
(static checks) and the autoscaling queries (prometheus-adapter, KEDA)."""

import glob
import json
import os
import subprocess
import sys

import pytest
import yaml

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_checks as dc  # noqa: E402

RULE_TESTS = sorted(glob.glob(os.path.join(dc.MONITORING, "tests", "*.yml")))


@pytest.fixture(scope="module")
def doc():
    return dc.MetricsDoc()


@pytest.fixture(scope="module")
def recorded():
    return dc.load_rules()[0]


def test_promtool_check_rules():
    proc = subprocess.run([dc.promtool(), "check", "rules", *dc.RULE_FILES],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_promtool_unit_tests():
    assert RULE_TESTS, "no promtool unit tests in deploy/monitoring/tests"
    proc = subprocess.run([dc.promtool(), "test", "rules", *RULE_TESTS],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_rule_tests_that_read_recording_rules_fix_the_group_order():
    """promtool evaluates groups in random order unless group_eval_order is given; an
    alert that reads a recording rule then sees this step's value or the previous one,
    and its test passes or fails by chance. Every test file that loads alerts must list
    every group, recording groups first."""
    for path in RULE_TESTS:
        with open(path) as f:
            test = yaml.safe_load(f)
        groups, alert_groups = [], set()
        for rule_file in test["rule_files"]:
            with open(os.path.join(os.path.dirname(path), rule_file)) as f:
                for g in yaml.safe_load(f)["groups"]:
                    groups.append(g["name"])
                    if any("alert" in r for r in g["rules"]):
                        alert_groups.add(g["name"])
        if not alert_groups:
            continue  # recording rules only: no rule reads another group's output
        order = test.get("group_eval_order", [])
        assert sorted(order) == sorted(groups), f"{path}: group_eval_order must list {groups}"
        last_recording = max(i for i, g in enumerate(order) if g not in alert_groups)
        first_alert = min(i for i, g in enumerate(order) if g in alert_groups)
        assert last_recording < first_alert, f"{path}: recording groups must come first"


def test_every_alert_is_tested_firing_and_quiet():
    with open(dc.RULE_FILES[1]) as f:
        alerts = {r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r}
    fires, quiet = set(), set()
    for path in RULE_TESTS:
        with open(path) as f:
            for test in yaml.safe_load(f).get("tests", []):
                for case in test.get("alert_rule_test", []):
                    (fires if case.get("exp_alerts") else quiet).add(case["alertname"])
    assert alerts, "no alerts found"
    assert not alerts - fires, f"alerts never tested firing: {sorted(alerts - fires)}"
    assert not alerts - quiet, f"alerts never tested quiet: {sorted(alerts - quiet)}"
    for required in ("InferaP99LatencyOverSLO", "InferaErrorRateHigh", "InferaQueueGrowing",
                     "InferaServerNotReady"):
        assert required in alerts


def test_rules_use_documented_metrics_and_labels(doc):
    problems = dc.check_rule_files(dc.RULE_FILES, doc)
    assert not problems, "\n".join(problems)


def test_dashboard_is_what_the_generator_writes(tmp_path):
    out = tmp_path / "dashboard.json"
    subprocess.run([sys.executable, os.path.join(dc.MONITORING, "grafana", "generate_dashboard.py"),
                    str(out)], check=True)
    with open(dc.DASHBOARD) as f:
        committed = f.read()
    assert out.read_text() == committed, (
        "deploy/monitoring/grafana/infera-dashboard.json is stale: run "
        "/usr/bin/python3 deploy/monitoring/grafana/generate_dashboard.py")


def test_dashboard_queries_parse_and_name_real_metrics(doc, recorded):
    problems = dc.check_dashboard(dc.DASHBOARD, doc, recorded)
    assert not problems, "\n".join(problems)


def test_dashboard_covers_the_operator_questions():
    with open(dc.DASHBOARD) as f:
        dashboard = json.load(f)
    exprs = " ".join(e for _, e in dc.dashboard_expressions(dashboard))
    for needle in ("infera_requests_total", "histogram_quantile(0.5", "histogram_quantile(0.95",
                   "histogram_quantile(0.99", "outcome", "infera_queue_depth",
                   "infera_batch_size_bucket", "infera_load_ratio",
                   "infera_llm_time_to_first_token_seconds_bucket",
                   "infera_llm_inter_token_latency_seconds_bucket",
                   "infera_llm_generation_tokens_total", "infera_llm_kv_cache_usage_ratio"):
        assert needle in exprs, f"no panel queries {needle}"
    names = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "model"} <= names


def test_adapter_queries_parse_and_read_recording_rules(doc, recorded):
    queries = dc.adapter_queries()
    problems = dc.promtool_parse(queries)
    for where, expr in queries:
        problems += dc.check_expression(where, expr, doc, recorded)
    for name, series in dc.adapter_metric_names().items():
        if series not in recorded:
            problems.append(f"adapter metric {name} reads {series}, which no rule records")
    assert not problems, "\n".join(problems)
    assert set(dc.adapter_metric_names()) == {
        "infera_load_ratio", "infera_queue_depth", "infera_request_duration_seconds_p95"}


def test_autoscaling_target_is_one_number(recorded):
    assert dc.load_ratio_constant(recorded) == 0.7

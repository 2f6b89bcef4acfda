"""Planted errors: each check must fail on a fixture that breaks exactly what it guards
(tests/deploy/fixtures). Without these, a check that silently accepts everything would
look like a pass."""

import os
import subprocess
import sys

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_checks as dc  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
K8S = os.path.join(FIXTURES, "k8s")
MON = os.path.join(FIXTURES, "monitoring")

# fixture -> (the check that must catch it, text its report must contain)
K8S_CASES = {
    "typo-field": ("strict", "readinesProbe"),
    "keda-typo": ("strict", "minReplicas"),
    "wrong-type": ("schema", "/spec/replicas must be integer"),
    "missing-required": ("schema", "must have required property"),
    "unknown-kind": ("schema", "no schema for apiVersion v1 kind Servise"),
    "grace-too-short": ("consistency", "terminationGracePeriodSeconds 20 < preStop 5"),
    "unknown-flag": ("consistency", "--http-prot is not a flag of `infera serve --help`"),
    "wrong-probe-path": ("consistency", "readinessProbe path /healthz"),
    "wrong-probe-port": ("consistency", "livenessProbe port 8080 is not the HTTP port 8000"),
    "not-guaranteed": ("consistency", "cpu request 4 != limit 8"),
    "threads-over-limit": ("consistency", "--http-thread-count 16 > CPU limit 4"),
    "writable-root": ("consistency", "readOnlyRootFilesystem must be true"),
    "root-user": ("consistency", "runAsUser must be a non-zero uid"),
    "netpol-open": ("consistency", "it admits every pod in the cluster"),
    "tls-subpath": ("consistency", "it would never see a rotated Secret"),
    "tls-plain-probe": ("consistency", "readinessProbe must use scheme HTTPS"),
    "hpa-plus-keda": ("consistency", "is already scaled by"),
    "keda-wrong-namespace": ("consistency", "selects namespace 'infera' but the ScaledObject is in 'prod'"),
    "hpa-unknown-metric": ("consistency", "infera_queue_length is not exposed by the prometheus-adapter"),
    "both-components": ("render", "Unable to remove nonexistent key"),
}


def test_every_fixture_has_a_case():
    assert sorted(os.listdir(K8S)) == sorted(K8S_CASES)


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("planted")
    results = {}
    for name, (check, _) in K8S_CASES.items():
        if check == "render":
            continue
        objects, text = dc.render(os.path.join(K8S, name))
        path = out_dir / f"{name}.yaml"
        path.write_text(text)
        results[name] = (objects, str(path))
    return results


@pytest.fixture(scope="module")
def validator_reports(renders):
    """One validator run over every fixture (schema and strict checks both run; each
    report line names its check): {fixture: report lines}."""
    _, out = dc.run_validator([path for _, path in renders.values()])
    return {name: [line for line in out.splitlines() if line.startswith(path + ":")]
            for name, (_, path) in renders.items()}


@pytest.fixture(scope="module")
def truth():
    recorded, _ = dc.load_rules()
    return dc.serve_help(), dc.MetricsDoc(), recorded


@pytest.mark.parametrize("name", sorted(K8S_CASES))
def test_planted_manifest_error_is_caught(name, renders, validator_reports, truth):
    check, expected = K8S_CASES[name]
    if check == "render":
        with pytest.raises(RuntimeError, match=expected):
            dc.render(os.path.join(K8S, name))
        return
    if check in ("schema", "strict"):
        lines = validator_reports[name]
        report = [line for line in lines if f": {check}: " in line or "no schema" in line]
        assert any(expected in line for line in report), \
            f"{check} check did not report {expected!r} for {name}: {lines}"
        if check == "strict":
            # The JSON schema alone lets an unknown field through: the strict check is
            # what catches it.
            assert not [line for line in lines if ": schema: " in line], lines
        return
    objects, _ = renders[name]
    problems = dc.check_render(objects, *truth)
    assert any(expected in p for p in problems), \
        f"consistency check did not report {expected!r} for {name}: {problems}"


def test_promtool_rejects_bad_promql():
    proc = subprocess.run([dc.promtool(), "check", "rules", os.path.join(MON, "bad-promql-rules.yml")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "could not parse expression" in proc.stdout + proc.stderr


def test_unknown_metric_passes_promtool_but_not_the_name_check():
    path = os.path.join(MON, "unknown-metric-rules.yml")
    assert subprocess.run([dc.promtool(), "check", "rules", path], capture_output=True).returncode == 0
    problems = dc.check_rule_files([path], dc.MetricsDoc())
    assert any("infera_request_latency_seconds_bucket is neither in docs/metrics.md" in p
               for p in problems), problems


def test_label_checks_catch_typos():
    problems = dc.check_rule_files([os.path.join(MON, "bad-label-rules.yml")], dc.MetricsDoc())
    assert any("outcome 'error' is not one of" in p for p in problems), problems
    assert any("grouping label 'modle'" in p for p in problems), problems


@pytest.mark.parametrize("name", ["alert-fires-wrongly-test.yml", "alert-quiet-wrongly-test.yml"])
def test_promtool_unit_test_fails_on_a_wrong_expectation(name):
    proc = subprocess.run([dc.promtool(), "test", "rules", os.path.join(MON, name)],
                          capture_output=True, text=True)
    assert proc.returncode != 0, proc.stdout
    assert "FAILED" in proc.stdout + proc.stderr


@pytest.mark.parametrize("name,expected", [
    ("dashboard-bad-expr.json", "could not parse expression"),
    ("dashboard-unknown-metric.json", "infera_request_count_total is neither in docs/metrics.md"),
    ("dashboard-no-le.json", "must keep `le`"),
    ("dashboard-unknown-variable.json", "unknown dashboard variable $modle"),
])
def test_dashboard_check_catches(name, expected):
    recorded, _ = dc.load_rules()
    problems = dc.check_dashboard(os.path.join(MON, name), dc.MetricsDoc(), recorded)
    assert any(expected in p for p in problems), problems

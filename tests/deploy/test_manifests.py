"""Kubernetes manifests: every kustomization renders, every rendered object passes the
JSON schema of its apiVersion/kind and the strict unknown-field check, and the manifests
agree with what infera serves (deploy_checks.py has the rules)."""

import os
import sys

import pytest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deploy_checks as dc  # noqa: E402

KUSTOMIZATIONS = dc.kustomizations()
K8S_KUSTOMIZATIONS = [k for k in KUSTOMIZATIONS if k.startswith(dc.K8S + os.sep)]


def rel(path):
    return os.path.relpath(path, dc.ROOT)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("rendered")
    rendered = {}
    for k in KUSTOMIZATIONS:
        objects, text = dc.render(k)
        path = out_dir / (rel(k).replace(os.sep, "_") + ".yaml")
        path.write_text(text)
        rendered[k] = (objects, str(path))
    return rendered


@pytest.fixture(scope="module")
def truth():
    doc = dc.MetricsDoc()
    recorded, _ = dc.load_rules()
    return dc.serve_help(), doc, recorded


def kinds(objects):
    return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objects)


def test_the_expected_kustomizations_exist():
    names = {rel(k) for k in KUSTOMIZATIONS}
    for expected in ("deploy/k8s/base", "deploy/k8s/overlays/cpu", "deploy/k8s/overlays/gpu",
                     "deploy/k8s/overlays/cpu-hpa", "deploy/k8s/overlays/cpu-keda",
                     "deploy/k8s/overlays/gpu-keda", "deploy/k8s/overlays/demo",
                     "deploy/k8s/overlays/cpu-secure",
                     "deploy/k8s/prometheus-adapter", "deploy/monitoring"):
        assert expected in names, f"{expected} is not a kustomization ({sorted(names)})"


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS, ids=rel)
def test_renders(kustomization, rendered):
    objects, _ = rendered[kustomization]
    assert objects, f"{rel(kustomization)} renders nothing"


def test_base_has_every_object(rendered):
    objects, _ = rendered[os.path.join(dc.K8S, "base")]
    found = {o["kind"] for o in objects}
    for kind in ("Deployment", "Service", "ConfigMap", "ServiceAccount", "PodDisruptionBudget",
                 "PriorityClass", "NetworkPolicy"):
        assert kind in found, f"base has no {kind}: {kinds(objects)}"
    ports = {p["port"] for o in objects if o["kind"] == "Service" for p in o["spec"]["ports"]}
    assert {8000, 8001, 8002} <= ports


def test_overlays_differ_where_they_should(rendered):
    def deployment(name):
        objects, _ = rendered[os.path.join(dc.K8S, "overlays", name)]
        return next(o for o in objects if o["kind"] == "Deployment")
    gpu = deployment("gpu")["spec"]["template"]["spec"]
    assert gpu["runtimeClassName"] == "nvidia"
    assert gpu["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    cpu = deployment("cpu")["spec"]["template"]["spec"]
    assert "runtimeClassName" not in cpu
    assert not any(k.startswith("nvidia.com/") for k in cpu["containers"][0]["resources"]["limits"])
    for name, kind in (("cpu-hpa", "HorizontalPodAutoscaler"), ("cpu-keda", "ScaledObject"),
                       ("gpu-keda", "ScaledObject")):
        objects, _ = rendered[os.path.join(dc.K8S, "overlays", name)]
        assert kind in {o["kind"] for o in objects}, name
        assert "replicas" not in next(o for o in objects if o["kind"] == "Deployment")["spec"]


def test_every_object_passes_schema_and_strict_checks(rendered):
    code, out = dc.run_validator([path for _, path in rendered.values()])
    assert code == 0, out
    count = sum(len(objects) for objects, _ in rendered.values())
    assert f"{count} object(s), schema+strict: ok" in out, out


@pytest.mark.parametrize("kustomization", K8S_KUSTOMIZATIONS, ids=rel)
def test_consistent_with_infera(kustomization, rendered, truth):
    objects, _ = rendered[kustomization]
    help_flags, doc, recorded = truth
    problems = dc.check_render(objects, help_flags, doc, recorded)
    assert not problems, "\n".join(problems)


def test_drain_budget_matches_infera_defaults(truth):
    """The manifests' arithmetic relies on flags infera has; their defaults are what the
    check assumes when a flag is left out."""
    help_flags, _, _ = truth
    for flag in ("exit-timeout-secs", "http-port", "grpc-port", "metrics-port", "http-thread-count",
                 "model-repository"):
        assert flag in help_flags, f"infera serve --help no longer lists --{flag}"
    assert help_flags["http-port"] == 8000 and help_flags["grpc-port"] == 8001
    assert help_flags["metrics-port"] == 8002


def test_dockerfile_matches_the_manifests(truth):
    """The image and the Deployment make the same assumptions: user, ports, stop signal,
    entrypoint, health path, OpenMP policy."""
    help_flags, doc, _ = truth
    with open(os.path.join(dc.ROOT, "Dockerfile")) as f:
        text = f.read()
    with open(os.path.join(dc.ROOT, ".dockerignore")) as f:
        ignore = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert ignore[0] == "*", ".dockerignore must exclude everything, then whitelist"
    lines = [line.strip() for line in text.replace("\\\n", " ").splitlines()]
    last_stage = lines[max(i for i, l in enumerate(lines) if l.startswith("FROM ")):]
    directive = {l.split()[0]: l for l in last_stage if l and not l.startswith("#")}
    assert directive["USER"] == "USER 10001:10001"
    assert directive["STOPSIGNAL"] == "STOPSIGNAL SIGTERM"
    assert directive["ENTRYPOINT"] == 'ENTRYPOINT ["infera", "serve"]'
    assert f"http://127.0.0.1:{help_flags['http-port']}{doc.live_path}" in directive["HEALTHCHECK"]
    assert "OMP_WAIT_POLICY=passive" in directive["ENV"]
    ports = set(directive["EXPOSE"].split()[1:])
    assert {str(help_flags[p]) for p in ("http-port", "grpc-port", "metrics-port")} <= ports
    objects, _ = dc.render(os.path.join(dc.K8S, "base"))
    pod = next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 10001
    assert pod["securityContext"]["runAsGroup"] == 10001

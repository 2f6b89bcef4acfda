#!/usr/bin/python3
"""Offline checks of infera's deployment assets (no cluster, no Prometheus server).

Library for the pytest files beside it, and a command line for checking one thing by
hand:

    deploy_checks.py render DIR                 kubectl kustomize DIR, print the objects
    deploy_checks.py consistency DIR...         manifests vs `infera serve --help` and
                                                docs/metrics.md (probes, ports, grace
                                                period, flags, QoS, threads, security,
                                                autoscaling)
    deploy_checks.py dashboard FILE.json        JSON, PromQL (promtool), metric and label
                                                names against docs/metrics.md
    deploy_checks.py promql FILE.yml...         rule files: metric and label names

Exit status 1 and one line per problem when something is wrong.

Sources of truth: the infera binary (`serve --help`: flags and their defaults),
docs/metrics.md (metric names, types, labels, probe paths), the recording rules in
deploy/monitoring/prometheus, the prometheus-adapter rules in deploy/k8s/prometheus-adapter.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

from security_checks import check_network_policies, check_secret_files

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
K8S = os.path.join(ROOT, "deploy", "k8s")
MONITORING = os.path.join(ROOT, "deploy", "monitoring")
METRICS_DOC = os.path.join(ROOT, "docs", "metrics.md")
RULE_FILES = [os.path.join(MONITORING, "prometheus", "infera-recording-rules.yml"),
              os.path.join(MONITORING, "prometheus", "infera-alerts.yml")]
ADAPTER_CONFIG = os.path.join(K8S, "prometheus-adapter", "config.yaml")
DASHBOARD = os.path.join(MONITORING, "grafana", "infera-dashboard.json")

# Labels Prometheus adds when it scrapes through Kubernetes discovery / a ServiceMonitor.
TARGET_LABELS = {"namespace", "pod", "job", "instance", "container", "service", "endpoint", "node"}
# The autoscalers' utilisation target: the HPA's load-ratio averageValue, KEDA's
# threshold and the constant in namespace:infera_replicas_needed:ceil must agree.
LOAD_RATIO_METRIC = "infera_load_ratio"


# --------------------------------------------------------------------------------------
# Rendering


def kubectl():
    path = shutil.which("kubectl")
    if not path:
        raise RuntimeError("kubectl not found (v1.32 with kustomize is expected on PATH)")
    return path


def render(directory):
    """`kubectl kustomize DIR` -> list of objects. Raises RuntimeError with kustomize's
    message when it fails."""
    proc = subprocess.run([kubectl(), "kustomize", directory], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {os.path.relpath(directory, ROOT)} failed: "
                           f"{proc.stderr.strip()}")
    return [o for o in yaml.safe_load_all(proc.stdout) if o], proc.stdout


def kustomizations():
    """Every directory under deploy/ that renders on its own (not components)."""
    found = []
    for base in (os.path.join(ROOT, "deploy", "k8s"), MONITORING):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
            if "kustomization.yaml" not in filenames:
                continue
            with open(os.path.join(dirpath, "kustomization.yaml")) as f:
                kind = (yaml.safe_load(f) or {}).get("kind", "Kustomization")
            if kind == "Kustomization":
                found.append(dirpath)
    return sorted(found)


def run_validator(files, mode=None):
    """deploy/tools/validate_k8s.mjs over rendered YAML files -> (exit code, output)."""
    node = shutil.which("node")
    if not node:
        raise RuntimeError("node not found (Node >= 18; scripts/install_deps.sh installs it)")
    modules = os.path.join(ROOT, "deploy", "node_modules")
    if not os.path.isdir(os.path.join(modules, "kubernetes-models")):
        raise RuntimeError("deploy/node_modules is missing: run tests/deploy/npm_install.sh")
    cmd = [node, os.path.join(ROOT, "deploy", "tools", "validate_k8s.mjs")]
    if mode:
        cmd.append(mode)
    proc = subprocess.run(cmd + list(files), capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------
# Sources of truth


def infera_binary():
    path = os.environ.get("INFERA_BINARY") or os.path.join(ROOT, "build", "infera")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"infera binary not found at {path} (make build, or set INFERA_BINARY)")
    return path


def parse_serve_help(text):
    """`infera serve --help` -> {flag: default or None}. A flag's line starts "  --NAME"
    (two spaces); its description may go on over lines indented deeper."""
    descriptions = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^  --([a-z0-9][a-z0-9-]*)(?:\s+(\S+))?(?:\s{2,}(.*))?$", line)
        if m:
            current = m.group(1)
            descriptions[current] = m.group(3) or ""
        elif current and re.match(r"^ {4,}\S", line):
            descriptions[current] += " " + line.strip()
        else:
            current = None
    flags = {}
    for flag, description in descriptions.items():
        default = re.search(r"Default:?\s+(\d+)(?=\.?(?:\s|$))", description)
        flags[flag] = int(default.group(1)) if default else None
    return flags


def serve_help(binary=None):
    proc = subprocess.run([binary or infera_binary(), "serve", "--help"],
                          capture_output=True, text=True, timeout=60)
    text = proc.stdout + proc.stderr
    flags = parse_serve_help(text)
    if not flags:
        raise RuntimeError(f"no flags found in `infera serve --help`:\n{text}")
    return flags


class MetricsDoc:
    """What docs/metrics.md promises: metric names, types, labels, outcomes, probes."""

    def __init__(self, path=METRICS_DOC):
        with open(path) as f:
            text = f.read()
        self.metrics = {}  # exposed series name -> set of labels
        self.types = {}    # documented name -> type
        self.outcomes = set()
        section_labels = set()
        for line in text.splitlines():
            heading = re.match(r"^##\s+(.*)", line)
            if heading:
                section_labels = set(re.findall(r"`([a-z_]+)`", heading.group(1))) \
                    if "label" in heading.group(1) else set()
                continue
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2:
                continue
            names = re.findall(r"`([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?`", cells[0])
            mtype = cells[1].split()[0] if cells[1] else ""
            for name, labels in names:
                if not (name.startswith("infera_") or name.startswith("process_")):
                    continue
                extra = set(re.findall(r"[a-z_]+", labels)) if labels else set()
                base = section_labels | extra
                self.types[name] = mtype
                if mtype == "histogram":
                    self.metrics[name + "_bucket"] = base | {"le"}
                    self.metrics[name + "_sum"] = set(base)
                    self.metrics[name + "_count"] = set(base)
                else:
                    self.metrics[name] = set(base)
                if "outcome" in extra and len(cells) > 2:
                    self.outcomes = set(re.findall(r"`([a-z_]+)`", cells[2]))
        live = re.search(r"Liveness\s+`GET\s+(/\S+)`", text)
        ready = re.search(r"[Rr]eadiness\s+`GET\s+(/\S+)`", text)
        if not (live and ready and self.metrics):
            raise RuntimeError(f"{path}: could not find the metrics tables and probe paths")
        self.live_path = live.group(1)
        self.ready_path = ready.group(1)
        self.all_labels = set().union(*self.metrics.values()) | TARGET_LABELS


# --------------------------------------------------------------------------------------
# PromQL: a tokenizer good enough to find selectors, label names and matchers


TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<number>0x[0-9a-fA-F]+|(?:[0-9]+(?:ms|s|m|h|d|w|y))+|[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){}\[\],@])
""", re.X)
LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "start", "end"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}


def tokenize(expr):
    tokens, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot tokenize at {expr[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup in ("ws", "comment"):
            continue
        tokens.append((m.lastgroup, m.group()))
    return tokens


def _unquote(s):
    return s[1:-1]


def analyse(expr):
    """-> (selectors, grouping labels). selectors: [(metric name or None, [(label, op, value)])]."""
    toks = tokenize(expr)
    selectors, grouping = [], []
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else None
        if kind == "ident" and text.lower() in LABEL_LIST_KEYWORDS:
            if nxt == "(":
                j = i + 2
                while j < len(toks) and toks[j][1] != ")":
                    if toks[j][0] == "ident":
                        grouping.append(toks[j][1])
                    j += 1
                i = j + 1
                continue
            i += 1
            continue
        if kind == "ident" and text.lower() in KEYWORDS:
            i += 2 if text.lower() == "offset" else 1
            continue
        if kind == "ident" and (nxt == "(" or text in AGGREGATIONS):
            i += 1  # a function or aggregation (`sum by (x) (...)` puts `by` first)
            continue
        if text == "[":
            while i < len(toks) and toks[i][1] != "]":
                i += 1
            i += 1
            continue
        if kind == "ident" or text == "{":
            name = text if kind == "ident" else None
            matchers = []
            j = i + 1 if kind == "ident" else i
            if j < len(toks) and toks[j][1] == "{":
                j += 1
                while j < len(toks) and toks[j][1] != "}":
                    if toks[j][0] == "ident" and j + 2 < len(toks) and toks[j + 2][0] == "string":
                        matchers.append((toks[j][1], toks[j + 1][1], _unquote(toks[j + 2][1])))
                        j += 3
                        continue
                    j += 1
                j += 1
            if name is None:
                name = next((v for label, op, v in matchers if label == "__name__" and op == "="), None)
            selectors.append((name, matchers))
            i = j
            continue
        i += 1
    return selectors, grouping


def check_expression(where, expr, doc, recorded):
    """Metric and label names of one expression against docs/metrics.md and the
    recording rules `recorded` ({name: labels or None})."""
    problems = []
    try:
        selectors, grouping = analyse(expr)
    except ValueError as e:
        return [f"{where}: {e}"]
    known_labels = doc.all_labels | {"le"}
    for name, matchers in selectors:
        if name is None:
            continue
        if name in doc.metrics:
            allowed = doc.metrics[name] | TARGET_LABELS
        elif name in recorded:
            allowed = known_labels
        else:
            problems.append(f"{where}: metric {name} is neither in docs/metrics.md nor a "
                            f"recording rule")
            continue
        for label, op, value in matchers:
            if label == "__name__":
                continue
            if label not in allowed:
                problems.append(f"{where}: {name} has no label {label!r}")
            if label == "outcome" and doc.outcomes and op in ("=", "!=", "=~", "!~"):
                words = re.split(r"\|", value) if op in ("=~", "!~") else [value]
                for w in words:
                    if re.fullmatch(r"[a-z_]+", w) and w not in doc.outcomes:
                        problems.append(f"{where}: outcome {w!r} is not one of "
                                        f"{sorted(doc.outcomes)}")
    for label in grouping:
        if label not in known_labels:
            problems.append(f"{where}: grouping label {label!r} is on no documented metric")
    if "histogram_quantile" in expr:
        for name, _ in selectors:
            if name and name.endswith("_bucket") and "le" not in grouping:
                problems.append(f"{where}: histogram_quantile over {name} must keep `le` in "
                                f"its aggregation (sum by (le, ...))")
    return problems


def promtool():
    path = shutil.which("promtool")
    if not path:
        raise RuntimeError("promtool not found (Debian package prometheus; scripts/install_deps.sh)")
    return path


def promtool_parse(named_exprs):
    """Parses every expression with promtool (as recording rules in a scratch file).
    named_exprs: [(where, expr)] -> problems naming `where`."""
    if not named_exprs:
        return []
    groups = [{"name": f"g{i}", "rules": [{"record": f"check:expr_{i}", "expr": expr}]}
              for i, (_, expr) in enumerate(named_exprs)]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump({"groups": groups}, f, sort_keys=False)
        path = f.name
    try:
        proc = subprocess.run([promtool(), "check", "rules", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if proc.returncode == 0:
        return []
    problems = []
    out = proc.stdout + proc.stderr
    for m in re.finditer(r'group "g(\d+)", rule \d+, "check:expr_\d+": (.*)', out):
        where, expr = named_exprs[int(m.group(1))]
        problems.append(f"{where}: {m.group(2).strip()}  [{expr.strip()}]")
    if not problems:
        problems.append(f"promtool check rules failed: {out.strip()}")
    return problems


def load_rules(files=RULE_FILES):
    """-> (recorded {name: expr}, [(where, expr)] for every rule)."""
    recorded, exprs = {}, []
    for path in files:
        with open(path) as f:
            data = yaml.safe_load(f) or {}
        for group in data.get("groups", []):
            for rule in group.get("rules", []):
                name = rule.get("record") or rule.get("alert")
                where = f"{os.path.relpath(path, ROOT)}: {name}"
                exprs.append((where, str(rule.get("expr", ""))))
                if "record" in rule:
                    recorded[rule["record"]] = str(rule["expr"])
    return recorded, exprs


def check_rule_files(files, doc):
    recorded, exprs = load_rules(files)
    problems = []
    for where, expr in exprs:
        problems += check_expression(where, expr, doc, recorded)
    return problems


# --------------------------------------------------------------------------------------
# Grafana dashboard

GRAFANA_INTERVALS = re.compile(r"\$(?:__rate_interval|__interval|__range)\b|\$\{(?:__rate_interval|__interval|__range)\}")
GRAFANA_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::[a-z]+)?\}?")


def dashboard_expressions(dashboard):
    """[(where, expr)] for every panel target (rows' nested panels included) and every
    query variable."""
    out = []

    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dashboard.get("panels", [])):
        for t in p.get("targets", []):
            if "expr" in t:
                out.append((f"panel {p.get('id')} {p.get('title')!r} target {t.get('refId')}",
                            t["expr"]))
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            m = re.match(r"label_values\((.*),\s*([a-zA-Z_]+)\)\s*$", q)
            if m:
                out.append((f"variable {v.get('name')}", m.group(1)))
    return out


def substitute_grafana(expr, variables):
    expr = GRAFANA_INTERVALS.sub("5m", expr)

    def var(m):
        if m.group(1) not in variables:
            raise ValueError(f"unknown dashboard variable ${m.group(1)}")
        return ".*"
    return GRAFANA_VARIABLE.sub(var, expr)


def check_dashboard(path, doc, recorded):
    problems = []
    try:
        with open(path) as f:
            dashboard = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return [f"{path}: not valid JSON: {e}"]
    for key in ("title", "uid", "panels", "schemaVersion"):
        if key not in dashboard:
            problems.append(f"{path}: no {key!r}")
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    ids = []

    def walk(items):
        for p in items:
            ids.append(p.get("id"))
            if "gridPos" not in p or "type" not in p:
                problems.append(f"panel {p.get('id')} {p.get('title')!r}: needs type and gridPos")
            if p.get("type") != "row":
                if not p.get("targets"):
                    problems.append(f"panel {p.get('id')} {p.get('title')!r}: no queries")
                ds = p.get("datasource", {})
                if not isinstance(ds, dict) or ds.get("uid") != "${datasource}":
                    problems.append(f"panel {p.get('id')} {p.get('title')!r}: datasource must "
                                    f"be the ${{datasource}} variable")
            walk(p.get("panels", []))
    walk(dashboard.get("panels", []))
    if len(ids) != len(set(ids)):
        problems.append(f"{path}: duplicate panel ids")
    named = []
    for where, expr in dashboard_expressions(dashboard):
        try:
            concrete = substitute_grafana(expr, variables)
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        named.append((where, concrete))
        problems += check_expression(where, concrete, doc, recorded)
    problems += promtool_parse(named)
    return problems


# --------------------------------------------------------------------------------------
# Kubernetes manifests: consistency with infera itself


def quantity(value):
    """Kubernetes quantity -> float (cpu in cores, memory in bytes)."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value).strip())
    if not m:
        raise ValueError(f"bad quantity {value!r}")
    number, suffix = float(m.group(1)), m.group(2)
    scale = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
             "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    if suffix not in scale:
        raise ValueError(f"bad quantity suffix in {value!r}")
    return number * scale[suffix]


def parse_args(args):
    """Container args -> ({flag: value or None}, [bare words])."""
    flags, bare = {}, []
    i = 0
    while i < len(args):
        a = str(args[i])
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            if eq:
                flags[name] = value
            elif i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
                flags[name] = str(args[i + 1])
                i += 1
            else:
                flags[name] = None
        else:
            bare.append(a)
        i += 1
    return flags, bare


def prestop_seconds(container):
    pre = (container.get("lifecycle") or {}).get("preStop") or {}
    if "sleep" in pre:
        return int(pre["sleep"].get("seconds", 0))
    cmd = " ".join(str(c) for c in (pre.get("exec") or {}).get("command", []))
    m = re.search(r"\bsleep\s+(\d+)", cmd)
    return int(m.group(1)) if m else 0


def selector_matches(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def int_value(flags, name, help_flags):
    value = flags.get(name)
    if value is None:
        return help_flags.get(name)
    try:
        return int(value)
    except ValueError:
        return None


def check_deployment(dep, objects, help_flags, doc):
    where = f"Deployment/{dep['metadata']['name']}"
    problems = []
    pod = dep["spec"]["template"]
    spec = pod.get("spec", {})
    containers = spec.get("containers", [])
    main = next((c for c in containers if c.get("name") == "infera"), None)
    if main is None:
        return [f"{where}: no container named infera"]
    cw = f"{where} container infera"

    # Flags: every one must be a flag infera serve lists.
    if main.get("command"):
        problems.append(f"{cw}: sets command; the image's entrypoint (infera serve) must run")
    flags, bare = parse_args(main.get("args", []))
    if bare:
        problems.append(f"{cw}: positional args {bare} (infera serve takes flags only)")
    for name in flags:
        if name not in help_flags:
            problems.append(f"{cw}: --{name} is not a flag of `infera serve --help`")
    if "model-repository" not in flags:
        problems.append(f"{cw}: no --model-repository")

    # Ports: what infera listens on vs the named container ports.
    ports = {p.get("name"): p.get("containerPort") for p in main.get("ports", [])}
    for port_name, flag in (("http", "http-port"), ("grpc", "grpc-port"), ("metrics", "metrics-port")):
        listening = int_value(flags, flag, help_flags)
        if port_name not in ports:
            problems.append(f"{cw}: no container port named {port_name}")
        elif listening is not None and ports[port_name] != listening:
            problems.append(f"{cw}: port {port_name} is {ports[port_name]} but infera listens "
                            f"on {listening} (--{flag})")
    http_port = int_value(flags, "http-port", help_flags)

    # Probes: paths from docs/metrics.md, on the HTTP port.
    expected = {"readinessProbe": [doc.ready_path], "livenessProbe": [doc.live_path],
                "startupProbe": [doc.ready_path, doc.live_path]}
    for probe, paths in expected.items():
        p = main.get(probe)
        if not p:
            problems.append(f"{cw}: no {probe}")
            continue
        get = p.get("httpGet")
        if not get:
            problems.append(f"{cw}: {probe} must be an httpGet on {paths[0]}")
            continue
        if get.get("path") not in paths:
            problems.append(f"{cw}: {probe} path {get.get('path')} is not {' or '.join(paths)} "
                            f"(docs/metrics.md)")
        port = get.get("port")
        number = ports.get(port) if isinstance(port, str) else port
        if number != http_port:
            problems.append(f"{cw}: {probe} port {port} is not the HTTP port {http_port}")
    startup = main.get("startupProbe") or {}
    budget = startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
    if startup and budget < 60:
        problems.append(f"{cw}: startupProbe allows only {budget} s for model load (< 60 s)")

    # Drain: grace >= preStop + shutdown delay + exit timeout.
    grace = spec.get("terminationGracePeriodSeconds", 30)
    pre = prestop_seconds(main)
    delay = int_value(flags, "shutdown-delay-secs", help_flags) or 0
    exit_timeout = int_value(flags, "exit-timeout-secs", help_flags) or 0
    if grace < pre + delay + exit_timeout:
        problems.append(f"{where}: terminationGracePeriodSeconds {grace} < preStop {pre} + "
                        f"--shutdown-delay-secs {delay} + --exit-timeout-secs {exit_timeout} "
                        f"= {pre + delay + exit_timeout}: the kubelet would SIGKILL mid-drain")

    # Guaranteed QoS: requests == limits for cpu and memory, every container.
    for c in containers + spec.get("initContainers", []):
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for r in sorted(set(req) | set(lim) | {"cpu", "memory"}):
            if r not in lim or r not in req:
                problems.append(f"{where} container {c.get('name')}: {r} needs both request "
                                f"and limit (Guaranteed QoS)")
            elif quantity(req[r]) != quantity(lim[r]):
                problems.append(f"{where} container {c.get('name')}: {r} request {req[r]} != "
                                f"limit {lim[r]} (Guaranteed QoS needs them equal)")
    cpu_limit = quantity(((main.get("resources") or {}).get("limits") or {}).get("cpu", 0))

    # Threads vs the CPU limit.
    http_threads = int_value(flags, "http-thread-count", help_flags)
    if "http-thread-count" not in flags:
        problems.append(f"{cw}: set --http-thread-count (its default follows the node's cores, "
                        f"not the CPU limit)")
    elif cpu_limit and http_threads is not None and http_threads > math.ceil(cpu_limit):
        problems.append(f"{cw}: --http-thread-count {http_threads} > CPU limit {cpu_limit:g}")
    env = environment(main, objects)
    omp = env.get("OMP_NUM_THREADS")
    if isinstance(omp, dict):
        ref = omp.get("resourceFieldRef") or {}
        if ref.get("resource") != "limits.cpu":
            problems.append(f"{cw}: OMP_NUM_THREADS must follow limits.cpu")
    elif omp is not None and cpu_limit and int(omp) > math.ceil(cpu_limit):
        problems.append(f"{cw}: OMP_NUM_THREADS {omp} > CPU limit {cpu_limit:g}")
    if env.get("OMP_WAIT_POLICY") != "passive":
        problems.append(f"{cw}: OMP_WAIT_POLICY must be passive (is {env.get('OMP_WAIT_POLICY')!r})")

    # Security context.
    psc = spec.get("securityContext") or {}
    csc = main.get("securityContext") or {}
    if not (psc.get("runAsNonRoot") or csc.get("runAsNonRoot")):
        problems.append(f"{where}: runAsNonRoot must be true")
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    if not isinstance(uid, int) or uid == 0:
        problems.append(f"{where}: runAsUser must be a non-zero uid (the image's 10001), is {uid!r}")
    if csc.get("readOnlyRootFilesystem") is not True:
        problems.append(f"{cw}: readOnlyRootFilesystem must be true")
    if csc.get("allowPrivilegeEscalation") is not False:
        problems.append(f"{cw}: allowPrivilegeEscalation must be false")
    if "ALL" not in ((csc.get("capabilities") or {}).get("drop") or []):
        problems.append(f"{cw}: capabilities must drop ALL")
    seccomp = (csc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
    if seccomp != "RuntimeDefault":
        problems.append(f"{where}: seccompProfile must be RuntimeDefault")
    mounts = {m.get("mountPath"): m.get("name") for m in main.get("volumeMounts", [])}
    volumes = {v.get("name"): v for v in spec.get("volumes", [])}
    if "emptyDir" not in volumes.get(mounts.get("/tmp"), {}):
        problems.append(f"{cw}: /tmp must be an emptyDir (the root filesystem is read-only)")
    for mount_path, name in mounts.items():
        if name not in volumes:
            problems.append(f"{cw}: volumeMount {mount_path} names no volume {name!r}")
    problems += check_secret_files(cw, main, volumes, flags)

    # Spreading.
    labels = (pod.get("metadata") or {}).get("labels") or {}
    spread = spec.get("topologySpreadConstraints") or []
    if not spread:
        problems.append(f"{where}: no topologySpreadConstraints")
    for t in spread:
        if not selector_matches((t.get("labelSelector") or {}).get("matchLabels"), labels):
            problems.append(f"{where}: a topologySpreadConstraint selects other pods")
    if not spec.get("priorityClassName"):
        problems.append(f"{where}: no priorityClassName")

    # Accelerators.
    limits = ((main.get("resources") or {}).get("limits") or {})
    if any(k.startswith("nvidia.com/") for k in limits):
        if not spec.get("runtimeClassName"):
            problems.append(f"{where}: GPU pod without runtimeClassName")
        if not any(t.get("key", "").startswith("nvidia.com/") for t in spec.get("tolerations", [])):
            problems.append(f"{where}: GPU pod without a toleration for the GPU pool's taint")
        if not ((spec.get("affinity") or {}).get("nodeAffinity") or spec.get("nodeSelector")):
            problems.append(f"{where}: GPU pod without node affinity")
        shm = volumes.get(mounts.get("/dev/shm"), {})
        if (shm.get("emptyDir") or {}).get("medium") != "Memory":
            problems.append(f"{where}: GPU pod needs /dev/shm as a memory emptyDir")
    return problems


def environment(container, objects):
    """Resolved environment: envFrom ConfigMaps of the render, then env (literal values,
    or the valueFrom dict)."""
    env = {}
    maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects if o.get("kind") == "ConfigMap"}
    for src in container.get("envFrom", []):
        ref = (src.get("configMapRef") or {}).get("name")
        if ref in maps:
            env.update(maps[ref])
    for e in container.get("env", []):
        env[e["name"]] = e.get("value") if "value" in e else e.get("valueFrom")
    return env


def adapter_metric_names(path=ADAPTER_CONFIG):
    """Custom metric names prometheus-adapter exposes -> the series behind each."""
    with open(path) as f:
        config = yaml.safe_load(f)
    names = {}
    for rule in config.get("rules", []):
        series = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
        name = rule.get("name") or {}
        pattern = name.get("matches", "(.*)")
        exposed = re.sub(pattern, name.get("as", "${1}").replace("${", "\\g<").replace("}", ">"),
                         series) if re.search(pattern, series) else series
        names[exposed] = series
    return names


def adapter_queries(path=ADAPTER_CONFIG):
    """[(where, concrete PromQL)] for each adapter rule, templates filled in as the
    adapter would for one pod."""
    with open(path) as f:
        config = yaml.safe_load(f)
    out = []
    for i, rule in enumerate(config.get("rules", [])):
        series = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
        where = f"{os.path.relpath(path, ROOT)}: rule {i} ({series})"
        out.append((where + " seriesQuery", rule["seriesQuery"]))
        q = (rule["metricsQuery"].replace("<<.Series>>", series)
             .replace("<<.LabelMatchers>>", 'namespace="infera",pod=~"infera-.*"')
             .replace("<<.GroupBy>>", "pod"))
        out.append((where + " metricsQuery", q))
    return out


def load_ratio_constant(recorded):
    expr = recorded.get("namespace:infera_replicas_needed:ceil", "")
    m = re.search(r"/\s*([0-9.]+)\s*\)", expr)
    return float(m.group(1)) if m else None


def check_autoscaling(objects, doc, recorded):
    problems = []
    deployments = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Deployment"}
    target = load_ratio_constant(recorded)
    adapter = adapter_metric_names()
    scaled = {}
    for o in objects:
        kind, name = o.get("kind"), o["metadata"]["name"]
        where = f"{kind}/{name}"
        if kind == "HorizontalPodAutoscaler":
            spec = o["spec"]
            ref = spec["scaleTargetRef"]
            lo, hi = spec.get("minReplicas", 1), spec["maxReplicas"]
            down = ((spec.get("behavior") or {}).get("scaleDown") or {})
            for m in spec.get("metrics", []):
                if m["type"] == "Pods":
                    metric = m["pods"]["metric"]["name"]
                    if metric not in adapter:
                        problems.append(f"{where}: custom metric {metric} is not exposed by the "
                                        f"prometheus-adapter rules (exposed: {sorted(adapter)})")
                    elif adapter[metric] not in recorded:
                        problems.append(f"{where}: {metric} comes from {adapter[metric]}, which "
                                        f"no recording rule defines")
                    if metric == LOAD_RATIO_METRIC and target is not None:
                        value = quantity(m["pods"]["target"].get("averageValue", 0))
                        if abs(value - target) > 1e-9:
                            problems.append(f"{where}: load-ratio target {value:g} differs from "
                                            f"the recording rules' {target:g}")
        elif kind == "ScaledObject":
            spec = o["spec"]
            ref = spec["scaleTargetRef"]
            lo, hi = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
            down = (((spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {})
                    .get("behavior") or {}).get("scaleDown") or {}
            namespace = o["metadata"].get("namespace")
            named = []
            for t in spec.get("triggers", []):
                tw = f"{where} trigger {t.get('name', t['type'])}"
                if t["type"] != "prometheus":
                    continue
                query = t["metadata"]["query"]
                named.append((tw, query))
                problems += check_expression(tw, query, doc, recorded)
                for series, matchers in analyse(query)[0]:
                    if series and series not in recorded:
                        problems.append(f"{tw}: reads {series}, which no recording rule defines")
                    for label, op, value in matchers:
                        if label == "namespace" and op == "=" and value != namespace:
                            problems.append(f"{tw}: query selects namespace {value!r} but the "
                                            f"ScaledObject is in {namespace!r}")
                if "load_ratio" in query and target is not None:
                    if abs(float(t["metadata"]["threshold"]) - target) > 1e-9:
                        problems.append(f"{tw}: threshold {t['metadata']['threshold']} differs "
                                        f"from the recording rules' {target:g}")
            problems += promtool_parse(named)
        else:
            continue
        if ref.get("kind") != "Deployment" or ref.get("name") not in deployments:
            problems.append(f"{where}: scaleTargetRef {ref.get('kind')}/{ref.get('name')} is not "
                            f"a Deployment of this render")
        elif ref["name"] in scaled:
            problems.append(f"{where}: Deployment/{ref['name']} is already scaled by "
                            f"{scaled[ref['name']]}; pick one autoscaling component")
        else:
            scaled[ref["name"]] = where
            if "replicas" in deployments[ref["name"]]["spec"]:
                problems.append(f"Deployment/{ref['name']}: sets spec.replicas although {where} "
                                f"owns the count (every apply would reset it)")
        if lo < 1:
            problems.append(f"{where}: minimum replicas {lo} (keep >= 1 warm: model load is slow)")
        if hi < lo:
            problems.append(f"{where}: maximum {hi} < minimum {lo}")
        if down.get("stabilizationWindowSeconds", 300) < 60:
            problems.append(f"{where}: scale-down stabilization window "
                            f"{down.get('stabilizationWindowSeconds')} s < 60 s (flapping)")
    return problems


def check_services(objects):
    problems = []
    pods = []
    for o in objects:
        if o.get("kind") == "Deployment":
            tmpl = o["spec"]["template"]
            names = {p.get("name") for c in tmpl["spec"]["containers"] for p in c.get("ports", [])}
            numbers = {p.get("containerPort") for c in tmpl["spec"]["containers"] for p in c.get("ports", [])}
            pods.append(((tmpl.get("metadata") or {}).get("labels") or {}, names, numbers))
    for o in objects:
        kind, name = o.get("kind"), o["metadata"]["name"]
        if kind == "Service":
            matched = [p for p in pods if selector_matches(o["spec"].get("selector"), p[0])]
            if not matched:
                problems.append(f"Service/{name}: selector matches no pod template")
            for port in o["spec"].get("ports", []):
                tp = port.get("targetPort", port.get("port"))
                for _, names, numbers in matched:
                    if (isinstance(tp, str) and tp not in names) or (isinstance(tp, int) and tp not in numbers):
                        problems.append(f"Service/{name}: targetPort {tp} is not a container port")
        elif kind in ("PodDisruptionBudget", "NetworkPolicy"):
            sel = (o["spec"].get("selector") if kind == "PodDisruptionBudget"
                   else o["spec"].get("podSelector")) or {}
            if not any(selector_matches(sel.get("matchLabels"), p[0]) for p in pods):
                problems.append(f"{kind}/{name}: selector matches no pod template")
            if kind == "NetworkPolicy":
                for rule in o["spec"].get("ingress", []):
                    for port in rule.get("ports", []):
                        p = port.get("port")
                        if isinstance(p, str) and not any(p in names for _, names, _ in pods):
                            problems.append(f"NetworkPolicy/{name}: port {p} is not a container port")
    return problems


def check_namespaces(objects):
    cluster_scoped = {"PriorityClass", "Namespace", "ClusterRole", "ClusterRoleBinding"}
    spaces = {o["metadata"].get("namespace") for o in objects if o.get("kind") not in cluster_scoped}
    if len(spaces) > 1:
        return [f"objects span namespaces {sorted(str(s) for s in spaces)}"]
    return []


def check_render(objects, help_flags, doc, recorded):
    problems = []
    for o in objects:
        if o.get("kind") == "Deployment":
            problems += check_deployment(o, objects, help_flags, doc)
    problems += check_services(objects)
    problems += check_network_policies(objects)
    problems += check_autoscaling(objects, doc, recorded)
    problems += check_namespaces(objects)
    return problems


# --------------------------------------------------------------------------------------
# Command line


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    command, args = argv[1], argv[2:]
    doc = MetricsDoc()
    recorded, _ = load_rules()
    problems = []
    if command == "render":
        for d in args:
            objects, text = render(d)
            print(text, end="")
        return 0
    if command == "consistency":
        flags = serve_help()
        for d in args:
            objects, _ = render(d)
            problems += [f"{os.path.relpath(d, ROOT)}: {p}" for p in
                         check_render(objects, flags, doc, recorded)]
    elif command == "dashboard":
        for path in args:
            problems += check_dashboard(path, doc, recorded)
    elif command == "promql":
        problems += check_rule_files(args, doc)
    else:
        print(__doc__)
        return 2
    for p in problems:
        print(p)
    print(f"{command}: {len(problems)} problem(s)" if problems else f"{command}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

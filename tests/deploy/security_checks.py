"""The security properties of the rendered manifests (docs/security.md, "Kubernetes
hardening"), called by deploy_checks.check_render: Secret files mounted so that rotation
reaches infera, HTTPS probes under TLS, NetworkPolicies that name every source. The pod and
container security context is checked in deploy_checks.check_deployment."""


def _selector_matches(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


# Flags naming a secret file: it must come from a Secret mounted read-only as a directory.
SECRET_FILE_FLAGS = ("tls-cert-file", "tls-key-file", "tls-ca-file", "api-key-file")


def check_secret_files(cw, main, volumes, flags):
    """Secret files (TLS keys, the API key file) come from mounted Secrets that rotate:
    read-only, never via subPath (a subPath mount never sees the Secret's updates, so a
    renewed certificate would not reach infera). With TLS the probes must speak HTTPS."""
    problems = []
    secret_mounts = [m for m in main.get("volumeMounts", [])
                     if "secret" in volumes.get(m.get("name"), {})]
    for m in secret_mounts:
        if m.get("subPath") or m.get("subPathExpr"):
            problems.append(f"{cw}: Secret volume {m.get('name')} is mounted with subPath: "
                            f"it would never see a rotated Secret")
        if m.get("readOnly") is not True:
            problems.append(f"{cw}: Secret volume {m.get('name')} must be mounted readOnly")
    for flag in SECRET_FILE_FLAGS:
        path = flags.get(flag)
        if path is None:
            continue
        if not any(path.startswith(m.get("mountPath", "").rstrip("/") + "/") for m in secret_mounts):
            problems.append(f"{cw}: --{flag}={path} is not in a mounted Secret volume")
    if "tls-cert-file" in flags:
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            get = (main.get(probe) or {}).get("httpGet") or {}
            if get and get.get("scheme") != "HTTPS":
                problems.append(f"{cw}: {probe} must use scheme HTTPS (the HTTP port serves TLS)")
    return problems


def check_network_policies(objects):
    """Every infera pod is selected by a NetworkPolicy that restricts ingress: each rule
    names its sources (a rule without `from` admits the whole cluster), and the metrics
    port is reachable from namespaces only (the monitoring namespace)."""
    problems = []
    policies = [o for o in objects if o.get("kind") == "NetworkPolicy"]
    for o in objects:
        if o.get("kind") != "Deployment":
            continue
        labels = (o["spec"]["template"].get("metadata") or {}).get("labels") or {}
        selecting = [p for p in policies
                     if _selector_matches(((p["spec"].get("podSelector") or {}).get("matchLabels")), labels)
                     and "Ingress" in (p["spec"].get("policyTypes") or [])]
        if not selecting:
            problems.append(f"Deployment/{o['metadata']['name']}: no NetworkPolicy restricts its ingress")
    for p in policies:
        name = p["metadata"]["name"]
        for rule in p["spec"].get("ingress") or []:
            sources = rule.get("from") or []
            ports = [port.get("port") for port in rule.get("ports") or []]
            if not sources:
                problems.append(f"NetworkPolicy/{name}: an ingress rule for ports {ports} has no "
                                f"`from`: it admits every pod in the cluster")
            if "metrics" in ports and any("namespaceSelector" not in s for s in sources):
                problems.append(f"NetworkPolicy/{name}: the metrics port must be reachable only "
                                f"from a namespaceSelector (the monitoring namespace)")
    return problems

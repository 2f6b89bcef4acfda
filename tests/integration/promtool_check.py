"""`promtool check metrics` on an exposition text, allowing only vLLM's own lint finding.

promtool (2.42, Debian) lints colons in metric names as reserved for recording rules;
vLLM's names (`vllm:num_requests_running` …) have them by design, and infera exports
them unchanged so that vLLM dashboards work. Any other finding, and any parse error
(exit code 1), fails.
"""

import subprocess

VLLM_COLON_LINT = "metric names should not contain ':'"


def promtool_problems(text):
    """promtool's findings on `text`, except a vllm: name's colon lint; [] when clean."""
    check = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
    lines = (check.stdout.decode() + check.stderr.decode()).splitlines()
    problems = [l for l in lines if l.strip() and not (l.startswith("vllm:") and l.endswith(VLLM_COLON_LINT))]
    if check.returncode not in (0, 3):  # 3: lint findings only (the text parsed)
        problems.append(f"promtool exit code {check.returncode}")
    if check.returncode == 3 and not lines:
        problems.append("promtool exit code 3 without findings")
    return problems

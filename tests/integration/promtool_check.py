"""`promtool check metrics` on an exposition text, allowing only vLLM's and Triton's own
lint findings.

promtool (2.42, Debian) lints colons in metric names as reserved for recording rules;
vLLM's names (`vllm:num_requests_running` …) have them by design. Triton's names
(`nv_inference_request_success`, `nv_inference_queue_duration_us` …) are counters without
`_total`, in microseconds, some ending in `_count`. infera exports both unchanged so that
vLLM's and Triton's dashboards work. Any other finding, and any parse error (exit code 1),
fails.
"""

import subprocess

VLLM_COLON_LINT = "metric names should not contain ':'"
TRITON_NAMING_LINTS = (
    'counter metrics should have "_total" suffix',
    "metric names should not contain abbreviated units",
    'non-histogram and non-summary metrics should not have "_count" suffix',
)


def _expected(line):
    """A lint finding that is the exported names' own (vLLM's colon, Triton's naming)."""
    if line.startswith("vllm:") and line.endswith(VLLM_COLON_LINT):
        return True
    return line.startswith("nv_inference_") and line.endswith(TRITON_NAMING_LINTS)


def promtool_problems(text):
    """promtool's findings on `text`, except vLLM's and Triton's naming lints; [] when clean."""
    check = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), capture_output=True, timeout=30)
    lines = (check.stdout.decode() + check.stderr.decode()).splitlines()
    problems = [l for l in lines if l.strip() and not _expected(l)]
    if check.returncode not in (0, 3):  # 3: lint findings only (the text parsed)
        problems.append(f"promtool exit code {check.returncode}")
    if check.returncode == 3 and not lines:
        problems.append("promtool exit code 3 without findings")
    return problems

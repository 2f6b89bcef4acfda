"""The web console in a real browser: Debian's chromium, headless, driven by
playwright-core (tests/browser/console_test.mjs) against the real server, started here
with explicit model control and an admin token. The script checks: the page loads
without console errors, the model list matches /v2/repository/index and is grouped (the
pipeline with its steps nested, LLMs, other models; kind and backend columns; "—" for
P99 without traffic), a chart updates under load and labels its axes with units, a
playground inference and an image classification round-trip (labels and scores paired in
a ranked table; the batch is a rows control, not a shape field), a detection's boxes are
drawn over the input picture with class and score, an LLM's playground points to the chat, the chat streams token by token (multi-turn with a system prompt,
per-reply TTFT and tok/s, Stop aborts), a cancelled unload confirmation sends nothing,
admin unload/load is refused without the token and works with it, a canary is promoted,
the diagnosis panel shows what GET /v2/models/queued/diagnosis answers after a queueing
load shape (class, evidence, stage breakdown, actions; keyboard refresh and the 5 s
auto-refresh, a late answer for another model not drawn), the page does not scroll
sideways at 480 px, a server without the admin API shows no admin buttons, and a server
with API keys asks for a key and then works with it (the stream, metadata and config
requests carry it). docs/console.md."""

import json
import os
import shutil
import struct
import subprocess
import tempfile

import pytest

from console_client import CANARIED
from infera_server import InferaServer, copy_model, demo_repo, write_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BROWSER = os.path.join(ROOT, "tests", "browser")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TOKEN = "console-test-token"
# test_diagnosis.py's queueing shape: 30 ms per execution, one instance; the browser
# test sends 8 concurrent clients x 10 requests, so requests wait for the instance.
QUEUED = """name: "queued"
backend: "fault_injection"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "delay_ms" value { string_value: "30" } }
"""
MODELS = ["identity_fp32", "resnet18_classify", "resnet18_preprocess", "resnet18", "resnet18_top5", "fortune",
          "detector", "detector_head", "detector_nms"]


@pytest.fixture(scope="module")
def server():
    if not os.path.exists(CHROMIUM):
        raise RuntimeError(f"{CHROMIUM} is missing: scripts/install_deps.sh installs chromium")
    subprocess.run([os.path.join(BROWSER, "npm_install.sh")], check=True, timeout=600)
    with tempfile.TemporaryDirectory() as repo:
        for name in MODELS:
            copy_model(demo_repo(), name, repo)
        write_model(repo, "canaried", CANARIED, versions=(1, 2))
        write_model(repo, "queued", QUEUED)
        s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "*", "--admin-token", TOKEN)
        try:
            s.wait_ready()
            yield s
        finally:
            s.stop()


@pytest.fixture(scope="module")
def plain_server():
    """A server without the admin API (model control mode none): no admin buttons."""
    with tempfile.TemporaryDirectory() as repo:
        copy_model(demo_repo(), "identity_fp32", repo)
        s = InferaServer(repo)
        try:
            s.wait_ready()
            yield s
        finally:
            s.stop()


API_KEY = "inf-console-test-key"


@pytest.fixture(scope="module")
def keyed_server():
    """A server with API keys (--api-key): every route but health needs the key."""
    with tempfile.TemporaryDirectory() as repo:
        copy_model(demo_repo(), "identity_fp32", repo)
        s = InferaServer(repo, "--api-key", API_KEY)
        try:
            s.wait_ready()
            yield s
        finally:
            s.stop()


def top_label(server, image):
    """The pipeline's top label for `image`, asked over plain HTTP (binary tensor)."""
    header = json.dumps({"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1, 1],
                                     "parameters": {"binary_data_size": len(image) + 4}}]}).encode()
    status, _, body = server.request("POST", "/v2/models/resnet18_classify/infer",
                                     header + struct.pack("<I", len(image)) + image,
                                     {"Inference-Header-Content-Length": str(len(header))})
    assert status == 200, body
    outputs = {o["name"]: o for o in json.loads(body)["outputs"]}
    return outputs["LABELS"]["data"][0]


def test_console_in_chromium(server, plain_server, keyed_server):
    image_path = os.path.join(demo_repo(), ".images", "chelsea.jpg")
    with open(image_path, "rb") as f:
        expected = top_label(server, f.read())
    run = subprocess.run(["node", os.path.join(BROWSER, "console_test.mjs"), f"http://127.0.0.1:{server.port}",
                          TOKEN, image_path, expected, f"http://127.0.0.1:{plain_server.port}",
                          f"http://127.0.0.1:{keyed_server.port}", API_KEY],
                         capture_output=True, text=True, timeout=120, cwd=BROWSER)
    lines = [l for l in run.stdout.splitlines() if l.startswith("{")]
    assert lines, f"no result (exit {run.returncode}):\n{run.stdout}\n{run.stderr}\n{server.log()[-3000:]}"
    result = json.loads(lines[-1])
    assert result["ok"], f"{json.dumps(result, indent=1)}\n{run.stderr}\n{server.log()[-3000:]}"
    r = result["results"]
    assert r["playground"].replace(" ", "") == "[1.5,2,-3]"
    assert r["image_top"] == expected and r["topk_rows"] == 5
    assert r["detections"] >= 1  # drawn over the picture, one labelled box each (checked in the script)
    assert r["chat_updates"] >= 4 and r["chat_text"].strip()
    assert "refused (401)" in r["without_token"]
    assert r["unload_cancelled"] and r["dialogs"] >= 3  # unload x2 and promote each asked first
    assert r["after_unload"] != "READY" and r["after_load"] == "READY"
    assert r["chat_stopped"] == "true" and float(r["chat_stats"]["tokensPerS"]) > 0
    assert all(width <= 481 for width in r["narrow"].values()), r["narrow"]
    assert "PROMOTED" in r["canary_after_promote"]
    assert r["plain_action_buttons"] == 0
    assert r["keyed_rows_before"] == 0 and r["keyed_rows_after"] >= 1 and r["keyed_config"], r
    # The panel showed the endpoint's answer (compared field by field in the script).
    assert r["diagnosis"]["class"] == "queueing", r["diagnosis"]
    assert {"queue", "compute_infer", "server"} <= set(r["diagnosis_stages"])
    assert "instance_utilisation" in r["diagnosis"]["evidence"] and "queue_share" in r["diagnosis"]["evidence"]
    assert r["diagnosis"]["actions"][0].startswith("add 1 instance (instance_group count 1 -> 2)")
    assert r["diagnosis"]["requests"] == 80 and r["diagnosis"]["auto_refreshed"]
    assert r["diagnosis"]["stale_dropped"]  # a late answer for another model was not drawn
    # The server is still healthy after the session.
    server.assert_serving()

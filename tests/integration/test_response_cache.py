"""The response cache (docs/response_cache.md; Triton's response_cache +
--cache-config local,size=N): one server, a cached and an uncached copy of `simple`.

What Triton's qa checks for the cache (L0_response_cache): the second identical request
is a hit with the same outputs and executes nothing; a different input is a miss; a
model without response_cache never hits; the statistics extension counts both.
"""

import json
import struct
import tempfile

import pytest

from grpc_stubs import pb, stub  # noqa: F401  (stub: the module's gRPC fixture)
from infera_server import SIMPLE_CONFIG, InferaServer, write_model

CACHED_CONFIG = SIMPLE_CONFIG.replace('name: "simple"', 'name: "cached"') + "response_cache { enable: true }\n"
UNCACHED_CONFIG = SIMPLE_CONFIG.replace('name: "simple"', 'name: "uncached"')


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as repo:
        write_model(repo, "cached", CACHED_CONFIG)
        write_model(repo, "uncached", UNCACHED_CONFIG)
        s = InferaServer(repo, "--cache-config", "local,size=1048576")
        s.wait_ready()
        yield s
        s.stop()


def payload(first, request_id="", outputs=None):
    body = {"inputs": [
        {"name": "INPUT0", "datatype": "INT32", "shape": [1, 16], "data": [first + i for i in range(16)]},
        {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16], "data": [1] * 16},
    ]}
    if request_id:
        body["id"] = request_id
    if outputs is not None:
        body["outputs"] = outputs
    return body


def infer(server, model, body):
    status, _, data = server.infer(model, body)
    assert status == 200, data
    return json.loads(data)


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    model_stats = body["model_stats"][0]
    inference = model_stats["inference_stats"]
    return {
        "hit": inference["cache_hit"]["count"],
        "miss": inference["cache_miss"]["count"],
        "success": inference["success"]["count"],
        "executions": model_stats["execution_count"],
        "inferences": model_stats["inference_count"],
    }


def delta(before, after):
    return {key: after[key] - before[key] for key in before}


def test_the_same_request_twice_is_a_hit_that_executes_nothing(server):
    before = stats(server, "cached")
    first = infer(server, "cached", payload(100, request_id="first"))
    second = infer(server, "cached", payload(100, request_id="second"))
    assert first["outputs"] == second["outputs"]
    assert [o["data"] for o in second["outputs"]] == [[101 + i for i in range(16)], [99 + i for i in range(16)]]
    assert second["id"] == "second"  # the hit answers this request, not the cached one
    assert (second["model_name"], second["model_version"]) == ("cached", "1")
    assert delta(before, stats(server, "cached")) == {
        "hit": 1, "miss": 1, "success": 2, "executions": 1, "inferences": 1}


def test_a_different_input_is_a_miss(server):
    before = stats(server, "cached")
    a = infer(server, "cached", payload(200))
    b = infer(server, "cached", payload(201))
    assert a["outputs"][0]["data"] != b["outputs"][0]["data"]
    assert delta(before, stats(server, "cached"))["miss"] == 2
    assert delta(before, stats(server, "cached"))["hit"] == 0


def test_requested_outputs_and_classification_are_part_of_the_key(server):
    before = stats(server, "cached")
    both = infer(server, "cached", payload(300))
    only_sum = infer(server, "cached", payload(300, outputs=[{"name": "OUTPUT0"}]))
    top2 = infer(server, "cached", payload(300, outputs=[{"name": "OUTPUT0", "parameters": {"classification": 2}}]))
    top2_again = infer(server, "cached",
                       payload(300, outputs=[{"name": "OUTPUT0", "parameters": {"classification": 2}}]))
    assert len(both["outputs"]) == 2
    assert [o["name"] for o in only_sum["outputs"]] == ["OUTPUT0"]
    assert top2["outputs"][0]["datatype"] == "BYTES"
    assert top2["outputs"][0]["data"] == ["316:15", "315:14"]
    assert top2_again["outputs"] == top2["outputs"]
    assert delta(before, stats(server, "cached"))["miss"] == 3
    assert delta(before, stats(server, "cached"))["hit"] == 1


def test_a_model_without_response_cache_never_hits(server):
    before = stats(server, "uncached")
    a = infer(server, "uncached", payload(400))
    b = infer(server, "uncached", payload(400))
    assert a["outputs"] == b["outputs"]
    assert delta(before, stats(server, "uncached")) == {
        "hit": 0, "miss": 0, "success": 2, "executions": 2, "inferences": 2}


def test_grpc_hits_what_http_cached_and_reports_the_same_statistics(server, stub):
    infer(server, "cached", payload(500))  # cached over HTTP
    before = stats(server, "cached")
    request = pb.ModelInferRequest(model_name="cached", id="over-grpc")
    for name, values in (("INPUT0", [500 + i for i in range(16)]), ("INPUT1", [1] * 16)):
        request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        request.raw_input_contents.append(struct.pack("<16i", *values))
    response = stub.ModelInfer(request)
    assert response.id == "over-grpc"
    assert list(struct.unpack("<16i", response.raw_output_contents[0])) == [501 + i for i in range(16)]
    assert delta(before, stats(server, "cached"))["hit"] == 1
    assert delta(before, stats(server, "cached"))["executions"] == 0
    grpc_stats = stub.ModelStatistics(pb.ModelStatisticsRequest(name="cached")).model_stats[0]
    http_stats = stats(server, "cached")
    assert grpc_stats.inference_stats.cache_hit.count == http_stats["hit"]
    assert grpc_stats.inference_stats.cache_miss.count == http_stats["miss"]
    assert grpc_stats.inference_stats.cache_hit.ns > 0
    assert grpc_stats.inference_stats.cache_miss.ns > 0


def test_metrics_report_tritons_cache_families_for_cached_models_only(server):
    infer(server, "cached", payload(600))
    infer(server, "cached", payload(600))
    text = server.metrics_text()
    hits = server.metric("nv_cache_num_hits_per_model", model="cached", version="1")
    assert hits == stats(server, "cached")["hit"] >= 1
    assert server.metric("nv_cache_num_misses_per_model", model="cached", version="1") >= 1
    assert "nv_cache_hit_duration_per_model{" in text
    assert 'model="uncached"' not in "".join(line for line in text.splitlines(True) if line.startswith("nv_cache_"))
    assert server.metric("infera_response_cache_entries") >= 1
    assert 0 < server.metric("infera_response_cache_bytes") <= server.metric("infera_response_cache_capacity_bytes")
    assert server.metric("infera_response_cache_capacity_bytes") == 1048576
    # Triton counts a hit as a successful request (not as an inference): so does
    # nv_inference_request_success, equal to the statistics extension's success count.
    assert server.metric("nv_inference_request_success", model="cached", version="1") == stats(server, "cached")["success"]


def test_cache_summaries_with_summary_latencies():
    """Triton's nv_cache_hit_summary_us / nv_cache_miss_summary_us (its qa
    metrics_config_test, cache summaries): with summary_latencies on, for cached models
    only, from their load."""
    with tempfile.TemporaryDirectory() as repo:
        write_model(repo, "cached", CACHED_CONFIG)
        write_model(repo, "uncached", UNCACHED_CONFIG)
        s = InferaServer(repo, "--cache-config", "local,size=1048576", "--metrics-config", "summary_latencies=true")
        try:
            s.wait_ready()
            assert s.metric("nv_cache_hit_summary_us_count", model="cached", version="1") == 0
            for _ in range(3):
                infer(s, "cached", payload(700))
            infer(s, "uncached", payload(700))
            assert s.metric("nv_cache_hit_summary_us_count", model="cached", version="1") == 2
            assert s.metric("nv_cache_miss_summary_us_count", model="cached", version="1") == 1
            assert s.metric("nv_inference_request_summary_us_count", model="cached", version="1") == 3
            text = s.metrics_text()
            assert 'nv_cache_hit_summary_us{model="cached",version="1",quantile="0.99"}' in text
            assert 'model="uncached"' not in "".join(
                line for line in text.splitlines(True) if line.startswith("nv_cache_"))
        finally:
            s.stop()

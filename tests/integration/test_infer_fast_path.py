"""The HTTP infer path's second step (docs/life_of_a_request.md, "Hot path, second step"),
black box: one model lookup before decoding (ModelManager::ChooseVersion) must keep the
order of the answers — an unknown model is a 404 whatever the body holds, a malformed body
is a 400 before a version error, a raw binary request's version is checked before its body
— and canary routing after decoding must still honour the routing_key parameter over the
X-Routing-Key header; the hand-written JSON response must be the exact bytes clients got
before."""
import json
import tempfile

import pytest

from infera_server import InferaServer, SIMPLE_CONFIG, write_model

# Two versions, half the unversioned traffic to version 2; the judge kept out of reach so
# that it never moves the split while the test runs.
CANARY = """
name: "split"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
version_policy { specific { versions: [ 1, 2 ] } }
parameters { key: "canary.version" value { string_value: "2" } }
parameters { key: "canary.weight_percent" value { string_value: "50" } }
parameters { key: "canary.min_requests" value { string_value: "1000000000000" } }
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-fast-path-") as repo:
        write_model(repo, "simple", SIMPLE_CONFIG, versions=(1, 2))
        write_model(repo, "split", CANARY, versions=(1, 2))
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


def simple_payload(**extra):
    payload = {"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}
    payload.update(extra)
    return payload


def error_of(status, body, expected_status):
    assert status == expected_status, body
    return json.loads(body)["error"]


def test_simple_answer_is_byte_exact(server):
    status, headers, body = server.infer("simple", simple_payload(id="req-\u001f\"7\""))
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    # The bytes rapidjson::Writer produced before (its \u00XX escapes are upper-case hex).
    sums = ",".join(str(i + 1) for i in range(16))
    diffs = ",".join(str(i - 1) for i in range(16))
    assert body.decode() == (
        '{"model_name":"simple","model_version":"2","id":"req-\\u001F\\"7\\"","outputs":['
        '{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"data":[' + sums + ']},'
        '{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"data":[' + diffs + ']}]}')


def test_an_unknown_model_is_404_before_the_body_is_read(server):
    status, _, body = server.infer("nope", b"{not json")
    assert "Request for unknown model: 'nope' is not found" in error_of(status, body, 404)
    status, _, body = server.infer("nope", b"\x00\x01", headers={"Inference-Header-Content-Length": "0"})
    assert "Request for unknown model: 'nope' is not found" in error_of(status, body, 404)


def test_a_malformed_body_wins_over_a_version_error(server):
    status, _, body = server.infer("simple", b"{not json", version=7)
    assert "malformed JSON" in error_of(status, body, 400)
    status, _, body = server.infer("simple", {"inputs": []}, version=7)
    assert "'inputs' must be a non-empty array" in error_of(status, body, 400)
    # A valid body then gets the version's own answer, found by the same lookup.
    status, _, body = server.infer("simple", simple_payload(), version=7)
    # (The default version policy serves the latest version only: 2.)
    assert "Request for unknown model: 'simple' version 7 is not found (versions: 2)" in error_of(status, body, 404)
    status, _, body = server.infer("simple", simple_payload(), version=2)
    assert status == 200 and json.loads(body)["model_version"] == "2", body


def test_a_raw_binary_request_checks_its_version_before_its_body(server):
    # Inference-Header-Content-Length: 0 needs the model's config to decode, so the version
    # is resolved first: the truncated body does not get a 400.
    status, _, body = server.infer("simple", b"\x00\x01\x02", version=7,
                                   headers={"Inference-Header-Content-Length": "0"})
    assert "version 7 is not found" in error_of(status, body, 404)


def split_version(server, key_parameter=None, key_header=None):
    payload = {"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "FP32", "data": [1.0, 2.0]}]}
    if key_parameter is not None:
        payload["parameters"] = {"routing_key": key_parameter}
    headers = {"X-Routing-Key": key_header} if key_header is not None else None
    status, _, body = server.infer("split", payload, headers=headers)
    assert status == 200, body
    return json.loads(body)["model_version"]


def test_canary_routes_by_the_parameter_then_the_header(server):
    keys = [f"user{i}" for i in range(40)]
    by_parameter = {k: split_version(server, key_parameter=k) for k in keys}
    assert set(by_parameter.values()) == {"1", "2"}  # 40 keys at 50 %: both sides
    for k in keys:
        assert split_version(server, key_parameter=k) == by_parameter[k]  # sticky
        assert split_version(server, key_header=k) == by_parameter[k]  # the header alone
    # Both present: the parameter decides, whatever the header says.
    other = {"1": next(k for k in keys if by_parameter[k] == "2"),
             "2": next(k for k in keys if by_parameter[k] == "1")}
    for k in keys[:10]:
        assert split_version(server, key_parameter=k, key_header=other[by_parameter[k]]) == by_parameter[k]
    # An explicit version is served whatever the key.
    payload = {"inputs": [{"name": "INPUT0", "shape": [2], "datatype": "FP32", "data": [1.0, 2.0]}],
               "parameters": {"routing_key": keys[0]}}
    for version in ("1", "2"):
        status, _, body = server.infer("split", payload, version=int(version))
        assert status == 200 and json.loads(body)["model_version"] == version, body
    server.assert_serving()

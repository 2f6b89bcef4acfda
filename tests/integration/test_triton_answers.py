"""Triton's answers where Triton's clients and qa tests look (issue 28, item 1), over real
sockets against one server: restricted-API categories and their check order, `--id`,
the log format's name, clearing global trace settings, a shared-memory region kept
registered until its last request ends, and the error texts clients match.

What is checked comes from Triton's qa suites (L0_http http_restricted_api_test.py and
http_test.py, L0_shared_memory, L0_trace trace_endpoint_test.py, L0_logging); the
remaining differences are listed in docs/compatibility.md.
"""

import json
import struct
import tempfile
import threading
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, SIMPLE_CONFIG, wait_for, write_model

SERVER_ID = "triton-under-test"
INFER = {"infer-key": "infer-value"}        # HTTP inference + metadata group
ADMIN = {"admin-key": "admin-value"}        # HTTP model-repository group
GRPC_KEY = (("triton-grpc-protocol-grpc-key", "v"),)  # gRPC statistics, model-config, inference

SLOW_CONFIG = """
name: "slow"
backend: "fault_injection"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "delay_ms" value { string_value: "1500" } }
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-triton-answers-") as repo:
        write_model(repo, "simple", SIMPLE_CONFIG)
        write_model(repo, "slow", SLOW_CONFIG)
        s = InferaServer(repo, "--id", SERVER_ID, "--allow-client-shm", "true",
                         "--allow-admin-api", "logging,trace",
                         "--http-restricted-api", "model-repository:admin-key=admin-value",
                         "--http-restricted-api", "inference,metadata:infer-key=infer-value",
                         "--grpc-restricted-protocol", "statistics,model-config,inference:grpc-key=v")
        s.wait_ready()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def post_json(server, path, body, headers=None):
    status, _, data = server.request("POST", path, json.dumps(body), headers)
    return status, (json.loads(data) if data else None)


def simple_payload():
    tensor = lambda name: {"name": name, "datatype": "INT32", "shape": [1, 16], "data": list(range(16))}  # noqa: E731
    return {"inputs": [tensor("INPUT0"), tensor("INPUT1")]}


def grpc_error(call):
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code(), error.value.details()


def test_restricted_http_categories_and_check_order(server):
    """http_restricted_api_test.py: metadata and infer need their group's header, other
    routes stay open, and a restricted load is refused for the header before the
    explicit-mode refusal."""
    status, body = server.get_json("/v2")
    assert status == 403 and body["error"] == "This API is restricted, expecting header 'infer-key'"
    status, _, data = server.request("GET", "/v2", None, INFER)
    assert status == 200 and json.loads(data)["name"] == SERVER_ID  # --id
    status, body = post_json(server, "/v2/models/simple/infer", simple_payload(), {"test": "1"})
    assert status == 403 and "This API is restricted" in body["error"]
    assert post_json(server, "/v2/models/simple/infer", simple_payload(), INFER)[0] == 200
    assert server.get_json("/v2/models/simple/stats")[0] == 200      # statistics: not restricted
    assert server.get_json("/v2/health/ready")[0] == 200
    status, body = post_json(server, "/v2/repository/models/simple/unload", {}, INFER)
    assert status == 403 and "This API is restricted, expecting header 'admin-key'" in body["error"]
    status, body = post_json(server, "/v2/repository/models/simple/unload", {}, ADMIN)
    assert status == 409 and "explicit model load / unload is not allowed" in body["error"]


def test_restricted_grpc_categories(server, stub):
    code, details = grpc_error(lambda: stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple")))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details == "This protocol is restricted, expecting header 'triton-grpc-protocol-grpc-key'"
    stub.ModelStatistics(pb.ModelStatisticsRequest(name="simple"), metadata=GRPC_KEY)
    code, _ = grpc_error(lambda: stub.ModelConfig(pb.ModelConfigRequest(name="simple")))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert stub.ServerMetadata(pb.ServerMetadataRequest()).name == SERVER_ID  # not restricted here
    request = pb.ModelInferRequest(model_name="slow")
    tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1])
    tensor.contents.fp32_contents.append(1.0)
    code, details = grpc_error(lambda: stub.ModelInfer(request))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "This protocol is restricted" in details
    code, details = grpc_error(lambda: list(stub.ModelStreamInfer(iter([request]))))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "This protocol is restricted" in details


def test_log_format_reads_back_as_default(server):
    status, body = server.get_json("/v2/logging")
    assert status == 200 and body["log_format"] == "default"
    status, body = post_json(server, "/v2/logging", {"log_format": "default", "log_info": True})
    assert status == 200 and body["log_format"] == "default"
    status, body = post_json(server, "/v2/logging", {"log_file": "log_file.log"})
    assert status == 400 and "log file location can not be updated through network protocol" in body["error"]


def test_global_trace_settings_clear_to_their_start_values(server):
    """trace_endpoint_test.py's tearDown: null values reset the global settings."""
    status, start = server.get_json("/v2/trace/setting")
    assert status == 200
    status, changed = post_json(server, "/v2/trace/setting",
                                {"trace_rate": "7", "trace_count": "3", "log_frequency": "2"})
    assert status == 200 and changed["trace_rate"] == "7"
    cleared = {"trace_level": None, "trace_rate": None, "trace_count": None, "log_frequency": None}
    status, body = post_json(server, "/v2/models/simple/trace/setting", cleared)
    assert status == 200 and body == changed  # the model follows the global settings
    status, body = post_json(server, "/v2/trace/setting", cleared)
    assert status == 200 and body == start, body
    status, body = post_json(server, "/v2/trace/setting", {"trace_file": "global_unittest.log"})
    assert status == 400 and "trace file location can not be updated through network protocol" in body["error"]


def test_duplicate_tensors_are_named_with_tritons_text(server):
    payload = simple_payload()
    payload["inputs"].append(dict(payload["inputs"][0]))
    status, body = post_json(server, "/v2/models/simple/infer", payload, INFER)
    assert status == 400 and "input 'INPUT0' already exists in request" in body["error"]
    payload = simple_payload()
    payload["outputs"] = [{"name": "OUTPUT0"}, {"name": "OUTPUT0"}]
    status, body = post_json(server, "/v2/models/simple/infer", payload, INFER)
    assert status == 400 and "output 'OUTPUT0' already exists in request" in body["error"]
    assert server.get_json("/v2/health/live")[0] == 200


@pytest.fixture()
def region():
    shm = shared_memory.SharedMemory(create=True, size=64)
    try:
        yield shm
    finally:
        shm.close()
        shm.unlink()


def register(server, name, key, byte_size):
    return post_json(server, f"/v2/systemsharedmemory/region/{name}/register",
                     {"key": key, "offset": 0, "byte_size": byte_size})


def listed(server):
    status, body = server.get_json("/v2/systemsharedmemory/status")
    assert status == 200
    return sorted(r["name"] for r in body)


def test_region_stays_listed_until_its_last_request_ends(server, region):
    """L0_shared_memory TestSharedMemoryUnregister: unregistering a region a request is
    using succeeds; it stays listed until the request ends, then goes by itself."""
    region.buf[:16] = struct.pack("<4f", 1, 2, 3, 4)
    assert register(server, "in_use", "/" + region.name, 64)[0] == 200
    payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4],
                           "parameters": {"shared_memory_region": "in_use", "shared_memory_byte_size": 16}}]}
    answers = []
    request = threading.Thread(
        target=lambda: answers.append(post_json(server, "/v2/models/slow/infer", payload, INFER)))
    request.start()
    try:
        wait_for(lambda: server.model_gauge("infera_inflight_requests", "slow") >= 1)
        assert post_json(server, "/v2/systemsharedmemory/unregister", {})[0] == 200
        assert listed(server) == ["in_use"]
        status, body = register(server, "in_use", "/" + region.name, 64)
        assert status == 409 and "already in manager" in body["error"]
    finally:
        request.join(timeout=30)
    assert answers[0][0] == 200 and answers[0][1]["outputs"][0]["data"] == [1, 2, 3, 4]
    assert listed(server) == []
    status, body = server.get_json("/v2/systemsharedmemory/region/in_use/status")
    assert status == 404 and "Unable to find system shared memory region: 'in_use'" in body["error"]


def test_out_of_bound_ranges_use_tritons_texts(server, stub, region):
    """L0_shared_memory test_infer_offset_out_of_bound / test_infer_byte_size_out_of_bound
    (gRPC form: offset = the region's size)."""
    assert register(server, "bounds", "/" + region.name, 64)[0] == 200
    try:
        def infer(offset, byte_size):
            request = pb.ModelInferRequest(model_name="slow")
            tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[byte_size // 4])
            tensor.parameters["shared_memory_region"].string_param = "bounds"
            tensor.parameters["shared_memory_byte_size"].int64_param = byte_size
            tensor.parameters["shared_memory_offset"].int64_param = offset
            return grpc_error(lambda: stub.ModelInfer(request, metadata=GRPC_KEY))
        code, details = infer(64, 16)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "Invalid offset for shared memory region: 'bounds'" in details
        code, details = infer(1, 64)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert "Invalid offset + byte size for shared memory region: 'bounds'" in details
    finally:
        post_json(server, "/v2/systemsharedmemory/region/bounds/unregister", {})

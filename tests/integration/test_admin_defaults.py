"""What a default `infera serve` leaves open to any client (issue 26, finding 4).

Before: with no flag beyond the repository (control mode none, no token, 0.0.0.0), any
network client could register any /dev/shm object of the server's user and read it back
or overwrite it through an identity model, turn error logs off or flood the log
(/v2/logging), and change the trace settings — with no SECURITY warning. Now every
admin-class operation is closed until the operator opens it, by one access check for both
transports (api/admin_guard.h): --admin-token or a restricted-API group (open to the
credential's holders), or --allow-client-shm=true / --allow-admin-api=<categories> (open
to everyone, with a SECURITY warning at start). Reads stay open: shared-memory status,
trace settings, the repository index; unregister stays harmless.
"""

import json
import struct
import tempfile
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

IDENTITY = """name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-admin-defaults-") as path:
        write_model(path, "identity_fp32", IDENTITY)
        yield path


@pytest.fixture
def secret():
    """Another process's shm object (a secret the attacker wants to read back)."""
    mem = shared_memory.SharedMemory(create=True, size=16)
    mem.buf[:16] = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)
    yield "/" + mem.name
    mem.close()
    mem.unlink()


def grpc_error(call):
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value


def test_default_server_closes_every_admin_operation(repo, secret):
    server = InferaServer(repo)
    try:
        server.wait_ready()
        # Shared memory: the read-back attack is refused at registration.
        status, _, body = server.request("POST", "/v2/systemsharedmemory/region/steal/register",
                                         json.dumps({"key": secret, "byte_size": 16}))
        assert status == 403, body
        assert "--allow-client-shm=true" in json.loads(body)["error"]
        status, _, body = server.infer("identity_fp32", {"inputs": [{
            "name": "INPUT0", "datatype": "FP32", "shape": [4],
            "parameters": {"shared_memory_region": "steal", "shared_memory_byte_size": 16}}]})
        assert status == 400 and b"Unable to find shared memory region" in body
        assert server.request("POST", "/v2/cudasharedmemory/region/c/register",
                              json.dumps({"raw_handle": {"b64": ""}, "device_id": 0, "byte_size": 8}))[0] == 403
        # Cheap and harmless: status lists nothing, unregister has nothing to release.
        assert server.get_json("/v2/systemsharedmemory/status") == (200, [])
        assert server.get_json("/v2/cudasharedmemory/status") == (200, [])
        assert server.request("POST", "/v2/systemsharedmemory/unregister")[0] == 200
        assert server.request("POST", "/v2/systemsharedmemory/region/steal/unregister")[0] == 200
        # Logging (read and change alike) and trace updates; trace reads stay open.
        for method, body in (("GET", None), ("POST", json.dumps({"log_error": True, "log_verbose_level": 9}))):
            status, _, answer = server.request(method, "/v2/logging", body)
            assert status == 403 and "--allow-admin-api=logging" in json.loads(answer)["error"], answer
        before = server.request("GET", "/v2/trace/setting")
        assert before[0] == 200
        status, _, answer = server.request("POST", "/v2/trace/setting", json.dumps({"trace_rate": "1"}))
        assert status == 403 and "--allow-admin-api=trace" in json.loads(answer)["error"], answer
        assert server.request("GET", "/v2/trace/setting")[2] == before[2]

        # The same rule over gRPC.
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            denied = grpc.StatusCode.PERMISSION_DENIED
            err = grpc_error(lambda: stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="steal", key=secret, byte_size=16)))
            assert err.code() == denied and "--allow-client-shm=true" in err.details()
            assert grpc_error(lambda: stub.CudaSharedMemoryRegister(
                pb.CudaSharedMemoryRegisterRequest(name="c", byte_size=8))).code() == denied
            assert len(stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest()).regions) == 0
            stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest())
            assert grpc_error(lambda: stub.LogSettings(pb.LogSettingsRequest())).code() == denied
            update = pb.TraceSettingRequest()
            update.settings["trace_rate"].value.append("1")
            assert grpc_error(lambda: stub.TraceSetting(update)).code() == denied
            assert stub.TraceSetting(pb.TraceSettingRequest()).settings
        assert "SECURITY" not in server.log()
        server.assert_serving()
    finally:
        server.stop()


def test_operator_opens_categories_with_a_security_warning(repo, secret):
    server = InferaServer(repo, "--allow-client-shm", "true", "--allow-admin-api", "logging,trace")
    try:
        server.wait_ready()
        warnings = [line for line in server.log().splitlines() if "SECURITY" in line]
        assert len(warnings) == 3, server.log()
        for category, line in zip(("logging", "shared-memory", "trace"), warnings):
            assert line.startswith("W"), line  # WARNING lines
            assert f"the {category} admin API is open to every client on the HTTP and gRPC ports" in line
        # Opened: the operator accepted what a client can then do.
        status, _, body = server.request("POST", "/v2/systemsharedmemory/region/r/register",
                                         json.dumps({"key": secret, "byte_size": 16}))
        assert status == 200, body
        status, _, body = server.infer("identity_fp32", {"inputs": [{
            "name": "INPUT0", "datatype": "FP32", "shape": [4],
            "parameters": {"shared_memory_region": "r", "shared_memory_byte_size": 16}}]})
        assert status == 200 and json.loads(body)["outputs"][0]["data"] == [1.0, 2.0, 3.0, 4.0]
        assert server.request("POST", "/v2/systemsharedmemory/unregister")[0] == 200
        assert server.request("GET", "/v2/logging")[0] == 200
        assert server.request("POST", "/v2/trace/setting", json.dumps({"log_frequency": "0"}))[0] == 200
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="g", key=secret, byte_size=16))
            stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="g"))
            assert stub.LogSettings(pb.LogSettingsRequest()).settings
    finally:
        server.stop()


def test_a_credential_opens_shared_memory_without_a_warning(repo, secret):
    server = InferaServer(repo, "--http-restricted-api", "shared-memory:shm-key=k1",
                          "--grpc-restricted-protocol", "shared-memory:shm-key=k2")
    try:
        server.wait_ready()
        register = json.dumps({"key": secret, "byte_size": 16})
        path = "/v2/systemsharedmemory/region/r/register"
        assert server.request("POST", path, register)[0] == 403
        assert server.request("POST", path, register, {"shm-key": "k1"})[0] == 200
        assert server.request("POST", "/v2/systemsharedmemory/unregister", None, {"shm-key": "k1"})[0] == 200
        # Logging is not in the group: still closed.
        assert server.request("GET", "/v2/logging", None, {"shm-key": "k1"})[0] == 403
        assert "SECURITY" not in server.log()
    finally:
        server.stop()


@pytest.mark.parametrize("flag, value, needle", [
    ("--allow-admin-api", "inference", "'inference' has no admin operations to open"),
    ("--allow-admin-api", "", "--allow-admin-api"),
    ("--allow-client-shm", "yes", "must be true or false"),
])
def test_bad_flag_values_are_refused_at_start(repo, flag, value, needle):
    with pytest.raises(RuntimeError) as err:
        InferaServer(repo, flag, value)
    assert needle in str(err.value)

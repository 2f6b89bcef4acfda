"""Triton's system shared-memory extension over real sockets, with real POSIX shm objects.

The client side reproduces what `tritonclient.utils.shared_memory` + `tritonclient.http` /
`tritonclient.grpc` put on the wire: the client creates the object (here with
multiprocessing.shared_memory, i.e. /dev/shm/<name>, key "/<name>"), registers a range of
it under a region name, and names the region in the inputs' / outputs' parameters
(shared_memory_region, shared_memory_byte_size, shared_memory_offset). Inputs carry no
data; shm outputs come back with name/datatype/shape/parameters and no data.
"""

import json
import struct
import tempfile
import threading
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc, stub  # noqa: F401 (stub: pytest fixture)
from infera_server import InferaServer, SIMPLE_CONFIG, write_model

IDENTITY = """name: "{name}"
backend: "identity"
max_batch_size: 0
input [ {{ name: "INPUT0" data_type: {dtype} dims: [ -1 ] }} ]
output [ {{ name: "OUTPUT0" data_type: {dtype} dims: [ -1 ] }} ]
"""

TOKEN = "shm-admin-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
GRPC_AUTH = (("authorization", f"Bearer {TOKEN}"),)


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-shm-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        write_model(path, "identity_fp32", IDENTITY.format(name="identity_fp32", dtype="TYPE_FP32"))
        write_model(path, "identity_bytes", IDENTITY.format(name="identity_bytes", dtype="TYPE_STRING"))
        yield path


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo, "--admin-token", TOKEN)
    s.wait_ready()
    yield s
    s.stop()


class Shm:
    """A client-created POSIX shm object (what tritonclient's create_shared_memory_region makes)."""

    def __init__(self, size):
        self.mem = shared_memory.SharedMemory(create=True, size=size)
        self.key = "/" + self.mem.name
        self.size = size

    def write(self, offset, data):
        self.mem.buf[offset:offset + len(data)] = data

    def read(self, offset, size):
        return bytes(self.mem.buf[offset:offset + size])

    def close(self):
        self.mem.close()
        self.mem.unlink()


@pytest.fixture
def shm():
    made = []

    def make(size):
        made.append(Shm(size))
        return made[-1]

    yield make
    for m in made:
        m.close()


def http_register(server, name, key, byte_size, offset=0, headers=AUTH):
    body = json.dumps({"key": key, "offset": offset, "byte_size": byte_size})
    status, _, data = server.request("POST", f"/v2/systemsharedmemory/region/{name}/register", body,
                                     headers)
    return status, data


def http_unregister(server, name=None, headers=AUTH):
    path = "/v2/systemsharedmemory" + (f"/region/{name}" if name else "") + "/unregister"
    status, _, data = server.request("POST", path, None, headers)
    return status, data


def shm_params(region, byte_size, offset=0):
    params = {"shared_memory_region": region, "shared_memory_byte_size": byte_size}
    if offset:
        params["shared_memory_offset"] = offset
    return params


def ints(values):
    return struct.pack("<%di" % len(values), *values)


def unints(data):
    return list(struct.unpack("<%di" % (len(data) // 4), data))


def grpc_params(params, target):
    for key, value in params.items():
        if isinstance(value, str):
            target[key].string_param = value
        else:
            target[key].int64_param = value


# --- registration ------------------------------------------------------------------------

def test_metadata_lists_the_extension(server, stub):
    _, meta = server.get_json("/v2")
    assert "system_shared_memory" in meta["extensions"]
    assert "system_shared_memory" in stub.ServerMetadata(pb.ServerMetadataRequest()).extensions


def test_http_register_status_unregister(server, shm):
    region = shm(4096)
    status, body = http_register(server, "reg_a", region.key, 1024, offset=512)
    assert status == 200, body
    status, listed = server.get_json("/v2/systemsharedmemory/region/reg_a/status")
    assert status == 200
    assert listed == [{"name": "reg_a", "key": region.key, "offset": 512, "byte_size": 1024}]
    status, body = http_register(server, "reg_a", region.key, 8)
    assert status == 409 and b"already in manager" in body
    assert http_unregister(server, "reg_a")[0] == 200
    status, _, body = server.request("GET", "/v2/systemsharedmemory/region/reg_a/status")
    assert status == 404 and b"reg_a" in body
    assert server.get_json("/v2/systemsharedmemory/status") == (200, [])


def test_grpc_register_status_unregister(stub, shm):
    region = shm(4096)
    stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
        name="g_reg", key=region.key, offset=0, byte_size=4096), metadata=GRPC_AUTH)
    status = stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(name="g_reg"))
    assert status.regions["g_reg"].key == region.key
    assert status.regions["g_reg"].byte_size == 4096
    with pytest.raises(grpc.RpcError) as dup:
        stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name="g_reg", key=region.key, byte_size=16), metadata=GRPC_AUTH)
    assert dup.value.code() == grpc.StatusCode.ALREADY_EXISTS
    stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name=""), metadata=GRPC_AUTH)
    assert len(stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest()).regions) == 0


# --- inference ---------------------------------------------------------------------------

def test_http_simple_inputs_and_outputs_in_shm(server, shm):
    ins, outs = shm(128), shm(4096)
    a, b = list(range(16)), [3] * 16
    ins.write(0, ints(a))
    ins.write(64, ints(b))
    assert http_register(server, "h_in", ins.key, 128)[0] == 200
    assert http_register(server, "h_out", outs.key, 256, offset=1024)[0] == 200
    try:
        payload = {"inputs": [
            {"name": "INPUT0", "datatype": "INT32", "shape": [1, 16], "parameters": shm_params("h_in", 64)},
            {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16],
             "parameters": shm_params("h_in", 64, 64)}],
            "outputs": [{"name": "OUTPUT0", "parameters": shm_params("h_out", 64)},
                        {"name": "OUTPUT1", "parameters": shm_params("h_out", 64, 128)}]}
        status, _, body = server.infer("simple", payload)
        assert status == 200, body
        response = json.loads(body)
        by_name = {o["name"]: o for o in response["outputs"]}
        assert by_name["OUTPUT0"] == {"name": "OUTPUT0", "datatype": "INT32", "shape": [1, 16],
                                      "parameters": shm_params("h_out", 64)}
        assert by_name["OUTPUT1"]["parameters"] == shm_params("h_out", 64, 128)
        assert "data" not in by_name["OUTPUT1"]
        assert unints(outs.read(1024, 64)) == [x + y for x, y in zip(a, b)]
        assert unints(outs.read(1024 + 128, 64)) == [x - y for x, y in zip(a, b)]
        # Mixed: one input in shm, one as JSON; one output in shm, one as JSON.
        payload["inputs"][1] = {"name": "INPUT1", "datatype": "INT32", "shape": [1, 16], "data": [1] * 16}
        payload["outputs"][1] = {"name": "OUTPUT1"}
        status, _, body = server.infer("simple", payload)
        assert status == 200, body
        by_name = {o["name"]: o for o in json.loads(body)["outputs"]}
        assert by_name["OUTPUT1"]["data"] == [x - 1 for x in a]
        assert unints(outs.read(1024, 64)) == [x + 1 for x in a]
    finally:
        http_unregister(server)


def test_grpc_identity_and_simple_in_shm(server, stub, shm):
    region = shm(8192)
    values = [0.5, -1.25, 3.0, 1e6, 7.75]
    region.write(0, struct.pack("<5f", *values))
    stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
        name="g_io", key=region.key, offset=0, byte_size=8192), metadata=GRPC_AUTH)
    try:
        request = pb.ModelInferRequest(model_name="identity_fp32")
        tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[5])
        grpc_params(shm_params("g_io", 20), tensor.parameters)
        out = request.outputs.add(name="OUTPUT0")
        grpc_params(shm_params("g_io", 20, 4096), out.parameters)
        response = stub.ModelInfer(request)
        assert response.outputs[0].name == "OUTPUT0" and list(response.outputs[0].shape) == [5]
        assert response.outputs[0].parameters["shared_memory_region"].string_param == "g_io"
        assert response.outputs[0].parameters["shared_memory_byte_size"].int64_param == 20
        assert response.outputs[0].parameters["shared_memory_offset"].int64_param == 4096
        assert list(struct.unpack("<5f", region.read(4096, 20))) == values

        # simple: INPUT0 in shm, INPUT1 raw (raw_input_contents has one entry, for
        # INPUT1); OUTPUT0 in shm, OUTPUT1 raw (its raw entry stays at index 1).
        region.write(128, ints(list(range(16))))
        request = pb.ModelInferRequest(model_name="simple")
        t0 = request.inputs.add(name="INPUT0", datatype="INT32", shape=[1, 16])
        grpc_params(shm_params("g_io", 64, 128), t0.parameters)
        request.inputs.add(name="INPUT1", datatype="INT32", shape=[1, 16])
        request.raw_input_contents.append(ints([2] * 16))
        o0 = request.outputs.add(name="OUTPUT0")
        grpc_params(shm_params("g_io", 64, 6000), o0.parameters)
        request.outputs.add(name="OUTPUT1")
        response = stub.ModelInfer(request)
        names = [o.name for o in response.outputs]
        assert unints(region.read(6000, 64)) == [x + 2 for x in range(16)]
        assert unints(response.raw_output_contents[names.index("OUTPUT1")]) == [x - 2 for x in range(16)]
        assert response.raw_output_contents[names.index("OUTPUT0")] == b""
    finally:
        stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="g_io"),
                                          metadata=GRPC_AUTH)


def test_grpc_stream_with_shm(stub, shm):
    region = shm(4096)
    stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
        name="g_stream", key=region.key, byte_size=4096), metadata=GRPC_AUTH)
    try:
        requests = []
        for i in range(4):
            region.write(i * 64, struct.pack("<4f", i, i + 0.5, -i, 2.0 * i))
            request = pb.ModelInferRequest(model_name="identity_fp32", id=str(i))
            tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[4])
            grpc_params(shm_params("g_stream", 16, i * 64), tensor.parameters)
            out = request.outputs.add(name="OUTPUT0")
            grpc_params(shm_params("g_stream", 16, 2048 + i * 64), out.parameters)
            requests.append(request)
        responses = list(stub.ModelStreamInfer(iter(requests), timeout=30))
        assert len(responses) == 4
        for r in responses:
            assert r.error_message == "", r.error_message
            i = int(r.infer_response.id)
            assert struct.unpack("<4f", region.read(2048 + i * 64, 16)) == (i, i + 0.5, -i, 2.0 * i)
    finally:
        stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="g_stream"),
                                          metadata=GRPC_AUTH)


def test_bytes_input_and_output_in_shm(server, shm):
    region = shm(1024)
    elements = [b"hello", b"", b"shared \xff memory"]
    serialized = b"".join(struct.pack("<I", len(e)) + e for e in elements)
    region.write(0, serialized)
    assert http_register(server, "b_io", region.key, 1024)[0] == 200
    try:
        payload = {"inputs": [{"name": "INPUT0", "datatype": "BYTES", "shape": [3],
                               "parameters": shm_params("b_io", len(serialized))}],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("b_io", 512, 512)}]}
        status, _, body = server.infer("identity_bytes", payload)
        assert status == 200, body
        out = json.loads(body)["outputs"][0]
        assert out["parameters"]["shared_memory_byte_size"] == len(serialized)
        assert region.read(512, len(serialized)) == serialized
        # A length prefix running past shared_memory_byte_size.
        payload["inputs"][0]["parameters"] = shm_params("b_io", len(serialized) - 1)
        status, _, body = server.infer("identity_bytes", payload)
        assert status == 400, body
    finally:
        http_unregister(server)


# --- hostile input -----------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    lambda key: {"key": key, "offset": 0, "byte_size": 4097},           # past the object's end
    lambda key: {"key": key, "offset": 4000, "byte_size": 200},         # past the end via offset
    lambda key: {"key": key, "offset": 2**64 - 1, "byte_size": 8},      # offset overflow
    lambda key: {"key": key, "offset": 2**63 - 1, "byte_size": 2},      # int64 overflow
    lambda key: {"key": key, "offset": -1, "byte_size": 8},
    lambda key: {"key": key, "byte_size": 0},
    lambda key: {"key": "/..", "byte_size": 8},
    lambda key: {"key": "/../" + key.lstrip("/"), "byte_size": 8},
    lambda key: {"key": key + "/x", "byte_size": 8},
    lambda key: {"key": "/infera_no_such_region_object", "byte_size": 8},
    lambda key: {"key": 7, "byte_size": 8},
    lambda key: {"offset": 0, "byte_size": 8},
    lambda key: {"key": key},
    lambda key: [key],
])
def test_hostile_register_is_400(server, shm, body):
    region = shm(4096)
    status, _, data = server.request("POST", "/v2/systemsharedmemory/region/bad/register",
                                     json.dumps(body(region.key)), AUTH)
    assert status == 400, data
    assert json.loads(data)["error"]
    assert server.get_json("/v2/systemsharedmemory/status") == (200, [])
    server.assert_serving()


def test_hostile_register_names_and_bodies(server, shm, stub):
    region = shm(64)
    ok = json.dumps({"key": region.key, "byte_size": 8})
    for path, expected in [("/v2/systemsharedmemory/region/a%2Fb/register", 400),
                           ("/v2/systemsharedmemory/region/" + "n" * 300 + "/register", 400),
                           ("/v2/systemsharedmemory/region/a%00b/register", 400),
                           ("/v2/systemsharedmemory/register", 400)]:  # no name: Triton's 400
        status, _, data = server.request("POST", path, ok, AUTH)
        assert status == expected, (path, data)
    for body in [b"", b"{", b"[" * 5000, b"\xff\xfe", b"{\"key\":\"" + b"k" * 100000 + b"\",\"byte_size\":8}"]:
        status, _, data = server.request("POST", "/v2/systemsharedmemory/region/r/register", body, AUTH)
        assert status == 400, (body[:20], data)
    with pytest.raises(grpc.RpcError) as bad:
        stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name="g", key="/..", byte_size=8), metadata=GRPC_AUTH)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as past:
        stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name="g", key=region.key, offset=2**64 - 8, byte_size=16), metadata=GRPC_AUTH)
    assert past.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert server.get_json("/v2/systemsharedmemory/status") == (200, [])
    server.assert_serving()


def test_hostile_infer_parameters(server, stub, shm):
    region = shm(256)
    assert http_register(server, "hx", region.key, 128)[0] == 200
    try:
        def infer(in_params, out_params=None, data=None):
            inp = {"name": "INPUT0", "datatype": "FP32", "shape": [4], "parameters": in_params}
            if data is not None:
                inp["data"] = data
            payload = {"inputs": [inp]}
            if out_params is not None:
                payload["outputs"] = [{"name": "OUTPUT0", "parameters": out_params}]
            status, _, body = server.infer("identity_fp32", payload)
            return status, json.loads(body).get("error", "")

        status, error = infer(shm_params("nope", 16))
        assert status == 400 and "nope" in error
        status, error = infer(shm_params("hx", 16, 120))
        assert status == 400 and "for shared memory region: 'hx'" in error
        status, error = infer(shm_params("hx", 16, 2**63 - 1))
        assert status == 400
        status, error = infer(shm_params("hx", 12))
        assert status == 400 and "needs 16 bytes" in error
        status, error = infer({"shared_memory_region": "hx"})
        assert status == 400 and "shared_memory_byte_size" in error
        status, error = infer({"shared_memory_region": "hx", "shared_memory_byte_size": -4})
        assert status == 400
        status, error = infer({"shared_memory_region": 5, "shared_memory_byte_size": 16})
        assert status == 400
        status, error = infer(shm_params("hx", 16), data=[1, 2, 3, 4])
        assert status == 400 and "shared_memory_region" in error
        # Output region too small: the error names the size needed.
        region.write(0, struct.pack("<4f", 1, 2, 3, 4))
        status, error = infer(shm_params("hx", 16), shm_params("hx", 8, 64))
        assert status == 400 and "at least 16 bytes" in error
        status, error = infer(shm_params("hx", 16), shm_params("unknown_out", 16))
        assert status == 400 and "unknown_out" in error

        # The same over gRPC.
        request = pb.ModelInferRequest(model_name="identity_fp32")
        tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[4])
        grpc_params(shm_params("nope", 16), tensor.parameters)
        with pytest.raises(grpc.RpcError) as err:
            stub.ModelInfer(request)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "nope" in err.value.details()
        grpc_params(shm_params("hx", 16), tensor.parameters)
        out = request.outputs.add(name="OUTPUT0")
        grpc_params(shm_params("hx", 4), out.parameters)
        with pytest.raises(grpc.RpcError) as err:
            stub.ModelInfer(request)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "at least 16 bytes" in err.value.details()
        # Raw contents for an input that is in shm: the count no longer matches.
        request.raw_input_contents.append(b"\0" * 16)
        with pytest.raises(grpc.RpcError) as err:
            stub.ModelInfer(request)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        http_unregister(server)
    server.assert_serving()


def test_unregister_during_traffic(server, shm):
    """Inference keeps reading a region while another client unregisters and re-registers
    it: every answer is either correct or a clean 400 naming the region, never a crash."""
    region = shm(4096)
    values = [float(i) for i in range(256)]
    region.write(0, struct.pack("<256f", *values))
    assert http_register(server, "churn", region.key, 4096)[0] == 200
    payload = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [256],
                                      "parameters": shm_params("churn", 1024)}]}).encode()
    results = {"ok": 0, "missing": 0}
    errors = []
    done = threading.Event()

    def traffic():
        try:
            while not done.is_set() or results["ok"] + results["missing"] < 50:
                status, _, body = server.infer("identity_fp32", payload)
                if status == 200:
                    assert json.loads(body)["outputs"][0]["data"] == values
                    results["ok"] += 1
                else:
                    assert status == 400 and b"churn" in body, body
                    results["missing"] += 1
                if results["ok"] + results["missing"] >= 400:
                    break
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    worker = threading.Thread(target=traffic)
    worker.start()
    for _ in range(100):
        assert http_unregister(server, "churn")[0] == 200
        # A request still holding the region keeps it registered (as Triton): the name is
        # free again only once that request ends.
        status, body = http_register(server, "churn", region.key, 4096)
        assert status == 200 or (status == 409 and b"already in manager" in body), (status, body)
    done.set()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert not errors, errors
    assert results["ok"] > 0
    http_unregister(server)
    server.assert_serving()


# --- access control and CUDA ---------------------------------------------------------------

def test_admin_token_guards_registration(server, stub, shm):
    region = shm(64)
    status, data = http_register(server, "auth", region.key, 64, headers={})
    assert status == 401, data
    status, data = http_register(server, "auth", region.key, 64, headers={"Authorization": "Bearer no"})
    assert status == 401
    assert http_unregister(server, headers={})[0] == 401
    assert server.get_json("/v2/systemsharedmemory/status")[0] == 200  # a read
    with pytest.raises(grpc.RpcError) as err:
        stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name="auth", key=region.key, byte_size=64))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as err:
        stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest())
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert server.get_json("/v2/systemsharedmemory/status") == (200, [])


def test_restricted_category_covers_status(repo, shm):
    s = InferaServer(repo, "--http-restricted-api", "shared-memory:shm-key=v",
                     "--grpc-restricted-protocol", "shared-memory:shm-key=v")
    try:
        s.wait_ready()
        assert s.request("GET", "/v2/systemsharedmemory/status")[0] == 403
        assert s.request("GET", "/v2/systemsharedmemory/status", None, {"shm-key": "v"})[0] == 200
        region = shm(64)
        status, data = http_register(s, "r", region.key, 64, headers={"shm-key": "v"})
        assert status == 200, data
        with grpc.insecure_channel(f"127.0.0.1:{s.grpc_port}") as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as err:
                stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest())
            assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
            status = stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(),
                                                   metadata=(("triton-grpc-protocol-shm-key", "v"),))
            assert list(status.regions) == ["r"]
    finally:
        s.stop()


def test_cuda_shared_memory_answers_as_a_cpu_only_triton(server, stub):
    """Triton's shm examples call unregister_cuda_shared_memory() first: a CPU-only Triton
    answers it (and status) with success; only registering fails, naming the GPUs."""
    assert server.get_json("/v2/cudasharedmemory/status") == (200, [])
    for path in ("/v2/cudasharedmemory/unregister", "/v2/cudasharedmemory/region/c/unregister"):
        assert server.request("POST", path, b"", AUTH)[0] == 200, path
    status, _, body = server.request("POST", "/v2/cudasharedmemory/region/c/register",
                                     json.dumps({"raw_handle": {"b64": ""}, "device_id": 0, "byte_size": 8}),
                                     AUTH)
    assert status == 400 and b"failed to register CUDA shared memory region: 'c', GPUs not supported" in body
    assert len(stub.CudaSharedMemoryStatus(pb.CudaSharedMemoryStatusRequest()).regions) == 0
    stub.CudaSharedMemoryUnregister(pb.CudaSharedMemoryUnregisterRequest(), metadata=GRPC_AUTH)
    stub.CudaSharedMemoryUnregister(pb.CudaSharedMemoryUnregisterRequest(name="c"), metadata=GRPC_AUTH)
    with pytest.raises(grpc.RpcError) as err:
        stub.CudaSharedMemoryRegister(pb.CudaSharedMemoryRegisterRequest(name="c", byte_size=8),
                                      metadata=GRPC_AUTH)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "failed to register CUDA shared memory region: 'c', GPUs not supported" in err.value.details()

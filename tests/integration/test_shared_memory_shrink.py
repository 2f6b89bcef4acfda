"""A client's shared-memory object changed under the server (issue 26, finding 2).

The registering client owns the POSIX shm object and can shrink (ftruncate), rewrite or
unlink it at any time. Before the fix the server mapped the object and handed the mapping
to the model as the input: a request queued behind a batching delay read a page past the
new end and the whole process died of SIGBUS (exit 135); an output write could hit the
same race. Now the server keeps only a file descriptor: inputs are copied (pread) when
the request is accepted and outputs written with pwrite after a size check, so a shrink
is at worst an error for the requests that use the region — the server keeps serving.

Every test waits on events (the queue-depth gauge, the answers), never on sleeps.
"""

import json
import os
import struct
import tempfile
import threading
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, wait_for, write_model

# A request waits in the dynamic batcher for up to 1.5 s (nothing else arrives to fill
# the batch): long enough to shrink the object while it is queued, observed through the
# queue-depth gauge.
DELAYED = """name: "delayed"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
dynamic_batching { max_queue_delay_microseconds: 1500000 }
"""
IDENTITY = """name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""
IDENTITY3_FP64 = """name: "identity3_fp64"
backend: "identity"
max_batch_size: 0
input [ { name: "A" data_type: TYPE_FP64 dims: [ -1 ] }, { name: "B" data_type: TYPE_FP64 dims: [ -1 ] },
        { name: "C" data_type: TYPE_FP64 dims: [ -1 ] } ]
output [ { name: "X" data_type: TYPE_FP64 dims: [ -1 ] }, { name: "Y" data_type: TYPE_FP64 dims: [ -1 ] },
         { name: "Z" data_type: TYPE_FP64 dims: [ -1 ] } ]
"""
VALUES = [float(i) + 0.5 for i in range(64)]  # 256 bytes of FP32


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-shm-shrink-") as repo:
        write_model(repo, "delayed", DELAYED)
        write_model(repo, "identity_fp32", IDENTITY)
        write_model(repo, "identity3_fp64", IDENTITY3_FP64)
        s = InferaServer(repo, "--allow-client-shm", "true")
        s.wait_ready()
        yield s
        s.stop()  # exits 0: still alive after every test


class Shm:
    def __init__(self, size):
        self.mem = shared_memory.SharedMemory(create=True, size=size)
        self.key = "/" + self.mem.name
        self.fd = os.open("/dev/shm/" + self.mem.name, os.O_RDWR)

    def write(self, offset, data):
        self.mem.buf[offset:offset + len(data)] = data

    def truncate(self, size):
        os.ftruncate(self.fd, size)  # the test never touches self.mem.buf afterwards

    def size(self):
        return os.fstat(self.fd).st_size

    def close(self):
        os.close(self.fd)
        self.mem.close()
        try:
            self.mem.unlink()
        except FileNotFoundError:
            pass


@pytest.fixture
def shm():
    made = []

    def make(size):
        made.append(Shm(size))
        return made[-1]

    yield make
    for m in made:
        m.close()


def register(server, name, key, byte_size, offset=0):
    body = json.dumps({"key": key, "offset": offset, "byte_size": byte_size})
    status, _, data = server.request("POST", f"/v2/systemsharedmemory/region/{name}/register", body)
    assert status == 200, data


def unregister_all(server):
    assert server.request("POST", "/v2/systemsharedmemory/unregister")[0] == 200


def shm_params(region, byte_size, offset=0):
    params = {"shared_memory_region": region, "shared_memory_byte_size": byte_size}
    if offset:
        params["shared_memory_offset"] = offset
    return params


def shm_input(region, shape=(1, 64), byte_size=256, offset=0):
    return {"name": "INPUT0", "datatype": "FP32", "shape": list(shape),
            "parameters": shm_params(region, byte_size, offset)}


def infer_in_background(server, model, payload):
    result = {}

    def run():
        result["answer"] = server.infer(model, payload)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def queued(server, model, depth=1):
    wait_for(lambda: server.model_gauge("infera_queue_depth", model) == depth, timeout=60)


def test_input_object_shrunk_while_the_request_is_queued(server, shm):
    """The issue's reproduction: register 256 B, infer to a model with a batching delay,
    ftruncate to 0 while the request is queued. The input was copied when the request was
    accepted: it is answered with the bytes it was sent with."""
    region = shm(256)
    region.write(0, struct.pack("<64f", *VALUES))
    register(server, "q_in", region.key, 256)
    try:
        thread, result = infer_in_background(server, "delayed", {"inputs": [shm_input("q_in")]})
        queued(server, "delayed")
        region.truncate(0)
        thread.join(timeout=60)
        status, _, body = result["answer"]
        assert status == 200, body
        assert json.loads(body)["outputs"][0]["data"] == VALUES
        # A request after the shrink: a clear 400 naming it, before it is queued.
        status, _, body = server.infer("delayed", {"inputs": [shm_input("q_in")]})
        assert status == 400 and "shrank to 0 bytes" in json.loads(body)["error"], body
    finally:
        unregister_all(server)
    server.assert_serving()


def test_output_object_shrunk_while_the_request_is_queued(server, shm):
    region = shm(256)
    register(server, "q_out", region.key, 256)
    try:
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 64], "data": VALUES}],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("q_out", 256)}]}
        thread, result = infer_in_background(server, "delayed", payload)
        queued(server, "delayed")
        region.truncate(0)
        thread.join(timeout=60)
        status, _, body = result["answer"]
        assert status == 400, body
        error = json.loads(body)["error"]
        assert "output 'OUTPUT0'" in error and "shrank to 0 bytes" in error, error
        assert region.size() == 0  # the refused write did not grow the client's object back
    finally:
        unregister_all(server)
    server.assert_serving()


def test_grpc_input_object_shrunk_while_queued(server, shm):
    region = shm(256)
    region.write(0, struct.pack("<64f", *VALUES))
    register(server, "g_in", region.key, 256)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            request = pb.ModelInferRequest(model_name="delayed")
            tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 64])
            tensor.parameters["shared_memory_region"].string_param = "g_in"
            tensor.parameters["shared_memory_byte_size"].int64_param = 256
            future = stub.ModelInfer.future(request, timeout=60)
            queued(server, "delayed")
            region.truncate(0)
            response = future.result()
            assert list(struct.unpack("<64f", response.raw_output_contents[0])) == VALUES
            with pytest.raises(grpc.RpcError) as err:
                stub.ModelInfer(request, timeout=60)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "shrank" in err.value.details()
    finally:
        unregister_all(server)
    server.assert_serving()


def test_region_shrunk_between_registration_and_bind(server, shm):
    region = shm(8192)
    register(server, "early", region.key, 4096, offset=4096)
    try:
        region.truncate(4096 + 100)  # part of the registered range is gone
        status, _, body = server.infer("identity_fp32", {"inputs": [shm_input("early", (64,))]})
        assert status == 400 and "shrank to 4196 bytes" in json.loads(body)["error"], body
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [2], "data": [1, 2]}],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("early", 8)}]}
        status, _, body = server.infer("identity_fp32", payload)
        assert status == 400 and "output 'OUTPUT0'" in json.loads(body)["error"], body
        region.truncate(8192)  # grown back: usable again
        status, _, body = server.infer("identity_fp32", {"inputs": [shm_input("early", (64,))]})
        assert status == 200, body
    finally:
        unregister_all(server)
    server.assert_serving()


def resized_under_traffic(server, region, size, payload, requests):
    """`requests` infers of `payload` while another thread shrinks `region`'s object to 0
    and grows it back to `size` as fast as it can: every answer is a 200 or a 400 naming
    the shrink, and the server lives."""
    stop = threading.Event()
    resizes = [0]

    def resize():
        while not stop.is_set():
            region.truncate(0)
            region.truncate(size)
            resizes[0] += 1

    resizer = threading.Thread(target=resize)
    resizer.start()
    answers = {200: 0, 400: 0}
    try:
        for _ in range(requests):
            status, _, body = server.infer("identity_fp32", payload)
            assert status in answers, (status, body)
            if status == 400:
                assert b"shrank" in body, body
            answers[status] += 1
    finally:
        stop.set()
        resizer.join(timeout=60)
        unregister_all(server)
    assert answers[200] > 0 and answers[400] > 0 and resizes[0] > 0, answers
    server.assert_serving()


def test_input_object_resized_under_traffic(server, shm):
    """The JSON answer is encoded from the input (identity): before the fix the encoder
    read the client's mapping (16 KiB: the encoding takes a while) and died."""
    region = shm(16384)
    register(server, "churn_in", region.key, 16384)
    resized_under_traffic(server, region, 16384, {"inputs": [shm_input("churn_in", (4096,), 16384)]}, 500)


def test_output_object_resized_under_traffic(server, shm):
    """Outputs (256 KiB, from an input in a region left alone) written into a region whose
    object shrinks and grows: before the fix a shrink between the size check and the
    memcpy killed the server."""
    size = 1 << 18
    stable, region = shm(size), shm(size)
    register(server, "stable_in", stable.key, size)
    register(server, "churn_out", region.key, size)
    payload = {"inputs": [shm_input("stable_in", (size // 4,), size)],
               "outputs": [{"name": "OUTPUT0", "parameters": shm_params("churn_out", size)}]}
    resized_under_traffic(server, region, size, payload, 500)


def test_object_unlinked_after_registration(server, shm):
    """shm_unlink removes the name only: the server's descriptor keeps the object, as the
    client's own mapping does."""
    region = shm(256)
    region.write(0, struct.pack("<64f", *VALUES))
    register(server, "gone", region.key, 256)
    try:
        region.mem.unlink()
        payload = {"inputs": [shm_input("gone", (64,))],
                   "outputs": [{"name": "OUTPUT0", "parameters": shm_params("gone", 256)}]}
        status, _, body = server.infer("identity_fp32", payload)
        assert status == 200, body
        status, _, body = server.request("POST", "/v2/systemsharedmemory/region/again/register",
                                         json.dumps({"key": region.key, "byte_size": 8}))
        assert status == 400 and b"No such file" in body, body
    finally:
        unregister_all(server)


@pytest.mark.parametrize("params, needle", [
    (shm_params("hx", 256, 1), "for shared memory region: 'hx'"),          # offset + size past the region
    (shm_params("hx", 256, 2**62), "for shared memory region: 'hx'"),      # offset far past the object
    (shm_params("hx", 2**62), "for shared memory region: 'hx'"),          # a huge size
    (shm_params("hx", 256, -1), "shared_memory_offset"),
])
def test_hostile_ranges_are_400(server, shm, params, needle):
    region = shm(256)
    register(server, "hx", region.key, 256)
    try:
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [64], "parameters": params}]}
        status, _, body = server.infer("identity_fp32", payload)
        assert status == 400 and needle in json.loads(body)["error"], body
        payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [64], "data": VALUES}],
                   "outputs": [{"name": "OUTPUT0", "parameters": params}]}
        status, _, body = server.infer("identity_fp32", payload)
        assert status == 400, body
    finally:
        unregister_all(server)
    server.assert_serving()


def test_huge_sparse_object_is_bounded_per_request(server, shm):
    """A sparse 1 TiB object registers (nothing is mapped); a request whose inputs name
    1.2 GB of it in all (three 400 MB inputs, each within the per-tensor element limit) is
    refused before anything is allocated; a small read of it works."""
    region = shm(4096)
    region.truncate(1 << 40)
    register(server, "huge", region.key, 1 << 40)
    try:
        count = 50_000_000  # 400 MB of FP64 per input
        inputs = [{"name": name, "datatype": "FP64", "shape": [count],
                   "parameters": shm_params("huge", count * 8, i * count * 8)}
                  for i, name in enumerate("ABC")]
        status, _, body = server.infer("identity3_fp64", {"inputs": inputs})
        assert status == 400, body
        assert "input 'C': the request's inputs in shared memory exceed the limit of 1073741824 bytes" \
            in json.loads(body)["error"], body
        status, _, body = server.infer("identity_fp32", {"inputs": [shm_input("huge", (4,), 16, 1 << 39)]})
        assert status == 200 and json.loads(body)["outputs"][0]["data"] == [0.0] * 4, body
    finally:
        unregister_all(server)
        region.truncate(4096)
    server.assert_serving()


@pytest.mark.parametrize("key", ["/etc/passwd", "/../etc/passwd", "etc/passwd/", "/dev/shm/x", "/", "/."])
def test_keys_outside_the_shm_filesystem_are_400(server, key):
    status, _, body = server.request("POST", "/v2/systemsharedmemory/region/p/register",
                                     json.dumps({"key": key, "byte_size": 8}))
    assert status == 400, body
    assert server.get_json("/v2/systemsharedmemory/status") == (200, [])

"""A randomised lifecycle stress test against the real binary (issue 26): several client
threads load (from the repository and with config overrides, ensembles naming each other
and themselves included), unload, infer (HTTP JSON and gRPC, ensembles nested three deep,
a batching model so that requests queue) and register / use / unregister shared memory,
all at once, for a configurable time.

It passes when no answer is outside what each operation may answer (no 500, no dropped
connection: a crash or a hung request fails it), every shared-memory infer returns exactly
what was written, the server answers and loads again at the end, and it exits 0 on SIGTERM
(under ASan: no leak, no report).

    INFERA_STRESS_SECONDS   how long the clients run (default 10: the `make test` run)
    INFERA_STRESS_THREADS   client threads (default 4)
    INFERA_STRESS_SEED      the random seed (default: from the clock; printed)
    INFERA_STRESS_SHM_SHRINK  1 (default): also shrink a registered shared-memory object to
                            0 bytes while a request that reads it is queued (issue 26,
                            finding 2); 0: leave shared memory alone

The Done run of issue 26: build-asan's binary, INFERA_STRESS_SECONDS=60, 20 runs in a row
(docs/reliability.md has the figures)."""

import json
import os
import random
import struct
import tempfile
import threading
import time
from multiprocessing import shared_memory

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

SECONDS = float(os.environ.get("INFERA_STRESS_SECONDS", "10"))
THREADS = int(os.environ.get("INFERA_STRESS_THREADS", "4"))
SEED = int(os.environ.get("INFERA_STRESS_SEED", str(int(time.time()))))
SHM_SHRINK = os.environ.get("INFERA_STRESS_SHM_SHRINK", "1") == "1"

TOKEN = "stress-admin-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
GRPC_AUTH = (("authorization", f"Bearer {TOKEN}"),)

IO = """max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 4 ] } ]
"""
# Models the clients load, unload and override; shm_* are only inferred (exact checks).
MODELS = ["ident", "slow", "e_a", "e_b", "e_c"]
INFERRED = MODELS + ["nope"]


def step(model, source, target):
    return (f'{{ model_name: "{model}" input_map {{ key: "X" value: "{source}" }} '
            f'output_map {{ key: "Y" value: "{target}" }} }}')


def ensemble_text(name, models):
    steps = [step(m, "X" if i == 0 else f"t{i - 1}", "Y" if i + 1 == len(models) else f"t{i}")
             for i, m in enumerate(models)]
    return f'name: "{name}"\nplatform: "ensemble"\n{IO}ensemble_scheduling {{ step [ {", ".join(steps)} ] }}\n'


def write_repo(repo):
    write_model(repo, "ident", f'name: "ident"\nbackend: "identity"\n{IO}')
    write_model(repo, "slow", f'name: "slow"\nbackend: "fault_injection"\n{IO}'
                'dynamic_batching { max_queue_delay_microseconds: 2000 }\n'
                'parameters { key: "delay_ms" value { string_value: "2" } }\n')
    write_model(repo, "e_a", ensemble_text("e_a", ["ident"]))
    write_model(repo, "e_b", ensemble_text("e_b", ["e_a", "slow"]))
    write_model(repo, "e_c", ensemble_text("e_c", ["e_b", "ident"]))
    shm_io = ('max_batch_size: 0\ninput [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n'
              'output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]\n')
    write_model(repo, "shm_ident", f'name: "shm_ident"\nbackend: "identity"\n{shm_io}')
    write_model(repo, "shm_slow", f'name: "shm_slow"\nbackend: "fault_injection"\n{shm_io}'
                'parameters { key: "delay_ms" value { string_value: "50" } }\n')


def override(rng, name):
    """A config override for `name`: an ensemble of 1-3 steps over any model (cycles and
    self-references are refused with a 400), an identity, or a fault_injection model with
    a delay from 0 ms to 3 ms (or a hostile one: refused)."""
    kind = rng.random()
    if kind < 0.6:
        models = [rng.choice(MODELS) for _ in range(rng.randint(1, 3))]
        steps = [{"model_name": m, "input_map": {"X": "X" if i == 0 else f"t{i - 1}"},
                  "output_map": {"Y": "Y" if i + 1 == len(models) else f"t{i}"}} for i, m in enumerate(models)]
        config = {"platform": "ensemble", "ensemble_scheduling": {"step": steps}}
    elif kind < 0.8:
        config = {"backend": "identity"}
    else:
        delay = rng.choice(["0", "1", "3", "nan", "-1"])
        config = {"backend": "fault_injection", "parameters": {"delay_ms": {"string_value": delay}}}
    config.update({"name": name, "max_batch_size": 8,
                   "input": [{"name": "X", "data_type": "TYPE_INT32", "dims": [4]}],
                   "output": [{"name": "Y", "data_type": "TYPE_INT32", "dims": [4]}]})
    return config


class Client:
    """One client thread's operations; records what it saw."""

    def __init__(self, server, index, deadline, failures, counts, lock):
        self.server, self.rng, self.deadline = server, random.Random(SEED * 1000 + index), deadline
        self.failures, self.counts, self.lock = failures, counts, lock
        self.index = index
        self.channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self.stub = pb_grpc.GRPCInferenceServiceStub(self.channel)

    def expect(self, what, status, allowed, detail=b""):
        with self.lock:
            self.counts[(what, status)] = self.counts.get((what, status), 0) + 1
            if status not in allowed:
                self.failures.append(f"{what}: {status} {detail[:300]!r}")

    def run(self):
        operations = [(self.http_infer, 30), (self.grpc_infer, 20), (self.load, 10), (self.load_override, 15),
                      (self.unload, 7), (self.shm_infer, 13)]
        if SHM_SHRINK:
            operations.append((self.shm_shrink, 5))
        functions, weights = zip(*operations)
        try:
            while time.monotonic() < self.deadline and len(self.failures) < 20:
                self.rng.choices(functions, weights)[0]()
        except Exception as error:  # a dropped connection: the server died or hung up
            self.failures.append(f"client {self.index}: {type(error).__name__}: {error}")
        finally:
            self.channel.close()

    def http_infer(self):
        model = self.rng.choice(INFERRED)
        values = [self.rng.randint(-1000, 1000) for _ in range(4)]
        body = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "INT32", "data": values}]}
        status, _, data = self.server.infer(model, body)
        # 400: an override changed the model's tensors (or an ensemble's step no longer
        # matches); 404: unknown; 429: queue full; 503: not loaded, or a step not ready.
        self.expect("http infer", status, {200, 400, 404, 429, 503}, data)
        if status == 200 and json.loads(data)["outputs"][0]["data"] != values:
            self.failures.append(f"http infer {model}: {values} came back as {data[:200]!r}")

    def grpc_infer(self):
        model = self.rng.choice(INFERRED)
        values = [self.rng.randint(-1000, 1000) for _ in range(4)]
        request = pb.ModelInferRequest(model_name=model)
        request.inputs.add(name="X", datatype="INT32", shape=[1, 4])
        request.raw_input_contents.append(struct.pack("<4i", *values))
        try:
            response = self.stub.ModelInfer(request, timeout=60)
            self.expect("grpc infer", "OK", {"OK"})
            if list(struct.unpack("<4i", response.raw_output_contents[0])) != values:
                self.failures.append(f"grpc infer {model}: {values} came back changed")
        except grpc.RpcError as error:
            allowed = {"INVALID_ARGUMENT", "NOT_FOUND", "RESOURCE_EXHAUSTED", "UNAVAILABLE", "FAILED_PRECONDITION"}
            self.expect("grpc infer", error.code().name, allowed, (error.details() or "").encode())

    def load(self):
        name = self.rng.choice(MODELS)
        status, _, data = self.server.request("POST", f"/v2/repository/models/{name}/load", "", AUTH)
        self.expect("load", status, {200, 400, 429}, data)

    def load_override(self):
        name = self.rng.choice(MODELS)
        config = override(self.rng, name)
        if self.rng.random() < 0.5:
            body = json.dumps({"parameters": {"config": json.dumps(config)}})
            status, _, data = self.server.request("POST", f"/v2/repository/models/{name}/load", body, AUTH)
            self.expect("load override", status, {200, 400, 429}, data)
            return
        request = pb.RepositoryModelLoadRequest(model_name=name)
        request.parameters["config"].string_param = json.dumps(config)
        try:
            self.stub.RepositoryModelLoad(request, metadata=GRPC_AUTH, timeout=120)
            self.expect("grpc load override", "OK", {"OK"})
        except grpc.RpcError as error:
            self.expect("grpc load override", error.code().name, {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"},
                        (error.details() or "").encode())

    def unload(self):
        name = self.rng.choice(MODELS)
        status, _, data = self.server.request("POST", f"/v2/repository/models/{name}/unload", "", AUTH)
        self.expect("unload", status, {200, 404, 429}, data)

    def register(self, region, key, size):
        body = json.dumps({"key": key, "offset": 0, "byte_size": size})
        status, _, data = self.server.request("POST", f"/v2/systemsharedmemory/region/{region}/register", body, AUTH)
        self.expect("shm register", status, {200}, data)
        return status == 200

    def unregister(self, region):
        status, _, data = self.server.request("POST", f"/v2/systemsharedmemory/region/{region}/unregister", None, AUTH)
        self.expect("shm unregister", status, {200}, data)

    def shm_infer(self):
        values = [self.rng.randint(-2**31, 2**31 - 1) for _ in range(self.rng.randint(1, 64))]
        memory = shared_memory.SharedMemory(create=True, size=4 * len(values))
        region = f"stress_{self.index}"
        try:
            memory.buf[:4 * len(values)] = struct.pack(f"<{len(values)}i", *values)
            if not self.register(region, "/" + memory.name, 4 * len(values)):
                return
            try:
                body = {"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [len(values)],
                                    "parameters": {"shared_memory_region": region,
                                                   "shared_memory_byte_size": 4 * len(values)}}]}
                status, _, data = self.server.infer("shm_ident", body)
                self.expect("shm infer", status, {200}, data)
                if status == 200 and json.loads(data)["outputs"][0]["data"] != values:
                    self.failures.append("shm infer: the output is not what was written")
            finally:
                self.unregister(region)
        finally:
            memory.close()
            memory.unlink()

    def shm_shrink(self):
        """A request reading a region is queued behind a 50 ms one; the object shrinks to
        0 bytes meanwhile (issue 26, finding 2): the request may fail, the server may not."""
        memory = shared_memory.SharedMemory(create=True, size=256)
        region = f"shrink_{self.index}"
        try:
            if not self.register(region, "/" + memory.name, 256):
                return
            body = {"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [64],
                                "parameters": {"shared_memory_region": region, "shared_memory_byte_size": 256}}]}
            answers = []
            before = inflight(self.server, "shm_slow")
            requests = [threading.Thread(target=lambda: answers.append(self.server.infer("shm_slow", body)[0]))
                        for _ in range(2)]
            for thread in requests:
                thread.start()
            # Both in the model's hands (one running, one queued behind it), then shrink.
            deadline = time.monotonic() + 10
            while inflight(self.server, "shm_slow") < before + 2 and answers == [] and time.monotonic() < deadline:
                pass
            os.ftruncate(memory._fd, 0)
            for thread in requests:
                thread.join()
            for status in answers:
                self.expect("shm infer after shrink", status, {200, 400, 503})
            self.unregister(region)
        finally:
            memory.close()
            memory.unlink()


def inflight(server, model):
    """Requests of `model` the server holds now (its infera_inflight_requests gauge)."""
    text = server.request("GET", "/metrics")[2].decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("infera_inflight_requests{") and f'model="{model}"' in line)


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-stress-") as repo:
        write_repo(repo)
        s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "*", "--admin-token", TOKEN)
        try:
            s.wait_ready()
            yield s
        finally:
            s.stop()  # exit code 0: under ASan, no leak and no report at shutdown


def test_random_loads_unloads_infers_and_shared_memory_from_several_threads(server):
    print(f"stress: {SECONDS} s, {THREADS} threads, seed {SEED}, shm shrink {'on' if SHM_SHRINK else 'off'}")
    failures, counts, lock = [], {}, threading.Lock()
    deadline = time.monotonic() + SECONDS
    clients = [Client(server, i, deadline, failures, counts, lock) for i in range(THREADS)]
    threads = [threading.Thread(target=client.run) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 300)
        assert not thread.is_alive(), "a client is stuck: a request was never answered"
    total = sum(counts.values())
    print(f"stress: {total} operations: " + ", ".join(f"{w} {s}: {n}" for (w, s), n in sorted(counts.items(),
                                                                                         key=str)))
    assert not failures, f"seed {SEED}: " + "\n".join(failures[:20])
    assert server.process.poll() is None, server.log()[-5000:]
    # Still serving, and still loading: back to the repository's configs, a nested request.
    for name in ("ident", "slow", "e_a", "e_b", "e_c"):
        status, _, data = server.request("POST", f"/v2/repository/models/{name}/load", "", AUTH)
        assert status == 200, (name, data)
    body = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "INT32", "data": [4, 3, 2, 1]}]}
    status, _, data = server.infer("e_c", body)
    assert status == 200 and json.loads(data)["outputs"][0]["data"] == [4, 3, 2, 1], data
    assert server.request("GET", "/v2/health/ready")[0] == 200
    assert total > 10 * THREADS, counts  # the clients did run

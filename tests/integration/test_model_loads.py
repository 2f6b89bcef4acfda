"""Repository loads run off the transport threads, black box (issue 13, finding 8).

Forty concurrent gRPC RepositoryModelLoad calls of slow-loading models used to occupy
gRPC's callback threads (each load ran on one) and stalled an unrelated ModelInfer for
seconds. Loads now queue on the server's admin executor: an inference answers while
the loads are still pending, and every load still completes."""

import json
import os
import struct
import tempfile
import threading
import time

import grpc

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer

NUM_LOADS = 40

FAST = """
name: "fast"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
"""

# Its warmup makes each load take about 0.5 s: 40 of them on two workers, 10 s.
SLOW_LOADING = """
name: "NAME"
backend: "fault_injection"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "500" } }
model_warmup [ { name: "w" batch_size: 1
                 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } } ]
"""


def write_model(repo, name, config):
    os.makedirs(os.path.join(repo, name, "1"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config.replace("NAME", name))


def test_concurrent_grpc_loads_do_not_stall_inference():
    with tempfile.TemporaryDirectory(prefix="infera-loads-") as repo:
        write_model(repo, "fast", FAST)
        for k in range(NUM_LOADS):
            write_model(repo, f"slow{k}", SLOW_LOADING)
        server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "fast")
        try:
            server.wait_ready()
            with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
                stub = pb_grpc.GRPCInferenceServiceStub(channel)
                loads = [stub.RepositoryModelLoad.future(pb.RepositoryModelLoadRequest(model_name=f"slow{k}"),
                                                         timeout=600)
                         for k in range(NUM_LOADS)]
                # Wait (over HTTP) until the loads are under way.
                deadline = time.time() + 60
                while not _any_loading_or_loaded(server):
                    assert time.time() < deadline, server.log()
                    time.sleep(0.02)
                request = pb.ModelInferRequest(model_name="fast")
                tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[2])
                tensor.contents.fp32_contents.extend([1.5, 2.5])
                response = stub.ModelInfer(request, timeout=120)
                pending = sum(1 for f in loads if not f.done())
                values = (struct.unpack("<2f", response.raw_output_contents[0]) if response.raw_output_contents
                          else tuple(response.outputs[0].contents.fp32_contents))
                assert values == (1.5, 2.5)
                # The inference did not wait for the loads: most are still queued.
                assert pending > NUM_LOADS // 2, (pending, server.log()[-3000:])
                for f in loads:
                    f.result()  # every load succeeds (raises on an error status)
                for k in range(NUM_LOADS):
                    assert stub.ModelReady(pb.ModelReadyRequest(name=f"slow{k}")).ready
        finally:
            server.stop()


def _any_loading_or_loaded(server):
    entries = json.loads(server.request("POST", "/v2/repository/index", "")[2])
    return any(e["name"].startswith("slow") and e.get("state") in ("LOADING", "READY") for e in entries)


def test_a_full_load_queue_answers_429_with_retry_after():
    """One load runs (its warmup takes 6 s) on the only worker; 64 more wait (the
    queue's limit); one more is refused at once with 429 and Retry-After."""
    queue_limit = 64
    with tempfile.TemporaryDirectory(prefix="infera-load-queue-") as repo:
        write_model(repo, "fast", FAST)
        write_model(repo, "slow", SLOW_LOADING.replace('"500"', '"1000"').replace(
            'batch_size: 1\n', 'batch_size: 1 count: 6\n'))
        server = InferaServer(repo, "--model-control-mode", "explicit", "--model-load-thread-count", "1")
        try:
            server.wait_ready()
            results, lock = [], threading.Lock()

            def load(model):
                status, headers, _ = server.request("POST", f"/v2/repository/models/{model}/load", "")
                with lock:
                    results.append((model, status, headers.get("Retry-After")))

            threads = [threading.Thread(target=load, args=("slow",))]
            threads[0].start()
            deadline = time.time() + 60
            while not _any_loading_or_loaded(server):
                assert time.time() < deadline, server.log()
                time.sleep(0.02)
            # The queue fills with (quick) loads of "fast"; one more than it holds.
            for _ in range(queue_limit + 1):
                threads.append(threading.Thread(target=load, args=("fast",)))
                threads[-1].start()
            # The refusal comes while the slow load still runs.
            deadline = time.time() + 60
            while not any(status == 429 for _, status, _ in list(results)):
                assert time.time() < deadline, (results, server.log()[-3000:])
                time.sleep(0.02)
            assert not any(model == "slow" for model, _, _ in list(results))
            for t in threads:
                t.join(120)
            refused = [r for r in results if r[1] == 429]
            assert len(refused) == 1 and refused[0][0] == "fast" and int(refused[0][2]) >= 1, results
            assert sorted(status for _, status, _ in results) == [200] * (queue_limit + 1) + [429]
            assert server.request("GET", "/v2/models/slow/ready")[0] == 200
        finally:
            server.stop()

"""KServe v2 gRPC client stubs generated at import time from proto/*.proto by Debian's
grpc_tools (a different protoc and gRPC implementation from the server's), for the
gRPC tests (test_grpc.py and the few gRPC calls of other suites).

    from grpc_stubs import pb, pb_grpc, health_pb2, health_pb2_grpc
    from grpc_stubs import stub  # the module-scoped `stub` fixture (needs a `server` fixture)
    from grpc_stubs import SLOW_CONFIG, slow_request, slow_stats  # a 300 ms model to queue behind
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import struct

import grpc
import pytest

from infera_server import ROOT


def _generate():
    out = tempfile.mkdtemp(prefix="infera-grpc-stubs-")
    atexit.register(shutil.rmtree, out, True)
    proto_dir = os.path.join(ROOT, "proto")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_dir}", f"--python_out={out}",
                    f"--grpc_python_out={out}", "grpc_service.proto", "model_config.proto", "health.proto"],
                   check=True, cwd=proto_dir)
    sys.path.insert(0, out)


_generate()
import grpc_service_pb2 as pb  # noqa: E402,F401
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402,F401
import health_pb2  # noqa: E402,F401
import health_pb2_grpc  # noqa: E402,F401


@pytest.fixture(scope="module")
def stub(server):
    """A GRPCInferenceService stub on one insecure channel to the module's `server`
    fixture (an InferaServer), closed when the module's tests are done."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


# `slow`: one instance that takes 300 ms per request (the fault_injection backend), for
# tests that need a request executing and others queued behind it.
SLOW_CONFIG = """
name: "slow"
backend: "fault_injection"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 } ]
parameters { key: "delay_ms" value { string_value: "300" } }
"""


def slow_request(rid):
    request = pb.ModelInferRequest(model_name="slow", id=rid)
    request.inputs.add(name="INPUT0", datatype="INT32", shape=[1])
    request.raw_input_contents.append(struct.pack("<i", 7))
    return request


def slow_stats(stub):
    return stub.ModelStatistics(pb.ModelStatisticsRequest(name="slow")).model_stats[0]

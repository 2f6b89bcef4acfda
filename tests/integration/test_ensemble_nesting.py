"""Ensemble nesting (issue 26, findings 1 and 3), black box over HTTP and gRPC.

Both used to kill the server with SIGSEGV: two ensembles made to name each other through
load-API config overrides (the nesting check read the configs on disk; the first infer
recursed on an HTTP I/O thread), and loading a chain of 3,000 nested single-step ensembles
(recursive, quadratic loading on one admin thread). Now the load that would close the
cycle, or nest more than 16 ensembles deep (kMaxEnsembleDepth), is refused with a 400 /
INVALID_ARGUMENT naming the chain, the server keeps serving and stays ready, and a chain
at the bound loads and answers."""

import json
import struct
import tempfile
import time

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model

DEPTH = 16  # kMaxEnsembleDepth (repository/config_limits.h)
CHAIN = 3000
IO = """max_batch_size: 4
input [ { name: "X" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 4 ] } ]
"""


def ensemble_text(name, step):
    return (f'name: "{name}"\nplatform: "ensemble"\n{IO}ensemble_scheduling {{ step [ {{ model_name: "{step}" '
            f'input_map {{ key: "X" value: "X" }} output_map {{ key: "Y" value: "Y" }} }} ] }}\n')


def ensemble_json(name, step):
    """The same ensemble as a load-API override (protobuf JSON)."""
    return {"name": name, "platform": "ensemble", "max_batch_size": 4,
            "input": [{"name": "X", "data_type": "TYPE_INT32", "dims": [4]}],
            "output": [{"name": "Y", "data_type": "TYPE_INT32", "dims": [4]}],
            "ensemble_scheduling": {"step": [{"model_name": step, "input_map": {"X": "X"},
                                              "output_map": {"Y": "Y"}}]}}


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-nesting-") as repo:
        write_model(repo, "ident", f'name: "ident"\nbackend: "identity"\n{IO}')
        write_model(repo, "ens_p", ensemble_text("ens_p", "ident"))
        write_model(repo, "ens_q", ensemble_text("ens_q", "ident"))
        for i in range(CHAIN):
            write_model(repo, f"c{i}", ensemble_text(f"c{i}", f"c{i + 1}" if i + 1 < CHAIN else "ident"))
        s = InferaServer(repo, "--model-control-mode", "explicit")
        try:
            s.wait_ready()
            yield s
        finally:
            s.stop()


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


def http_load(server, name, config=None):
    body = "" if config is None else json.dumps({"parameters": {"config": json.dumps(config)}})
    status, _, data = server.request("POST", f"/v2/repository/models/{name}/load", body)
    return status, (json.loads(data)["error"] if status != 200 else "")


def grpc_load(stub, name, config=None):
    request = pb.RepositoryModelLoadRequest(model_name=name)
    if config is not None:
        request.parameters["config"].string_param = json.dumps(config)
    try:
        stub.RepositoryModelLoad(request, timeout=120)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details()


def infer_values(server, name, values=(1, 2, 3, 4)):
    body = {"inputs": [{"name": "X", "shape": [1, 4], "datatype": "INT32", "data": list(values)}]}
    status, _, data = server.infer(name, body)
    assert status == 200, (name, status, data)
    return json.loads(data)["outputs"][0]["data"]


def assert_healthy(server):
    assert server.process.poll() is None, server.log()
    assert server.request("GET", "/v2/health/ready")[0] == 200
    assert infer_values(server, "ident") == [1, 2, 3, 4]


def test_a_cycle_closed_through_overrides_is_a_400_and_nothing_breaks(server, stub):
    # The reproduction: ens_q -> ens_p, then ens_p -> ens_q (answered 200 twice,
    # then the first infer recursed 17,000 frames deep and the process died).
    assert http_load(server, "ident") == (200, "")
    assert http_load(server, "ens_q", ensemble_json("ens_q", "ens_p")) == (200, "")
    status, error = http_load(server, "ens_p", ensemble_json("ens_p", "ens_q"))
    assert status == 400, (status, error)
    assert "ens_p -> ens_q -> ens_p" in error and "cycle" in error, error
    # gRPC: the same refusal, and a self-reference through an override.
    code, details = grpc_load(stub, "ens_p", ensemble_json("ens_p", "ens_q"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "ens_p -> ens_q -> ens_p" in details, (code, details)
    code, details = grpc_load(stub, "ens_q", ensemble_json("ens_q", "ens_q"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    # What served before still serves: ens_q -> ens_p (its disk config) -> ident.
    assert infer_values(server, "ens_q", (5, 6, 7, 8)) == [5, 6, 7, 8]
    assert infer_values(server, "ens_p", (9, 9, 9, 9)) == [9, 9, 9, 9]
    assert_healthy(server)
    # Unnested again, the other direction is allowed.
    assert http_load(server, "ens_q", ensemble_json("ens_q", "ident")) == (200, "")
    assert grpc_load(stub, "ens_p", ensemble_json("ens_p", "ens_q")) == (grpc.StatusCode.OK, "")
    assert infer_values(server, "ens_p") == [1, 2, 3, 4]


def test_a_chain_of_3000_nested_ensembles_is_refused_and_one_at_the_bound_serves(server, stub):
    start = time.monotonic()
    status, error = http_load(server, "c0")
    assert status == 400, (status, error[:300])
    assert f"nest more than {DEPTH} deep: c0 -> c1 -> c2" in error, error[:300]
    assert f"-> c{DEPTH}" in error and f"c{DEPTH + 1}" not in error, error
    assert time.monotonic() - start < 60, "the refusal must not load or read the whole chain"
    code, details = grpc_load(stub, "c1500")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "c1500 -> c1501" in details, (code, details[:300])
    # As any config.pbtxt that fails, the refused ones are in the index with the reason
    # (and count for readiness until unloaded); nothing below them was loaded.
    index = {e["name"]: e for e in json.loads(server.request("POST", "/v2/repository/index", "")[2])}
    assert "nest more than" in index["c0"]["reason"] and "nest more than" in index["c1500"]["reason"], index["c0"]
    assert index["c1"].get("state") != "READY" and index[f"c{CHAIN - 1}"].get("state") != "READY"
    for name in ("c0", "c1500"):
        assert server.request("POST", f"/v2/repository/models/{name}/unload", "")[0] == 200
    assert_healthy(server)
    # The bottom DEPTH levels: 16 nested ensembles over the identity load, and answer.
    top = CHAIN - DEPTH
    assert http_load(server, f"c{top}") == (200, "")
    index = {e["name"]: e for e in json.loads(server.request("POST", "/v2/repository/index", "")[2])}
    for i in range(top, CHAIN):
        assert index[f"c{i}"].get("state") == "READY", index[f"c{i}"]
    assert infer_values(server, f"c{top}", (3, 1, 4, 1)) == [3, 1, 4, 1]
    request = pb.ModelInferRequest(model_name=f"c{top}")
    request.inputs.add(name="X", datatype="INT32", shape=[1, 4])
    request.raw_input_contents.append(struct.pack("<4i", 2, 7, 1, 8))
    response = stub.ModelInfer(request, timeout=30)
    assert struct.unpack("<4i", response.raw_output_contents[0]) == (2, 7, 1, 8)
    # One more level on top of the serving chain is one too many.
    code, details = grpc_load(stub, f"c{top - 1}")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and f"c{top - 1} -> c{top}" in details, (code, details)
    assert server.request("POST", f"/v2/repository/models/c{top - 1}/unload", "")[0] == 200
    assert_healthy(server)
    assert infer_values(server, f"c{top}") == [1, 2, 3, 4]

"""The TorchScript demo models served over HTTP, checked against in-process LibTorch.

The reference is Debian's python3-torch 1.13.1 — the same LibTorch library the server
links — run at the same thread count (1). For each model both paths are checked bit for
bit:
  * plain:     server with OPTIMIZE_FOR_INFERENCE "false"  vs  torch.jit.load(...) as is
  * optimized: server default (freeze + optimize_for_inference)
               vs  torch.jit.optimize_for_inference(torch.jit.freeze(module))
through JSON tensors and through binary tensors, at batch 1 and at a multi-row batch.
"""

import json
import os
import re
import struct
import tempfile
import threading
import time

import numpy as np
import pytest
import torch

from infera_server import InferaServer, copy_model, demo_repo

torch.set_num_threads(1)

MODELS = ["resnet18", "ranker", "text_encoder"]
NUMPY = {"FP32": np.float32, "INT64": np.int64, "INT32": np.int32, "FP64": np.float64}


def with_parameters(**params):
    def edit(text):
        text = re.sub(r"\nparameters[^\n]*\{[^}]*\{[^}]*\}[^}]*\}", "", text)  # drop old ones
        for key, value in params.items():
            text += f'\nparameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'
        return text
    return edit


@pytest.fixture(scope="module")
def servers():
    source = demo_repo()
    with tempfile.TemporaryDirectory(prefix="infera-torch-") as path:
        plain = os.path.join(path, "plain")
        optimized = os.path.join(path, "optimized")
        for model in MODELS:
            copy_model(source, model, plain,
                       with_parameters(INTRA_OP_THREAD_COUNT=1, OPTIMIZE_FOR_INFERENCE="false"))
            copy_model(source, model, optimized, with_parameters(INTRA_OP_THREAD_COUNT=1))
        started = {"plain": InferaServer(plain), "optimized": InferaServer(optimized)}
        for s in started.values():
            s.wait_ready()
            assert "server is ready" in s.log(), s.log()
        yield started
        for s in started.values():
            s.stop()


def metadata(server, model):
    status, meta = server.get_json(f"/v2/models/{model}")
    assert status == 200
    return meta


def random_inputs(meta, batch, seed):
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in meta["inputs"]:
        shape = [batch] + spec["shape"][1:]
        if spec["datatype"] == "FP32":
            inputs[spec["name"]] = rng.standard_normal(shape).astype(np.float32)
        else:  # ids: small enough for every embedding table
            inputs[spec["name"]] = rng.integers(0, 100, size=shape).astype(NUMPY[spec["datatype"]])
    return inputs


def reference(model_path, inputs, optimized):
    module = torch.jit.load(model_path).eval()
    if optimized:
        module = torch.jit.optimize_for_inference(torch.jit.freeze(module))
    tensors = {name: torch.from_numpy(value) for name, value in inputs.items()}
    with torch.inference_mode():
        if all(re.search(r"__\d+$", n) for n in tensors):
            ordered = sorted(tensors.items(), key=lambda kv: int(kv[0].rsplit("__", 1)[1]))
            out = module(*[t for _, t in ordered])
        else:
            out = module(**tensors)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o.contiguous().numpy() for o in outs]


def infer_json(server, model, meta, inputs):
    payload = {"inputs": [{"name": n, "shape": list(v.shape), "datatype": s["datatype"],
                           "data": v.flatten().tolist()}
                          for s in meta["inputs"] for n, v in inputs.items() if n == s["name"]]}
    status, _, body = server.infer(model, payload)
    assert status == 200, body
    outputs = json.loads(body)["outputs"]
    return [np.array(o["data"], dtype=NUMPY[o["datatype"]]).reshape(o["shape"]) for o in outputs]


def infer_binary(server, model, meta, inputs):
    blobs, specs = [], []
    for s in meta["inputs"]:
        v = np.ascontiguousarray(inputs[s["name"]])
        blobs.append(v.tobytes())
        specs.append({"name": s["name"], "shape": list(v.shape), "datatype": s["datatype"],
                      "parameters": {"binary_data_size": v.nbytes}})
    header = json.dumps({"inputs": specs, "parameters": {"binary_data_output": True}}).encode()
    status, headers, body = server.infer(model, header + b"".join(blobs),
                                         headers={"Inference-Header-Content-Length": str(len(header))})
    assert status == 200, body
    length = int(headers["Inference-Header-Content-Length"])
    offset, outputs = length, []
    for o in json.loads(body[:length])["outputs"]:
        size = o["parameters"]["binary_data_size"]
        outputs.append(np.frombuffer(body[offset:offset + size], dtype=NUMPY[o["datatype"]]).reshape(o["shape"]))
        offset += size
    assert offset == len(body)
    return outputs


@pytest.mark.parametrize("kind", ["plain", "optimized"])
@pytest.mark.parametrize("model", MODELS)
def test_server_matches_in_process_libtorch_bit_for_bit(servers, model, kind):
    server = servers[kind]
    meta = metadata(server, model)
    model_path = os.path.join(server.repository, model, "1", "model.pt")
    for batch, seed in [(1, 1), (3, 2)]:
        inputs = random_inputs(meta, batch, seed)
        expected = reference(model_path, inputs, optimized=(kind == "optimized"))
        for got in (infer_binary(server, model, meta, inputs), infer_json(server, model, meta, inputs)):
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert g.shape == e.shape
                assert g.dtype == e.dtype
                np.testing.assert_array_equal(g, e, err_msg=f"{model} {kind} batch {batch}")


def test_metadata_of_demo_models(servers):
    meta = metadata(servers["optimized"], "resnet18")
    assert meta["platform"] == "pytorch_libtorch"
    assert meta["inputs"] == [{"name": "INPUT__0", "datatype": "FP32", "shape": [-1, 3, 224, 224]}]
    assert meta["outputs"] == [{"name": "OUTPUT__0", "datatype": "FP32", "shape": [-1, 1000]}]


def inflight(server, model):
    """infera_inflight_requests of `model` from /metrics (0 when absent)."""
    for line in server.request("GET", "/metrics")[2].decode().splitlines():
        if line.startswith("infera_inflight_requests{") and f'model="{model}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_sigterm_finishes_in_flight_requests():
    with tempfile.TemporaryDirectory(prefix="infera-drain-") as path:
        copy_model(demo_repo(), "resnet18", path)
        server = InferaServer(path)
        server.wait_ready()
        meta = metadata(server, "resnet18")
        inputs = random_inputs(meta, 8, 3)
        results = []
        started = threading.Barrier(5)

        blob = inputs["INPUT__0"].tobytes()
        header = json.dumps({"inputs": [{"name": "INPUT__0", "shape": [8, 3, 224, 224], "datatype": "FP32",
                                         "parameters": {"binary_data_size": len(blob)}}]}).encode()

        def client():
            conn = server.connection(timeout=120)
            conn.connect()
            started.wait()
            conn.request("POST", "/v2/models/resnet18/infer", header + blob,
                         headers={"Inference-Header-Content-Length": str(len(header))})
            results.append(conn.getresponse().status)

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        started.wait()
        # An event, not a sleep: all four requests are in flight (queued or executing).
        deadline = time.time() + 60
        while inflight(server, "resnet18") < 4:
            assert time.time() < deadline, "the requests never reached the server"
            time.sleep(0.01)
        server.stop()    # SIGTERM: must finish them all and exit 0
        for t in threads:
            t.join()
        assert results == [200] * 4, results

"""PRECISION on the TorchScript demo models, served by the real binary over HTTP and gRPC.

One server loads resnet18 / ranker / text_encoder at fp32 and at bf16 and int8_dynamic
(with VALIDATE_PRECISION), plus variants that must fail to load: fp16 on resnet18
(LibTorch 1.13 lacks Half CPU kernels), an impossible floor, and bad parameter values.
Outputs of each precision are compared with the fp32 model's on the same seeded inputs;
the load-time figures are read from the config answer over both transports.
"""

import json
import os
import re
import tempfile

import numpy as np
import pytest

from grpc_stubs import pb, pb_grpc
import grpc
from infera_server import InferaServer, copy_model, demo_repo

MODELS = ["resnet18", "ranker", "text_encoder"]
PRECISIONS = ["bf16", "int8_dynamic"]
NUMPY = {"FP32": np.float32, "INT64": np.int64}
# Bounds on the served outputs vs fp32 (worst per-sample cosine, and max abs error
# relative to the fp32 output's largest magnitude).
MIN_COSINE = 0.99
MAX_RELATIVE_ERROR = 0.1


def parameters(**params):
    def edit(text):
        text = text.replace("count: 2", "count: 1")  # one instance each: a faster load
        for key, value in params.items():
            text += f'\nparameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}\n'
        return text
    return edit


FAILING = {
    # name: (source model, parameters, text the repository index reason must contain)
    "resnet18_fp16": ("resnet18", {"PRECISION": "fp16"}, "PRECISION fp16: a trial run failed"),
    "ranker_floor": ("ranker", {"PRECISION": "int8_dynamic", "VALIDATE_PRECISION": "true",
                                "PRECISION_MIN_COSINE": "1.0"},
                     "PRECISION int8_dynamic is too far from fp32: cosine"),
    "ranker_bad_precision": ("ranker", {"PRECISION": "int4"},
                             "'PRECISION' has value 'int4', expected one of fp32, bf16, fp16, int8_dynamic"),
    "ranker_bad_validate": ("ranker", {"VALIDATE_PRECISION": "sometimes"},
                            "'VALIDATE_PRECISION' has value 'sometimes'"),
    "ranker_bad_cosine": ("ranker", {"VALIDATE_PRECISION": "true", "PRECISION_MIN_COSINE": "1.5"},
                          "'PRECISION_MIN_COSINE' has value '1.5', expected a number from 0 to 1"),
    "ranker_bad_top1": ("ranker", {"VALIDATE_PRECISION": "true",
                                   "PRECISION_MIN_TOP1_AGREEMENT": "high"},
                        "'PRECISION_MIN_TOP1_AGREEMENT' has value 'high'"),
    "ranker_floor_unchecked": ("ranker", {"PRECISION_MIN_COSINE": "0.5"},
                               "'PRECISION_MIN_COSINE' is set but 'VALIDATE_PRECISION' is not true"),
}


@pytest.fixture(scope="module")
def server():
    source = demo_repo()
    with tempfile.TemporaryDirectory(prefix="infera-precision-") as repo:
        for model in MODELS:
            copy_model(source, model, repo, parameters(INTRA_OP_THREAD_COUNT=1))
            for precision in PRECISIONS:
                # resnet18 is a classifier: its top-1 agreement gets a floor.
                floor = {"PRECISION_MIN_TOP1_AGREEMENT": "0.95"} if model == "resnet18" else {}
                copy_model(source, model, repo,
                           parameters(INTRA_OP_THREAD_COUNT=1, PRECISION=precision,
                                      VALIDATE_PRECISION="true", **floor),
                           new_name=f"{model}_{precision}")
        for name, (model, params, _) in FAILING.items():
            copy_model(source, model, repo, parameters(**params), new_name=name)
        s = InferaServer(repo)
        s.wait_ready(timeout=300)
        yield s
        s.stop()


def metadata(server, model):
    status, meta = server.get_json(f"/v2/models/{model}")
    assert status == 200, meta
    return meta


def seeded_inputs(meta, batch, seed):
    rng = np.random.default_rng(seed)
    inputs = {}
    for spec in meta["inputs"]:
        shape = [batch] + spec["shape"][1:]
        if spec["datatype"] == "FP32":
            if len(shape) == 4:  # image-like: smooth values in ImageNet-normalised range
                y, x = np.meshgrid(np.linspace(0, 1, shape[2]), np.linspace(0, 1, shape[3]),
                                   indexing="ij")
                phase = rng.uniform(0, 6.28, size=(batch, 3, 1, 1))
                image = 0.5 + 0.4 * np.sin(6 * x + 4 * y + phase)
                inputs[spec["name"]] = ((image - 0.45) / 0.225).astype(np.float32)
            else:
                inputs[spec["name"]] = rng.standard_normal(shape).astype(np.float32)
        else:  # ids: small enough for every embedding table
            inputs[spec["name"]] = rng.integers(0, 100, size=shape).astype(NUMPY[spec["datatype"]])
    return inputs


def infer_http(server, model, inputs):
    specs, blobs = [], []
    for name, value in inputs.items():
        dtype = "FP32" if value.dtype == np.float32 else "INT64"
        specs.append({"name": name, "datatype": dtype, "shape": list(value.shape),
                      "parameters": {"binary_data_size": value.nbytes}})
        blobs.append(value.tobytes())
    header = json.dumps({"inputs": specs, "parameters": {"binary_data_output": True}}).encode()
    status, headers, body = server.infer(
        model, header + b"".join(blobs),
        headers={"Inference-Header-Content-Length": str(len(header))})
    assert status == 200, body[:500]
    length = int(headers["Inference-Header-Content-Length"])
    answer = json.loads(body[:length])
    output = answer["outputs"][0]
    assert output["datatype"] == "FP32"  # the declared dtype, whatever the precision
    return np.frombuffer(body[length:length + output["parameters"]["binary_data_size"]],
                         dtype=np.float32).reshape(output["shape"])


def infer_grpc(stub, model, inputs):
    request = pb.ModelInferRequest(model_name=model)
    for name, value in inputs.items():
        dtype = "FP32" if value.dtype == np.float32 else "INT64"
        request.inputs.add(name=name, datatype=dtype, shape=list(value.shape))
        request.raw_input_contents.append(value.tobytes())
    response = stub.ModelInfer(request)
    assert response.outputs[0].datatype == "FP32"
    return np.frombuffer(response.raw_output_contents[0], dtype=np.float32).reshape(
        list(response.outputs[0].shape))


def compare(want, got):
    want = want.reshape(want.shape[0], -1).astype(np.float64)
    got = got.reshape(got.shape[0], -1).astype(np.float64)
    cosine = (want * got).sum(1) / (np.linalg.norm(want, axis=1) * np.linalg.norm(got, axis=1))
    relative = np.abs(want - got).max() / max(np.abs(want).max(), 1e-6)
    return cosine.min(), relative


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}",
                               options=[("grpc.max_receive_message_length", -1)]) as channel:
        yield pb_grpc.GRPCInferenceServiceStub(channel)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_precision_close_to_fp32_over_http_and_grpc(server, stub, model, precision):
    inputs = seeded_inputs(metadata(server, model), batch=4, seed=11)
    want = infer_http(server, model, inputs)
    got_http = infer_http(server, f"{model}_{precision}", inputs)
    got_grpc = infer_grpc(stub, f"{model}_{precision}", inputs)
    assert np.array_equal(got_http, got_grpc)  # one model, two transports
    assert got_http.shape == want.shape
    cosine, relative = compare(want, got_http)
    assert cosine >= MIN_COSINE, (model, precision, cosine)
    assert relative <= MAX_RELATIVE_ERROR, (model, precision, relative)
    if precision == "bf16":
        assert not np.array_equal(want, got_http)  # it really ran in bf16


def config_parameters_http(server, model):
    status, config = server.get_json(f"/v2/models/{model}/config")
    assert status == 200, config
    return {k: v["string_value"] for k, v in config.get("parameters", {}).items()}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_figures_in_config_answer_on_both_transports(server, stub, model, precision):
    name = f"{model}_{precision}"
    http = config_parameters_http(server, name)
    grpc_config = stub.ModelConfig(pb.ModelConfigRequest(name=name)).config
    over_grpc = {k: v.string_value for k, v in grpc_config.parameters.items()}
    assert http == over_grpc
    assert http["infera.precision"] == precision
    assert float(http["infera.precision.speedup"]) > 0
    assert float(http["infera.precision.cosine"]) >= 0.99
    assert float(http["infera.precision.max_abs_error"]) >= 0
    if precision == "int8_dynamic":
        # resnet18: the fc layer; ranker: its MLP; text_encoder: attention + FFN projections.
        assert int(http["infera.precision.quantized_layers"]) >= 1
    if model == "resnet18":
        assert float(http["infera.precision.top1_agreement"]) >= 0.95
    # fp32 answers carry no infera.* entries
    assert not any(k.startswith("infera.") for k in config_parameters_http(server, model))
    assert f"model '{name}': PRECISION {precision} validated against fp32" in server.log()
    assert re.search(f"model '{name}': PRECISION {precision} measured speed-up over fp32 at "
                     r"load: [0-9.e+-]+x", server.log())


def test_resnet18_bf16_top1_agreement(server):
    inputs = seeded_inputs(metadata(server, "resnet18"), batch=8, seed=5)
    want = infer_http(server, "resnet18", inputs).argmax(1)
    got = infer_http(server, "resnet18_bf16", inputs).argmax(1)
    assert (want == got).mean() >= 7 / 8, (want, got)


@pytest.mark.parametrize("name", sorted(FAILING))
def test_bad_precision_configs_fail_the_load_visibly(server, name):
    status, _, body = server.request("POST", "/v2/repository/index", b"{}")
    assert status == 200
    entries = {e["name"]: e for e in json.loads(body)}
    entry = entries[name]
    assert entry["state"] == "UNAVAILABLE", entry
    assert FAILING[name][2] in entry["reason"], entry
    status, _, _ = server.infer(name, {"inputs": []})
    assert status in (400, 404), status
    server.assert_serving()

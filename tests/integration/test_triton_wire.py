"""Triton's infer wire format, read back the way Triton's own clients read it.

- Raw binary HTTP requests (Inference-Header-Content-Length: 0: the body is the single
  input's bytes), answered with binary outputs.
- gRPC answers always in raw_output_contents, also for typed requests, decoded as
  tritonclient does (np.frombuffer; BYTES as 4-byte-length-prefixed elements).
- The classification extension over HTTP (JSON and binary) and gRPC, with label files;
  unknown per-output parameters are errors.
Every hostile case answers 4xx / INVALID_ARGUMENT naming the problem and the server keeps
serving.
"""

import json
import os
import struct
import tempfile

import grpc
import numpy as np
import pytest

from grpc_stubs import pb, stub  # noqa: F401 (stub: pytest fixture)
from infera_server import InferaServer, copy_model, demo_repo

LABELS = ["cat", "dog", "", "bird"]  # class 2 has an empty label line


def identity_config(name, datatype, dims, max_batch_size=0, label_filename=None):
    label = f' label_filename: "{label_filename}"' if label_filename else ""
    dims = ", ".join(str(d) for d in dims)
    return (f'name: "{name}" backend: "identity" max_batch_size: {max_batch_size}\n'
            f'input [ {{ name: "INPUT0" data_type: {datatype} dims: [ {dims} ] }} ]\n'
            f'output [ {{ name: "OUTPUT0" data_type: {datatype} dims: [ {dims} ]{label} }} ]\n'
            'instance_group [ { count: 1 kind: KIND_CPU } ]\n')


def write_model(repo, name, config, files=None):
    os.makedirs(os.path.join(repo, name, "1"), exist_ok=True)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config)
    for file_name, text in (files or {}).items():
        with open(os.path.join(repo, name, file_name), "w") as f:
            f.write(text)


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-triton-wire-") as repo:
        copy_model(demo_repo(), "identity_fp32", repo)
        copy_model(demo_repo(), "simple", repo)
        write_model(repo, "int32_rows", identity_config("int32_rows", "TYPE_INT32", [4], max_batch_size=8))
        write_model(repo, "bytes_one", identity_config("bytes_one", "TYPE_STRING", [1], max_batch_size=4))
        write_model(repo, "bytes_var", identity_config("bytes_var", "TYPE_STRING", [-1]))
        write_model(repo, "two_var", identity_config("two_var", "TYPE_FP32", [-1, -1]))
        write_model(repo, "classifier",
                    identity_config("classifier", "TYPE_FP32", [4], max_batch_size=8,
                                    label_filename="labels.txt"),
                    files={"labels.txt": "\n".join(LABELS) + "\n"})
        write_model(repo, "int_scores", identity_config("int_scores", "TYPE_INT64", [-1]))
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


# --- helpers: decode as tritonclient does -----------------------------------------------

def deserialize_bytes(buffer):
    """tritonclient.utils.deserialize_bytes_tensor: 4-byte little-endian length + bytes."""
    items, offset = [], 0
    while offset < len(buffer):
        (length,) = struct.unpack_from("<I", buffer, offset)
        offset += 4
        items.append(bytes(buffer[offset:offset + length]))
        offset += length
    return items


NP_TYPES = {"FP32": np.float32, "FP64": np.float64, "INT32": np.int32, "INT64": np.int64}


def as_numpy(datatype, shape, buffer):
    if datatype == "BYTES":
        return np.array(deserialize_bytes(buffer), dtype=np.object_).reshape(shape)
    return np.frombuffer(buffer, dtype=NP_TYPES[datatype]).reshape(shape)


def http_binary_outputs(headers, body):
    """tritonclient.http InferResult: JSON header, then each binary output's bytes in order."""
    length = int(headers["Inference-Header-Content-Length"])
    header = json.loads(body[:length])
    offset, outputs = length, {}
    for out in header["outputs"]:
        size = out["parameters"]["binary_data_size"]
        outputs[out["name"]] = as_numpy(out["datatype"], out["shape"], body[offset:offset + size])
        offset += size
    assert offset == len(body)
    return header, outputs


def raw_post(server, model, body, headers=None):
    all_headers = {"Inference-Header-Content-Length": "0", "Content-Type": "application/octet-stream"}
    all_headers.update(headers or {})
    return server.request("POST", f"/v2/models/{model}/infer", body, all_headers)


def grpc_outputs(response):
    return {o.name: as_numpy(o.datatype, list(o.shape), response.raw_output_contents[i])
            for i, o in enumerate(response.outputs)}


def expect_400(result, needle):
    status, _, body = result
    assert status == 400, (status, body)
    assert needle in json.loads(body)["error"], body


def expect_invalid(call, needle):
    with pytest.raises(grpc.RpcError) as error:
        call()
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    assert needle in error.value.details(), error.value.details()


# --- 1. raw binary requests -------------------------------------------------------------

def test_raw_binary_variable_dimension_from_byte_count(server):
    values = np.array([1.5, -2.0, 3.25, 1e-30, 7.0], dtype=np.float32)
    status, headers, body = raw_post(server, "identity_fp32", values.tobytes())
    assert status == 200, body
    assert headers["Content-Type"] == "application/octet-stream"
    header, outputs = http_binary_outputs(headers, body)
    assert header["model_name"] == "identity_fp32"
    assert header["outputs"][0]["shape"] == [5]
    np.testing.assert_array_equal(outputs["OUTPUT0"], values)


def test_raw_binary_batching_model_is_batch_one(server):
    values = np.array([9, -8, 7, 2147483647], dtype=np.int32)
    status, headers, body = raw_post(server, "int32_rows", values.tobytes())
    assert status == 200, body
    header, outputs = http_binary_outputs(headers, body)
    assert header["outputs"][0]["shape"] == [1, 4]
    np.testing.assert_array_equal(outputs["OUTPUT0"], values.reshape(1, 4))


def test_raw_binary_bytes_input_is_one_element(server):
    element = b"hello\x00\xffworld"
    status, headers, body = raw_post(server, "bytes_one", element)
    assert status == 200, body
    header, outputs = http_binary_outputs(headers, body)
    assert header["outputs"][0]["datatype"] == "BYTES" and header["outputs"][0]["shape"] == [1, 1]
    assert outputs["OUTPUT0"].reshape(-1).tolist() == [element]


def test_raw_binary_hostile_requests(server):
    expect_400(raw_post(server, "simple", b"\0" * 64), "Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in")
    expect_400(raw_post(server, "identity_fp32", b"\0" * 7),
               "body of 7 bytes is not a whole number of FP32 elements (4 bytes each)")
    expect_400(raw_post(server, "int32_rows", b"\0" * 12), "INT32 [1,4] needs 16 bytes; the body has 12")
    expect_400(raw_post(server, "bytes_var", b"abc"), "For BYTE datatype raw input 'INPUT0', the model must have input shape [1]")
    expect_400(raw_post(server, "two_var", b"\0" * 16), "can not be deduced because there are more than one variable-sized dimension")
    # A JSON body sent with header length 0 is taken as raw bytes, not parsed.
    expect_400(raw_post(server, "int32_rows", json.dumps({"inputs": []}).encode()),
               "raw binary request (Inference-Header-Content-Length: 0) for model 'int32_rows'")
    status, _, _ = raw_post(server, "no_such_model", b"\0" * 4)
    assert status == 404
    # Still serving, raw and JSON.
    assert raw_post(server, "identity_fp32", b"\0" * 8)[0] == 200
    status, _, _ = server.infer("identity_fp32", {"inputs": [
        {"name": "INPUT0", "datatype": "FP32", "shape": [1], "data": [1.0]}]})
    assert status == 200


# --- 2. gRPC answers in raw_output_contents -------------------------------------------

def test_grpc_typed_request_answers_raw(stub):
    request = pb.ModelInferRequest(model_name="int32_rows")
    tensor = request.inputs.add(name="INPUT0", datatype="INT32", shape=[2, 4])
    tensor.contents.int_contents.extend([1, 2, 3, 4, -5, -6, -7, -8])
    response = stub.ModelInfer(request)
    assert len(response.raw_output_contents) == 1
    assert not response.outputs[0].HasField("contents")
    np.testing.assert_array_equal(grpc_outputs(response)["OUTPUT0"],
                                  np.array([[1, 2, 3, 4], [-5, -6, -7, -8]], dtype=np.int32))


def test_grpc_typed_bytes_request_answers_length_prefixed_raw(stub):
    request = pb.ModelInferRequest(model_name="bytes_one")
    tensor = request.inputs.add(name="INPUT0", datatype="BYTES", shape=[2, 1])
    tensor.contents.bytes_contents.extend([b"first", b"\x00\xff"])
    response = stub.ModelInfer(request)
    assert response.raw_output_contents[0] == b"\x05\0\0\0first\x02\0\0\0\x00\xff"
    assert grpc_outputs(response)["OUTPUT0"].reshape(-1).tolist() == [b"first", b"\x00\xff"]


def test_grpc_typed_fp32_request_answers_raw_stream(stub):
    request = pb.ModelInferRequest(model_name="identity_fp32", id="s1")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[3]).contents.fp32_contents.extend([0.5, -1, 2])
    answers = list(stub.ModelStreamInfer(iter([request])))
    assert len(answers) == 1 and answers[0].error_message == ""
    np.testing.assert_array_equal(grpc_outputs(answers[0].infer_response)["OUTPUT0"],
                                  np.array([0.5, -1, 2], dtype=np.float32))


# --- 3. classification --------------------------------------------------------------------

SCORES = [[0.1, 0.7, 0.05, 0.15], [3.0, -1.0, 12.0, 3.0]]


def classifier_json(outputs, binary_input=False):
    return {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [2, 4], "data": SCORES}],
            "outputs": outputs}


def test_classification_http_json(server):
    status, _, body = server.infer("classifier", classifier_json(
        [{"name": "OUTPUT0", "parameters": {"classification": 2}}]))
    assert status == 200, body
    out = json.loads(body)["outputs"][0]
    assert out["datatype"] == "BYTES" and out["shape"] == [2, 2]
    assert out["data"] == ["0.700000:1:dog", "0.150000:3:bird",
                           "12.000000:2", "3.000000:0:cat"]  # class 2's label line is empty


def test_classification_http_binary_and_k_above_classes(server):
    status, headers, body = server.infer("classifier", classifier_json(
        [{"name": "OUTPUT0", "parameters": {"classification": 10, "binary_data": True}}]))
    assert status == 200, body
    _, outputs = http_binary_outputs(headers, body)
    assert outputs["OUTPUT0"].shape == (2, 4)  # k > classes: every class
    assert outputs["OUTPUT0"][1].tolist() == [b"12.000000:2", b"3.000000:0:cat", b"3.000000:3:bird",
                                              b"-1.000000:1:dog"]


def test_classification_non_batching_integer_output(server):
    status, _, body = server.infer("int_scores", {
        "inputs": [{"name": "INPUT0", "datatype": "INT64", "shape": [3], "data": [5, 40, -2]}],
        "outputs": [{"name": "OUTPUT0", "parameters": {"classification": 1}}]})
    assert status == 200, body
    out = json.loads(body)["outputs"][0]
    assert out["shape"] == [1] and out["data"] == ["40:1"]


def test_classification_grpc(stub):
    request = pb.ModelInferRequest(model_name="classifier")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[2, 4])
    request.raw_input_contents.append(np.array(SCORES, dtype=np.float32).tobytes())
    request.outputs.add(name="OUTPUT0").parameters["classification"].int64_param = 1
    response = stub.ModelInfer(request)
    assert response.outputs[0].datatype == "BYTES" and list(response.outputs[0].shape) == [2, 1]
    assert grpc_outputs(response)["OUTPUT0"].tolist() == [[b"0.700000:1:dog"], [b"12.000000:2"]]


def test_classification_and_output_parameters_hostile_http(server):
    def ask(parameters, model="classifier"):
        return server.infer(model, classifier_json([{"name": "OUTPUT0", "parameters": parameters}]))

    expect_400(ask({"clasification": 2}), "output 'OUTPUT0' has unknown parameter 'clasification'")
    expect_400(ask({"classification": 0}), "'classification' must be an integer >= 1")
    expect_400(ask({"classification": 2.5}), "'classification' must be an integer >= 1")
    expect_400(ask({"classification": "2"}), "'classification' must be an integer >= 1")
    expect_400(server.infer("bytes_one", {
        "inputs": [{"name": "INPUT0", "datatype": "BYTES", "shape": [1, 1], "data": ["x"]}],
        "outputs": [{"name": "OUTPUT0", "parameters": {"classification": 1}}]}),
        "output 'OUTPUT0' is BYTES; classification needs a numeric output")
    # The shared-memory parameter names are known (not "unknown parameter").
    status, _, body = ask({"shared_memory_region": "r", "classification": 1})
    assert b"unknown parameter" not in body, body
    status, _, _ = server.infer("classifier", classifier_json([{"name": "OUTPUT0"}]))
    assert status == 200


def test_classification_hostile_grpc(stub):
    def request(key, set_value):
        r = pb.ModelInferRequest(model_name="classifier")
        r.inputs.add(name="INPUT0", datatype="FP32", shape=[2, 4])
        r.raw_input_contents.append(np.array(SCORES, dtype=np.float32).tobytes())
        set_value(r.outputs.add(name="OUTPUT0").parameters[key])
        return r

    expect_invalid(lambda: stub.ModelInfer(request("top_k", lambda p: setattr(p, "int64_param", 2))),
                   "unknown parameter 'top_k'")
    expect_invalid(lambda: stub.ModelInfer(request("classification", lambda p: setattr(p, "int64_param", -1))),
                   "must be an integer >= 1")
    expect_invalid(lambda: stub.ModelInfer(request("classification", lambda p: setattr(p, "string_param", "3"))),
                   "must be an integer >= 1")
    ok = stub.ModelInfer(request("classification", lambda p: setattr(p, "uint64_param", 2)))
    assert list(ok.outputs[0].shape) == [2, 2]


def test_missing_label_file_is_a_load_error_naming_it():
    with tempfile.TemporaryDirectory(prefix="infera-triton-wire-labels-") as repo:
        write_model(repo, "no_labels", identity_config("no_labels", "TYPE_FP32", [4], max_batch_size=2,
                                                      label_filename="missing.txt"))
        write_model(repo, "fine", identity_config("fine", "TYPE_FP32", [-1]))
        s = InferaServer(repo)
        try:
            s.wait_ready()
            status, _, body = s.request("POST", "/v2/repository/index", b"{}")
            assert status == 200, body
            states = {m["name"]: m for m in json.loads(body)}
            assert states["fine"]["state"] == "READY"
            assert states["no_labels"]["state"] == "UNAVAILABLE"
            assert "label_filename 'missing.txt'" in states["no_labels"]["reason"], states
        finally:
            s.stop()

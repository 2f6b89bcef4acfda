#!/usr/bin/python3
"""The seeds' baseline doing the work of infera's `resnet18_classify` pipeline: Flask +
Gunicorn + PyTorch that takes a JPEG, decodes it with PIL, applies the torchvision
transforms, runs the demo repository's ResNet-18 TorchScript and returns the top-5
labels as JSON.

It is what a team writes first, like flask_kserve_server.py (its sibling for tensor
models): Gunicorn sync workers, the model loaded once per worker and run in eval mode
under torch.no_grad(), a fixed intra-op thread count (TORCH_THREADS) so every side of a
comparison uses the same threads. The preprocessing is exactly the reference pipeline of
tests/integration/test_demo_pipelines.py (and of docs/pipelines.md's image_preprocess
contract): PIL decode -> RGB -> uint8 tensor -> Resize(256, antialias=True) ->
CenterCrop(224) -> ConvertImageDtype(float) -> Normalize(ImageNet mean, std).

Run (Debian packages python3-flask, gunicorn, python3-torch, python3-torchvision,
python3-pil):

    MODEL_REPOSITORY=demo-models TORCH_THREADS=1 \\
      gunicorn -w 2 -b 127.0.0.1:8000 --chdir bench/baselines flask_classify_server:app

Routes (KServe v2 shapes, so `infera bench` drives it like infera):
    GET  /v2/health/live, /v2/health/ready
    GET  /v2/models/resnet18_classify           metadata: IMAGE BYTES [-1, 1] ->
                                                LABELS BYTES, SCORES FP32, INDICES INT64 [-1, 5]
    GET  /v2/models/resnet18_classify/config    {"max_batch_size": 8}
    POST /v2/models/resnet18_classify/infer     the image as:
         - the whole body (Triton's raw binary request, Inference-Header-Content-Length: 0,
           or no such header and a non-JSON body: curl --data-binary @cat.jpg), or
         - a KServe binary-tensor request: JSON header + IMAGE as BYTES [N, 1] (4-byte
           little-endian length before each image), what `infera bench` sends;
       answered as a KServe JSON response (labels as strings).
A bad image is a 400 naming the problem.
"""

import io
import json
import os
import struct

import torch
import torchvision.transforms as T
from flask import Flask, Response, jsonify, request
from PIL import Image
from torchvision.transforms.functional import pil_to_tensor

MODEL = "resnet18_classify"
MAX_BATCH = 8
TOP_K = 5

torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
REPOSITORY = os.environ.get("MODEL_REPOSITORY", "demo-models")
RESNET = torch.jit.load(os.path.join(REPOSITORY, "resnet18", "1", "model.pt")).eval()
with open(os.path.join(REPOSITORY, "resnet18_top5", "imagenet_classes.txt")) as f:
    LABELS = f.read().splitlines()
TRANSFORM = T.Compose([T.Resize(256, antialias=True), T.CenterCrop(224),
                       T.ConvertImageDtype(torch.float),
                       T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
app = Flask(__name__)


def error(status, message):
    response = jsonify({"error": message})
    response.status_code = status
    return response


def preprocess(data):
    image = Image.open(io.BytesIO(data))
    image.load()  # decode now: a truncated file fails here
    return TRANSFORM(pil_to_tensor(image.convert("RGB")))


def images_from_request():
    """The request's encoded images (a list of bytes), or raises ValueError."""
    body = request.get_data()
    header_length = request.headers.get("Inference-Header-Content-Length")
    if header_length is None:
        if request.mimetype == "application/json":
            raise ValueError("send the image as the body or as a binary BYTES tensor")
        return [body]
    length = int(header_length)
    if length == 0:
        return [body]
    if length < 0 or length > len(body):
        raise ValueError("Inference-Header-Content-Length is past the body")
    header = json.loads(body[:length])
    inputs = header.get("inputs", [])
    if len(inputs) != 1 or inputs[0].get("name") != "IMAGE" or inputs[0].get("datatype") != "BYTES":
        raise ValueError("expected one input IMAGE of datatype BYTES")
    size = inputs[0].get("parameters", {}).get("binary_data_size")
    if not isinstance(size, int) or length + size > len(body):
        raise ValueError("IMAGE needs binary_data_size within the body")
    blob, images, offset = body[length:length + size], [], 0
    while offset < len(blob):
        if offset + 4 > len(blob):
            raise ValueError("truncated BYTES element")
        (n,) = struct.unpack_from("<I", blob, offset)
        if offset + 4 + n > len(blob):
            raise ValueError("truncated BYTES element")
        images.append(blob[offset + 4:offset + 4 + n])
        offset += 4 + n
    return images


@app.get("/v2/health/live")
@app.get("/v2/health/ready")
def health():
    return ""


@app.get(f"/v2/models/{MODEL}")
def metadata():
    return jsonify({"name": MODEL, "versions": ["1"], "platform": "flask",
                    "inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [-1, 1]}],
                    "outputs": [{"name": "LABELS", "datatype": "BYTES", "shape": [-1, TOP_K]},
                                {"name": "SCORES", "datatype": "FP32", "shape": [-1, TOP_K]},
                                {"name": "INDICES", "datatype": "INT64", "shape": [-1, TOP_K]}]})


@app.get(f"/v2/models/{MODEL}/config")
def config():
    return jsonify({"name": MODEL, "max_batch_size": MAX_BATCH})


@app.post(f"/v2/models/{MODEL}/infer")
def infer():
    try:
        images = images_from_request()
        if not images or len(images) > MAX_BATCH:
            raise ValueError(f"1 to {MAX_BATCH} images per request, got {len(images)}")
        batch = torch.stack([preprocess(data) for data in images])
    except (ValueError, OSError, json.JSONDecodeError) as e:  # PIL raises OSError subclasses
        return error(400, f"bad image: {e}")
    with torch.no_grad():
        probs = torch.softmax(RESNET(batch), dim=1)
    scores, indices = probs.topk(TOP_K, dim=1)
    n = len(images)
    body = {"model_name": MODEL, "model_version": "1", "outputs": [
        {"name": "LABELS", "datatype": "BYTES", "shape": [n, TOP_K],
         "data": [LABELS[i] for i in indices.flatten().tolist()]},
        {"name": "SCORES", "datatype": "FP32", "shape": [n, TOP_K], "data": scores.flatten().tolist()},
        {"name": "INDICES", "datatype": "INT64", "shape": [n, TOP_K], "data": indices.flatten().tolist()}]}
    return Response(json.dumps(body), mimetype="application/json")

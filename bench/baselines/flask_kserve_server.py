#!/usr/bin/python3
"""The seeds' starting point: a straightforward Flask + PyTorch KServe-v2-JSON server.

This is the baseline `make bench` compares infera with ("seed baseline" scenario): what a
team writes first, as the seed reports describe — Flask behind Gunicorn sync workers,
each worker loading the TorchScript models with PyTorch, one request at a time per
worker, JSON in and out. It is deliberately plain (no batching, no binary tensors, no
async) but not sloppy: models are loaded once per worker, run under torch.no_grad() in
eval mode, with a fixed intra-op thread count so every side of a comparison uses the
same threads.

Run (Debian packages python3-flask, gunicorn, python3-torch):

    MODEL_REPOSITORY=demo-models TORCH_THREADS=1 \\
      gunicorn -w 2 -b 127.0.0.1:8000 --chdir bench/baselines flask_kserve_server:app

Routes (the subset of KServe v2 that `infera bench` uses):
    GET  /v2/health/live, /v2/health/ready
    GET  /v2/models/<model>              metadata (from config.pbtxt)
    GET  /v2/models/<model>/config       {"max_batch_size": N}
    POST /v2/models/<model>/infer        JSON tensors only
Serves every `pytorch_libtorch` model of the repository (MODELS=a,b restricts it).
"""

import os
import re

import torch
from flask import Flask, jsonify, request

DTYPES = {"TYPE_FP32": (torch.float32, "FP32"), "TYPE_INT64": (torch.int64, "INT64"),
          "TYPE_INT32": (torch.int32, "INT32"), "TYPE_FP64": (torch.float64, "FP64")}
KSERVE_TO_TORCH = {kserve: dtype for dtype, kserve in DTYPES.values()}
TORCH_TO_KSERVE = {dtype: kserve for dtype, kserve in DTYPES.values()}


def parse_config(text):
    """The fields of a demo config.pbtxt this server needs (name, max_batch_size,
    input/output name, data_type, dims), read with regular expressions."""
    def tensors(section):
        match = re.search(section + r"\s*\[(.*?)\n\]", text, re.S)
        if not match:
            return []
        return [{"name": name, "data_type": dtype,
                 "dims": [int(d) for d in dims.replace(" ", "").split(",") if d]}
                for name, dtype, dims in re.findall(
                    r'name:\s*"([^"]+)"\s*data_type:\s*(\w+)\s*dims:\s*\[([^\]]*)\]', match.group(1))]
    return {"name": re.search(r'^name:\s*"([^"]+)"', text, re.M).group(1),
            "platform": (re.search(r'^platform:\s*"([^"]+)"', text, re.M) or [None, ""])[1],
            "max_batch_size": int((re.search(r"^max_batch_size:\s*(\d+)", text, re.M) or [0, 0])[1]),
            "input": tensors("input"), "output": tensors("output")}


def load_models(repository, wanted):
    models = {}
    for name in sorted(os.listdir(repository)):
        config_path = os.path.join(repository, name, "config.pbtxt")
        if not os.path.isfile(config_path) or (wanted and name not in wanted):
            continue
        with open(config_path) as f:
            config = parse_config(f.read())
        if config["platform"] != "pytorch_libtorch":
            continue
        module = torch.jit.load(os.path.join(repository, name, "1", "model.pt")).eval()
        models[name] = (config, module)
    return models


torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
MODELS = load_models(os.environ.get("MODEL_REPOSITORY", "demo-models"),
                     set(filter(None, os.environ.get("MODELS", "").split(","))))
app = Flask(__name__)


def error(status, message):
    response = jsonify({"error": message})
    response.status_code = status
    return response


def client_shape(config, dims):
    return ([-1] if config["max_batch_size"] > 0 else []) + dims


@app.get("/v2/health/live")
@app.get("/v2/health/ready")
def health():
    return ""


@app.get("/v2/models/<name>")
def metadata(name):
    if name not in MODELS:
        return error(404, f"unknown model '{name}'")
    config = MODELS[name][0]
    def describe(tensors):
        return [{"name": t["name"], "datatype": DTYPES[t["data_type"]][1],
                 "shape": client_shape(config, t["dims"])} for t in tensors]
    return jsonify({"name": name, "versions": ["1"], "platform": "pytorch_libtorch",
                    "inputs": describe(config["input"]), "outputs": describe(config["output"])})


@app.get("/v2/models/<name>/config")
def model_config(name):
    if name not in MODELS:
        return error(404, f"unknown model '{name}'")
    return jsonify({"name": name, "max_batch_size": MODELS[name][0]["max_batch_size"]})


@app.post("/v2/models/<name>/infer")
def infer(name):
    if name not in MODELS:
        return error(404, f"unknown model '{name}'")
    config, module = MODELS[name]
    body = request.get_json()
    by_name = {i["name"]: i for i in body.get("inputs", [])}
    args = []
    for spec in config["input"]:  # forward() takes the inputs in config order
        tensor = by_name.get(spec["name"])
        if tensor is None:
            return error(400, f"missing input '{spec['name']}'")
        args.append(torch.tensor(tensor["data"], dtype=KSERVE_TO_TORCH[tensor["datatype"]])
                    .reshape(tensor["shape"]))
    with torch.no_grad():
        result = module(*args)
    results = result if isinstance(result, (tuple, list)) else (result,)
    outputs = [{"name": spec["name"], "datatype": TORCH_TO_KSERVE[out.dtype], "shape": list(out.shape),
                "data": out.flatten().tolist()}
               for spec, out in zip(config["output"], results)]
    return jsonify({"model_name": name, "model_version": "1", "outputs": outputs})

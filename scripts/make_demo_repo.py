#!/usr/bin/python3
"""Writes infera's demo model repository (Triton layout), deterministically.

Usage:
    /usr/bin/python3 scripts/make_demo_repo.py --out DIR [--force]

Run with Debian's /usr/bin/python3: it sees python3-torch 1.13.1 and torchvision 0.14.1,
which match libtorch-dev 1.13.1 (the server's LibTorch). No network access is needed:
every model is built from code with seeded random weights (torch.manual_seed).

Layout written (DIR is replaced as a whole; do not keep hand-made models in it):

    DIR/.stamp                      hash of this script + torch version (see below)
    DIR/resnet18/config.pbtxt       platform pytorch_libtorch, INPUT__0 -> OUTPUT__0,
                                    model_warmup (2 zero batches: absorbs the first call)
    DIR/resnet18/1/model.pt         traced torchvision resnet18, random weights
    DIR/resnet18/reference/...      sample input + expected outputs (format below)
    DIR/ranker/...                  scripted DLRM-like model, inputs bound by name:
                                    dense_features FP32 [13], categorical_ids INT64 [8]
                                    (ids 0..999) -> score FP32 [1]; max_batch_size 256
    DIR/text_encoder/...            scripted hand-written transformer encoder:
                                    INPUT__0 INT64 [16] (ids 0..8191) -> OUTPUT__0 FP32
                                    [128]; max_batch_size 64
                                    (resnet18: INPUT__0 FP32 [3,224,224] -> OUTPUT__0 FP32
                                    [1000]; max_batch_size 8)
    DIR/simple/config.pbtxt, 1/     backend add_sub (Triton's "simple" example)
    DIR/identity_fp32/config.pbtxt, 1/   backend identity

Models are saved plainly (torch.jit.save of the traced/scripted module). Python's
torch.jit.optimize_for_inference is NOT applied before saving: such files fail to load
in C++; the server freezes and optimises after loading instead.

Reference files (DIR/<model>/reference/), for checking the server against Python LibTorch:

    manifest.json
      {"model": "resnet18", "torch_version": "1.13.0a0", "num_threads": 1,
       "inputs":  [{"name": "INPUT__0", "datatype": "FP32", "shape": [2,3,224,224],
                    "file": "input.INPUT__0.bin"}],
       "outputs": {"plain":     [{"name": "OUTPUT__0", "datatype": "FP32",
                                  "shape": [2,1000], "file": "plain.OUTPUT__0.bin"}],
                   "optimized": [... "file": "optimized.OUTPUT__0.bin"]}}
    *.bin   raw tensor bytes: row-major, little-endian, exactly the KServe v2
            binary-tensor layout, so a file can be sent as a binary input as is.

"plain" is the saved module run as loaded (server parameter OPTIMIZE_FOR_INFERENCE
"false"); "optimized" is torch.jit.optimize_for_inference(torch.jit.freeze(module)) (the
server's default). Both are computed with torch.set_num_threads(1) under
torch.inference_mode(); shapes include the batch dimension (resnet18: 2, ranker: 4,
text_encoder: 3).

Idempotent: when DIR/.stamp holds the hash of this script and the torch version, the
script prints "demo models up to date" and exits 0 without touching DIR. Otherwise the
repository is built in a sibling temporary folder and renamed into place, so an
interrupted run never leaves a half-written repository.
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
import time

STAMP = ".stamp"


def stamp_text():
    """Hash of this script plus the torch/torchvision versions (without importing them)."""
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    versions = " ".join(f"{p}={importlib.metadata.version(p)}" for p in ("torch", "torchvision"))
    return f"{digest} {versions}\n"


def read_file(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="repository folder to write")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    return parser.parse_args()


# The up-to-date check runs before torch is imported: importing torch alone takes ~1 s.
if __name__ == "__main__":
    ARGS = parse_args()
    if not ARGS.force and read_file(os.path.join(ARGS.out, STAMP)) == stamp_text():
        print("demo models up to date")
        sys.exit(0)
    # TorchScript prints a module's constants in set order, which follows Python's string
    # hash; a fixed hash seed makes the saved files byte-identical from run to run.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, PYTHONHASHSEED="0"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# ---------------------------------------------------------------------------- models


class Ranker(nn.Module):
    """DLRM-like: bottom MLP on dense features, one embedding table per categorical
    feature, concatenation, top MLP, sigmoid score."""

    def __init__(self, num_dense=13, num_sparse=8, rows=1000, dim=16):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(num_dense, 64), nn.ReLU())
        self.tables = nn.ModuleList([nn.Embedding(rows, dim) for _ in range(num_sparse)])
        self.top = nn.Sequential(
            nn.Linear(64 + num_sparse * dim, 256), nn.ReLU(),
            nn.Linear(256, 256), nn.ReLU(),
            nn.Linear(256, 1))

    def forward(self, dense_features: torch.Tensor, categorical_ids: torch.Tensor):
        parts = [self.bottom(dense_features)]
        for i, table in enumerate(self.tables):
            parts.append(table(categorical_ids[:, i]))
        return torch.sigmoid(self.top(torch.cat(parts, dim=1)))


class EncoderLayer(nn.Module):
    """Pre-norm transformer layer written out by hand (nn.TransformerEncoder does not
    quantise in torch 1.13; plain Linear layers do)."""

    def __init__(self, dim: int, heads: int, ffn: int):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, ffn)
        self.ff2 = nn.Linear(ffn, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)          # each [b, h, t, d]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim ** -0.5)
        attn = torch.matmul(F.softmax(scores, dim=-1), v)        # [b, h, t, d]
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, c))
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x))))


class TextEncoder(nn.Module):
    def __init__(self, vocab=8192, seq=16, dim=128, heads=4, layers=2, ffn=512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(dim, heads, ffn) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.tokens(input_ids) + self.positions[: input_ids.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.norm(x).mean(dim=1)


# ------------------------------------------------------------------ config writing

TYPE_NAMES = {torch.float32: ("TYPE_FP32", "FP32"), torch.int64: ("TYPE_INT64", "INT64"),
              torch.int32: ("TYPE_INT32", "INT32")}


def tensor_block(name, config_type, dims):
    return (f"  {{\n    name: \"{name}\"\n    data_type: {config_type}\n"
            f"    dims: [ {', '.join(str(d) for d in dims)} ]\n  }}")


def warmup_block(inputs):
    """Two zero-filled batch-1 calls: the first is TorchScript's profiling run (30-110 ms
    here), the second the first optimised one; readiness waits for both."""
    entries = "\n".join(
        f"    inputs {{\n      key: \"{name}\"\n      value: {{\n        data_type: {config_type}\n"
        f"        dims: [ {', '.join(str(d) for d in dims)} ]\n        zero_data: true\n"
        f"      }}\n    }}" for name, config_type, dims in inputs)
    return ("model_warmup [\n  {\n    name: \"zeros\"\n    batch_size: 1\n    count: 2\n"
            f"{entries}\n  }}\n]")


def write_config(model_dir, name, runtime_line, max_batch, inputs, outputs, warmup=False,
                 instances=1):
    """inputs/outputs: lists of (name, config_type, dims)."""
    text = [f"name: \"{name}\"", runtime_line, f"max_batch_size: {max_batch}",
            "input [\n" + ",\n".join(tensor_block(*i) for i in inputs) + "\n]",
            "output [\n" + ",\n".join(tensor_block(*o) for o in outputs) + "\n]",
            f"instance_group [\n  {{\n    count: {instances}\n    kind: KIND_CPU\n  }}\n]"]
    if warmup:
        text.append(warmup_block(inputs))
    with open(os.path.join(model_dir, "config.pbtxt"), "w") as f:
        f.write("\n".join(text) + "\n")


def write_tensor(ref_dir, file_name, name, tensor):
    tensor = tensor.contiguous()
    with open(os.path.join(ref_dir, file_name), "wb") as f:
        f.write(tensor.numpy().tobytes())  # x86/arm64: little-endian already
    return {"name": name, "datatype": TYPE_NAMES[tensor.dtype][1],
            "shape": list(tensor.shape), "file": file_name}


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def write_reference(model_dir, name, module, inputs, output_names):
    """Runs `module` plain and frozen+optimised at 1 thread; writes manifest + .bin."""
    ref_dir = os.path.join(model_dir, "reference")
    os.makedirs(ref_dir)
    manifest = {"model": name, "torch_version": torch.__version__.split("+")[0],
                "num_threads": 1, "inputs": [], "outputs": {}}
    for in_name, tensor in inputs:
        manifest["inputs"].append(write_tensor(ref_dir, f"input.{in_name}.bin", in_name, tensor))
    optimized = torch.jit.optimize_for_inference(torch.jit.freeze(module.eval()))
    args = [t for _, t in inputs]
    for variant, m in (("plain", module), ("optimized", optimized)):
        with torch.inference_mode():
            outs = as_tuple(m(*args))
        manifest["outputs"][variant] = [
            write_tensor(ref_dir, f"{variant}.{o_name}.bin", o_name, out)
            for o_name, out in zip(output_names, outs)]
    with open(os.path.join(ref_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


def save_torch_model(root, name, module, max_batch, inputs, outputs, sample, instances=1):
    """inputs/outputs: (name, config_type, dims); sample: tensors matching inputs."""
    model_dir = os.path.join(root, name)
    os.makedirs(os.path.join(model_dir, "1"))
    torch.jit.save(module, os.path.join(model_dir, "1", "model.pt"))
    write_config(model_dir, name, "platform: \"pytorch_libtorch\"", max_batch, inputs, outputs,
                 warmup=True, instances=instances)
    # Reload what was saved, so the reference is computed from the exact file served.
    loaded = torch.jit.load(os.path.join(model_dir, "1", "model.pt")).eval()
    write_reference(model_dir, name, loaded,
                    [(i[0], t) for i, t in zip(inputs, sample)], [o[0] for o in outputs])


# ------------------------------------------------------------------------ the models


def make_resnet18(root):
    import torchvision
    torch.manual_seed(18)
    model = torchvision.models.resnet18(weights=None).eval()
    traced = torch.jit.trace(model, torch.randn(1, 3, 224, 224))
    sample = [torch.randn(2, 3, 224, 224)]
    # Two instances: on CPU, ResNet-18 scales with instances (1.64x for 2 x 1 thread over
    # 1 x 2 threads on 2 cores, docs/benchmarks.md "instances"), not with batching.
    save_torch_model(root, "resnet18", traced, 8,
                     [("INPUT__0", "TYPE_FP32", [3, 224, 224])],
                     [("OUTPUT__0", "TYPE_FP32", [1000])], sample, instances=2)


def make_ranker(root):
    torch.manual_seed(13)
    scripted = torch.jit.script(Ranker().eval())
    sample = [torch.randn(4, 13), torch.randint(0, 1000, (4, 8), dtype=torch.int64)]
    save_torch_model(root, "ranker", scripted, 256,
                     [("dense_features", "TYPE_FP32", [13]),
                      ("categorical_ids", "TYPE_INT64", [8])],
                     [("score", "TYPE_FP32", [1])], sample)


def make_text_encoder(root):
    torch.manual_seed(128)
    scripted = torch.jit.script(TextEncoder().eval())
    sample = [torch.randint(0, 8192, (3, 16), dtype=torch.int64)]
    save_torch_model(root, "text_encoder", scripted, 64,
                     [("INPUT__0", "TYPE_INT64", [16])],
                     [("OUTPUT__0", "TYPE_FP32", [128])], sample)


def make_builtin(root):
    simple = os.path.join(root, "simple")
    os.makedirs(os.path.join(simple, "1"))
    # Two instances: add_sub runs inline on the I/O thread, and the server has two.
    write_config(simple, "simple", "backend: \"add_sub\"", 8,
                 [("INPUT0", "TYPE_INT32", [16]), ("INPUT1", "TYPE_INT32", [16])],
                 [("OUTPUT0", "TYPE_INT32", [16]), ("OUTPUT1", "TYPE_INT32", [16])],
                 instances=2)
    identity = os.path.join(root, "identity_fp32")
    os.makedirs(os.path.join(identity, "1"))
    write_config(identity, "identity_fp32", "backend: \"identity\"", 0,
                 [("INPUT0", "TYPE_FP32", [-1])], [("OUTPUT0", "TYPE_FP32", [-1])])


# ---------------------------------------------------------------------------- driver


def build(out, stamp):
    parent = os.path.dirname(os.path.abspath(out)) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".demo-models-", dir=parent)
    try:
        make_resnet18(tmp)
        make_ranker(tmp)
        make_text_encoder(tmp)
        make_builtin(tmp)
        with open(os.path.join(tmp, STAMP), "w") as f:
            f.write(stamp)
        os.chmod(tmp, 0o755)  # mkdtemp creates 0700
        old = None
        if os.path.lexists(out):
            old = tempfile.mkdtemp(prefix=".demo-models-old-", dir=parent)
            os.rename(out, os.path.join(old, "repo"))
        os.rename(tmp, out)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main(args):
    torch.set_num_threads(1)
    start = time.monotonic()
    build(args.out, stamp_text())
    print(f"demo models written to {args.out} in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))

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
                                    model_warmup (1 zero batch: absorbs the first call)
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
    DIR/accumulate_int32/config.pbtxt, 1/  backend accumulate: a stateful sequence model
                                    (docs/sequence_batching.md): INPUT INT32 [1] ->
                                    OUTPUT INT32 [1], the running sum of the sequence

  The demo pipelines (docs/pipelines.md, "Demo pipelines"): processing-backend models,
  two seeded TorchScript models and three ensembles:

    DIR/resnet18_preprocess/        image_preprocess: IMAGE BYTES [1] -> PIXELS FP32
                                    [3,224,224] (resize 256, crop 224, ImageNet mean/std)
    DIR/resnet18_top5/              classify: LOGITS FP32 [1000] -> labels/scores/indices
                                    [5] (softmax, top 5); imagenet_classes.txt = the
                                    1000 class names of torchvision 0.14
    DIR/resnet18_classify/          ensemble: IMAGE BYTES [1] -> LABELS BYTES [5],
                                    SCORES FP32 [5], INDICES INT64 [5]; max_batch_size 8
    DIR/text_tokenize/              tokenize: TEXT BYTES [1] -> input_ids, attention_mask
                                    INT64 [16]; 1/tokenizer.json: a BERT-style WordPiece
                                    (BertNormalizer lowercase, BertPreTokenizer, [CLS] $A
                                    [SEP]) whose vocabulary (3,946 tokens) is built from
                                    Debian's fortunes-min text (most frequent words)
    DIR/text_embed_encoder/         scripted transformer encoder: input_ids +
                                    attention_mask INT64 [16] -> token_embeddings FP32
                                    [16,128]; max_batch_size 64
    DIR/text_pool/                  pool: mean over attention_mask, L2 -> embedding [128]
    DIR/text_embed/                 ensemble: TEXT BYTES [1] -> EMBEDDING FP32 [128];
                                    parameter openai_embedding_tokenizer text_tokenize
                                    (/v1/embeddings' usage.prompt_tokens)
    DIR/detector_head/              scripted detection head: image FP32 [3,128,128] ->
                                    boxes FP32 [64,4] (xyxy, pixels), scores FP32 [64,4]
                                    (sigmoid, 4 classes); max_batch_size 8
    DIR/detector_nms/               detect_postprocess: score 0.5, IoU 0.45, per class,
                                    20 detections
    DIR/detector/                   ensemble: IMAGE FP32 [3,128,128] -> DET_BOXES [20,4],
                                    DET_SCORES [20], DET_CLASSES INT64 [20],
                                    NUM_DETECTIONS INT64 [1]
    DIR/.images/                    real photographs from Debian's python3-skimage
                                    (scikit-image sample data): chelsea (a cat), coffee,
                                    astronaut, rocket, motorcycle, hubble, camera
                                    (grayscale) as JPEG quality 90, and chelsea.png as
                                    shipped. A dot folder: the repository scan skips it.

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
import re
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


class MaskedEncoderLayer(EncoderLayer):
    """EncoderLayer whose attention ignores padded keys (attention_mask == 0)."""

    def forward(self, x: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        b, t, c = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)          # each [b, h, t, d]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.head_dim ** -0.5)
        scores = scores.masked_fill(pad, -1e9)                   # pad: [b, 1, 1, t]
        attn = torch.matmul(F.softmax(scores, dim=-1), v)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, c))
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x))))


class TokenEncoder(nn.Module):
    """text_embed's encoder: token ids + attention mask -> per-token embeddings (the
    pooling is the `pool` step's job, as in sentence-transformers)."""

    def __init__(self, vocab: int, seq=16, dim=128, heads=4, layers=2, ffn=512):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.layers = nn.ModuleList([MaskedEncoderLayer(dim, heads, ffn) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        pad = (attention_mask == 0)[:, None, None, :]
        x = self.tokens(input_ids) + self.positions[: input_ids.shape[1]]
        for layer in self.layers:
            x = layer(x, pad)
        return self.norm(x)


class DetectorHead(nn.Module):
    """A small single-scale detection head: a strided conv backbone down to an 8x8 grid
    (for a 128x128 image), one anchor per cell. Returns boxes [B, 64, 4] (xyxy, pixels)
    and per-class sigmoid scores [B, 64, C]."""

    def __init__(self, classes=4, size=128, stride=16, anchor=32.0):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU())
        self.box = nn.Conv2d(64, 4, 1)
        self.cls = nn.Conv2d(64, classes, 1)
        nn.init.constant_(self.cls.bias, -0.6)  # most anchors below the score threshold
        cells = size // stride
        ys, xs = torch.meshgrid(torch.arange(cells), torch.arange(cells), indexing="ij")
        centers = torch.stack([xs.flatten(), ys.flatten()], dim=1).float() * stride + stride / 2
        self.register_buffer("centers", centers)  # [cells*cells, 2]
        self.stride = float(stride)
        self.anchor = anchor

    def forward(self, image: torch.Tensor):
        # Standardised per image and channel: random weights then give logits spread
        # enough for some anchors to pass the score threshold and for NMS to have work.
        f = F.instance_norm(self.backbone(image))
        d = self.box(f).flatten(2).transpose(1, 2)               # [B, A, 4]
        c = self.centers + torch.tanh(d[..., 0:2]) * self.stride
        wh = self.anchor * torch.exp(torch.clamp(d[..., 2:4], -1.5, 1.5))
        boxes = torch.cat([c - wh / 2, c + wh / 2], dim=-1)
        scores = torch.sigmoid(3.0 * self.cls(f).flatten(2).transpose(1, 2))
        return boxes, scores


# ------------------------------------------------------------------ config writing

TYPE_NAMES = {torch.float32: ("TYPE_FP32", "FP32"), torch.int64: ("TYPE_INT64", "INT64"),
              torch.int32: ("TYPE_INT32", "INT32")}


def tensor_block(name, config_type, dims):
    return (f"  {{\n    name: \"{name}\"\n    data_type: {config_type}\n"
            f"    dims: [ {', '.join(str(d) for d in dims)} ]\n  }}")


def warmup_block(inputs):
    """One zero-filled batch-1 call: it absorbs the first call's one-time work (the graph
    executor's plan, oneDNN primitives, allocator); readiness waits for it. One is enough
    since the backend runs frozen modules on the simple graph executor (GRAPH_EXECUTOR
    auto, docs/cold_start.md "Second step"): the next call runs at steady state. (With
    the profiling executor the first call only profiled and the second compiled again.)"""
    entries = "\n".join(
        f"    inputs {{\n      key: \"{name}\"\n      value: {{\n        data_type: {config_type}\n"
        f"        dims: [ {', '.join(str(d) for d in dims)} ]\n        zero_data: true\n"
        f"      }}\n    }}" for name, config_type, dims in inputs)
    return ("model_warmup [\n  {\n    name: \"zeros\"\n    batch_size: 1\n    count: 1\n"
            f"{entries}\n  }}\n]")


def write_config(model_dir, name, runtime_line, max_batch, inputs, outputs, warmup=False,
                 instances=1, extra=""):
    """inputs/outputs: lists of (name, config_type, dims); `extra`: pbtxt appended
    (parameters of the processing backends)."""
    text = [f"name: \"{name}\"", runtime_line, f"max_batch_size: {max_batch}",
            "input [\n" + ",\n".join(tensor_block(*i) for i in inputs) + "\n]",
            "output [\n" + ",\n".join(tensor_block(*o) for o in outputs) + "\n]",
            f"instance_group [\n  {{\n    count: {instances}\n    kind: KIND_CPU\n  }}\n]"]
    if warmup:
        text.append(warmup_block(inputs))
    if extra:
        text.append(extra.rstrip("\n"))
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


# Triton's classic sequence controls: START and READY as INT32 0/1, the direct strategy;
# a sequence idle for 10 s loses its slot.
ACCUMULATE_SEQUENCE_BATCHING = """sequence_batching {
  max_sequence_idle_microseconds: 10000000
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] }
  ]
  direct { }
}
"""


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
    accumulate = os.path.join(root, "accumulate_int32")
    os.makedirs(os.path.join(accumulate, "1"))
    write_config(accumulate, "accumulate_int32", "backend: \"accumulate\"", 8,
                 [("INPUT", "TYPE_INT32", [1])], [("OUTPUT", "TYPE_INT32", [1])],
                 extra=ACCUMULATE_SEQUENCE_BATCHING)


# ------------------------------------------------------- pipelines (docs/pipelines.md)

# Real photographs shipped by Debian's python3-skimage (scikit-image's sample data), written
# into DIR/.images/ as JPEG (quality 90) plus one PNG as shipped. The folder name starts with
# a dot so the repository scan skips it (it is not a model).
DEMO_PHOTOS = [("chelsea.png", "chelsea.jpg"),              # a cat
               ("coffee.png", "coffee.jpg"),                # a cup of coffee
               ("astronaut.png", "astronaut.jpg"),          # a portrait
               ("rocket.jpg", "rocket.jpg"),                # a rocket on its launch pad
               ("motorcycle_left.png", "motorcycle.jpg"),   # a motorcycle
               ("hubble_deep_field.jpg", "hubble.jpg"),     # 1000x872
               ("camera.png", "camera.jpg"),                # a grayscale photo (JPEG, 1 channel)
               ("chelsea.png", "chelsea.png")]              # PNG, as shipped
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXT_LENGTH = 16      # tokens per sentence (text_tokenize's max_length)
VOCAB_SIZE = 4096     # at most: specials, characters, suffixes, then the most frequent words
FORTUNE_FILES = ["/usr/share/games/fortunes/fortunes", "/usr/share/games/fortunes/literature",
                 "/usr/share/games/fortunes/riddles"]  # Debian's fortunes-min


def param(key, value):
    return f"parameters {{\n  key: \"{key}\"\n  value: {{ string_value: \"{value}\" }}\n}}\n"


def photo_dir():
    import skimage  # noqa: F401  (python3-skimage; only its data folder is used)
    return os.path.join(os.path.dirname(skimage.__file__), "data")


def make_images(root):
    from PIL import Image
    src_dir = photo_dir()
    out_dir = os.path.join(root, ".images")
    os.makedirs(out_dir)
    for src, dst in DEMO_PHOTOS:
        path = os.path.join(src_dir, src)
        if dst.endswith(".png"):
            shutil.copyfile(path, os.path.join(out_dir, dst))
            continue
        image = Image.open(path)
        image = image.convert("L" if image.mode in ("L", "I", "I;16") else "RGB")
        image.save(os.path.join(out_dir, dst), "JPEG", quality=90)


def ensemble_config(root, name, max_batch, inputs, outputs, steps, params=()):
    """steps: (model_name, {step input: ensemble tensor}, {step output: ensemble tensor});
    params: (key, value) config parameters."""
    text = [f"name: \"{name}\"", "platform: \"ensemble\"", f"max_batch_size: {max_batch}",
            "input [\n" + ",\n".join(tensor_block(*i) for i in inputs) + "\n]",
            "output [\n" + ",\n".join(tensor_block(*o) for o in outputs) + "\n]",
            "ensemble_scheduling {\n  step ["]
    entries = []
    for model, in_map, out_map in steps:
        lines = [f"      model_name: \"{model}\"", "      model_version: -1"]
        lines += [f"      input_map {{ key: \"{k}\" value: \"{v}\" }}" for k, v in in_map.items()]
        lines += [f"      output_map {{ key: \"{k}\" value: \"{v}\" }}" for k, v in out_map.items()]
        entries.append("    {\n" + "\n".join(lines) + "\n    }")
    text.append(",\n".join(entries) + "\n  ]\n}")
    text += [param(k, v).rstrip("\n") for k, v in params]
    model_dir = os.path.join(root, name)
    os.makedirs(os.path.join(model_dir, "1"))  # Triton wants a version folder, even empty
    with open(os.path.join(model_dir, "config.pbtxt"), "w") as f:
        f.write("\n".join(text) + "\n")



def processing_model(root, name, backend, max_batch, inputs, outputs, params, instances=1):
    model_dir = os.path.join(root, name)
    os.makedirs(os.path.join(model_dir, "1"))
    write_config(model_dir, name, f"backend: \"{backend}\"", max_batch, inputs, outputs,
                 instances=instances, extra="".join(param(k, v) for k, v in params))
    return model_dir


def make_resnet18_classify(root):
    """JPEG/PNG bytes -> resnet18_preprocess -> resnet18 -> resnet18_top5."""
    import torchvision
    processing_model(root, "resnet18_preprocess", "image_preprocess", 8,
                     [("IMAGE", "TYPE_STRING", [1])], [("PIXELS", "TYPE_FP32", [3, 224, 224])],
                     [("resize", "256"), ("crop", "224"), ("mean", "0.485,0.456,0.406"),
                      ("std", "0.229,0.224,0.225")], instances=2)
    top5 = processing_model(root, "resnet18_top5", "classify", 8,
                            [("LOGITS", "TYPE_FP32", [1000])],
                            [("labels", "TYPE_STRING", [5]), ("scores", "TYPE_FP32", [5]),
                             ("indices", "TYPE_INT64", [5])],
                            [("top_k", "5"), ("softmax", "true"), ("labels", "imagenet_classes.txt")])
    with open(os.path.join(top5, "imagenet_classes.txt"), "w") as f:
        f.write("\n".join(torchvision.models._meta._IMAGENET_CATEGORIES) + "\n")
    ensemble_config(root, "resnet18_classify", 8, [("IMAGE", "TYPE_STRING", [1])],
                    [("LABELS", "TYPE_STRING", [5]), ("SCORES", "TYPE_FP32", [5]),
                     ("INDICES", "TYPE_INT64", [5])],
                    [("resnet18_preprocess", {"IMAGE": "IMAGE"}, {"PIXELS": "pixels"}),
                     ("resnet18", {"INPUT__0": "pixels"}, {"OUTPUT__0": "logits"}),
                     ("resnet18_top5", {"LOGITS": "logits"},
                      {"labels": "LABELS", "scores": "SCORES", "indices": "INDICES"})])


def corpus_words():
    """Lower-cased, accent-stripped alphanumeric words of the fortunes, in text order."""
    import unicodedata
    words = []
    for path in FORTUNE_FILES:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = unicodedata.normalize("NFD", f.read().lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        words += re.findall(r"[a-z0-9]+", text)
    return words


def wordpiece_vocab():
    """A BERT-style vocabulary built deterministically from the fortune corpus: special
    tokens, single characters (bare and ## continuations), common suffixes, then the most
    frequent corpus words (count desc, then alphabetical) up to VOCAB_SIZE."""
    import collections
    import string
    vocab = list(SPECIAL_TOKENS)
    chars = list(string.punctuation) + list(string.digits) + list(string.ascii_lowercase)
    vocab += chars + ["##" + c for c in string.digits + string.ascii_lowercase]
    vocab += ["##" + s for s in ("s", "es", "ed", "ing", "ly", "er", "ers", "est", "ness", "tion",
                                 "ment", "able", "ful", "less", "al", "ous", "ive", "ity")
              if "##" + s not in vocab]
    counts = collections.Counter(corpus_words())
    seen = set(vocab)
    for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(vocab) >= VOCAB_SIZE:
            break
        if len(word) > 1 and word not in seen:
            vocab.append(word)
            seen.add(word)
    return vocab


def tokenizer_json(vocab):
    """A Hugging Face tokenizer.json (tokenizers 0.13 layout) for a BERT-style WordPiece."""
    ids = {token: i for i, token in enumerate(vocab)}
    special = [{"id": ids[t], "content": t, "single_word": False, "lstrip": False,
                "rstrip": False, "normalized": False, "special": True} for t in SPECIAL_TOKENS]
    cls, sep = {"id": "[CLS]", "type_id": 0}, {"id": "[SEP]", "type_id": 0}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": special,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": cls}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": sep}],
            "pair": [{"SpecialToken": cls}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": sep}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]}
                               for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    }


def make_text_embed(root):
    """sentence -> text_tokenize -> text_embed_encoder -> text_pool (mean, L2)."""
    vocab = wordpiece_vocab()
    tok = processing_model(root, "text_tokenize", "tokenize", 64,
                           [("TEXT", "TYPE_STRING", [1])],
                           [("input_ids", "TYPE_INT64", [TEXT_LENGTH]),
                            ("attention_mask", "TYPE_INT64", [TEXT_LENGTH])],
                           [("tokenizer", "tokenizer.json"), ("max_length", str(TEXT_LENGTH))])
    with open(os.path.join(tok, "1", "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab), f, indent=1, ensure_ascii=False)
        f.write("\n")
    torch.manual_seed(768)
    scripted = torch.jit.script(TokenEncoder(len(vocab), seq=TEXT_LENGTH).eval())
    ids = torch.randint(5, len(vocab), (3, TEXT_LENGTH), dtype=torch.int64)
    mask = torch.ones(3, TEXT_LENGTH, dtype=torch.int64)
    mask[1, 9:] = 0
    mask[2, 3:] = 0
    ids = ids * mask
    save_torch_model(root, "text_embed_encoder", scripted, 64,
                     [("input_ids", "TYPE_INT64", [TEXT_LENGTH]),
                      ("attention_mask", "TYPE_INT64", [TEXT_LENGTH])],
                     [("token_embeddings", "TYPE_FP32", [TEXT_LENGTH, 128])], [ids, mask])
    processing_model(root, "text_pool", "pool", 64,
                     [("token_embeddings", "TYPE_FP32", [TEXT_LENGTH, 128]),
                      ("attention_mask", "TYPE_INT64", [TEXT_LENGTH])],
                     [("embedding", "TYPE_FP32", [128])],
                     [("mode", "mean"), ("normalize", "true")])
    ensemble_config(root, "text_embed", 64, [("TEXT", "TYPE_STRING", [1])],
                    [("EMBEDDING", "TYPE_FP32", [128])],
                    [("text_tokenize", {"TEXT": "TEXT"},
                      {"input_ids": "input_ids", "attention_mask": "attention_mask"}),
                     ("text_embed_encoder", {"input_ids": "input_ids", "attention_mask": "attention_mask"},
                      {"token_embeddings": "token_embeddings"}),
                     ("text_pool", {"token_embeddings": "token_embeddings", "attention_mask": "attention_mask"},
                      {"embedding": "EMBEDDING"})],
                    # /v1/embeddings counts usage.prompt_tokens with this tokenize step.
                    params=[("openai_embedding_tokenizer", "text_tokenize")])


DETECTOR_SIZE = 128
DETECTOR_CLASSES = 4
DETECTOR_ANCHORS = (DETECTOR_SIZE // 16) ** 2   # 64
DETECTOR_MAX_DETECTIONS = 20


def make_detector(root):
    """FP32 image [3,128,128] -> detector_head -> detector_nms (detect_postprocess)."""
    torch.manual_seed(64)
    scripted = torch.jit.script(DetectorHead(DETECTOR_CLASSES, DETECTOR_SIZE).eval())
    sample = [torch.rand(2, 3, DETECTOR_SIZE, DETECTOR_SIZE)]
    save_torch_model(root, "detector_head", scripted, 8,
                     [("image", "TYPE_FP32", [3, DETECTOR_SIZE, DETECTOR_SIZE])],
                     [("boxes", "TYPE_FP32", [DETECTOR_ANCHORS, 4]),
                      ("scores", "TYPE_FP32", [DETECTOR_ANCHORS, DETECTOR_CLASSES])], sample)
    m = DETECTOR_MAX_DETECTIONS
    processing_model(root, "detector_nms", "detect_postprocess", 8,
                     [("boxes", "TYPE_FP32", [DETECTOR_ANCHORS, 4]),
                      ("scores", "TYPE_FP32", [DETECTOR_ANCHORS, DETECTOR_CLASSES])],
                     [("det_boxes", "TYPE_FP32", [m, 4]), ("det_scores", "TYPE_FP32", [m]),
                      ("det_classes", "TYPE_INT64", [m]), ("num_detections", "TYPE_INT64", [1])],
                     [("box_format", "xyxy"), ("score_threshold", "0.5"), ("iou_threshold", "0.45"),
                      ("max_detections", str(m)), ("class_agnostic", "false")])
    ensemble_config(root, "detector", 8, [("IMAGE", "TYPE_FP32", [3, DETECTOR_SIZE, DETECTOR_SIZE])],
                    [("DET_BOXES", "TYPE_FP32", [m, 4]), ("DET_SCORES", "TYPE_FP32", [m]),
                     ("DET_CLASSES", "TYPE_INT64", [m]), ("NUM_DETECTIONS", "TYPE_INT64", [1])],
                    [("detector_head", {"image": "IMAGE"}, {"boxes": "boxes", "scores": "scores"}),
                     ("detector_nms", {"boxes": "boxes", "scores": "scores"},
                      {"det_boxes": "DET_BOXES", "det_scores": "DET_SCORES",
                       "det_classes": "DET_CLASSES", "num_detections": "NUM_DETECTIONS"})])


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
        make_resnet18_classify(tmp)
        make_text_embed(tmp)
        make_detector(tmp)
        make_images(tmp)
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

"""The three demo pipelines of `make demo-models` (docs/pipelines.md), served by the real
binary, each checked against an equivalent in-process Python reference:

  resnet18_classify  JPEG/PNG bytes -> image_preprocess -> resnet18 -> classify (top 5)
      reference: PIL decode -> torchvision Resize(256, antialias=True) on the uint8
      tensor -> CenterCrop(224) -> ConvertImageDtype -> Normalize -> the same
      TorchScript file -> softmax -> top 5 with the ImageNet class names; on the real
      photographs of Debian's python3-skimage that the demo repository carries (.images/).
  text_embed         sentence -> tokenize (WordPiece) -> encoder -> pool (mean, L2)
      reference: a Python WordPiece (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP],
      truncation leaving room for the special tokens, [PAD] padding) -> the same
      TorchScript encoder -> mask-weighted mean -> L2; also over OpenAI /v1/embeddings.
  detector           FP32 image -> detection head -> detect_postprocess (per-class NMS)
      reference: the same TorchScript head -> a numpy greedy NMS; plus crafted
      overlapping boxes sent to the NMS step alone.

Every request form a client uses is covered: the raw binary request (the JPEG is the whole
body), a JSON header with a binary BYTES tensor, JSON tensors, batched rows, and gRPC.
Hostile inputs (not an image, truncated, wrong shape, invalid UTF-8) get a 400 /
INVALID_ARGUMENT naming the problem and the server keeps serving.

Needs a demo repository made by the current scripts/make_demo_repo.py (INFERA_DEMO_REPO).
"""

import base64
import json
import os
import struct
import tempfile
import unicodedata

import grpc
import numpy as np
import pytest
import torch

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, copy_model, demo_repo

torch.set_num_threads(1)

PIPELINE_MODELS = ["resnet18", "resnet18_preprocess", "resnet18_top5", "resnet18_classify",
                   "text_tokenize", "text_embed_encoder", "text_pool", "text_embed",
                   "detector_head", "detector_nms", "detector"]
PHOTOS = ["chelsea.jpg", "coffee.jpg", "astronaut.jpg", "rocket.jpg", "motorcycle.jpg",
          "hubble.jpg", "camera.jpg", "chelsea.png"]
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
NUMPY = {"FP32": np.float32, "INT64": np.int64, "INT32": np.int32}

# Tolerances (stated in docs/pipelines.md): image_preprocess against torchvision on the
# decoded uint8 image, in normalised units (one uint8 level is 1/255/0.225 = 0.017).
PIXEL_MAX_ABS = 0.0176   # one uint8 level (1/255/0.224); observed: bit-exact
PIXEL_MEAN_ABS = 1e-3
SCORE_ATOL = 1e-5        # top-5 softmax probabilities (random weights: each ~0.003-0.015)
EMBED_ATOL = 1e-4


# ------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def repo():
    source = demo_repo()
    missing = [m for m in PIPELINE_MODELS if not os.path.isdir(os.path.join(source, m))]
    assert not missing, f"demo repository {source} lacks {missing}: regenerate it (make demo-models)"
    return source


@pytest.fixture(scope="module")
def server(repo):
    with tempfile.TemporaryDirectory(prefix="infera-pipelines-") as path:
        for model in PIPELINE_MODELS:
            copy_model(repo, model, path)
        s = InferaServer(path)
        s.wait_ready()
        assert "server is ready" in s.log(), s.log()
        yield s
        s.stop()


@pytest.fixture(scope="module")
def grpc_stub(server):
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    yield pb_grpc.GRPCInferenceServiceStub(channel)
    channel.close()


def photo(repo, name):
    with open(os.path.join(repo, ".images", name), "rb") as f:
        return f.read()


def load_module(repo, model):
    module = torch.jit.load(os.path.join(repo, model, "1", "model.pt")).eval()
    return torch.jit.optimize_for_inference(torch.jit.freeze(module))  # the server's default


# ------------------------------------------------------------- KServe wire helpers

def parse_binary_response(headers, body):
    """{name: (datatype, shape, bytes)} of a response with binary outputs."""
    length = int({k.lower(): v for k, v in headers.items()}.get("inference-header-content-length", len(body)))
    header = json.loads(body[:length])
    offset, out = length, {}
    for o in header["outputs"]:
        if "data" in o:
            out[o["name"]] = (o["datatype"], o["shape"], o["data"])
            continue
        size = o["parameters"]["binary_data_size"]
        out[o["name"]] = (o["datatype"], o["shape"], body[offset:offset + size])
        offset += size
    assert offset == len(body), "binary outputs do not add up to the body"
    return out


def decode_tensor(datatype, shape, data):
    if isinstance(data, list):  # JSON
        if datatype == "BYTES":
            return np.array(data, dtype=object).reshape(shape)
        return np.array(data, dtype=NUMPY[datatype]).reshape(shape)
    if datatype == "BYTES":
        items, i = [], 0
        while i < len(data):
            (n,) = struct.unpack_from("<I", data, i)
            items.append(data[i + 4:i + 4 + n].decode())
            i += 4 + n
        return np.array(items, dtype=object).reshape(shape)
    return np.frombuffer(data, dtype=NUMPY[datatype]).reshape(shape)


def outputs_of(headers, body):
    return {name: decode_tensor(*v) for name, v in parse_binary_response(headers, body).items()}


def bytes_element(b):
    return struct.pack("<I", len(b)) + b


def infer_raw(server, model, body):
    """Triton's raw binary request: Inference-Header-Content-Length 0, the body is the
    single input's bytes."""
    status, headers, data = server.infer(model, body, headers={
        "Inference-Header-Content-Length": "0", "Content-Type": "application/octet-stream"})
    return status, headers, data


def infer_bytes_tensor(server, model, name, items, binary_outputs=False):
    """A JSON header plus one binary BYTES tensor of len(items) rows ([N, 1])."""
    blob = b"".join(bytes_element(b) for b in items)
    header = {"inputs": [{"name": name, "shape": [len(items), 1], "datatype": "BYTES",
                          "parameters": {"binary_data_size": len(blob)}}]}
    if binary_outputs:
        header["parameters"] = {"binary_data_output": True}
    header_bytes = json.dumps(header).encode()
    status, headers, data = server.infer(model, header_bytes + blob, headers={
        "Inference-Header-Content-Length": str(len(header_bytes)),
        "Content-Type": "application/octet-stream"})
    return status, headers, data


def infer_json(server, model, inputs):
    """inputs: {name: (datatype, numpy array)} as JSON tensors; returns {name: array}."""
    payload = {"inputs": [{"name": n, "datatype": dt, "shape": list(a.shape),
                           "data": a.flatten().tolist()} for n, (dt, a) in inputs.items()]}
    status, headers, data = server.infer(model, payload)
    assert status == 200, data
    return outputs_of(headers, data)


def assert_bad_request(status, data, *needles):
    assert status == 400, (status, data)
    message = json.loads(data)["error"]
    for needle in needles:
        assert needle.lower() in message.lower(), message


# ------------------------------------------------------------------ image reference

def reference_pixels(jpeg):
    import io

    import torchvision.transforms as T
    from PIL import Image
    from torchvision.transforms.functional import pil_to_tensor
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    x = pil_to_tensor(image)  # uint8 [3, H, W]
    x = T.Resize(256, antialias=True)(x)
    x = T.CenterCrop(224)(x)
    x = T.ConvertImageDtype(torch.float)(x)
    return T.Normalize(MEAN, STD)(x)


def imagenet_labels(repo):
    with open(os.path.join(repo, "resnet18_top5", "imagenet_classes.txt")) as f:
        return f.read().splitlines()


@pytest.fixture(scope="module")
def classify_reference(repo):
    """{photo: softmax probabilities [1000]} from the in-process reference pipeline."""
    resnet = load_module(repo, "resnet18")
    refs = {}
    with torch.inference_mode():
        for name in PHOTOS:
            pixels = reference_pixels(photo(repo, name))
            refs[name] = torch.softmax(resnet(pixels[None])[0], dim=0).numpy()
    return refs


def check_top5(labels, scores, indices, probs, names, where):
    """The server's top 5 against the reference probabilities: each index is among the
    reference's top ranks (a swap only between classes whose reference probabilities are
    within SCORE_ATOL of each other), its label is that class's name, its score is the
    reference probability of that class, and the scores are sorted."""
    order = np.argsort(-probs, kind="stable")
    assert all(a >= b for a, b in zip(scores, scores[1:])), f"{where}: not sorted by score: {scores}"
    for k, (label, score, index) in enumerate(zip(labels, scores, indices)):
        index = int(index)
        assert label == names[index], f"{where}: rank {k}: label {label!r} is not class {index}"
        assert abs(score - probs[index]) <= SCORE_ATOL, f"{where}: rank {k}: {score} vs {probs[index]}"
        expected = int(order[k])
        assert index == expected or abs(probs[index] - probs[expected]) <= SCORE_ATOL, (
            f"{where}: rank {k}: class {index} ({names[index]}) where the reference has "
            f"{expected} ({names[expected]}), probabilities {probs[index]:.5f} vs {probs[expected]:.5f}")


# --------------------------------------------------------------- resnet18_classify

@pytest.mark.parametrize("name", PHOTOS)
def test_preprocess_matches_torchvision(server, repo, name):
    """image_preprocess alone, on each real photo, against torchvision's transforms."""
    status, headers, data = infer_raw(server, "resnet18_preprocess", photo(repo, name))
    assert status == 200, data
    pixels = outputs_of(headers, data)["PIXELS"][0]
    ref = reference_pixels(photo(repo, name)).numpy()
    assert pixels.shape == ref.shape == (3, 224, 224)
    diff = np.abs(pixels - ref)
    assert diff.max() <= PIXEL_MAX_ABS and diff.mean() <= PIXEL_MEAN_ABS, (
        f"{name}: max {diff.max():.4f} mean {diff.mean():.5f}")


@pytest.mark.parametrize("name", PHOTOS)
def test_classify_raw_binary_request_matches_reference(server, repo, classify_reference, name):
    """The JPEG as the whole body (curl --data-binary @photo.jpg): top 5 = reference's."""
    status, headers, data = infer_raw(server, "resnet18_classify", photo(repo, name))
    assert status == 200, data
    out = outputs_of(headers, data)
    assert out["LABELS"].shape == (1, 5) and out["SCORES"].shape == (1, 5) and out["INDICES"].shape == (1, 5)
    check_top5(out["LABELS"][0], out["SCORES"][0], out["INDICES"][0], classify_reference[name],
               imagenet_labels(repo), name)


def test_classify_batch_of_photos_in_one_bytes_tensor(server, repo, classify_reference):
    """Several photos as rows of one BYTES tensor [N, 1] (JSON response): each row's top 5
    is that photo's reference, in row order."""
    names = PHOTOS[:6]
    status, headers, data = infer_bytes_tensor(server, "resnet18_classify", "IMAGE",
                                               [photo(repo, n) for n in names])
    assert status == 200, data
    out = outputs_of(headers, data)
    assert out["LABELS"].shape == (len(names), 5)
    for row, name in enumerate(names):
        check_top5(out["LABELS"][row], out["SCORES"][row], out["INDICES"][row],
                   classify_reference[name], imagenet_labels(repo), f"row {row} ({name})")


def test_classify_over_grpc(grpc_stub, repo, classify_reference):
    name = "chelsea.jpg"
    request = pb.ModelInferRequest(model_name="resnet18_classify")
    tensor = request.inputs.add(name="IMAGE", datatype="BYTES", shape=[1, 1])
    tensor.contents.bytes_contents.append(photo(repo, name))
    response = grpc_stub.ModelInfer(request, timeout=60)
    out = {}
    for i, o in enumerate(response.outputs):
        out[o.name] = decode_tensor(o.datatype, list(o.shape), response.raw_output_contents[i])
    check_top5(out["LABELS"][0], out["SCORES"][0], out["INDICES"][0], classify_reference[name],
               imagenet_labels(repo), "gRPC")


def png_bomb(width, height):
    """A valid PNG header declaring width x height 8-bit RGB pixels, with a tiny IDAT:
    what a decompression bomb looks like before its data is inflated."""
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def encoded(width, height, fmt):
    import io

    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, fmt)
    return out.getvalue()


def test_classify_hostile_images_are_400_and_server_keeps_serving(server, repo):
    jpeg = photo(repo, "chelsea.jpg")
    cases = [b"definitely not an image", jpeg[:len(jpeg) // 3], b"",
             b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
             png_bomb(60000, 60000),            # 3.6 G pixels declared: refused before allocation
             encoded(100000, 1, "PNG")]          # aspect ratio 100000
    for body in cases:
        status, _, data = infer_raw(server, "resnet18_classify", body)
        assert_bad_request(status, data)
    # The error names the failing step, inside the ensemble.
    status, _, data = infer_raw(server, "resnet18_classify", b"GIF89a not supported")
    assert_bad_request(status, data, "resnet18_preprocess")
    status, headers, data = infer_raw(server, "resnet18_classify", jpeg)
    assert status == 200, data


def test_classify_statistics_count_whole_requests_and_steps(server, repo):
    def success(model):
        status, stats = server.get_json(f"/v2/models/{model}/stats")
        assert status == 200, stats
        return stats["model_stats"][0]["inference_stats"]["success"]["count"]
    before = {m: success(m) for m in ("resnet18_classify", "resnet18_preprocess", "resnet18_top5")}
    for _ in range(3):
        status, _, data = infer_raw(server, "resnet18_classify", photo(repo, "coffee.jpg"))
        assert status == 200, data
    after = {m: success(m) for m in before}
    assert all(after[m] - before[m] == 3 for m in before), (before, after)


# ---------------------------------------------------------------------- text_embed

def _is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _is_punctuation(ch):
    cp = ord(ch)
    return (33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126
            or unicodedata.category(ch).startswith("P"))


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


class WordPieceReference:
    """Hugging Face tokenizers' BertNormalizer (clean_text, handle_chinese_chars,
    strip_accents following lowercase, lowercase) + BertPreTokenizer + WordPiece
    (greedy longest match, '##' continuations, a word with an unmatched piece is [UNK])
    + TemplateProcessing [CLS] $A [SEP], truncation leaving room for the two specials,
    padding with [PAD]."""

    def __init__(self, path):
        with open(path) as f:
            spec = json.load(f)
        model = spec["model"]
        self.vocab = model["vocab"]
        self.unk = model["unk_token"]
        self.prefix = model["continuing_subword_prefix"]
        self.max_chars = model["max_input_chars_per_word"]

    def normalize(self, text):
        text = "".join(" " if _is_whitespace(c) else c for c in text
                       if ord(c) not in (0, 0xFFFD) and not _is_control(c))
        text = "".join(f" {c} " if _is_cjk(ord(c)) else c for c in text)
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        return text.lower()

    def pre_tokenize(self, text):
        words, current = [], ""
        for c in text:
            if _is_whitespace(c) or _is_punctuation(c):
                if current:
                    words.append(current)
                current = ""
                if _is_punctuation(c):
                    words.append(c)
            else:
                current += c
        if current:
            words.append(current)
        return words

    def wordpiece(self, word):
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = (self.prefix if start else "") + word[start:end]
                if piece in self.vocab:
                    found = piece
                    break
                end -= 1
            if found is None:
                return [self.unk]
            pieces.append(found)
            start = end
        return pieces

    def encode(self, text, max_length):
        tokens = [p for w in self.pre_tokenize(self.normalize(text)) for p in self.wordpiece(w)]
        tokens = ["[CLS]"] + tokens[:max_length - 2] + ["[SEP]"]
        ids = [self.vocab[t] for t in tokens]
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        return ids + [self.vocab["[PAD]"]] * (max_length - len(ids)), mask


SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A fortune: you will be rewarded for your patience!",
    "Café au lait, s'il vous plaît — naïve façade.",
    "",
    "zzyzx qwertyuiopasdfgh 12345 multiplication",
    "This sentence is far too long to fit in sixteen tokens, so the tokenizer must "
    "truncate it and still end with the separator token.",
    "  Tabs\tand\nnewlines   collapse  ",
    "Chinese 中文 characters and emoji 🙂 are split or unknown.",
]


@pytest.fixture(scope="module")
def wordpiece(repo):
    return WordPieceReference(os.path.join(repo, "text_tokenize", "1", "tokenizer.json"))


def reference_embedding(encoder, ids, mask):
    with torch.inference_mode():
        tokens = encoder(torch.tensor([ids]), torch.tensor([mask]))[0]
    m = torch.tensor(mask, dtype=torch.float32)[:, None]
    pooled = (tokens * m).sum(0) / m.sum().clamp(min=1)
    return (pooled / pooled.norm().clamp(min=1e-12)).numpy()


def test_tokenize_matches_python_wordpiece(server, wordpiece):
    texts = np.array([[s] for s in SENTENCES], dtype=object)
    out = infer_json(server, "text_tokenize", {"TEXT": ("BYTES", texts)})
    for row, sentence in enumerate(SENTENCES):
        ids, mask = wordpiece.encode(sentence, 16)
        assert out["input_ids"][row].tolist() == ids, sentence
        assert out["attention_mask"][row].tolist() == mask, sentence
    # Not all [UNK]: the vocabulary covers ordinary English.
    ids, _ = wordpiece.encode(SENTENCES[0], 16)
    assert ids.count(wordpiece.vocab["[UNK]"]) == 0


def test_text_embed_matches_reference(server, repo, wordpiece):
    encoder = load_module(repo, "text_embed_encoder")
    texts = np.array([[s] for s in SENTENCES], dtype=object)
    out = infer_json(server, "text_embed", {"TEXT": ("BYTES", texts)})
    assert out["EMBEDDING"].shape == (len(SENTENCES), 128)
    for row, sentence in enumerate(SENTENCES):
        ref = reference_embedding(encoder, *wordpiece.encode(sentence, 16))
        got = out["EMBEDDING"][row]
        assert np.allclose(got, ref, atol=EMBED_ATOL), (sentence, np.abs(got - ref).max())
        assert abs(np.linalg.norm(got) - 1) < 1e-5


def test_text_embed_over_grpc_and_binary_bytes(server, grpc_stub, repo, wordpiece):
    encoder = load_module(repo, "text_embed_encoder")
    sentence = SENTENCES[1]
    ref = reference_embedding(encoder, *wordpiece.encode(sentence, 16))
    status, headers, data = infer_bytes_tensor(server, "text_embed", "TEXT", [sentence.encode()],
                                               binary_outputs=True)
    assert status == 200, data
    assert np.allclose(outputs_of(headers, data)["EMBEDDING"][0], ref, atol=EMBED_ATOL)
    request = pb.ModelInferRequest(model_name="text_embed")
    request.inputs.add(name="TEXT", datatype="BYTES", shape=[1, 1]).contents.bytes_contents.append(
        sentence.encode())
    response = grpc_stub.ModelInfer(request, timeout=60)
    got = np.frombuffer(response.raw_output_contents[0], dtype=np.float32)
    assert np.allclose(got, ref, atol=EMBED_ATOL)


def post_json(server, path, payload):
    status, _, data = server.request("POST", path, json.dumps(payload), {"Content-Type": "application/json"})
    return status, json.loads(data) if data else None


def test_openai_embeddings_equal_kserve(server, repo, wordpiece):
    encoder = load_module(repo, "text_embed_encoder")
    inputs = SENTENCES[:3]
    status, body = post_json(server, "/v1/embeddings", {"model": "text_embed", "input": inputs})
    assert status == 200, body
    assert body["object"] == "list" and body["model"] == "text_embed"
    assert [d["index"] for d in body["data"]] == [0, 1, 2]
    assert all(d["object"] == "embedding" for d in body["data"])
    prompt_tokens = 0
    for d, sentence in zip(body["data"], inputs):
        ids, mask = wordpiece.encode(sentence, 16)
        prompt_tokens += sum(mask)
        assert np.allclose(d["embedding"], reference_embedding(encoder, ids, mask), atol=EMBED_ATOL)
    assert body["usage"]["prompt_tokens"] == prompt_tokens == body["usage"]["total_tokens"]
    # A single string, and the base64 encoding (little-endian float32, as OpenAI's).
    status, single = post_json(server, "/v1/embeddings", {"model": "text_embed", "input": inputs[0]})
    assert status == 200, single
    assert np.allclose(single["data"][0]["embedding"], body["data"][0]["embedding"], atol=1e-6)
    status, b64 = post_json(server, "/v1/embeddings",
                            {"model": "text_embed", "input": inputs[0], "encoding_format": "base64"})
    assert status == 200, b64
    decoded = np.frombuffer(base64.b64decode(b64["data"][0]["embedding"]), dtype="<f4")
    assert np.allclose(decoded, body["data"][0]["embedding"], atol=1e-6)


def test_text_hostile_inputs_are_400(server, grpc_stub):
    status, _, data = infer_bytes_tensor(server, "text_embed", "TEXT", [b"\xff\xfe not utf-8"])
    assert_bad_request(status, data, "utf-8")
    status, body = post_json(server, "/v1/embeddings", {"model": "text_embed"})
    assert status == 400 and "input" in json.dumps(body), body
    status, body = post_json(server, "/v1/embeddings", {"model": "text_embed", "input": [1.5]})
    assert status == 400, body
    status, body = post_json(server, "/v1/embeddings", {"model": "no_such_model", "input": "x"})
    assert status == 404, body
    status, body = post_json(server, "/v1/embeddings", {"model": "text_embed", "input": "ok"})
    assert status == 200, body


# ------------------------------------------------------------------------ detector

def numpy_nms(boxes, scores, score_threshold=0.5, iou_threshold=0.45, max_detections=20):
    """Per-class greedy NMS: candidates (anchor i, class c) with score >= threshold,
    visited by descending score (ties: lower anchor, then lower class); a candidate is
    dropped when its IoU (in double) with a kept box of the same class exceeds the
    threshold. Returns the first max_detections kept (box, score, class)."""
    boxes = np.asarray(boxes, dtype=np.float64)

    def iou(a, b):
        iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = iw * ih
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0
    candidates = [(i, c) for i in range(len(boxes)) for c in range(scores.shape[1])
                  if scores[i, c] >= score_threshold]
    candidates.sort(key=lambda ic: (-float(scores[ic]), ic[0], ic[1]))
    kept = []
    for i, c in candidates:
        if all(iou(boxes[i], boxes[j]) <= iou_threshold for j, k in kept if k == c):
            kept.append((i, c))
    return [(boxes[i], float(scores[i, c]), c) for i, c in kept[:max_detections]]


ENSEMBLE_NAMES = ("DET_BOXES", "DET_SCORES", "DET_CLASSES", "NUM_DETECTIONS")
STEP_NAMES = ("det_boxes", "det_scores", "det_classes", "num_detections")


def check_detections(out, expected, where, names=STEP_NAMES):
    boxes, scores, classes = (out[names[0]].reshape(-1, 4), out[names[1]].reshape(-1),
                              out[names[2]].reshape(-1))
    n = int(out[names[3]].reshape(-1)[0])
    assert n == len(expected), f"{where}: {n} detections, reference {len(expected)}"
    for k, (box, score, cls) in enumerate(expected):
        assert int(classes[k]) == cls, f"{where}: detection {k}: class {classes[k]} vs {cls}"
        assert abs(scores[k] - score) <= 1e-4, f"{where}: detection {k}: score {scores[k]} vs {score}"
        assert np.allclose(boxes[k], box, atol=1e-3), f"{where}: detection {k}: {boxes[k]} vs {box}"
    assert not boxes[n:].any() and not scores[n:].any() and not classes[n:].any(), \
        f"{where}: rows past num_detections are not zero"


def test_detector_matches_head_plus_numpy_nms(server, repo):
    head = load_module(repo, "detector_head")
    rng = np.random.default_rng(7)
    images = rng.random((3, 3, 128, 128), dtype=np.float32)
    out = infer_json(server, "detector", {"IMAGE": ("FP32", images)})
    with torch.inference_mode():
        boxes, scores = head(torch.from_numpy(images))
    total = 0
    for row in range(len(images)):
        expected = numpy_nms(boxes[row].numpy(), scores[row].numpy())
        total += len(expected)
        check_detections({k: v[row] for k, v in out.items()}, expected, f"image {row}", ENSEMBLE_NAMES)
    assert total > 0, "the seeded head produced no detection at all: the check would be empty"


def crafted_detections():
    """64 anchors x 4 classes: clusters of overlapping boxes whose IoU straddles 0.45,
    the same boxes in two classes (per-class NMS keeps both), scores below the threshold,
    an exact score tie on identical boxes, and more survivors than max_detections (20)."""
    boxes = np.zeros((64, 4), dtype=np.float32)
    scores = np.zeros((64, 4), dtype=np.float32)
    k = 0
    for cluster in range(12):
        x, y = 10.0 * cluster, 5.0 * cluster
        # IoU with the first box: 0.86, 0.4545 (> 0.45: dropped), 0.4286 (kept), 0.
        for shift, score in ((0, 0.9), (3, 0.8), (15, 0.7), (16, 0.6), (40, 0.35)):
            boxes[k] = [x + shift, y, x + shift + 40, y + 40]
            scores[k, cluster % 4] = score - 0.01 * cluster
            if cluster % 3 == 0:  # the same box in another class, no score tie with any
                scores[k, (cluster + 1) % 4] = score - 0.01 * cluster - 0.005
            k += 1
    boxes[60] = [0, 0, 30, 30]
    scores[60, 2] = 0.49                          # below the threshold (0.5)
    boxes[61] = [200, 200, 230, 230]
    boxes[62] = [200, 200, 230, 230]
    scores[61, 3] = scores[62, 3] = 0.95          # a tie on identical boxes: one is kept
    return boxes, scores


def test_nms_step_equals_numpy_on_crafted_overlaps(server):
    boxes, scores = crafted_detections()
    out = infer_json(server, "detector_nms", {"boxes": ("FP32", boxes[None]), "scores": ("FP32", scores[None])})
    expected = numpy_nms(boxes, scores)
    assert len(expected) == 20  # more survivors than max_detections: the cap is exercised
    check_detections({k: v[0] for k, v in out.items()}, expected, "crafted")


def test_detector_hostile_inputs_are_400(server):
    payload = {"inputs": [{"name": "IMAGE", "datatype": "FP32", "shape": [1, 3, 64, 64],
                           "data": [0.0] * (3 * 64 * 64)}]}
    status, _, data = server.infer("detector", payload)
    assert_bad_request(status, data, "IMAGE")
    payload = {"inputs": [{"name": "boxes", "datatype": "FP32", "shape": [1, 64, 4], "data": [0.0] * 256}]}
    status, _, data = server.infer("detector_nms", payload)
    assert_bad_request(status, data, "scores")
    server.assert_serving()

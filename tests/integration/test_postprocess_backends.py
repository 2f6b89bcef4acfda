"""The post-processing backends (classify, detect_postprocess, pool), black box.

Each backend is served as a model of its own; every answer is compared, over KServe HTTP
(JSON) and gRPC (raw contents), with a numpy reference computed here from the same
inputs: softmax/top-k with ties by lower index, a greedy NMS written independently of
the server's, masked mean / CLS pooling with L2 normalisation. The NMS cases are crafted
(identical boxes, nested boxes, IoU exactly at the threshold, different classes
overlapping, everything below the threshold, more candidates than max_detections) plus
seeded random boxes. Config errors must be load errors naming the problem; hostile
requests get 400 / INVALID_ARGUMENT naming the tensor, and the server keeps serving.
"""

import json
import os
import struct
import tempfile

import grpc
import numpy as np
import pytest

from grpc_stubs import pb, stub  # noqa: F401 (stub: pytest fixture)
from infera_server import InferaServer

LABELS = [f"class_{i}" for i in range(10)]

MODELS = {
    "top3": """
name: "top3"
backend: "classify"
max_batch_size: 4
input [ { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] } ]
output [ { name: "scores" data_type: TYPE_FP32 dims: [ 3 ] },
         { name: "indices" data_type: TYPE_INT64 dims: [ 3 ] },
         { name: "labels" data_type: TYPE_STRING dims: [ 3 ] } ]
parameters [ { key: "top_k" value { string_value: "3" } },
             { key: "softmax" value { string_value: "true" } },
             { key: "labels" value { string_value: "labels.txt" } } ]
""",
    "rank_all": """
name: "rank_all"
backend: "classify"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ 6 ] } ]
output [ { name: "indices" data_type: TYPE_INT64 dims: [ 6 ] },
         { name: "scores" data_type: TYPE_FP32 dims: [ 6 ] } ]
parameters [ { key: "top_k" value { string_value: "6" } } ]
""",
    "nms": """
name: "nms"
backend: "detect_postprocess"
max_batch_size: 4
input [ { name: "boxes" data_type: TYPE_FP32 dims: [ 16, 4 ] },
        { name: "scores" data_type: TYPE_FP32 dims: [ 16, 3 ] } ]
output [ { name: "det_boxes" data_type: TYPE_FP32 dims: [ 8, 4 ] },
         { name: "det_scores" data_type: TYPE_FP32 dims: [ 8 ] },
         { name: "det_classes" data_type: TYPE_INT64 dims: [ 8 ] },
         { name: "num_detections" data_type: TYPE_INT64 dims: [ 1 ] } ]
parameters [ { key: "max_detections" value { string_value: "8" } },
             { key: "score_threshold" value { string_value: "0.25" } },
             { key: "iou_threshold" value { string_value: "0.5" } } ]
""",
    "nms_agnostic": """
name: "nms_agnostic"
backend: "detect_postprocess"
max_batch_size: 0
input [ { name: "scores" data_type: TYPE_FP32 dims: [ 16, 3 ] },
        { name: "boxes" data_type: TYPE_FP32 dims: [ 16, 4 ] } ]
output [ { name: "num_detections" data_type: TYPE_INT64 dims: [ 1 ] },
         { name: "det_boxes" data_type: TYPE_FP32 dims: [ 3, 4 ] },
         { name: "det_scores" data_type: TYPE_FP32 dims: [ 3 ] },
         { name: "det_classes" data_type: TYPE_INT64 dims: [ 3 ] } ]
parameters [ { key: "max_detections" value { string_value: "3" } },
             { key: "box_format" value { string_value: "cxcywh" } },
             { key: "class_agnostic" value { string_value: "true" } } ]
""",
    "pool_mean": """
name: "pool_mean"
backend: "pool"
max_batch_size: 4
input [ { name: "token_embeddings" data_type: TYPE_FP32 dims: [ -1, 8 ] },
        { name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] optional: true } ]
output [ { name: "embedding" data_type: TYPE_FP32 dims: [ 8 ] } ]
""",
    "pool_cls": """
name: "pool_cls"
backend: "pool"
max_batch_size: 0
input [ { name: "token_embeddings" data_type: TYPE_FP32 dims: [ 6, 8 ] } ]
output [ { name: "embedding" data_type: TYPE_FP32 dims: [ 8 ] } ]
parameters [ { key: "mode" value { string_value: "cls" } },
             { key: "normalize" value { string_value: "false" } } ]
""",
    # Config errors: each must fail to load with a reason naming the problem.
    "bad_top_k": """
name: "bad_top_k"
backend: "classify"
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "scores" data_type: TYPE_FP32 dims: [ 5 ] } ]
parameters [ { key: "top_k" value { string_value: "5" } } ]
""",
    "bad_labels": """
name: "bad_labels"
backend: "classify"
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "labels" data_type: TYPE_STRING dims: [ 2 ] } ]
parameters [ { key: "top_k" value { string_value: "2" } },
             { key: "labels" value { string_value: "labels.txt" } } ]
""",
    "bad_nms_cap": """
name: "bad_nms_cap"
backend: "detect_postprocess"
input [ { name: "boxes" data_type: TYPE_FP32 dims: [ 200000, 4 ] },
        { name: "scores" data_type: TYPE_FP32 dims: [ 200000, 1 ] } ]
output [ { name: "num_detections" data_type: TYPE_INT64 dims: [ 1 ] } ]
parameters [ { key: "max_detections" value { string_value: "10" } } ]
""",
    "bad_iou": """
name: "bad_iou"
backend: "detect_postprocess"
input [ { name: "boxes" data_type: TYPE_FP32 dims: [ 4, 4 ] },
        { name: "scores" data_type: TYPE_FP32 dims: [ 4, 1 ] } ]
output [ { name: "num_detections" data_type: TYPE_INT64 dims: [ 1 ] } ]
parameters [ { key: "max_detections" value { string_value: "2" } },
             { key: "iou_threshold" value { string_value: "1.5" } } ]
""",
    "bad_pool_mode": """
name: "bad_pool_mode"
backend: "pool"
input [ { name: "token_embeddings" data_type: TYPE_FP32 dims: [ 4, 8 ] } ]
output [ { name: "embedding" data_type: TYPE_FP32 dims: [ 8 ] } ]
parameters [ { key: "mode" value { string_value: "max" } } ]
""",
}

BAD_REASONS = {
    "bad_top_k": "parameters[top_k] 5 is more than the input's 4 classes",
    "bad_labels": "has 10 lines; the input has 4 classes",
    "bad_nms_cap": "200000 boxes x 1 classes is over the limit",
    "bad_iou": "parameters[iou_threshold] '1.5'",
    "bad_pool_mode": "parameters[mode] 'max' must be one of mean, cls",
}


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-postproc-") as repo:
        for name, config in MODELS.items():
            os.makedirs(os.path.join(repo, name, "1"))
            with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
                f.write(config)
        for name in ("top3", "bad_labels"):
            with open(os.path.join(repo, name, "labels.txt"), "w") as f:
                f.write("\n".join(LABELS) + "\n")
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


# --- transports --------------------------------------------------------------------------

KSERVE = {np.float32: "FP32", np.int64: "INT64"}


def infer_http(server, model, inputs):
    """inputs: {name: np.ndarray}; returns {name: np.ndarray or list of str}."""
    body = {"inputs": [{"name": n, "datatype": KSERVE[a.dtype.type], "shape": list(a.shape),
                        "data": a.ravel().tolist()} for n, a in inputs.items()]}
    status, _, data = server.infer(model, body)
    assert status == 200, data
    result = {}
    for out in json.loads(data)["outputs"]:
        if out["datatype"] == "BYTES":
            result[out["name"]] = np.array(out["data"], dtype=object).reshape(out["shape"])
        else:
            dtype = np.float32 if out["datatype"] == "FP32" else np.int64
            result[out["name"]] = np.array(out["data"], dtype=dtype).reshape(out["shape"])
    return result


def grpc_request(model, inputs):
    request = pb.ModelInferRequest(model_name=model)
    for name, array in inputs.items():
        request.inputs.add(name=name, datatype=KSERVE[array.dtype.type], shape=list(array.shape))
        request.raw_input_contents.append(np.ascontiguousarray(array).tobytes())
    return request


def infer_grpc(stub, model, inputs):
    response = stub.ModelInfer(grpc_request(model, inputs))
    result = {}
    for out, raw in zip(response.outputs, response.raw_output_contents):
        if out.datatype == "BYTES":
            items, offset = [], 0
            while offset < len(raw):
                (length,) = struct.unpack_from("<I", raw, offset)
                items.append(raw[offset + 4:offset + 4 + length].decode())
                offset += 4 + length
            result[out.name] = np.array(items, dtype=object).reshape(list(out.shape))
        else:
            dtype = np.float32 if out.datatype == "FP32" else np.int64
            result[out.name] = np.frombuffer(raw, dtype=dtype).reshape(list(out.shape))
    return result


def both(server, stub, model, inputs):
    """The answer over HTTP and over gRPC, which must agree exactly."""
    http = infer_http(server, model, inputs)
    rpc = infer_grpc(stub, model, inputs)
    assert http.keys() == rpc.keys()
    for name in http:
        if http[name].dtype == object:
            assert http[name].tolist() == rpc[name].tolist(), name
        else:
            np.testing.assert_array_equal(http[name], rpc[name], err_msg=name)
    return rpc


# --- numpy references --------------------------------------------------------------------

def ref_classify(logits, k, softmax):
    """Top-k per row: descending value, ties by lower index, NaN last; stable softmax."""
    order = np.stack([np.lexsort((np.arange(row.size), -np.nan_to_num(row, nan=0), np.isnan(row)))
                      for row in logits])[:, :k]
    values = logits.astype(np.float64)
    if softmax:
        shifted = values - np.max(values, axis=-1, keepdims=True)
        e = np.exp(shifted)
        values = e / e.sum(axis=-1, keepdims=True)
    scores = np.take_along_axis(values, order, axis=-1).astype(np.float32)
    return scores, order


def ref_iou(a, b):
    """IoU of two xyxy boxes; a box with non-positive width or height overlaps nothing."""
    area = lambda r: (float(r[2]) - float(r[0])) * (float(r[3]) - float(r[1]))
    if min(float(a[2]) - float(a[0]), float(a[3]) - float(a[1])) <= 0 or \
            min(float(b[2]) - float(b[0]), float(b[3]) - float(b[1])) <= 0:
        return 0.0
    w = min(float(a[2]), float(b[2])) - max(float(a[0]), float(b[0]))
    h = min(float(a[3]), float(b[3])) - max(float(a[1]), float(b[1]))
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (area(a) + area(b) - inter)


def ref_nms(boxes, scores, m, score_threshold=0.25, iou_threshold=0.5, agnostic=False,
            cxcywh=False):
    """Greedy NMS: candidates by (-score, box, class); IoU > threshold suppresses."""
    boxes = boxes.astype(np.float32)
    if cxcywh:
        half_w, half_h = boxes[:, 2] / np.float32(2), boxes[:, 3] / np.float32(2)
        boxes = np.stack([boxes[:, 0] - half_w, boxes[:, 1] - half_h,
                          boxes[:, 0] + half_w, boxes[:, 1] + half_h], axis=1)
    candidates = []
    for i in range(len(boxes)):
        if not np.all(np.isfinite(boxes[i])):
            continue
        classes = [int(np.argmax(np.where(np.isnan(scores[i]), -np.inf, scores[i])))] \
            if agnostic else range(scores.shape[1])
        for c in classes:
            if scores[i, c] >= np.float32(score_threshold):
                candidates.append((-float(scores[i, c]), i, c))
    kept = []
    for _, i, c in sorted(candidates):
        if len(kept) == m:
            break
        if all(ref_iou(boxes[i], boxes[j]) <= iou_threshold for j, cj in kept
               if agnostic or cj == c):
            kept.append((i, c))
    det_boxes = np.zeros((m, 4), np.float32)
    det_scores = np.zeros(m, np.float32)
    det_classes = np.zeros(m, np.int64)
    for n, (i, c) in enumerate(kept):
        det_boxes[n], det_scores[n], det_classes[n] = boxes[i], scores[i, c], c
    return det_boxes, det_scores, det_classes, np.array([len(kept)], np.int64)


def ref_pool(embeddings, mask=None, cls=False, normalize=True):
    e = embeddings.astype(np.float64)
    if cls:
        v = e[0]
    else:
        w = np.ones(len(e)) if mask is None else mask.astype(np.float64)
        count = w.sum()
        v = (e * w[:, None]).sum(axis=0) / count if count > 0 else np.zeros(e.shape[1])
    if normalize:
        norm = np.sqrt((v * v).sum())
        if norm > 0:
            v = v / norm
    return v.astype(np.float32)


# --- classify ----------------------------------------------------------------------------

def test_classify_top3_softmax_with_labels_matches_numpy(server, stub):
    rng = np.random.default_rng(7)
    logits = (rng.standard_normal((3, 10)) * 5).astype(np.float32)
    logits[1, 4] = logits[1, 7] = 50  # a tie at the top: index 4 first
    logits[2] += 1000  # large logits: the server must subtract the max
    out = both(server, stub, "top3", {"logits": logits})
    scores, order = ref_classify(logits, 3, softmax=True)
    np.testing.assert_array_equal(out["indices"], order)
    np.testing.assert_allclose(out["scores"], scores, rtol=1e-6, atol=1e-7)
    assert out["labels"].tolist() == [[LABELS[i] for i in row] for row in order]
    assert out["indices"][1].tolist()[:2] == [4, 7]


def test_classify_raw_ranking_with_nan_and_infinities(server, stub):
    x = np.array([1.5, np.nan, -np.inf, 1.5, np.inf, -2], np.float32)
    out = infer_grpc(stub, "rank_all", {"x": x})  # JSON has no NaN: raw gRPC only
    scores, order = ref_classify(x[None, :], 6, softmax=False)
    assert out["indices"].tolist() == order[0].tolist() == [4, 0, 3, 5, 2, 1]
    np.testing.assert_array_equal(out["scores"][:5], scores[0][:5])
    assert np.isnan(out["scores"][5])


# --- detect_postprocess ------------------------------------------------------------------

def crafted_scene():
    """16 candidates covering every NMS edge; classes 0..2."""
    boxes = np.zeros((16, 4), np.float32)
    scores = np.zeros((16, 3), np.float32)
    rows = [
        # identical boxes, class 0: only the best (then the lower index) survives
        ([0, 0, 10, 10], (0, 0.90)), ([0, 0, 10, 10], (0, 0.90)), ([0, 0, 10, 10], (0, 0.80)),
        # nested: a small box inside a big one (IoU 0.04), both survive
        ([20, 20, 40, 40], (1, 0.70)), ([25, 25, 29, 29], (1, 0.60)),
        # IoU exactly 0.5 (= iou_threshold): not suppressed
        ([50, 0, 53, 1], (2, 0.95)), ([51, 0, 54, 1], (2, 0.85)),
        # IoU 3/4.5: suppressed
        ([60, 0, 64, 1], (2, 0.55)), ([61, 0, 64.5, 1], (2, 0.50)),
        # different classes on one place: both kept in per-class mode
        ([80, 80, 90, 90], (0, 0.40)), ([80, 80, 90, 90], (1, 0.45)),
        # below the threshold (0.25): gone; exactly at it: kept
        ([100, 0, 110, 10], (0, 0.24)), ([120, 0, 130, 10], (1, 0.25)),
        # degenerate boxes: zero width, inverted
        ([140, 0, 140, 10], (0, 0.30)), ([150, 10, 145, 5], (0, 0.35)),
        ([0, 0, 10, 10], (1, 0.10)),
    ]
    for i, (box, (c, s)) in enumerate(rows):
        boxes[i] = box
        scores[i, c] = s
    return boxes, scores


def check_nms(out, expected, batch_index=None):
    names = ("det_boxes", "det_scores", "det_classes", "num_detections")
    for name, want in zip(names, expected):
        got = out[name] if batch_index is None else out[name][batch_index]
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_nms_crafted_edges_match_numpy(server, stub):
    boxes, scores = crafted_scene()
    # Row 1: the same scene without its 9 best candidates, so that the threshold and
    # degenerate-box rules decide what is left.
    tail_scores = scores.copy()
    tail_scores[:9] = 0
    out = both(server, stub, "nms", {"boxes": np.stack([boxes, boxes]),
                                     "scores": np.stack([scores, tail_scores])})
    check_nms(out, ref_nms(boxes, scores, 8), 0)
    check_nms(out, ref_nms(boxes, tail_scores, 8), 1)
    # More candidates (11 survive NMS) than max_detections (8): the 8 best.
    assert out["num_detections"][0, 0] == 8
    # Left in row 1: both classes on one place, the degenerate boxes, the score exactly
    # at the threshold; not the 0.24 one.
    assert out["det_scores"][1].tolist()[:5] == np.float32([0.45, 0.40, 0.35, 0.30, 0.25]).tolist()
    assert out["num_detections"][1, 0] == 5
    assert out["det_scores"][0].tolist() == sorted(out["det_scores"][0].tolist(), reverse=True)
    kept = {(tuple(b), c) for b, c in zip(out["det_boxes"][0].tolist(), out["det_classes"][0])}
    assert ((0.0, 0.0, 10.0, 10.0), 0) in kept and ((50.0, 0.0, 53.0, 1.0), 2) in kept
    assert ((51.0, 0.0, 54.0, 1.0), 2) in kept  # IoU exactly 0.5 survives


def test_nms_all_below_threshold_is_empty_and_zero_padded(server, stub):
    boxes, scores = crafted_scene()
    scores = np.minimum(scores, np.float32(0.2))
    out = both(server, stub, "nms", {"boxes": boxes[None], "scores": scores[None]})
    assert out["num_detections"].tolist() == [[0]]
    assert not out["det_boxes"].any() and not out["det_scores"].any() and not out["det_classes"].any()


def test_nms_non_finite_scores_and_boxes_match_numpy(stub):
    boxes, scores = crafted_scene()
    scores[0, 0] = np.nan      # never passes the threshold
    scores[5, 2] = np.inf      # ranks first
    boxes[3, 2] = np.inf       # undrawable: dropped
    boxes[4, 0] = np.nan
    out = infer_grpc(stub, "nms", {"boxes": boxes[None], "scores": scores[None]})  # no NaN in JSON
    expected = ref_nms(boxes, scores, 8)
    check_nms(out, expected, 0)
    assert out["det_scores"][0, 0] == np.inf and out["num_detections"][0, 0] == 8


def test_nms_random_batch_matches_numpy(server, stub):
    rng = np.random.default_rng(11)
    xy = rng.uniform(0, 50, (4, 16, 2)).astype(np.float32)
    wh = rng.uniform(5, 30, (4, 16, 2)).astype(np.float32)
    boxes = np.concatenate([xy, xy + wh], axis=2)
    scores = rng.uniform(0, 1, (4, 16, 3)).astype(np.float32)
    out = both(server, stub, "nms", {"boxes": boxes, "scores": scores})
    for b in range(4):
        check_nms(out, ref_nms(boxes[b], scores[b], 8), b)


def test_nms_class_agnostic_cxcywh_matches_numpy(server, stub):
    rng = np.random.default_rng(5)
    centers = rng.uniform(10, 40, (16, 2)).astype(np.float32)
    sizes = rng.uniform(4, 20, (16, 2)).astype(np.float32)
    boxes = np.concatenate([centers, sizes], axis=1)
    scores = rng.uniform(0, 1, (16, 3)).astype(np.float32)
    out = both(server, stub, "nms_agnostic", {"scores": scores, "boxes": boxes})
    check_nms(out, ref_nms(boxes, scores, 3, score_threshold=0.25, iou_threshold=0.45,
                           agnostic=True, cxcywh=True))


# --- pool --------------------------------------------------------------------------------

def test_pool_masked_mean_batch_matches_numpy(server, stub):
    rng = np.random.default_rng(3)
    e = rng.standard_normal((3, 5, 8)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], np.int64)
    out = both(server, stub, "pool_mean", {"token_embeddings": e, "attention_mask": mask})
    want = np.stack([ref_pool(e[b], mask[b]) for b in range(3)])
    np.testing.assert_allclose(out["embedding"], want, rtol=1e-6, atol=1e-7)
    assert not out["embedding"][2].any()  # all-zero mask: zeros, not NaN
    np.testing.assert_allclose(np.linalg.norm(out["embedding"][:2], axis=1), 1, rtol=1e-6)
    # Without the optional mask every token counts.
    out = both(server, stub, "pool_mean", {"token_embeddings": e})
    np.testing.assert_allclose(out["embedding"], np.stack([ref_pool(x) for x in e]),
                               rtol=1e-6, atol=1e-7)


def test_pool_cls_matches_numpy(server, stub):
    e = np.random.default_rng(4).standard_normal((6, 8)).astype(np.float32)
    out = both(server, stub, "pool_cls", {"token_embeddings": e})
    np.testing.assert_array_equal(out["embedding"], ref_pool(e, cls=True, normalize=False))


# --- config errors and hostile requests --------------------------------------------------

def test_bad_configs_fail_to_load_naming_the_problem(server):
    status, _, body = server.request("POST", "/v2/repository/index", "")
    assert status == 200
    states = {m["name"]: m for m in json.loads(body)}
    for name, needle in BAD_REASONS.items():
        assert states[name]["state"] != "READY", states[name]
        assert needle in states[name]["reason"], states[name]


HOSTILE = [
    # (model, inputs, needle in the error)
    ("nms", {"boxes": np.zeros((1, 15, 4), np.float32), "scores": np.zeros((1, 16, 3), np.float32)},
     "boxes"),
    ("nms", {"boxes": np.zeros((5, 16, 4), np.float32), "scores": np.zeros((5, 16, 3), np.float32)},
     "batch"),
    ("nms", {"boxes": np.zeros((1, 16, 4), np.int64), "scores": np.zeros((1, 16, 3), np.float32)},
     "boxes"),
    ("top3", {"logits": np.zeros((1, 11), np.float32)}, "logits"),
    ("pool_mean", {"token_embeddings": np.zeros((1, 3, 8), np.float32),
                   "attention_mask": np.array([[1, 2, 0]], np.int64)}, "attention_mask[0,1] is 2"),
    ("pool_mean", {"token_embeddings": np.zeros((1, 3, 8), np.float32),
                   "attention_mask": np.ones((1, 4), np.int64)}, "attention_mask"),
    ("pool_mean", {"token_embeddings": np.zeros((1, 3, 7), np.float32)}, "token_embeddings"),
]


@pytest.mark.parametrize("model,inputs,needle", HOSTILE)
def test_hostile_requests_are_rejected_naming_the_problem(server, stub, model, inputs, needle):
    body = {"inputs": [{"name": n, "datatype": KSERVE[a.dtype.type], "shape": list(a.shape),
                        "data": a.ravel().tolist()} for n, a in inputs.items()]}
    status, _, data = server.infer(model, body)
    assert status == 400, data
    assert needle in json.loads(data)["error"], data
    with pytest.raises(grpc.RpcError) as error:
        stub.ModelInfer(grpc_request(model, inputs))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in error.value.details(), error.value.details()
    # Still serving.
    boxes, scores = crafted_scene()
    check_nms(infer_grpc(stub, "nms", {"boxes": boxes[None], "scores": scores[None]}),
              ref_nms(boxes, scores, 8), 0)

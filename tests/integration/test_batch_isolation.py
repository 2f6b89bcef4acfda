"""One bad request does not fail the other requests of its dynamic batch
(docs/scheduling.md, "Batch isolation"), black-box over real sockets.

Each model batches exactly five requests: `preferred_batch_size: [5]` runs the batch the
moment the fifth arrives and a 30 s `max_queue_delay` keeps anything from running before,
so five concurrent requests form one batch (checked in the model's `batch_stats`, not
assumed). Four are good, one is bad (a corrupt JPEG, invalid UTF-8, an attention mask
holding a 2): the backend refuses the batch, the server reruns each request alone, and
only the bad one gets its 400; the others get exactly what they get when sent alone.
"""

import concurrent.futures
import io
import json
import struct
import tempfile

import grpc
import numpy as np
import pytest
from PIL import Image

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model
from testutil import bert_tokenizer_json

BATCH = 5
BAD_INDEX = 2
BATCHING = ("dynamic_batching { preferred_batch_size: [ %d ] max_queue_delay_microseconds: 30000000 }\n"
            "instance_group [ { count: 1 kind: KIND_CPU } ]\n" % BATCH)

IMAGE_UNBATCHED = """backend: "image_preprocess" max_batch_size: 8
input [ { name: "IMAGE" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "PIXELS" data_type: TYPE_FP32 dims: [ 3, 16, 16 ] } ]
parameters { key: "resize" value { string_value: "16x16" } }
"""
IMAGE_CONFIG = 'name: "img" ' + IMAGE_UNBATCHED + BATCHING

MAX_LENGTH = 8
VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "good", "text"])}
TOKENIZE_CONFIG = f"""name: "tok" backend: "tokenize" max_batch_size: 8
input [ {{ name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }} ]
output [ {{ name: "input_ids" data_type: TYPE_INT64 dims: [ {MAX_LENGTH} ] }} ]
parameters {{ key: "max_length" value {{ string_value: "{MAX_LENGTH}" }} }}
""" + BATCHING

POOL_CONFIG = """name: "pool" backend: "pool" max_batch_size: 8
input [ { name: "token_embeddings" data_type: TYPE_FP32 dims: [ 4, 3 ] },
        { name: "attention_mask" data_type: TYPE_INT64 dims: [ 4 ] } ]
output [ { name: "embedding" data_type: TYPE_FP32 dims: [ 3 ] } ]
""" + BATCHING

# An ensemble whose one step is `img`: its requests batch at the step model.
ENSEMBLE_CONFIG = """name: "img_pipeline" platform: "ensemble" max_batch_size: 8
input [ { name: "JPEG" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "TENSOR" data_type: TYPE_FP32 dims: [ 3, 16, 16 ] } ]
ensemble_scheduling { step [ { model_name: "img" model_version: -1
  input_map { key: "IMAGE" value: "JPEG" } output_map { key: "PIXELS" value: "TENSOR" } } ] }
"""


def tokenizer_json():
    return bert_tokenizer_json(VOCAB, ["[PAD]", "[UNK]", "[CLS]", "[SEP]"])


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-isolation-") as repo:
        write_model(repo, "img", IMAGE_CONFIG)
        # The same preprocessing without dynamic batching: what an image gives alone.
        write_model(repo, "img_alone", 'name: "img_alone" ' + IMAGE_UNBATCHED)
        write_model(repo, "tok", TOKENIZE_CONFIG, files={"tokenizer.json": json.dumps(tokenizer_json())})
        write_model(repo, "img_pipeline", ENSEMBLE_CONFIG)
        write_model(repo, "pool", POOL_CONFIG)
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


def jpeg(seed):
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (40, 60, 3), dtype=np.uint8), "RGB").save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def bytes_infer(server, model, input_name, element):
    """An HTTP binary-tensor request of one BYTES element; returns (status, body)."""
    data = struct.pack("<I", len(element)) + element
    header = json.dumps({"inputs": [{"name": input_name, "datatype": "BYTES", "shape": [1, 1],
                                     "parameters": {"binary_data_size": len(data)}}]}).encode()
    status, _, body = server.infer(model, header + data, headers={
        "Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/octet-stream"})
    return status, json.loads(body)


def stats(server, model):
    status, body = server.get_json(f"/v2/models/{model}/stats")
    assert status == 200, body
    entry = body["model_stats"][0]
    batches = {b["batch_size"]: b["compute_infer"]["count"] for b in entry["batch_stats"]}
    return entry, batches


def concurrently(call, items):
    """Runs call(item) for every item at once; results in item order."""
    with concurrent.futures.ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(call, items, timeout=60))


def check_isolated_batch(before, after):
    """One batch of 5 ran (and failed), then each request alone: 4 good runs of 1."""
    (entry0, batches0), (entry1, batches1) = before, after
    assert batches1.get(BATCH, 0) == batches0.get(BATCH, 0) + 1, (batches0, batches1)
    assert batches1.get(1, 0) == batches0.get(1, 0) + BATCH - 1, (batches0, batches1)
    stats0, stats1 = entry0["inference_stats"], entry1["inference_stats"]
    assert stats1["success"]["count"] == stats0["success"]["count"] + BATCH - 1
    assert stats1["fail"]["count"] == stats0["fail"]["count"] + 1
    assert entry1["execution_count"] == entry0["execution_count"] + BATCH


def test_a_corrupt_jpeg_fails_alone(server):
    images = [jpeg(seed) for seed in range(BATCH)]
    images[BAD_INDEX] = images[BAD_INDEX][:len(images[BAD_INDEX]) // 2]  # truncated
    # What each good image gives alone (no batching, no isolation involved).
    expected = {i: bytes_infer(server, "img_alone", "IMAGE", images[i]) for i in range(BATCH) if i != BAD_INDEX}
    before = stats(server, "img")
    results = concurrently(lambda image: bytes_infer(server, "img", "IMAGE", image), images)
    check_isolated_batch(before, stats(server, "img"))
    for i, (status, body) in enumerate(results):
        if i == BAD_INDEX:
            assert status == 400, body
            # Run alone, its error is about its own image (a batch's names the row).
            assert body["error"].startswith("truncated JPEG"), body
        else:
            assert status == 200, body
            assert body["outputs"] == expected[i][1]["outputs"]
    server.assert_serving()


def test_invalid_utf8_fails_alone_over_grpc(server):
    texts = [b"hello world", b"good text", b"ok \xc3\x28", b"hello", b"world good hello"]
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)

        def call(text):
            request = pb.ModelInferRequest(model_name="tok")
            request.inputs.add(name="TEXT", datatype="BYTES", shape=[1, 1])
            request.raw_input_contents.append(struct.pack("<I", len(text)) + text)
            try:
                response = stub.ModelInfer(request, timeout=60)
                return grpc.StatusCode.OK, list(struct.unpack(f"<{MAX_LENGTH}q", response.raw_output_contents[0]))
            except grpc.RpcError as error:
                return error.code(), error.details()

        before = stats(server, "tok")
        results = concurrently(call, texts)
    check_isolated_batch(before, stats(server, "tok"))
    for i, (code, value) in enumerate(results):
        if i == BAD_INDEX:
            assert code == grpc.StatusCode.INVALID_ARGUMENT, value
            assert "not valid UTF-8" in value, value
        else:
            assert code == grpc.StatusCode.OK, value
            words = [VOCAB[w] for w in texts[i].decode().split()]
            ids = [VOCAB["[CLS]"]] + words + [VOCAB["[SEP]"]]
            assert value == ids + [VOCAB["[PAD]"]] * (MAX_LENGTH - len(ids)), texts[i]


def test_a_corrupt_jpeg_through_an_ensemble_fails_alone(server):
    images = [jpeg(100 + seed) for seed in range(BATCH)]
    images[BAD_INDEX] = b"\xff\xd8\xff" + b"\x00" * 64  # a JPEG signature, then garbage
    expected = {i: bytes_infer(server, "img_alone", "IMAGE", images[i]) for i in range(BATCH) if i != BAD_INDEX}
    before, pipeline_before = stats(server, "img"), stats(server, "img_pipeline")[0]
    results = concurrently(lambda image: bytes_infer(server, "img_pipeline", "JPEG", image), images)
    # The step model formed the batch of five and isolated it.
    check_isolated_batch(before, stats(server, "img"))
    pipeline = stats(server, "img_pipeline")[0]["inference_stats"]
    assert pipeline["success"]["count"] == pipeline_before["inference_stats"]["success"]["count"] + BATCH - 1
    assert pipeline["fail"]["count"] == pipeline_before["inference_stats"]["fail"]["count"] + 1
    for i, (status, body) in enumerate(results):
        if i == BAD_INDEX:
            assert status == 400, body
            assert "step 0 (model 'img')" in body["error"] and "JPEG" in body["error"], body
            assert "image " not in body["error"], body  # not a batch's row index
        else:
            assert status == 200, body
            assert body["outputs"][0]["name"] == "TENSOR"
            assert body["outputs"][0]["data"] == expected[i][1]["outputs"][0]["data"]
    server.assert_serving()


def test_a_bad_attention_mask_fails_alone(server):
    rng = np.random.default_rng(7)
    embeddings = rng.standard_normal((BATCH, 4, 3)).astype(np.float32)
    masks = rng.integers(0, 2, (BATCH, 4))
    masks[:, 0] = 1
    masks[BAD_INDEX, 1] = 2  # a mask holds 0 or 1

    def call(i):
        return server.infer("pool", {"inputs": [
            {"name": "token_embeddings", "datatype": "FP32", "shape": [1, 4, 3],
             "data": embeddings[i].flatten().tolist()},
            {"name": "attention_mask", "datatype": "INT64", "shape": [1, 4], "data": masks[i].tolist()}]})

    before = stats(server, "pool")
    results = concurrently(call, range(BATCH))
    check_isolated_batch(before, stats(server, "pool"))
    for i, (status, _, body) in enumerate(results):
        body = json.loads(body)
        if i == BAD_INDEX:
            assert status == 400, body
            assert "attention_mask[0,1] is 2" in body["error"], body  # its own row 0
        else:
            assert status == 200, body
            mean = (embeddings[i] * masks[i][:, None]).sum(0) / masks[i].sum()
            want = mean / np.linalg.norm(mean)
            np.testing.assert_allclose(body["outputs"][0]["data"], want, rtol=1e-5, atol=1e-6)
    server.assert_serving()

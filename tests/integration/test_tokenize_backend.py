"""The `tokenize` processing backend and OpenAI POST /v1/embeddings (issue 15 item 2),
black-box over real sockets.

The reference is an independent Python implementation of BERT's tokenizer, written here
from the algorithm (there is no `tokenizers` package in Debian): BertNormalizer
(clean_text, CJK spacing, NFD + drop Mn accents, lowercase per code point),
BertPreTokenizer (whitespace, punctuation isolated), WordPiece greedy longest-match-first
with [UNK] for unmatchable or over-long words, [CLS] ... [SEP], truncation keeping the
special tokens, padding. The server tokenises a test-written tokenizer.json; its ids must
equal the reference's on tricky inputs, over HTTP (JSON and binary tensors) and gRPC.
"""

import base64
import json
import os
import struct
import tempfile
import unicodedata

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import InferaServer, write_model
from testutil import bert_tokenizer_json

MAX_LENGTH = 16
MAX_CHARS = 12
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "a", "un", "##aff", "##able", "cafe", "creme", "brulee", "hello", "world", "run", "##ning",
         "##s", "##a", ",", ".", "!", "?", "$", "'", "(", ")", "中", "文", "日", "本", "##ing", "go", "##es",
         "naive", "resume", "x", "##x", "ü", "uber", "\u3002", "\u2014", "don", "t", "1", "##2", "3", "e",
         "##e", "##é"]
VOCAB = {token: i for i, token in enumerate(SPECIALS + WORDS)}

TRICKY = [
    "Hello, world!",
    "The unaffable CAFÉ CRÈME brûlée — naïve résumé?",
    "中文和日本 mixed with English",
    "don't $3 (x) 12 1 3",
    "",
    " \t\n  ",
    "xxxxxxxxxxxxxxxxxx unaffable",   # a word longer than max_input_chars_per_word
    "supercalifragilistic words unknown",
    "über Über UBER",
    "zero\u200bwidth and control\x07chars\ufffd",
    "e\u0301 combining accent",
    "hello " * 40,                     # truncated to MAX_LENGTH
    "Hello。World——goes running",
]


def is_bert_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
                                             (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF),
                                             (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)])


def reference_ids(text, max_length=MAX_LENGTH):
    out = []
    for ch in text:  # clean_text
        if ord(ch) == 0 or ord(ch) == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        out.append(" " if ch.isspace() or ch in "\t\n\r" else ch)
    text = "".join(" " + ch + " " if is_cjk(ch) else ch for ch in out)
    text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    text = "".join(ch.lower() for ch in text)  # per code point: no final-sigma rule
    words = []
    for chunk in text.split():
        cur = ""
        for ch in chunk:
            if is_bert_punctuation(ch):
                if cur:
                    words.append(cur)
                words.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            words.append(cur)
    ids = []
    for word in words:
        if len(word) > MAX_CHARS:
            ids.append(VOCAB["[UNK]"])
            continue
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            match = None
            while end > start:
                candidate = ("##" if start > 0 else "") + word[start:end]
                if candidate in VOCAB:
                    match = VOCAB[candidate]
                    break
                end -= 1
            if match is None:
                pieces = [VOCAB["[UNK]"]]
                break
            pieces.append(match)
            start = end
        ids.extend(pieces)
    ids = [VOCAB["[CLS]"]] + ids[:max_length - 2] + [VOCAB["[SEP]"]]
    mask = [1] * len(ids) + [0] * (max_length - len(ids))
    return ids + [VOCAB["[PAD]"]] * (max_length - len(ids)), mask


def tokenizer_json():
    return bert_tokenizer_json(VOCAB, SPECIALS, MAX_CHARS)


def tokenize_config(name, batch, outputs=("input_ids", "attention_mask", "token_type_ids")):
    outs = ", ".join(f'{{ name: "{o}" data_type: TYPE_INT64 dims: [ {MAX_LENGTH} ] }}' for o in outputs)
    return f"""
name: "{name}"
backend: "tokenize"
max_batch_size: {batch}
input [ {{ name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }} ]
output [ {outs} ]
parameters {{ key: "max_length" value {{ string_value: "{MAX_LENGTH}" }} }}
{"dynamic_batching { max_queue_delay_microseconds: 2000 }" if batch else ""}
"""


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="infera-tokenize-") as repo:
        files = {"tokenizer.json": json.dumps(tokenizer_json(), ensure_ascii=False)}
        write_model(repo, "bert_tokenize", tokenize_config("bert_tokenize", 16), files=files)
        write_model(repo, "bert_tokenize_single", tokenize_config("bert_tokenize_single", 0, ("input_ids",)), files=files)
        write_model(repo, "bad_tokenize", tokenize_config("bad_tokenize", 0),
                    files={"tokenizer.json": json.dumps({"model": {"type": "WordPiece", "vocab": {"a": 0}}})})
        s = InferaServer(repo)
        s.wait_ready()
        yield s
        s.stop()


def infer_texts(server, model, texts, batched=True):
    shape = [len(texts), 1] if batched else [1]
    body = {"inputs": [{"name": "TEXT", "datatype": "BYTES", "shape": shape, "data": texts}]}
    status, _, data = server.infer(model, body)
    return status, json.loads(data)


def test_ids_equal_the_reference_over_http(server):
    status, body = infer_texts(server, "bert_tokenize", TRICKY)
    assert status == 200, body
    outputs = {o["name"]: o for o in body["outputs"]}
    assert outputs["input_ids"]["shape"] == [len(TRICKY), MAX_LENGTH]
    assert outputs["input_ids"]["datatype"] == "INT64"
    for i, text in enumerate(TRICKY):
        ids, mask = reference_ids(text)
        row = slice(i * MAX_LENGTH, (i + 1) * MAX_LENGTH)
        assert outputs["input_ids"]["data"][row] == ids, text
        assert outputs["attention_mask"]["data"][row] == mask, text
        assert outputs["token_type_ids"]["data"][row] == [0] * MAX_LENGTH
    # The truncated one is full: [CLS] + 14 x hello + [SEP].
    assert reference_ids("hello " * 40)[0] == [2] + [VOCAB["hello"]] * 14 + [3]


def test_unbatched_model_with_one_output(server):
    for text in TRICKY[:4]:
        status, body = infer_texts(server, "bert_tokenize_single", [text], batched=False)
        assert status == 200, body
        assert [o["name"] for o in body["outputs"]] == ["input_ids"]
        assert body["outputs"][0]["shape"] == [MAX_LENGTH]
        assert body["outputs"][0]["data"] == reference_ids(text)[0]


def test_ids_over_grpc(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        texts = [t.encode() for t in TRICKY[:6]]
        request = pb.ModelInferRequest(model_name="bert_tokenize")
        request.inputs.add(name="TEXT", datatype="BYTES", shape=[len(texts), 1])
        request.raw_input_contents.append(b"".join(struct.pack("<I", len(t)) + t for t in texts))
        response = stub.ModelInfer(request, timeout=30)
        names = [o.name for o in response.outputs]
        ids = struct.unpack(f"<{len(texts) * MAX_LENGTH}q", response.raw_output_contents[names.index("input_ids")])
        for i, text in enumerate(TRICKY[:6]):
            assert list(ids[i * MAX_LENGTH:(i + 1) * MAX_LENGTH]) == reference_ids(text)[0], text
        bad = pb.ModelInferRequest(model_name="bert_tokenize")
        bad.inputs.add(name="TEXT", datatype="BYTES", shape=[1, 1])
        bad.raw_input_contents.append(struct.pack("<I", 2) + b"\xc3\x28")
        with pytest.raises(grpc.RpcError) as error:
            stub.ModelInfer(bad, timeout=30)
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not valid UTF-8" in error.value.details()


def binary_request(texts):
    blob = b"".join(struct.pack("<I", len(t)) + t for t in texts)
    header = json.dumps({"inputs": [{"name": "TEXT", "datatype": "BYTES", "shape": [len(texts), 1],
                                     "parameters": {"binary_data_size": len(blob)}}]}).encode()
    return header + blob, {"Inference-Header-Content-Length": str(len(header)),
                           "Content-Type": "application/octet-stream"}


@pytest.mark.parametrize("text", [b"\xff", b"ok \xc3\x28", b"\xed\xa0\x80", b"\xf0\x9f\x98"])
def test_invalid_utf8_is_400_and_the_server_keeps_serving(server, text):
    body, headers = binary_request([text])
    status, _, data = server.infer("bert_tokenize", body, headers=headers)
    assert status == 400, data
    assert b"not valid UTF-8" in data
    status, body = infer_texts(server, "bert_tokenize", ["hello"])
    assert status == 200
    assert body["outputs"][0]["data"][:3] == [2, VOCAB["hello"], 3]


def test_hostile_shapes_and_a_bad_tokenizer(server):
    status, _, data = server.infer("bert_tokenize", {"inputs": [
        {"name": "TEXT", "datatype": "INT64", "shape": [1, 1], "data": [1]}]})
    assert status == 400, data
    status, _, data = server.infer("bert_tokenize", {"inputs": [
        {"name": "TEXT", "datatype": "BYTES", "shape": [1, 2], "data": ["a", "b"]}]})
    assert status == 400, data
    long_text = "hello " * 50000  # 300 KB: truncated, not refused
    status, body = infer_texts(server, "bert_tokenize", [long_text])
    assert status == 200
    assert body["outputs"][0]["data"] == reference_ids("hello " * 20)[0]
    status, _ = server.get_json("/v2/models/bad_tokenize/ready")
    assert status != 200
    assert "unk_token '[UNK]' is not in the vocab" in server.log()


# --- OpenAI /v1/embeddings -------------------------------------------------------------

def post_embeddings(server, body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, raw = server.request("POST", "/v1/embeddings", data, {"Content-Type": "application/json"})
    return status, json.loads(raw)


def test_embeddings_errors_are_openai_shaped(server):
    cases = [
        (b"not json", 400, "request body"),
        ({"model": "bert_tokenize"}, 400, "'input' is required"),
        ({"input": "x"}, 400, "'model' is required"),
        ({"model": "bert_tokenize", "input": []}, 400, "empty list"),
        ({"model": "bert_tokenize", "input": [1, 2]}, 404, "is not an embedding model"),
        ({"model": "bert_tokenize", "input": "x", "encoding_format": "int8"}, 400, "encoding_format"),
        ({"model": "bert_tokenize", "input": ["x"] * 3000}, 400, "3000 items; the limit is 2048"),
        ({"model": "bert_tokenize", "input": "x", "dimensions": -1}, 400, "'dimensions'"),
        (b'{"model": "m", "input": ' + b"[" * 200 + b"]" * 200 + b"}", 400, "request body"),
        ({"model": "nope", "input": "x"}, 404, "does not exist"),
        ({"model": "bert_tokenize", "input": "x"}, 404, "is not an embedding model"),
    ]
    for body, code, needle in cases:
        status, answer = post_embeddings(server, body)
        assert status == code, (body, answer)
        assert answer["error"]["code"] == code
        assert needle in answer["error"]["message"], answer
        assert answer["error"]["type"] in ("BadRequestError", "NotFoundError")
    status, _, raw = server.request("GET", "/v1/embeddings")
    assert status == 405
    server.assert_serving()


# An embedding pipeline: tokenize -> a seeded TorchScript "encoder" (ids -> FP32 [8]),
# as an ensemble, served on /v1/embeddings.
def make_encoder(path):
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(15)
            self.table = torch.nn.Parameter(torch.randn(len(VOCAB), 8, generator=g), requires_grad=False)

        def forward(self, ids, mask):
            e = self.table[ids] * mask.unsqueeze(-1).float()
            v = e.sum(1) / mask.sum(1, keepdim=True).float()
            return torch.nn.functional.normalize(v, dim=-1)

    module = torch.jit.script(Encoder().eval())
    module.save(path)
    return module


def test_embeddings_through_a_tokenize_ensemble():
    import torch
    with tempfile.TemporaryDirectory(prefix="infera-embed-") as repo:
        files = {"tokenizer.json": json.dumps(tokenizer_json(), ensure_ascii=False)}
        write_model(repo, "embed_tokenize", tokenize_config("embed_tokenize", 8, ("input_ids", "attention_mask")),
                    files=files)
        write_model(repo, "embed_encoder", f"""
name: "embed_encoder"
platform: "pytorch_libtorch"
max_batch_size: 8
input [ {{ name: "INPUT__0" data_type: TYPE_INT64 dims: [ {MAX_LENGTH} ] }},
        {{ name: "INPUT__1" data_type: TYPE_INT64 dims: [ {MAX_LENGTH} ] }} ]
output [ {{ name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 8 ] }} ]
""")
        module = make_encoder(os.path.join(repo, "embed_encoder", "1", "model.pt"))
        write_model(repo, "embed", """
name: "embed"
platform: "ensemble"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ 8 ] } ]
parameters { key: "openai_embedding_tokenizer" value { string_value: "embed_tokenize" } }
ensemble_scheduling {
  step [
    { model_name: "embed_tokenize" model_version: -1
      input_map { key: "TEXT" value: "TEXT" }
      output_map { key: "input_ids" value: "ids" }
      output_map { key: "attention_mask" value: "mask" } },
    { model_name: "embed_encoder" model_version: -1
      input_map { key: "INPUT__0" value: "ids" }
      input_map { key: "INPUT__1" value: "mask" }
      output_map { key: "OUTPUT__0" value: "EMBEDDING" } }
  ]
}
""")
        s = InferaServer(repo)
        try:
            s.wait_ready()
            status, _ = s.get_json("/v2/models/embed/ready")
            assert status == 200, "the ensemble did not load"
            texts = TRICKY[:5] + ["hello world"] * 12  # 17 inputs: three batches of <= 8
            status, answer = post_embeddings(s, {"model": "embed", "input": texts})
            assert status == 200, answer
            assert answer["object"] == "list" and answer["model"] == "embed"
            ids = torch.tensor([reference_ids(t)[0] for t in texts])
            mask = torch.tensor([reference_ids(t)[1] for t in texts])
            expected = module(ids, mask)
            for i, item in enumerate(answer["data"]):
                assert item["object"] == "embedding" and item["index"] == i
                assert item["embedding"] == pytest.approx(expected[i].tolist(), abs=1e-6)
            tokens = sum(sum(reference_ids(t)[1]) for t in texts)
            assert answer["usage"] == {"prompt_tokens": tokens, "total_tokens": tokens}
            status, answer = post_embeddings(s, {"model": "embed", "input": "hello", "encoding_format": "base64",
                                                 "dimensions": 8})
            assert status == 200, answer
            raw = base64.b64decode(answer["data"][0]["embedding"])
            hello = module(torch.tensor([reference_ids("hello")[0]]), torch.tensor([reference_ids("hello")[1]]))
            assert list(struct.unpack("<8f", raw)) == pytest.approx(hello[0].tolist(), abs=1e-6)
            status, answer = post_embeddings(s, {"model": "embed", "input": "hello", "dimensions": 4})
            assert status == 400 and "'dimensions' 4" in answer["error"]["message"]
            # 30 MB of words: embedded from its first MAX_LENGTH ids (tokenisation stops
            # there: issue 26), usage counted the same way.
            huge = "hello world " * ((30 << 20) // 12)
            status, answer = post_embeddings(s, {"model": "embed", "input": [huge, "hello"]})
            assert status == 200, answer
            start = huge[:240]  # 40 words: more than MAX_LENGTH ids
            expected = module(torch.tensor([reference_ids(start)[0]]), torch.tensor([reference_ids(start)[1]]))
            assert answer["data"][0]["embedding"] == pytest.approx(expected[0].tolist(), abs=1e-6)
            assert answer["usage"]["prompt_tokens"] == MAX_LENGTH + sum(reference_ids("hello")[1])
        finally:
            s.stop()

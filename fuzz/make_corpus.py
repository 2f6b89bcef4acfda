#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets: fuzz/corpus/<target>/seed-*.

Hand-written, small inputs that reach each parser's main paths (valid documents plus a
few near-misses); libFuzzer mutates from them. Deterministic: re-running rewrites the
same files. Regression inputs (crashes found and fixed) live beside them as
crash-<what>, are written by hand, and are never touched by this script.

    fuzz/make_corpus.py [--demo-repo demo-models]

With --demo-repo, the demo models' config.pbtxt files and the demo LLM's small JSON
files are added as seeds too (when present).
"""
import argparse
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
SEP = b"\n@@@@\n"


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def http_request(method, target, body=b"", headers=()):
    if isinstance(body, str):
        body = body.encode()
    lines = [f"{method} {target} HTTP/1.1", "Host: localhost"]
    lines += [f"{k}: {v}" for k, v in headers]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


SIMPLE = {"inputs": [
    {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
    {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}


def binary_body(header, tensors):
    h = json.dumps(header).encode()
    return h, h + b"".join(tensors)


def http_seeds():
    t = "fuzz_http_request"
    for i, path in enumerate(["/v2/health/live", "/v2/health/ready", "/v2", "/v2/models/simple",
                              "/v2/models/simple/versions/1", "/v2/models/simple/ready",
                              "/v2/models/simple/config", "/v2/models/stats",
                              "/v2/models/identity_fp32/versions/1/stats", "/v2/logging",
                              "/v2/models/%73imple", "/v2/models/nope/ready"]):
        write(t, f"get-{i}", http_request("GET", path))
    write(t, "infer-json", http_request("POST", "/v2/models/simple/infer", json.dumps(SIMPLE),
                                        [("Content-Type", "application/json")]))
    write(t, "infer-json-outputs", http_request(
        "POST", "/v2/models/simple/versions/1/infer",
        json.dumps(dict(SIMPLE, id="r1", parameters={"binary_data_output": True},
                        outputs=[{"name": "OUTPUT1", "parameters": {"binary_data": False}}]))))
    h, body = binary_body({"inputs": [{"name": "INPUT0", "shape": [4], "datatype": "FP32",
                                       "parameters": {"binary_data_size": 16}}]},
                          [struct.pack("<4f", 1, 2, 3, 4)])
    write(t, "infer-binary", http_request("POST", "/v2/models/identity_fp32/infer", body,
                                          [("Inference-Header-Content-Length", str(len(h))),
                                           ("Content-Type", "application/octet-stream")]))
    elems = b"".join(struct.pack("<I", len(s)) + s for s in [b"hello", b"", b"world!"])
    h, body = binary_body({"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "BYTES",
                                       "parameters": {"binary_data_size": len(elems)}}]}, [elems])
    write(t, "infer-bytes-binary", http_request("POST", "/v2/models/bytes_identity/infer", body,
                                                [("Inference-Header-Content-Length", str(len(h)))]))
    write(t, "infer-bytes-json", http_request("POST", "/v2/models/bytes_identity/infer", json.dumps(
        {"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "BYTES", "data": ["a", "\u00e9"]}]})))
    chunked = json.dumps(SIMPLE).encode()
    write(t, "infer-chunked", b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(chunked) + chunked + b"\r\n0\r\n\r\n")
    # Obsolete line folding (refused 400 by the parser), in a header and in a trailer.
    write(t, "obs-fold-header", b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n\tb\r\n\r\n")
    write(t, "obs-fold-trailer", b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(chunked) + chunked
          + b"\r\n0\r\nX-Trailer: a\r\n b\r\n\r\n")
    write(t, "repo-index", http_request("POST", "/v2/repository/index", '{"ready": true}'))
    write(t, "repo-load", http_request("POST", "/v2/repository/models/simple/load",
                                       '{"parameters": {"config": "{\\"max_batch_size\\": 4}"}}'))
    write(t, "repo-unload", http_request("POST", "/v2/repository/models/simple/unload",
                                         '{"parameters": {"unload_dependents": false}}'))
    write(t, "logging", http_request("POST", "/v2/logging",
                                     '{"log_verbose_level": 0, "log_info": true, "log_format": "default"}'))


def decoder_seeds():
    t = "fuzz_request_decoder"
    write(t, "json-simple", b"\x00" + json.dumps(SIMPLE).encode())
    write(t, "json-nested", b"\x00" + json.dumps({"id": "7", "parameters": {"priority": 1, "timeout": 100},
        "inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [[1.5, "NaN"], [3, -0.0]]},
                   {"name": "b", "shape": [2], "datatype": "BOOL", "data": [True, False]},
                   {"name": "s", "shape": [1], "datatype": "BYTES", "data": ["str"]},
                   {"name": "h", "shape": [1], "datatype": "FP16", "data": [65504]},
                   {"name": "u", "shape": [2], "datatype": "UINT64", "data": [0, 18446744073709551615]}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode())
    for name, dtype, fmt, vals in [("fp32", "FP32", "<3f", (1, 2, 3)), ("int8", "INT8", "<3b", (-1, 0, 1)),
                                   ("int64", "INT64", "<3q", (1, -2, 3)), ("bf16", "BF16", "<3H", (0x3f80, 0, 1))]:
        data = struct.pack(fmt, *vals)
        h = json.dumps({"inputs": [{"name": "x", "shape": [3], "datatype": dtype,
                                    "parameters": {"binary_data_size": len(data)}}]}).encode()
        write(t, "binary-" + name, b"\x01" + struct.pack(">H", len(h)) + h + data)
    elems = b"".join(struct.pack("<I", len(s)) + s for s in [b"ab", b"", b"cde"])
    h = json.dumps({"inputs": [{"name": "s", "shape": [3], "datatype": "BYTES",
                                "parameters": {"binary_data_size": len(elems)}},
                               {"name": "j", "shape": [1], "datatype": "INT32", "data": [5]}]}).encode()
    write(t, "binary-bytes", b"\x01" + struct.pack(">H", len(h)) + h + elems)


def raw_decoder_seeds():
    """Raw binary bodies: datatype (TYPE_*), input count, dims count | batching bit, dims, body."""
    t = "fuzz_raw_request_decoder"
    fp32, int32, string = 11, 8, 13  # TYPE_FP32, TYPE_INT32, TYPE_STRING in model_config.proto
    write(t, "fp32-variable", bytes([fp32, 1, 1, 0xff]) + struct.pack("<3f", 1.5, -2, 0))
    write(t, "int32-batched", bytes([int32, 1, 4 | 2, 2, 0xff]) + struct.pack("<4i", 1, 2, 3, 4))
    write(t, "int32-fixed", bytes([int32, 1, 1, 4]) + struct.pack("<4i", 9, 8, 7, 6))
    write(t, "bytes-one", bytes([string, 1, 4 | 1, 1]) + b"hello\x00world")
    write(t, "two-inputs", bytes([fp32, 2, 1, 4]) + b"\0" * 16)
    write(t, "two-variable", bytes([fp32, 1, 2, 0xff, 0xff]) + b"\0" * 16)
    write(t, "huge-dims", bytes([fp32, 1, 2, 127, 4]) + b"\0" * 8)


def generate_request_seeds():
    """Generate bodies: byte 0 chooses the model (bit 0: batching), then the JSON body."""
    t = "fuzz_generate_request"
    bodies = {
        "text": {"text_input": "What is Triton?", "parameters": {"stream": True, "temperature": 0.5, "max_tokens": 8}},
        "tensors": {"IN": [1, -2, 3], "small": [1, 2, 3, 4], "wide": [0, 1, 18446744073709551615, 7],
                    "half": [0.5, 65504], "brain": [1.5, -2], "f": [1, 2, 3, 4, 5, 6], "d": 0.1, "id": "r1"},
        "parameters-as-inputs": {"parameters": {"IN": [4, 5], "routing_key": "user-7"}, "text_input": ["a"]},
        "near-miss": {"IN": [1.5, "x", None], "small": [[1]], "extra": {"a": 1}},
        "empty": {},
    }
    for name, body in bodies.items():
        write(t, name, b"\x00" + json.dumps(body).encode())
        write(t, name + "-batching", b"\x01" + json.dumps(body).encode())
    write(t, "truncated", b"\x00{\"IN\": [1, 2")


CONFIGS = {
    "simple": '''name: "simple"
backend: "add_sub"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
''',
    "batching": '''platform: "pytorch_libtorch"
max_batch_size: 64
default_model_filename: "model.pt"
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 3, -1, 224 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] reshape: { shape: [ 10, 100 ] } } ]
version_policy: { specific: { versions: [ 1, 3 ] } }
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  preserve_ordering: true
  priority_levels: 3
  default_priority_level: 2
  default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 1000 allow_timeout_override: true max_queue_size: 16 }
  priority_queue_policy { key: 1 value: { timeout_action: DELAY max_queue_size: 4 } }
}
parameters { key: "latency_slo_ms" value: { string_value: "50" } }
parameters { key: "INTRA_OP_THREAD_COUNT" value: { string_value: "2" } }
''',
    "warmup": '''name: "model"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "S" data_type: TYPE_STRING dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
version_policy: { latest: { num_versions: 2 } }
model_warmup [ { name: "w" batch_size: 1 count: 3
  inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } }
  inputs { key: "S" value: { data_type: TYPE_STRING dims: [ 2 ] zero_data: true } } } ]
''',
    "llm": '''backend: "llm"
max_batch_size: 0
version_policy: { all: {} }
parameters { key: "kv_cache_memory_bytes" value: { string_value: "64MiB" } }
parameters { key: "num_threads" value: { string_value: "2" } }
''',
    "sequence": '''name: "model"
backend: "accumulate"
max_batch_size: 4
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING } ] }
  ]
  oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 100 }
}
''',
    "bad-field": 'name: "m"\nbackend: "identity"\nmax_batch_size: -1\nnot_a_field: 3\n',
}


def config_seeds(demo):
    t = "fuzz_model_config"
    for name, text in CONFIGS.items():
        write(t, name, text)
    if demo and os.path.isdir(demo):
        for model in sorted(os.listdir(demo)):
            path = os.path.join(demo, model, "config.pbtxt")
            if os.path.isfile(path) and os.path.getsize(path) < 8192:
                with open(path, "rb") as f:
                    write(t, "demo-" + model, f.read())


def safetensors_file(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def safetensors_seeds():
    t = "fuzz_safetensors"
    write(t, "f32", safetensors_file({"w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))},
                                     {"format": "pt"}))
    write(t, "mixed", safetensors_file({"a": ("F16", [3], b"\x00\x3c" * 3),
                                        "b": ("BF16", [1, 2], b"\x80\x3f" * 2),
                                        "scalar": ("F32", [], b"\x00\x00\x80\x3f"),
                                        "empty": ("F32", [0, 5], b"")}))
    write(t, "bad-dtype", safetensors_file({"i": ("I64", [1], b"\x01" + b"\x00" * 7)}))


def gguf_seeds():
    """Small GGUF files from scripts/gguf_writer.py: tensors of several types, every
    metadata type (nested arrays too), a non-default alignment, tokenizers of both
    families, and near-misses (truncated, a tensor past the end)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    from gguf_writer import GGUFWriter, GGMLType, ValueType, typed
    t = "fuzz_gguf"
    w = GGUFWriter()
    w.add("general.architecture", "llama")
    w.add("llama.block_count", 2)
    w.add("llama.rope.freq_base", 10000.0)
    w.add("u8", typed(ValueType.UINT8, 7))
    w.add("i16", typed(ValueType.INT16, -3))
    w.add("u64", typed(ValueType.UINT64, 2**40))
    w.add("f64", typed(ValueType.FLOAT64, 0.5))
    w.add("flag", True)
    w.add("nested", typed(ValueType.ARRAY, [typed(ValueType.ARRAY, [1, 2], ValueType.INT32),
                                           typed(ValueType.ARRAY, ["a"], ValueType.STRING)], ValueType.ARRAY))
    w.add_tensor("f32", GGMLType.F32, (2, 3), struct.pack("<6f", *range(6)))
    w.add_tensor("f16", GGMLType.F16, (4,), b"\x00\x3c" * 4)
    w.add_tensor("q8", GGMLType.Q8_0, (1, 32), b"\x00\x3c" + bytes(range(32)))
    w.add_tensor("q4k", GGMLType.Q4_K, (1, 256), bytes(144))
    tensors = w.to_bytes()
    write(t, "tensors", tensors)
    write(t, "truncated", tensors[:len(tensors) - 40])
    w = GGUFWriter(alignment=64)
    w.add_tensor("bf16", GGMLType.BF16, (2,), b"\x80\x3f\x00\x40")
    write(t, "align64", w.to_bytes())
    bad = bytearray(tensors)
    bad[4] = 1
    write(t, "version1", bytes(bad))

    w = GGUFWriter()
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "h", "e", "\u2581h", "he"]
    w.add("tokenizer.ggml.model", "llama")
    w.add("tokenizer.ggml.tokens", typed(ValueType.ARRAY, tokens, ValueType.STRING))
    w.add("tokenizer.ggml.token_type", typed(ValueType.ARRAY, [2, 3, 3] + [6] * 256 + [1] * 5, ValueType.INT32))
    w.add("tokenizer.ggml.scores", typed(ValueType.ARRAY, [0.0] * 262 + [-1.0, -2.0], ValueType.FLOAT32))
    w.add("tokenizer.ggml.bos_token_id", 1)
    w.add("tokenizer.ggml.eos_token_id", 2)
    w.add("tokenizer.chat_template", "{% for m in messages %}{{ m['content'] }}{% endfor %}")
    write(t, "tokenizer-llama", w.to_bytes())

    w = GGUFWriter()
    alphabet = [chr(c) for c in range(ord("!"), ord("~") + 1)] + ["\u0120"]
    w.add("tokenizer.ggml.model", "gpt2")
    w.add("tokenizer.ggml.pre", "llama-bpe")
    w.add("tokenizer.ggml.tokens", typed(ValueType.ARRAY, alphabet + ["\u0120t", "<|end|>"], ValueType.STRING))
    w.add("tokenizer.ggml.token_type", typed(ValueType.ARRAY, [1] * (len(alphabet) + 1) + [3], ValueType.INT32))
    w.add("tokenizer.ggml.merges", typed(ValueType.ARRAY, ["\u0120 t"], ValueType.STRING))
    w.add("tokenizer.ggml.eos_token_id", len(alphabet) + 1)
    write(t, "tokenizer-gpt2", w.to_bytes())


def tiny_sentencepiece():
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = 3 + b
    for tok in ["\u2581", "h", "e", "l", "o", "ll", "\u2581h", "ell", "\u2581hell", "\u2581hello"]:
        vocab[tok] = len(vocab)
    return {
        "added_tokens": [{"id": i, "content": c, "special": True, "lstrip": False, "rstrip": False}
                         for i, c in enumerate(["<unk>", "<s>", "</s>"])],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True,
                  "vocab": vocab, "merges": ["l l", "\u2581 h", "e ll", "\u2581h ell", "\u2581hell o"]}}


def tiny_bytelevel():
    # GPT-2's byte alphabet: printable bytes map to themselves, the rest to U+0100 + n.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    vocab = {chr(c): i for i, c in enumerate(cs)}
    for tok in ["\u0120t", "\u0120th", "\u0120the", "he"]:
        vocab[tok] = len(vocab)
    return {
        "added_tokens": [{"id": 260, "content": "<|endoftext|>", "special": True, "lstrip": False, "rstrip": False},
                         {"id": 261, "content": "<|im_start|>", "special": False, "lstrip": True, "rstrip": False}],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\s+|\\p{L}+|\\p{N}{1,3}|[^\\s\\p{L}\\p{N}]+"},
             "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "vocab": vocab, "merges": ["\u0120 t", "\u0120t h", "\u0120th e", "h e"]}}


def tokenizer_seeds(demo):
    t = "fuzz_tokenizer"
    for i, text in enumerate(["hello world", "  the\tthe\n<|endoftext|>x", "\u00e9\u4e2d\U0001F600 hello",
                              "<s>hello</s> ll", "\xff"]):
        write(t, f"text-{i}", b"\x00" + text.encode("utf-8", "surrogatepass"))
    config = json.dumps({"bos_token": "<s>", "eos_token": {"content": "</s>"}, "add_bos_token": True,
                         "chat_template": "{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}"})
    gen = json.dumps({"bos_token_id": 1, "eos_token_id": [2, 0]})
    write(t, "json-sentencepiece", b"\x01" + SEP.join([json.dumps(tiny_sentencepiece()).encode(),
                                                       config.encode(), gen.encode(), b"hello hell  o"]))
    write(t, "json-bytelevel", b"\x01" + SEP.join([json.dumps(tiny_bytelevel()).encode(), b"", b"",
                                                   "the <|im_start|> \u00e9 12345".encode()]))
    # Lowercase shrinks the Kelvin sign 3 bytes to 1: the bytes-per-token bound must hold.
    lowercase = tiny_sentencepiece()
    lowercase["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFD"}]}
    write(t, "json-lowercase", b"\x01" + SEP.join([json.dumps(lowercase).encode(), b"", b"",
                                                   "\u212a\u212a \u2126 hello".encode()]))
    write(t, "text-long-runs", b"\x00" + (" " * 300 + "l" * 300 + "<s>" * 20).encode())
    if demo:
        llm = os.path.join(demo, "tiny_llm", "1")
        files = [os.path.join(llm, f) for f in ("tokenizer.json", "tokenizer_config.json",
                                                   "generation_config.json")]
        if all(os.path.isfile(f) for f in files) and sum(os.path.getsize(f) for f in files) < 64 << 10:
            parts = [open(f, "rb").read() for f in files] + [b"Once upon a time"]
            write(t, "json-demo-llm", b"\x01" + SEP.join(parts))


def openai_seeds():
    t = "fuzz_openai_protocol"
    write(t, "completion", b"\x00" + json.dumps({
        "model": "tiny_llm", "prompt": "Once upon", "max_tokens": 8, "temperature": 0.7, "top_p": 0.9,
        "top_k": 40, "min_p": 0.05, "stop": ["\n", "."], "seed": 3, "logprobs": 1, "echo": True,
        "stream": True, "stream_options": {"include_usage": True}, "n": 1, "priority": 2,
        "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1}).encode())
    write(t, "completion-ids", b"\x00" + json.dumps({
        "model": "m", "prompt": [1, 2, 3], "stop_token_ids": [2], "ignore_eos": True,
        "include_stop_str_in_output": True, "skip_special_tokens": False}).encode())
    write(t, "chat", b"\x01" + json.dumps({
        "model": "tiny_llm", "messages": [{"role": "system", "content": "Be brief."},
                                          {"role": "user", "content": "Hi \u00e9"},
                                          {"role": "assistant", "content": "Hello"},
                                          {"role": "user", "content": [{"type": "text", "text": "more"}]}],
        "max_completion_tokens": 16, "logprobs": True, "top_logprobs": 0, "stop": "END",
        "add_generation_prompt": False, "stream": False}).encode())
    write(t, "bad", b"\x01" + b'{"model": "m", "messages": [], "n": 2, "max_tokens": -1}')
    write(t, "completion-bias", b"\x00" + json.dumps({
        "model": "m", "prompt": "x", "max_tokens": 8, "min_tokens": 4,
        "logit_bias": {"5": 100, "7": -100, "-1": 1e300, "12": 0.5}}).encode())
    weather = {"type": "function", "function": {"name": "get_weather", "description": "now", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "enum": ["Paris"]}}, "required": ["city"]}}}
    write(t, "chat-tools-required", b"\x01" + json.dumps({
        "model": "m", "tools": [weather], "tool_choice": "required", "parallel_tool_calls": False,
        "messages": [{"role": "user", "content": "x"},
                     {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                     {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]}).encode())
    write(t, "chat-tools-named", b"\x01" + json.dumps({
        "model": "m", "tools": [weather], "messages": [{"role": "user", "content": "x"}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}).encode())
    write(t, "chat-json-schema", b"\x01" + json.dumps({
        "model": "m", "messages": [{"role": "user", "content": "x"}], "response_format": {
            "type": "json_schema", "json_schema": {"name": "v", "strict": True, "schema": {
                "type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}}}}).encode())
    write(t, "completion-guided", b"\x00" + json.dumps({
        "model": "m", "prompt": "x", "guided_choice": ["yes", "no"], "guided_decoding_backend": "xgrammar"}).encode())
    write(t, "chat-guided-regex", b"\x01" + json.dumps({
        "model": "m", "messages": [{"role": "user", "content": "x"}], "guided_regex": "[a-z]{1,8}@[a-z]+\\.com"}).encode())
    write(t, "chat-min-tokens", b"\x01" + json.dumps({
        "model": "m", "messages": [{"role": "user", "content": "x"}], "min_tokens": 64,
        "logit_bias": {"3": -5}, "temperature": None}).encode())


TEMPLATES = {
    "llama3": "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>{% endfor %}",
    "chatml": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}",
    "qwen": "{%- if not system %}<|im_start|>system\\nYou are Qwen.<|im_end|>\\n{% endif %}<|im_start|>",
    "llama2": "{% if system %}[INST] <<SYS>>\n{{ system }}\n<</SYS>>\n\n{% endif %}[INST] {{ c }} [/INST]",
    "mistral": "{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}",
}


def chat_template_seeds():
    t = "fuzz_chat_template"
    conversation = [b"system", b"You are terse.", b"user", b"Hi", b"assistant", b"Hello!", b"user",
                    "\u00bfQu\u00e9?".encode()]
    for name, jinja in TEMPLATES.items():
        write(t, name, SEP.join([jinja.encode(), b"<s>", b"</s>"] + conversation))
    write(t, "unknown-role", SEP.join([TEMPLATES["llama2"].encode(), b"<s>", b"</s>", b"tool", b"x"]))


def tool_call_parser_seeds():
    """fuzz_tool_call_parser: byte 0 = format | mode << 2, byte 1 = streaming step."""
    t = "fuzz_tool_call_parser"
    outputs = {
        "hermes": (1, b'Sure.\n<tool_call>\n{"name": "f", "arguments": {"a": [1, "}"]}}\n</tool_call>'),
        "hermes-open": (1, b'<tool_call>{"name": "f", "arguments": {}}'),
        "llama3": (2, b'<|python_tag|>{"name": "f", "parameters": {"x": 1}}; {"name": "g", "parameters": {}}'),
        "llama3-text": (2, b'  Hello {not a call}'),
        "mistral": (3, b'Ok[TOOL_CALLS] [{"name": "f", "arguments": {"q": "a"}, "id": "abc"}]'),
        "required": (1 | 1 << 2, b'[{"name": "f", "parameters": {"k": true}}]'),
        "named": (1 | 2 << 2, b'{"city": "Paris"}'),
    }
    for name, (selector, output) in outputs.items():
        write(t, name, bytes([selector, 3]) + output)


def image_seeds():
    """fuzz_image_decode: tiny JPEG/PNG files in each colour type and encoding the
    decoder handles (PIL, from Debian's python3-pil), plus a truncated one."""
    import io
    from PIL import Image
    t = "fuzz_image_decode"
    rgb = Image.new("RGB", (9, 7))
    rgb.putdata([(x * 28, y * 36, (x + y) * 16) for y in range(7) for x in range(9)])

    def encoded(image, fmt, **kwargs):
        buffer = io.BytesIO()
        image.save(buffer, fmt, **kwargs)
        return buffer.getvalue()

    write(t, "rgb.jpg", encoded(rgb, "JPEG", quality=75))
    write(t, "progressive.jpg", encoded(rgb, "JPEG", progressive=True))
    write(t, "subsampled.jpg", encoded(rgb, "JPEG", subsampling=2, quality=50))
    write(t, "gray.jpg", encoded(rgb.convert("L"), "JPEG"))
    write(t, "cmyk.jpg", encoded(rgb.convert("CMYK"), "JPEG"))
    write(t, "rgb.png", encoded(rgb, "PNG"))
    write(t, "rgba.png", encoded(rgb.convert("RGBA"), "PNG"))
    write(t, "palette.png", encoded(rgb.convert("P"), "PNG"))
    write(t, "gray.png", encoded(rgb.convert("L"), "PNG"))
    write(t, "bilevel.png", encoded(rgb.convert("1"), "PNG"))
    write(t, "gray16.png", encoded(rgb.convert("I").point(lambda v: v * 200).convert("I;16"), "PNG"))
    write(t, "truncated.jpg", encoded(rgb, "JPEG")[:-40])
def postprocess_seeds():
    """fuzz_postprocess: byte 0 backend, 1..3 sizes, 4 flags, a parameter value, tensor bytes."""
    t = "fuzz_postprocess"
    fl = lambda *v: struct.pack("<%df" % len(v), *v)
    nan, inf = float("nan"), float("inf")
    write(t, "classify-softmax", bytes([0, 9, 0, 2, 8]) + b"true\0" + fl(1, 2, 3, nan, inf, -1, 0, 5, 5, 2))
    write(t, "classify-batch", bytes([0, 4, 0, 3, 1 | (2 << 1)]) + b"\0" + fl(*range(8)))
    write(t, "detect-iou", bytes([1, 3, 1, 3, 1 << 3]) + b"0.5\0" +
          fl(0, 0, 10, 10, 0, 0, 10, 10, 5, 5, 15, 15, 0.9, 0.8, 0.7))
    write(t, "detect-cxcywh-agnostic", bytes([1, 5, 2, 2, 32 | 64 | 1 | (1 << 1)]) + b"0.1\0" +
          fl(*[i * 0.7 for i in range(40)]))
    write(t, "pool-mean", bytes([2, 4, 3, 0, 1 | (2 << 1)]) + b"true\0" + fl(*[i * 0.3 for i in range(30)]))
    write(t, "pool-cls-bad-mask", bytes([2, 3, 2, 0, 8 | 16]) + b"cls\0" + bytes(range(1, 40)))


class Decisions:
    """Builds an input for a target that reads it with libFuzzer's FuzzedDataProvider:
    integers (ranges under 256: one byte each) are taken from the end of the input, last
    byte first; strings (ConsumeRandomLengthString) from the front, ended by a backslash
    and another character."""

    def __init__(self):
        self.front, self.back = b"", []

    def pick(self, index):  # ConsumeIntegralInRange(lo, hi) == lo + index; PickValueInArray
        self.back.append(index)
        return self

    def string(self, text):
        self.front += text.encode().replace(b"\\", b"\\\\") + b"\\x"
        return self

    def data(self):
        return self.front + bytes(reversed(self.back))


# fuzz_model_lifecycle's names (kNames) and operations.
LIFECYCLE_NAMES = ["m0", "m1", "f0", "e0", "e1", "loop_a", "loop_b", "d0", "d5", "d12", "d19", "nope"]
LOAD, OVERRIDE, UNLOAD, INFER = range(4)


def lifecycle_seeds():
    """fuzz_model_lifecycle: each operation is a name, an operation and, for an override,
    its choices (batch size, kind, steps, canary, datatype) in the target's order."""
    t = "fuzz_model_lifecycle"
    n = LIFECYCLE_NAMES.index

    def op(d, name, what):
        return d.pick(n(name)).pick(what)

    def ensemble_override(d, name, steps, canary=None, mbs_index=1):
        op(d, name, OVERRIDE).pick(mbs_index).pick(2).pick(len(steps) - 1)
        for step in steps:
            d.pick(n(step)).pick(0)  # version -1
        if canary:
            key_index, value = canary
            d.pick(1).pick(key_index).string(value)
        else:
            d.pick(0)
        return d.pick(0)  # datatype unchanged

    # Issue 26: e1 -> e0 serves; e0 overridden to name e1 closes a cycle (refused).
    d = Decisions()
    op(d, "e1", LOAD)
    ensemble_override(d, "e0", ["e1"])
    op(d, "e1", INFER)
    op(d, "e0", INFER)
    write(t, "override-cycle", d.data())
    # Two ensembles made to name each other only through overrides.
    d = Decisions()
    op(d, "m0", LOAD)
    ensemble_override(d, "loop_a", ["m0"])
    ensemble_override(d, "loop_b", ["loop_a"])
    ensemble_override(d, "loop_a", ["loop_b"])
    op(d, "loop_b", INFER)
    op(d, "loop_a", UNLOAD)
    op(d, "loop_b", INFER)
    write(t, "override-mutual", d.data())
    # A chain past the depth bound, then an allowed part of it.
    d = Decisions()
    for name in ("d0", "d5", "d12", "d5"):
        op(d, name, LOAD)
        op(d, name, INFER)
    op(d, "d19", UNLOAD)
    op(d, "d12", INFER)
    write(t, "deep-chain", d.data())
    # Disk cycle, an unknown step, a three-step ensemble, an override with a NaN canary.
    d = Decisions()
    op(d, "loop_a", LOAD)
    ensemble_override(d, "e1", ["nope"])
    ensemble_override(d, "e1", ["m0", "e0", "m1"], canary=(0, "nan"))
    ensemble_override(d, "e1", ["m0", "f0"], canary=(4, "1"))
    op(d, "e1", INFER)
    write(t, "mixed", d.data())
    # fault_injection overrides: NaN delay, a failure rate from the input.
    d = Decisions()
    op(d, "f0", OVERRIDE).pick(2).pick(1).pick(2).string("0.25").pick(0).pick(0)
    op(d, "f0", OVERRIDE).pick(0).pick(1).pick(0).string("1").pick(0).pick(1).pick(0)
    op(d, "f0", INFER)
    write(t, "fault-injection", d.data())


def llm_tensor_request_seeds():
    """fuzz_llm_tensor_request: flags byte, rows byte, text_input BYTES data, SEP, sampling JSON."""
    t = "fuzz_llm_tensor_request"

    def elements(*texts):
        return b"".join(struct.pack("<I", len(x)) + x for x in texts)

    sampling = json.dumps({"max_tokens": 8, "temperature": 0, "stop": ["\n"], "ignore_eos": True}).encode()
    write(t, "one-prompt", b"\x00\x00" + elements(b"Hello"))
    write(t, "sampling", b"\x00\x00" + elements(b"Hello") + SEP + sampling)
    write(t, "stream", b"\x03\x00" + elements(b"Tell me a fortune.") + SEP + sampling)
    write(t, "stream-echo", b"\x07\x00" + elements(b"x"))
    write(t, "exclude", b"\x0c\x00" + elements("caf\u00e9 \U0001F600".encode()))
    write(t, "batch", b"\x10\x03" + elements(b"a", b"b", b"c") + SEP + b'{"n": 1, "seed": 3}')
    write(t, "batch-mismatch", b"\x10\x02" + elements(b"a", b"b", b"c"))
    write(t, "truncated", b"\x00\x00" + struct.pack("<I", 9) + b"abc")
    write(t, "bad-json", b"\x00\x00" + elements(b"a") + SEP + b'{"temperature": "hot"')
    write(t, "no-text", b"\x20\x00" + SEP + sampling)


def content_coding_seeds():
    """fuzz_content_coding: a selector byte (bit 0: deflate; bits 1-3: the limit), then a body."""
    import gzip
    import zlib
    t = "fuzz_content_coding"
    body = b'{"inputs":[{"name":"INPUT0","shape":[1,4],"datatype":"INT32","data":[1,2,3,4]}]}'
    write(t, "gzip", b"\x0a" + gzip.compress(body, mtime=0))
    write(t, "gzip-members", b"\x0a" + gzip.compress(b"ab", mtime=0) + gzip.compress(b"cd", mtime=0))
    write(t, "zlib", b"\x0b" + zlib.compress(body))
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    write(t, "raw-deflate", b"\x0b" + raw.compress(body) + raw.flush())
    write(t, "bomb", b"\x04" + gzip.compress(bytes(1 << 16), mtime=0))
    write(t, "truncated", b"\x0a" + gzip.compress(body, mtime=0)[:-5])
    write(t, "coding-list", b"\x00identity, GZIP")


def guided_seeds():
    """Schemas (after a flags byte: bit 0 = strict), regexes and choice lists for the
    guided-decoding compilers (src/guided)."""
    t = "fuzz_json_schema_gbnf"
    schemas = {
        "object": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                                    "age": {"type": "integer", "minimum": 0}},
                   "required": ["name"], "additionalProperties": False},
        "extras": {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "null"}},
        "array": {"type": "array", "prefixItems": [{"type": "boolean"}],
                  "items": {"enum": ["x", 1, None]}, "minItems": 1, "maxItems": 4},
        "recursive": {"$defs": {"node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
                      "$ref": "#/$defs/node"},
        "combinators": {"anyOf": [{"type": "string", "format": "date-time"},
                                  {"oneOf": [{"type": "null"}, {"type": "number", "maximum": 3}]},
                                  {"allOf": [{"const": {"k": [1]}}]}]},
        "pattern": {"type": "string", "pattern": "^[a-z]+(-\\d{2,4})?$"},
        "types": {"type": ["integer", "string", "null"], "exclusiveMinimum": -7, "minLength": 2,
                  "nullable": True},
        "refused": {"type": "object", "patternProperties": {"x": {}}},
    }
    for name, schema in schemas.items():
        write(t, name, b"\x00" + json.dumps(schema).encode())
    write(t, "strict", b"\x01" + json.dumps(schemas["extras"]).encode())
    t = "fuzz_regex_gbnf"
    for i, regex in enumerate(["^[a-z]{1,8}$", "(?:ab|c)+\\d*?", "[^\\s\"]{0,3}x", "\\w+@\\w+\\.com",
                               "(a)\\1", "(?=x)", "((a{10}){10}){10}", "yes\nno\nmaybe"]):
        write(t, f"regex-{i}", regex)


def gbnf_grammar_seeds():
    """fuzz_gbnf_grammar: "<GBNF grammar>\n@@@@\n<bytes fed to its matcher>"."""
    t = "fuzz_gbnf_grammar"
    json_gbnf = r'''root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
'''
    seeds = {
        "json": json_gbnf.encode() + SEP + '{"a": [1, true, "é😀"], "b": null}'.encode(),
        "repetition": b'root ::= "a"{2,4} ("b" | "cd")* [0-9]{,3}' + SEP + b"aaabcdb12",
        "classes": "root ::= [à-ÿ]+ [^a-z] . [\\u4e00-\\u9fff]".encode() + SEP + "éà!x日".encode(),
        "nesting": b'root ::= x\nx ::= "(" x ")" | "[" x* "]" | ""' + SEP + b"([()])",
        "empty_loop": b'root ::= ("a"? "c"?)* "b"' + SEP + b"acab",
        "left_recursive": b'root ::= root "a" | "b"',
        "undefined": b"root ::= x y",
        "bad_escape": b'root ::= "\\q"',
        "ambiguous": b'root ::= x\nx ::= "a" x "b" | "a" x | ""' + SEP + b"a" * 64,
    }
    for name, data in seeds.items():
        write(t, name, data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-repo", default=None)
    args = parser.parse_args()
    http_seeds()
    decoder_seeds()
    raw_decoder_seeds()
    generate_request_seeds()
    config_seeds(args.demo_repo)
    safetensors_seeds()
    gguf_seeds()
    tokenizer_seeds(args.demo_repo)
    openai_seeds()
    llm_tensor_request_seeds()
    chat_template_seeds()
    tool_call_parser_seeds()
    image_seeds()
    postprocess_seeds()
    lifecycle_seeds()
    content_coding_seeds()
    guided_seeds()
    gbnf_grammar_seeds()


if __name__ == "__main__":
    main()

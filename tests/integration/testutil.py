"""Small test-data builders and request helpers shared by several integration test files."""

import json


def bert_tokenizer_json(vocab, specials, max_input_chars_per_word=100):
    """A Hugging Face tokenizer.json (a dict) for a lowercasing BERT WordPiece tokenizer:
    BertNormalizer, BertPreTokenizer, `[CLS] A [SEP]` template, WordPiece decoder.
    vocab: {token: id}, holding every token of `specials` (added as special tokens),
    "[UNK]", "[CLS]" and "[SEP]"."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [],
                           "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]}
                                              for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": max_input_chars_per_word, "vocab": vocab},
    }


def greedy_completion(server, model, prompt, max_tokens, stream=False, **extra):
    """A greedy /v1/completions of exactly `max_tokens` tokens (ignore_eos), streamed or
    not: (text, token strings as `token_id:N`, finish_reason). `extra` adds request fields."""
    import json
    body = dict({"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True,
                 "logprobs": 0, "return_tokens_as_token_ids": True, "stream": stream}, **extra)
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    assert status == 200, data
    if not stream:
        choice = json.loads(data)["choices"][0]
        return choice["text"], choice["logprobs"]["tokens"], choice["finish_reason"]
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    text, tokens, finish = "", [], None
    for event in map(json.loads, events[:-1]):
        for choice in event["choices"]:
            text += choice["text"]
            if choice.get("logprobs"):
                tokens += choice["logprobs"]["tokens"]
            finish = choice.get("finish_reason") or finish
    return text, tokens, finish


def read_safetensors(path):
    """(header dict without __metadata__, metadata, raw data bytes) of a safetensors file."""
    import struct
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    metadata = header.pop("__metadata__", None)
    return header, metadata, data


def write_safetensors_raw(path, tensors, metadata=None):
    """Writes {name: (dtype, shape, raw bytes)} as a safetensors file (no torch needed)."""
    import struct
    header, offset = {}, 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, raw in tensors.values():
            f.write(raw)


def truncate_llama_layers(src_dir, dst_dir, num_layers, vocab_size=None):
    """Writes into dst_dir the Llama model of src_dir (config.json + model.safetensors) with
    only its first `num_layers` decoder layers: a cheaper draft model with the same
    vocabulary (tokenizer files copied). With `vocab_size` the embedding (and LM head)
    keep only that many rows and config.json says so: a draft whose vocabulary differs."""
    import os
    import re
    import shutil
    os.makedirs(dst_dir, exist_ok=True)
    with open(os.path.join(src_dir, "config.json")) as f:
        config = json.load(f)
    header, metadata, data = read_safetensors(os.path.join(src_dir, "model.safetensors"))
    tensors = {}
    for name, info in header.items():
        m = re.match(r"model\.layers\.(\d+)\.", name)
        if m and int(m.group(1)) >= num_layers:
            continue
        begin, end = info["data_offsets"]
        shape, raw = list(info["shape"]), data[begin:end]
        if vocab_size is not None and name in ("model.embed_tokens.weight", "lm_head.weight"):
            row = len(raw) // shape[0]
            shape[0], raw = vocab_size, raw[:vocab_size * row]
        tensors[name] = (info["dtype"], shape, raw)
    write_safetensors_raw(os.path.join(dst_dir, "model.safetensors"), tensors, metadata)
    config["num_hidden_layers"] = num_layers
    if vocab_size is not None:
        config["vocab_size"] = vocab_size
    with open(os.path.join(dst_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        if vocab_size is None and os.path.exists(os.path.join(src_dir, name)):
            shutil.copy(os.path.join(src_dir, name), os.path.join(dst_dir, name))


# Speculative decoding suites (test_llm_spec_decode.py: n-gram; test_llm_spec_decode_draft.py:
# draft model) on copies of the fortune demo LLM.

SPEC_ADMIN_TOKEN = "t0ken"
SPEC_ADMIN = {"Authorization": f"Bearer {SPEC_ADMIN_TOKEN}"}
# Repetitive prompts: an n-gram or a draft model's guesses are accepted and rejected.
SPEC_DECODE_PROMPTS = [
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "1. apples\n2. pears\n3. plums\n4. apples\n5. pears\n6.",
    '"A fool and his money are soon parted," he said. "A fool and his money',
    "You will be",
]


def config_parameters(**values):
    """A copy_model config_edit that appends `parameters { key: value }` entries."""
    def edit(text):
        return text + "".join(f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}\n'
                              for k, v in values.items())
    return edit


def start_spec_decode_server(repo, load_models):
    """A server in explicit model-control mode with the admin token, `load_models` loaded."""
    from infera_server import InferaServer
    server = InferaServer(repo, "--model-control-mode", "explicit", "--admin-token", SPEC_ADMIN_TOKEN,
                          *(a for m in load_models for a in ("--load-model", m)))
    server.wait_ready()
    return server


def post_json(server, path, body, headers=None):
    """(status, headers, body bytes) of a JSON POST."""
    return server.request("POST", path, json.dumps(body), dict({"Content-Type": "application/json"}, **(headers or {})))


def spec_decode_counters(server, model):
    """vLLM's spec_decode draft / accepted / emitted token counters of `model` now."""
    import re
    text = server.metrics_text()
    out = {}
    for name in ("draft", "accepted", "emitted"):
        pattern = rf'^vllm:spec_decode_num_{name}_tokens_total{{model_name="{model}",engine="0"}} (\S+)$'
        m = re.search(pattern, text, re.M)
        assert m, f"no {name} series for {model}"
        out[name] = float(m.group(1))
    return out

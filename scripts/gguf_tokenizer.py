#!/usr/bin/env python3
"""Hugging Face tokenizer (tokenizer.json + tokenizer_config.json + generation_config.json)
-> GGUF `tokenizer.ggml.*` metadata, written with scripts/gguf_writer.py.

    scripts/gguf_tokenizer.py HF_DIR OUT.gguf      # a GGUF holding only the tokenizer
    from gguf_tokenizer import add_tokenizer; add_tokenizer(writer, hf_dir)

Byte-level BPE (ByteLevel pre-tokenizer or decoder) -> model "gpt2" with tokens, merges,
token_type and `pre` (gpt-2, llama-bpe or qwen2 from the Split regex). SentencePiece-style
BPE ("▁" normalizer / Metaspace, byte fallback) -> model "llama" with tokens, token_type
and scores: a token made by merge rank r scores -r, others far below, so the reader's
score-ordered merges (src/gguf/spm_merges.h) are the tokenizer.json merges whenever each
token has one split into vocabulary entries. Added tokens: special -> CONTROL, others ->
USER_DEFINED; the unknown token -> UNKNOWN; <0xXX> (SentencePiece) -> BYTE. bos / eos /
unknown / padding ids, a second end id (generation_config's eos list) as eot, add_bos_token
(the post-processor's leading special token or tokenizer_config), add_eos_token and
chat_template. Used by the reader's reference tests (src/gguf/gguf_tokenizer_test.cc).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import GGUFWriter, ValueType, typed  # noqa: E402

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
CL100K = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


def _load(path):
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _steps(node, key):
    if not node:
        return []
    if node.get("type") == "Sequence":
        return [s for child in node.get(key, []) for s in _steps(child, key)]
    return [node]


def _token_content(value):
    return value.get("content") if isinstance(value, dict) else value


def add_tokenizer(w, hf_dir):
    tok = _load(os.path.join(hf_dir, "tokenizer.json"))
    config = _load(os.path.join(hf_dir, "tokenizer_config.json"))
    generation = _load(os.path.join(hf_dir, "generation_config.json"))
    model = tok["model"]
    if model.get("type", "BPE") != "BPE":
        raise ValueError(f"only BPE tokenizers convert, not {model.get('type')}")
    pre_steps = _steps(tok.get("pre_tokenizer"), "pretokenizers")
    normalizers = _steps(tok.get("normalizer"), "normalizers")
    spm = bool(model.get("byte_fallback")) or any(s.get("type") == "Metaspace" for s in pre_steps) or any(
        s.get("type") in ("Prepend", "Replace") for s in normalizers)

    vocab = dict(model["vocab"])
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    size = max(list(vocab.values()) + list(added.keys())) + 1
    tokens = [None] * size
    for text, i in vocab.items():
        tokens[i] = text
    for i, a in added.items():
        tokens[i] = a["content"]
    types = [NORMAL] * size
    for i in range(size):
        if tokens[i] is None:
            tokens[i], types[i] = f"[PAD{i}]", UNUSED
        elif spm and len(tokens[i]) == 6 and tokens[i].startswith("<0x") and tokens[i].endswith(">"):
            types[i] = BYTE
    for i, a in added.items():
        types[i] = CONTROL if a.get("special") else USER_DEFINED
    unk = model.get("unk_token")
    ids = {t: i for i, t in reversed(list(enumerate(tokens)))}
    if unk is not None and unk in ids:
        types[ids[unk]] = UNKNOWN
        w.add("tokenizer.ggml.unknown_token_id", ids[unk])

    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    w.add("tokenizer.ggml.model", "llama" if spm else "gpt2")
    w.add("tokenizer.ggml.tokens", typed(ValueType.ARRAY, tokens, ValueType.STRING))
    w.add("tokenizer.ggml.token_type", typed(ValueType.ARRAY, types, ValueType.INT32))
    if spm:
        rank = {}
        for r, m in enumerate(merges):
            a, b = m.split(" ", 1)
            rank.setdefault(a + b, r)
        scores = [-float(rank[t]) if t in rank else -1e6 - i for i, t in enumerate(tokens)]
        w.add("tokenizer.ggml.scores", typed(ValueType.ARRAY, scores, ValueType.FLOAT32))
        w.add("tokenizer.ggml.add_space_prefix", any(s.get("type") == "Prepend" for s in normalizers) or any(
            s.get("type") == "Metaspace" and s.get("prepend_scheme", "always") != "never" for s in pre_steps))
    else:
        w.add("tokenizer.ggml.merges", typed(ValueType.ARRAY, merges, ValueType.STRING))
        pre = "gpt-2"  # llama.cpp's name for the GPT-2 pre-tokenizer (it rejects "gpt2")
        for s in pre_steps:
            regex = (s.get("pattern") or {}).get("Regex") if s.get("type") == "Split" else None
            if regex == CL100K:
                pre = "llama-bpe"
            elif regex == QWEN2:
                pre = "qwen2"
            elif regex is not None:
                raise ValueError("unrecognised Split regex")
        w.add("tokenizer.ggml.pre", pre)

    bos = generation.get("bos_token_id")
    add_bos = config.get("add_bos_token", False)
    single = (tok.get("post_processor") or {}).get("single") or []
    if single and "SpecialToken" in single[0]:
        name = single[0]["SpecialToken"]["id"]
        bos = ids.get(name, bos)
        add_bos = True
    if bos is None and _token_content(config.get("bos_token")) in ids:
        bos = ids[_token_content(config["bos_token"])]
    ends = generation.get("eos_token_id")
    ends = [] if ends is None else ends if isinstance(ends, list) else [ends]
    eos_text = _token_content(config.get("eos_token"))
    if eos_text in ids and ids[eos_text] not in ends:
        ends.insert(0, ids[eos_text])
    if bos is not None:
        w.add("tokenizer.ggml.bos_token_id", bos)
    if ends:
        w.add("tokenizer.ggml.eos_token_id", ends[0])
    if len(ends) > 1:
        w.add("tokenizer.ggml.eot_token_id", ends[1])
    pad = (tok.get("padding") or {}).get("pad_id")
    if pad is not None:
        w.add("tokenizer.ggml.padding_token_id", pad)
    w.add("tokenizer.ggml.add_bos_token", bool(add_bos))
    w.add("tokenizer.ggml.add_eos_token", bool(config.get("add_eos_token", False)))
    template = config.get("chat_template")
    if isinstance(template, str):
        w.add("tokenizer.chat_template", template)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    w = GGUFWriter()
    w.add("general.architecture", "tokenizer-only")
    add_tokenizer(w, sys.argv[1])
    w.write(sys.argv[2])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The demo LLM: a small Llama-architecture model trained on Debian's fortunes-min text.

Usage:
    /usr/bin/python3 scripts/make_llm_demo.py --out DIR [--force]   install into DIR/fortune/
    /usr/bin/python3 scripts/make_llm_demo.py --train [--steps N] [--threads T]
                                                                 retrain scripts/llm_demo/fortune/

Why the weights are committed (scripts/llm_demo/fortune/, 3.6 MB of bf16) instead of
trained during setup: the committed model took 1500 steps, 47 minutes on one core of
the shared 2-vCPU VM (loss 6.97 -> 0.08); a 2-minute budget on 2 shared cores gets ~100
steps (loss ~3.6) and babbles. Committing them keeps `make demo-models` at ~1 s,
deterministic and independent of the machine's load; `--train` reproduces them (seeded,
one thread) from the text in /usr/share/games/fortunes.

What --train does, all in this file (no tokenizers/transformers packages):
  - reads every fortune (fortunes, literature, riddles; entries separated by "%");
  - trains a byte-level BPE (GPT-2 alphabet and split pattern) to 1024 tokens including
    <|endoftext|>, <|im_start|>, <|im_end|>, and writes a Hugging Face tokenizer.json;
  - trains a Llama (RMSNorm, rotate-half RoPE, GQA 6/3 heads, SwiGLU, tied embeddings;
    4 layers x 192) on the fortunes, a third of them wrapped as ChatML exchanges
    ("Tell me a fortune." -> fortune) so /v1/chat/completions answers with a fortune;
  - writes config.json, model.safetensors (bf16), tokenizer_config.json (ChatML
    chat_template) and generation_config.json.

Install layout (DIR/fortune/ is replaced whole; .stamp = hash of this script and the
committed files, so an unchanged install is a no-op):
    DIR/fortune/config.pbtxt     backend "llm", KServe text_input/text_output, parameters
    DIR/fortune/1/...            the Hugging Face files
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS_DIR = os.path.join(HERE, "llm_demo", "fortune")
FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
         "generation_config.json"]
CORPUS = [os.path.join("/usr/share/games/fortunes", f) for f in ("fortunes", "literature", "riddles")]
NAME = "fortune"
STAMP = ".stamp"

VOCAB_SIZE = 1024
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MODEL = {"hidden_size": 192, "intermediate_size": 512, "num_hidden_layers": 4,
         "num_attention_heads": 6, "num_key_value_heads": 3, "max_position_embeddings": 512}
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|im_start|>assistant\\n' }}{% endif %}")
CONFIG_PBTXT = """name: "fortune"
backend: "llm"
max_batch_size: 0
# Triton vLLM-backend tensors for KServe infer, generate / generate_stream and gRPC
# ModelStreamInfer; /v1/completions and /v1/chat/completions serve the same engine.
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },
  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
]
output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]
# Decoupled (the llm backend always is): a request may get many responses, and the one
# instance hands every request to the engine without waiting for it, so the engine
# batches all of them (up to max_num_seqs).
model_transaction_policy { decoupled: true }
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "max_num_seqs" value: { string_value: "8" } }
parameters { key: "max_num_batched_tokens" value: { string_value: "512" } }
parameters { key: "max_model_len" value: { string_value: "512" } }
parameters { key: "kv_cache_memory_bytes" value: { string_value: "64MiB" } }
parameters { key: "num_threads" value: { string_value: "1" } }
"""
USER_PROMPTS = ["Tell me a fortune.", "Say something wise.", "Give me a quote.",
                "Cheer me up.", "What does the future hold?"]


def file_hash(paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def stamp_text():
    return file_hash([os.path.abspath(__file__)] + [os.path.join(WEIGHTS_DIR, f) for f in FILES]) + "\n"


def install(out):
    """Copies the committed model into OUT/fortune/ (atomically, via a sibling folder)."""
    target = os.path.join(out, NAME)
    stamp = stamp_text()
    try:
        with open(os.path.join(target, STAMP)) as f:
            if f.read() == stamp:
                print("demo LLM up to date")
                return 0
    except OSError:
        pass
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".llm-demo-", dir=out)
    os.makedirs(os.path.join(tmp, "1"))
    for f in FILES:
        shutil.copyfile(os.path.join(WEIGHTS_DIR, f), os.path.join(tmp, "1", f))
    with open(os.path.join(tmp, "config.pbtxt"), "w") as f:
        f.write(CONFIG_PBTXT)
    with open(os.path.join(tmp, STAMP), "w") as f:
        f.write(stamp)
    # mkdtemp makes the folder 0700: open it up so a non-root server (the container's
    # uid 10001) can read the model.
    os.chmod(tmp, 0o755)
    if os.path.exists(target):
        shutil.rmtree(target)
    os.rename(tmp, target)
    print(f"demo LLM written to {target}")
    return 0


# ------------------------------------------------------------------------------ corpus

def read_fortunes():
    entries = []
    for path in CORPUS:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for entry in text.split("\n%\n"):
            entry = entry.strip("\n%")
            if entry.strip():
                entries.append((os.path.basename(path), entry))
    return entries


# ------------------------------------------------------------------------- byte-level BPE

# GPT-2's split pattern; the corpus is ASCII, where these classes are exactly \p{L}, \p{N}.
SPLIT = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def train_bpe(texts, num_merges):
    """Counts pre-tokenized words once, then merges the most frequent pair repeatedly,
    updating only the words that contain it."""
    b2u = byte_alphabet()
    counts = {}
    for t in texts:
        for piece in SPLIT.findall(t):
            w = tuple(b2u[b] for b in piece.encode())
            counts[w] = counts.get(w, 0) + 1
    words = [list(w) for w in counts]
    freq = list(counts.values())
    pairs, where = {}, {}
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pairs[(a, b)] = pairs.get((a, b), 0) + freq[i]
            where.setdefault((a, b), set()).add(i)
    merges = []
    for _ in range(num_merges):
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        if pairs[best] < 2:
            break
        merges.append(best)
        merged = best[0] + best[1]
        for i in list(where.get(best, ())):
            w = words[i]
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] -= freq[i]
                if pairs[(a, b)] <= 0:
                    del pairs[(a, b)]
            out, k = [], 0
            while k < len(w):
                if k + 1 < len(w) and (w[k], w[k + 1]) == best:
                    out.append(merged)
                    k += 2
                else:
                    out.append(w[k])
                    k += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + freq[i]
                where.setdefault((a, b), set()).add(i)
    vocab = {b2u[b]: b for b in range(256)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    return vocab, merges


class Encoder:
    def __init__(self, vocab, merges):
        self.b2u = byte_alphabet()
        self.vocab = vocab
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.special = {s: len(vocab) + i for i, s in enumerate(SPECIALS)}
        self.cache = {}

    def word(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        sym = [self.b2u[b] for b in piece.encode()]
        while len(sym) > 1:
            best, rank = None, None
            for i in range(len(sym) - 1):
                r = self.ranks.get((sym[i], sym[i + 1]))
                if r is not None and (rank is None or r < rank):
                    best, rank = i, r
            if best is None:
                break
            sym[best:best + 2] = [sym[best] + sym[best + 1]]
        ids = [self.vocab[s] for s in sym]
        self.cache[piece] = ids
        return ids

    def encode(self, text):
        ids = []
        for part in re.split("(" + "|".join(re.escape(s) for s in SPECIALS) + ")", text):
            if part in self.special:
                ids.append(self.special[part])
            elif part:
                for piece in SPLIT.findall(part):
                    ids.extend(self.word(piece))
        return ids


def tokenizer_json(vocab, merges):
    n = len(vocab)
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": n + i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, s in enumerate(SPECIALS)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


# -------------------------------------------------------------------------------- model

def build_model(torch, config):
    nn = torch.nn
    h, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d = h // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(h))

        def forward(self, x):
            return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + config["rms_norm_eps"]))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm, self.post_attention_layernorm = RMSNorm(), RMSNorm()
            self.self_attn = nn.Module()
            self.self_attn.q_proj = nn.Linear(h, heads * d, bias=False)
            self.self_attn.k_proj = nn.Linear(h, kv * d, bias=False)
            self.self_attn.v_proj = nn.Linear(h, kv * d, bias=False)
            self.self_attn.o_proj = nn.Linear(heads * d, h, bias=False)
            self.mlp = nn.Module()
            self.mlp.gate_proj = nn.Linear(h, inter, bias=False)
            self.mlp.up_proj = nn.Linear(h, inter, bias=False)
            self.mlp.down_proj = nn.Linear(inter, h, bias=False)

        def forward(self, x, cos, sin, mask):
            b, n, _ = x.shape
            a = self.self_attn
            y = self.input_layernorm(x)
            q = a.q_proj(y).view(b, n, heads, d).transpose(1, 2)
            k = a.k_proj(y).view(b, n, kv, d).transpose(1, 2)
            v = a.v_proj(y).view(b, n, kv, d).transpose(1, 2)

            def rot(t):
                return torch.cat((-t[..., d // 2:], t[..., :d // 2]), dim=-1)
            q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
            k, v = k.repeat_interleave(heads // kv, 1), v.repeat_interleave(heads // kv, 1)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + mask, dim=-1) @ v
            x = x + a.o_proj(att.transpose(1, 2).reshape(b, n, heads * d))
            y = self.post_attention_layernorm(x)
            m = self.mlp
            return x + m.down_proj(torch.nn.functional.silu(m.gate_proj(y)) * m.up_proj(y))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Module()
            self.model.embed_tokens = nn.Embedding(config["vocab_size"], h)
            self.model.layers = nn.ModuleList([Layer() for _ in range(config["num_hidden_layers"])])
            self.model.norm = RMSNorm()
            inv = 1.0 / (config["rope_theta"] ** (torch.arange(0, d, 2).float() / d))
            freqs = torch.outer(torch.arange(config["max_position_embeddings"]).float(), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos", emb.cos(), persistent=False)
            self.register_buffer("sin", emb.sin(), persistent=False)

        def forward(self, ids):
            n = ids.shape[1]
            x = self.model.embed_tokens(ids)
            mask = torch.full((n, n), float("-inf")).triu(1)
            for layer in self.model.layers:
                x = layer(x, self.cos[:n], self.sin[:n], mask)
            return self.model.norm(x) @ self.model.embed_tokens.weight.T  # tied

    return Llama()


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        data = t.view(dtype=__import__("torch").int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, sort_keys=True).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def train(args):
    import torch
    torch.manual_seed(0)
    random.seed(0)
    torch.set_num_threads(args.threads)
    start = time.monotonic()
    entries = read_fortunes()
    vocab, merges = train_bpe([e for _, e in entries], VOCAB_SIZE - 256 - len(SPECIALS))
    enc = Encoder(vocab, merges)
    eot, im_start, im_end = (enc.special[s] for s in SPECIALS)
    docs = []
    rng = random.Random(0)
    for source, text in entries:
        docs.append(enc.encode(text + "\n") + [eot])
        if rng.random() < 0.33:
            prompt = "Tell me a riddle." if source == "riddles" else rng.choice(USER_PROMPTS)
            docs.append(enc.encode(f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
                                   f"{text}<|im_end|>\n") + [eot])
    stream = [t for d in docs for t in d]
    print(f"corpus: {len(entries)} fortunes, {len(stream)} tokens, vocab {len(vocab) + len(SPECIALS)} "
          f"({time.monotonic() - start:.0f} s)", flush=True)
    config = dict(MODEL, architectures=["LlamaForCausalLM"], model_type="llama",
                  vocab_size=len(vocab) + len(SPECIALS), rms_norm_eps=1e-5, rope_theta=10000.0,
                  tie_word_embeddings=True, hidden_act="silu", torch_dtype="bfloat16",
                  bos_token_id=eot, eos_token_id=[eot, im_end])
    model = build_model(torch, config)
    for name, p in model.named_parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    data = torch.tensor(stream)
    seq, batch = 256, 8
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.05)
    for step in range(args.steps):
        lr = 3e-3 * min(1.0, (step + 1) / 50) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = max(lr, 1e-4)
        starts = torch.randint(0, len(stream) - seq - 1, (batch,))
        x = torch.stack([data[s:s + seq] for s in starts])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts])
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, config["vocab_size"]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.3f} ({time.monotonic() - start:.0f} s)", flush=True)
    os.makedirs(WEIGHTS_DIR, exist_ok=True)
    state = {k: v.detach().to(torch.bfloat16) for k, v in model.state_dict().items()}
    write_safetensors(os.path.join(WEIGHTS_DIR, "model.safetensors"), state)
    with open(os.path.join(WEIGHTS_DIR, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(WEIGHTS_DIR, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False)
    with open(os.path.join(WEIGHTS_DIR, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": None, "eos_token": "<|endoftext|>", "add_bos_token": False,
                   "chat_template": CHATML, "model_max_length": MODEL["max_position_embeddings"]}, f, indent=1)
    with open(os.path.join(WEIGHTS_DIR, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": eot, "eos_token_id": [eot, im_end]}, f, indent=1)
    print(f"trained in {time.monotonic() - start:.0f} s; files in {WEIGHTS_DIR}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="repository folder to install the demo LLM into")
    parser.add_argument("--force", action="store_true", help="reinstall even if up to date")
    parser.add_argument("--train", action="store_true", help="retrain the committed weights")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.train:
        return train(args)
    if not args.out:
        parser.error("--out DIR or --train")
    if args.force:
        shutil.rmtree(os.path.join(args.out, NAME), ignore_errors=True)
    return install(args.out)


if __name__ == "__main__":
    sys.exit(main())

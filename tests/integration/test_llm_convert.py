"""`infera llm convert` (docs/llm.md, "infera llm convert"): Hugging Face safetensors ->
GGUF and back, through the real binary and the real server.

The tiny random checkpoints of tests/reference (llm_gguf.gguf_config: 2-4 layers x 256
hidden, 4/2 heads of 64, FFN 512, the fortune demo tokenizer; every row a multiple of 256
for the K-quants) of each architecture -- llama, mistral (sliding window), qwen2 (biases),
qwen3 (q/k norm), phi3 (fused qkv / gate-up), gemma2, gemma3 -- written as safetensors
(float32; llama and qwen3 also bfloat16) and converted with the CLI:
  - the C++ converter's tensors are byte for byte those of the project's independent
    Python GGUF writer (tests/reference/llm_gguf.py: q/k permutation, Gemma's +1, fused
    Phi-3, tied embeddings, the block encoders) for F32, BF16, Q8_0 and Q4_K_M;
  - the checkpoint and its converted GGUF, served side by side by one server, both match
    the numpy reference (greedy tokens up to a fragile step, chosen-token logprobs within
    1e-3 for float types; within test_llm_gguf's LOGPROB_TOL / FRAGILE for quantised
    types, against the reference on the same blocks with the kernels' activation
    quantisation mirrored), each prompt alone and all twice at once (batched decode);
    every architecture as F32 (the checkpoint's type), Q8_0 for llama / phi3 / gemma3,
    Q4_K_M for llama, BF16 from bfloat16 checkpoints (llama, qwen3);
  - GGUF -> safetensors -> GGUF gives the same tensors (F32: identical bytes except Gemma's
    norms, which may move by one float32 rounding of -1 / +1), and a Q8_0 GGUF converted
    back to safetensors holds exactly its blocks' values and serves them (the reference
    on those values);
  - the converted GGUF's chat template is the checkpoint's (tokenizer.chat_template);
  - rope scaling with per-frequency factors: llama3 (factor 8, low 1, high 4, original 64)
    becomes a rope_freqs tensor (the Python writer's divisors within 1e-6) and the GGUF
    serves the checkpoint's model; Phi-3 longrope becomes rope_factors_short / _long +
    keys and round-trips exactly; YaRN becomes rope.scaling keys, serves the checkpoint's
    model and round-trips; a llama3 GGUF back to safetensors is refused naming
    rope_freqs.weight, a yarn config with a beta GGUF cannot say is refused;
  - hostile input -- a missing tensor, a wrong shape, an unknown architecture, a quantised
    type on rows it cannot block, an output in a missing folder / onto an existing file /
    onto a directory, bad flags -- is one stderr line "infera llm convert: ..." naming the
    problem, a non-zero exit, and no output file.
"""

import concurrent.futures
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from infera_server import BINARY, InferaServer, demo_repo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import llm_gguf  # noqa: E402
import llm_reference as ref  # noqa: E402

GEN = 8
FRAGILE = 0.1           # quantised: as test_llm_gguf.py
LOGPROB_TOL = 0.06      # quantised: as test_llm_gguf.py
FLOAT_FRAGILE = 1e-3
FLOAT_TOL = 1e-3
PROMPTS = [[7, 300, 42], [(i * 37) % 1000 + 3 for i in range(20)]]  # the second runs past the 16-token window
ARCHS = ["llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3_text"]
# Rope scaling with per-frequency factors: {variant: (arch, config overrides)}.
ROPE_VARIANTS = {
    "llama_llama3": ("llama", {"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0, "original_max_position_embeddings": 64}}),
    "phi3_longrope": ("phi3", {"rope_scaling": {"type": "longrope",
                                                "short_factor": [1.0 + 0.25 * (i % 5) for i in range(32)],
                                                "long_factor": [4.0 + i for i in range(32)]},
                               "original_max_position_embeddings": 128}),
    # YaRN becomes rope.scaling keys (no tensors): factor 4 over an original 64 positions
    "qwen2_yarn": ("qwen2", {"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                              "original_max_position_embeddings": 64}}),
}
# (arch, source dtype, --type); the GGUF type is the source's for type None.
CASES = ([(a, "float32", None) for a in ARCHS] + [(a, "float32", "q8_0") for a in ("llama", "phi3", "gemma3_text")] +
         [("llama", "bfloat16", None), ("qwen3", "bfloat16", "bf16"), ("llama", "float32", "q4_k_m")] +
         [("llama_llama3", "float32", None), ("llama_llama3", "float32", "q8_0"), ("phi3_longrope", "float32", None),
          ("qwen2_yarn", "float32", None)])
# GGUF -> safetensors -> GGUF: every architecture from F32; the Q8_0 ones are also served.
# (A llama3 GGUF's rope_freqs has no config.json form: refused, test_hostile_input...)
ROUND_TRIPS = [c for c in CASES if c[1] == "float32" and c[2] in (None, "q8_0") and c[0] != "llama_llama3"]
PY_TYPES = {None: "F32", "bf16": "BF16", "q8_0": "Q8_0",
            "q4_k_m": {"default": "Q4_K", "attn_v": "Q6_K", "ffn_down": "Q6_K", "output": "Q6_K"}}
TEMPLATE = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
CONFIG = ('backend: "llm"\nmax_batch_size: 0\ninstance_group [ { count: 1 kind: KIND_CPU } ]\n'
          'parameters { key: "max_num_seqs" value: { string_value: "8" } }\n'
          'parameters { key: "block_size" value: { string_value: "4" } }\n'
          'parameters { key: "kv_cache_dtype" value: { string_value: "fp32" } }\n'
          'parameters { key: "kv_cache_memory_bytes" value: { string_value: "4MiB" } }\n')


def convert(*args):
    return subprocess.run([BINARY, "llm", "convert", *args], capture_output=True, text=True, timeout=300)


def must_convert(*args):
    r = convert(*args)
    assert r.returncode == 0, r.stderr
    return r


def tiny(arch):
    """(config, float32 weights) as test_llm_gguf.tiny (tied embeddings scaled down);
    `arch` may name a ROPE_VARIANTS entry."""
    arch, overrides = ROPE_VARIANTS.get(arch, (arch, {}))
    config = dict(llm_gguf.gguf_config(arch), **overrides)
    weights = ref.random_weights(config, 3)
    if "lm_head.weight" not in weights:
        weights["model.embed_tokens.weight"] = weights["model.embed_tokens.weight"] * np.float32(0.05)
    return config, weights


def write_checkpoint(directory, config, weights, dtype):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(dict(config, torch_dtype=dtype), f, indent=1)
    ref.write_safetensors(os.path.join(directory, "model.safetensors"), weights, dtype)
    tok = os.path.join(demo_repo(), "fortune", "1")
    shutil.copy(os.path.join(tok, "tokenizer.json"), directory)
    with open(os.path.join(tok, "tokenizer_config.json")) as f:
        tc = json.load(f)
    tc["chat_template"] = TEMPLATE
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f)


def add_model(repo, name, files_from):
    """A repository entry `name` holding the files of `files_from` (a folder or one .gguf)."""
    version = os.path.join(repo, name, "1")
    if os.path.isdir(files_from):
        shutil.copytree(files_from, version)
    else:
        os.makedirs(version)
        shutil.copy(files_from, os.path.join(version, "model.gguf"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(f'name: "{name}"\n' + CONFIG)


def case_id(case):
    arch, dtype, t = case
    return f"{arch.replace('_text', '')}_{dtype}_{t or 'same'}"


def read_gguf(path):
    """{"tensors": {name: (type, dims, bytes)}, "keys": {key: value or None}} -- a minimal
    reader for the comparisons here (the server has the validating one)."""
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode("utf-8", "replace")
        pos += n
        return s

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert data[:4] == b"GGUF"
    pos = 4
    version, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    assert version == 3
    keys = {}
    for _ in range(n_kv):
        k = string()
        keys[k] = value(take("I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, dims, take("I"), take("Q")))
    align = keys.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    ends = sorted(o for *_, o in infos) + [len(data) - start]
    tensors = {}
    for name, dims, t, off in infos:
        nxt = min(e for e in ends if e > off)
        tensors[name] = (t, dims, data[start + off:start + nxt])
    return {"tensors": tensors, "keys": keys}


def same_tensor_bytes(a, b):
    """Tensor bytes equal up to the alignment padding after each tensor."""
    n = min(len(a), len(b))
    return a[:n] == b[:n] and not a[n:].strip(b"\0") and not b[n:].strip(b"\0")


@pytest.fixture(scope="module")
def converted():
    """{case: (checkpoint model name, gguf model name, config, reference weights, gguf
    reference config, gguf engine weights, paths)} under one repository."""
    work = tempfile.mkdtemp(prefix="infera-convert-")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    out = {}
    for case in CASES:
        arch, dtype, t = case
        name = case_id(case)
        config, weights = tiny(arch)
        hf = os.path.join(work, name + "_hf")
        write_checkpoint(hf, config, weights, dtype)
        stored_config, stored = ref.load(hf)  # the values as stored (bf16-rounded for bfloat16)
        gguf = os.path.join(work, name + ".gguf")
        args = ["--input", hf, "--output", gguf, "--name", "tiny"] + (["--type", t] if t else [])
        must_convert(*args)
        py_gguf = os.path.join(work, name + "_py.gguf")
        py_type = PY_TYPES[t] if t or dtype == "float32" else "BF16"
        engine = llm_gguf.write_gguf(py_gguf, config, stored, py_type, hf, template=TEMPLATE)
        if t not in ("q8_0", "q4_k_m"):
            add_model(repo, "hf_" + name, hf)
        add_model(repo, "gguf_" + name, gguf)
        out[case] = dict(hf_model="hf_" + name, gguf_model="gguf_" + name, config=stored_config, weights=stored,
                         gguf_config=llm_gguf.reference_config(config), engine=engine, hf=hf, gguf=gguf,
                         py_gguf=py_gguf, quantised=t in ("q8_0", "q4_k_m"))
    # Round trips: GGUF -> safetensors (served) -> GGUF, for F32 and Q8_0 sources.
    for case in ROUND_TRIPS:
            arch, _, t = case
            back = os.path.join(work, case_id(case) + "_back")
            r = must_convert("--input", out[case]["gguf"], "--output", back)
            out[case]["back"], out[case]["back_stdout"] = back, r.stdout
            again = os.path.join(work, case_id(case) + "_again.gguf")
            must_convert("--input", back, "--output", again, "--name", "tiny", "--type", t or "f32")
            out[case]["again"] = again
            if t == "q8_0":
                add_model(repo, "back_" + case_id(case), back)
    yield work, repo, out
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def server(converted):
    _, repo, _ = converted
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def post(server, path, body):
    status, _, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, data


def complete(server, model, prompt):
    body = dict(model=model, prompt=prompt, max_tokens=GEN, temperature=0, ignore_eos=True, logprobs=1,
                return_tokens_as_token_ids=True)
    status, data = post(server, "/v1/completions", body)
    assert status == 200, (model, data)
    logprobs = json.loads(data)["choices"][0]["logprobs"]
    return [int(t.split(":", 1)[1]) for t in logprobs["tokens"]], logprobs["token_logprobs"]


def check(config, weights, prompt, got, logprobs, label, tol, fragile):
    want, margins = ref.greedy(config, weights, prompt, GEN)
    logits = ref.forward(config, weights, prompt + got)
    for i, token in enumerate(want):
        assert i < len(got), (label, want, got)
        if got[i] != token:
            assert margins[i] < fragile, (label, len(prompt), i, want, got, margins)
            return
        row = logits[len(prompt) - 1 + i]
        expected = row[token] - row.max() - np.log(np.exp(row - row.max()).sum())
        assert abs(logprobs[i] - expected) <= tol, (label, len(prompt), i, logprobs[i], expected)
        if margins[i] < fragile:
            return


def serve_and_check(server, model, config, weights, tol, fragile):
    """Each prompt alone, then all of them twice at once (batched decode), against the reference."""
    alone = [complete(server, model, p) for p in PROMPTS]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda p: complete(server, model, p), PROMPTS * 2))
    for i, prompt in enumerate(PROMPTS):
        got = [alone[i], together[i], together[i + len(PROMPTS)]]
        check(config, weights, prompt, *alone[i], f"{model} alone", tol, fragile)
        for tokens, logprobs in got[1:]:  # batched: the same as alone unless the reference is fragile
            if tokens != alone[i][0]:
                check(config, weights, prompt, tokens, logprobs, f"{model} batched", tol, fragile)
            else:
                assert np.allclose(logprobs, alone[i][1], atol=tol), (model, logprobs, alone[i][1])
    return alone


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_cpp_converter_writes_the_python_writers_tensors(converted, case):
    _, _, table = converted
    c = table[case]
    ours, theirs = read_gguf(c["gguf"]), read_gguf(c["py_gguf"])
    assert sorted(ours["tensors"]) == sorted(theirs["tensors"])
    for name, (t, dims, data) in theirs["tensors"].items():
        ot, odims, odata = ours["tensors"][name]
        assert (ot, odims) == (t, dims), name
        if name == "rope_freqs.weight":  # llama3's divisors: computed in float64 here, from float32 there
            n = int(np.prod(dims))
            a, b = np.frombuffer(odata[:4 * n], "<f4"), np.frombuffer(data[:4 * n], "<f4")
            assert np.allclose(a, b, rtol=1e-6, atol=0), (a, b)
            assert len(set(b.tolist())) > 2, b  # 1, the smooth band and the factor at this head size
        else:
            assert same_tensor_bytes(odata, data), name
    for key, value in theirs["keys"].items():
        if key.startswith(ours["keys"]["general.architecture"] + ".") or key in (
                "general.architecture", "tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                "tokenizer.ggml.token_type", "tokenizer.ggml.pre", "tokenizer.chat_template"):
            assert ours["keys"].get(key) == value, key


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_checkpoint_and_converted_gguf_serve_the_same_model(server, converted, case):
    _, _, table = converted
    c = table[case]
    if c["quantised"]:  # the checkpoint itself is served by its float32 case
        serve_and_check(server, c["gguf_model"], c["gguf_config"], c["engine"], LOGPROB_TOL, FRAGILE)
    else:
        hf = serve_and_check(server, c["hf_model"], c["config"], c["weights"], FLOAT_TOL, FLOAT_FRAGILE)
        gg = serve_and_check(server, c["gguf_model"], c["gguf_config"], c["engine"], FLOAT_TOL, FLOAT_FRAGILE)
        for (ht, hl), (gt, gl) in zip(hf, gg):  # the two engines agree directly too
            n = next((i for i, (a, b) in enumerate(zip(ht, gt)) if a != b), len(ht))
            assert n > 0, (c["hf_model"], ht, gt)
            assert np.allclose(hl[:n], gl[:n], atol=2 * FLOAT_TOL), (hl, gl)


@pytest.mark.parametrize("case", ROUND_TRIPS, ids=[case_id(c) for c in ROUND_TRIPS])
def test_gguf_to_safetensors_to_gguf_round_trips(server, converted, case):
    _, _, table = converted
    _, _, t = case
    c = table[case]
    first, again = read_gguf(c["gguf"]), read_gguf(c["again"])
    assert sorted(first["tensors"]) == sorted(again["tensors"])
    for name, (ty, dims, data) in first["tensors"].items():
        aty, adims, adata = again["tensors"][name]
        assert (aty, adims) == (ty, dims), name
        gemma_norm = ref.is_gemma(c["config"]) and name.endswith("norm.weight")
        if t is None and gemma_norm:
            n = int(np.prod(dims))
            a = np.frombuffer(data[:4 * n], "<f4")
            b = np.frombuffer(adata[:4 * n], "<f4")
            assert np.allclose(a, b, rtol=0, atol=1e-6), name
        elif t is None:
            assert same_tensor_bytes(adata, data), name
    assert first["keys"]["tokenizer.ggml.tokens"] == again["keys"]["tokenizer.ggml.tokens"]
    assert first["keys"]["tokenizer.chat_template"] == again["keys"]["tokenizer.chat_template"] == TEMPLATE
    if t == "q8_0":
        back_config, back_weights = ref.load(c["back"])
        assert "dequantised" in c["back_stdout"] and "Q8_0" in c["back_stdout"], c["back_stdout"]
        # the folder holds exactly the blocks' values
        for name, w in c["engine"].items():
            values = w.values if isinstance(w, llm_gguf.BlockWeight) else w
            got = np.asarray(back_weights[name], np.float64)
            if ref.is_gemma(c["config"]) and name.endswith("norm.weight"):  # (1 + w) - 1 rounds in float32
                assert np.allclose(got, values, rtol=0, atol=1e-6), name
            else:
                assert np.array_equal(got, values), name
        serve_and_check(server, "back_" + case_id(case), back_config, back_weights, FLOAT_TOL, FLOAT_FRAGILE)


def test_chat_uses_the_checkpoints_template_after_conversion(server, converted):
    _, _, table = converted
    c = table[("qwen3", "float32", None)]
    messages = [{"role": "user", "content": "Tell me a fortune"}]
    replies = []
    for model in (c["hf_model"], c["gguf_model"]):
        status, data = post(server, "/v1/chat/completions", dict(model=model, messages=messages, max_tokens=4,
                                                                temperature=0, ignore_eos=True))
        assert status == 200, data
        replies.append(json.loads(data)["usage"]["prompt_tokens"])
    status, data = post(server, "/v1/completions", dict(model=c["gguf_model"], prompt="[user] Tell me a fortune\n",
                                                       max_tokens=1, temperature=0))
    assert status == 200, data
    assert replies[0] == replies[1] == json.loads(data)["usage"]["prompt_tokens"]


def assert_one_line_error(r, *needles):
    assert r.returncode != 0, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("infera llm convert: "), r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_hostile_input_is_a_one_line_error_and_writes_nothing(converted, tmp_path):
    work, _, table = converted
    hf = table[("llama", "float32", None)]["hf"]
    out = str(tmp_path / "out.gguf")

    def variant(name, edit_config=None, drop=None, reshape=None):
        d = str(tmp_path / name)
        shutil.copytree(hf, d)
        config, weights = ref.load(d)
        if edit_config:
            with open(os.path.join(d, "config.json")) as f:
                cfg = json.load(f)
            edit_config(cfg)
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(cfg, f)
        if drop:
            del weights[drop]
        if reshape:
            weights[reshape] = weights[reshape][:-1]
        ref.write_safetensors(os.path.join(d, "model.safetensors"), weights)
        return d

    r = convert("--input", variant("missing", drop="model.layers.1.mlp.up_proj.weight"), "--output", out)
    assert_one_line_error(r, "model.layers.1.mlp.up_proj.weight", "missing")
    r = convert("--input", variant("shape", reshape="model.layers.0.self_attn.k_proj.weight"), "--output", out)
    assert_one_line_error(r, "model.layers.0.self_attn.k_proj.weight", "shape")
    r = convert("--input", variant("arch", edit_config=lambda c: c.update(model_type="gpt_neox")), "--output", out)
    assert_one_line_error(r, "gpt_neox")
    r = convert("--input", variant("yarn", edit_config=lambda c: c.update(
        rope_scaling={"rope_type": "yarn", "factor": 8.0, "beta_fast": 16.0})), "--output", out)
    assert_one_line_error(r, "yarn", "beta_fast 16")
    assert not os.path.exists(out)
    # a llama3 GGUF (rope_freqs divisors) has no config.json form
    r = convert("--input", table[("llama_llama3", "float32", None)]["gguf"], "--output", str(tmp_path / "l3"))
    assert_one_line_error(r, "rope_freqs.weight")
    assert not os.path.exists(str(tmp_path / "l3" / "config.json"))

    # an unknown GGUF architecture
    bad = str(tmp_path / "bert.gguf")
    config, weights = tiny("llama")
    llm_gguf.write_gguf(bad, config, weights, "F32", hf, extra={"general.architecture": "bert"})
    r = convert("--input", bad, "--output", str(tmp_path / "bert_out"))
    assert_one_line_error(r, "bert")
    # a quantised GGUF refused as a safetensors type
    r = convert("--input", table[("llama", "float32", None)]["gguf"], "--output", str(tmp_path / "x"), "--type",
                "q8_0")
    assert_one_line_error(r, "not a safetensors type")
    # output path problems
    r = convert("--input", hf, "--output", str(tmp_path / "no" / "such" / "m.gguf"))
    assert_one_line_error(r, "does not exist")
    existing = str(tmp_path / "existing.gguf")
    open(existing, "w").write("keep me")
    r = convert("--input", hf, "--output", existing)
    assert_one_line_error(r, "exists", "--force")
    assert open(existing).read() == "keep me"
    os.makedirs(str(tmp_path / "adir.gguf"))
    r = convert("--input", hf, "--output", str(tmp_path / "adir.gguf"))
    assert_one_line_error(r, "is a directory")
    r = convert("--input", hf, "--output", str(tmp_path / "m.bin"))
    assert_one_line_error(r, ".gguf")
    assert r.returncode == 2
    # flags
    for args, needle in ((["--input", hf], "--output is required"), (["--bogus"], "unknown flag '--bogus'"),
                         (["--input", hf, "--output", out, "--type", "iq2_xs"], "iq2_xs"),
                         (["--input", str(tmp_path / "nothing"), "--output", out], "neither a folder nor a file")):
        r = convert(*args)
        assert_one_line_error(r, needle)
    assert not os.path.exists(out)
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    r = convert("--help")
    assert r.returncode == 0 and "infera llm convert --input DIR --output FILE.gguf" in r.stdout

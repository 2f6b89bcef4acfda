"""GGUF models through the real server (docs/llm.md, "GGUF models").

The tiny random checkpoints of tests/reference/llm_reference.py (2-4 layers x 256 hidden,
4/2 heads of 64, FFN 512, vocab 1024 with the fortune demo tokenizer; every row length a
multiple of 256 for the K-quants) are written as GGUF files by tests/reference/llm_gguf.py
(scripts/gguf_writer.py + scripts/gguf_quant.py): llama with every tensor type (F32, F16,
BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, and a Q4_K_M-style mix with Q6_K
attn_v / ffn_down), and mistral (llama + sliding window), qwen2, qwen3, phi3, gemma2 and
gemma3 with Q8_0 and a K-quant each. The reference (float64) runs on the SAME blocks
dequantised, with the kernels' int8 activation quantisation mirrored (llm_gguf.BlockWeight).
Float types (F32/F16/BF16): logprobs within 1e-3. Quantised types: the mirror is exact
(logprobs equal to ~1e-5) until one activation rounds the other way -- the engine's
float32 h and the reference's float64 h differ in the last bits -- and that flip moves
the later activations by ~|w|·d_x, which flips more of them: from there the two differ by
the activation quantisation's own noise (measured up to 0.044 in logprob on these models
against the unmirrored reference). So greedy tokens must be identical up to the first
step whose top-2 reference logits are within FRAGILE, and the chosen tokens' logprobs
within LOGPROB_TOL, a bound the float reference without the mirror would also miss on
conventions (q/k permutation, Gemma's +1: test_conventions_change_the_reference_output).
  - per-frequency rope factors: llama with a rope_freqs tensor (Llama 3.1's llama3 scaling
    as llama.cpp writes it: factor 8, low 1, high 4, original 64, so at head_dim 64 the
    divisors are 1, a smooth band and 8) and phi3 with rope_factors_short / _long
    (longrope: original 128 of 512, the attention factor derived from the lengths, or
    given as rope.scaling.attn_factor), F32 and quantised; the reference divides each
    frequency by the file's factors itself; a second rope_freqs file with other factors
    gives other output;
  - YaRN from GGUF keys (qwen2: factor 4 over an original 64 positions, the attention
    factor derived or given), F32 and Q8_0, against the reference's config.json yarn;
  - prompts of 3-45 tokens (past the 16-token window), alone and 8 at once (batched decode);
  - /v1/chat/completions renders with the GGUF's own template (not fortune's);
  - hostile files (truncated, wrong tensor shape, missing tensor, unknown architecture,
    two .gguf files) are load errors naming the problem; the server keeps serving;
  - a Q4_0 model's resident size after serving stays near its file size (not fp32),
    copied onto huge pages (the default) or mapped (use_mmap: true), with the same output.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import pytest

from infera_server import InferaServer, demo_repo
from llm_reference_serving import GEN, alone_and_batched, check_against_reference, complete, serve, write_config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import llm_gguf  # noqa: E402
import llm_reference as ref  # noqa: E402

FRAGILE = 0.1
LOGPROB_TOL = 0.06
FLOAT_TYPES = ("F32", "F16", "BF16")
PROMPTS = [[7, 300, 42], [(i * 37) % 1000 + 3 for i in range(20)], [(i * 53) % 1000 + 5 for i in range(45)],
           [(i * 11) % 1000 + 2 for i in range(9)]]
ALL_TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"]
Q4_K_M = {"default": "Q4_K", "attn_v": "Q6_K", "ffn_down": "Q6_K"}
CASES = [("llama", t) for t in ALL_TYPES] + [("llama", "Q4_K_M")] + [
    ("mistral", "Q8_0"), ("mistral", "Q4_K"), ("qwen2", "Q8_0"), ("qwen2", "Q5_K"), ("qwen3", "Q8_0"),
    ("qwen3", "Q6_K"), ("phi3", "Q8_0"), ("phi3", "Q4_K"), ("gemma2", "Q8_0"), ("gemma2", "Q5_K"),
    ("gemma3_text", "Q8_0"), ("gemma3_text", "Q6_K")]
# Rope-factor files: {variant: (arch, config overrides)}; case names "<variant>_<type>".
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
LONGROPE = {"type": "longrope", "short_factor": [1.0 + 0.25 * (i % 5) for i in range(32)],
            "long_factor": [4.0 + i for i in range(32)]}
ROPE_VARIANTS = {
    "llama_rope_freqs": ("llama", {"rope_scaling": LLAMA3}),
    # other factors (factor 2, original 32): must change the output (test_rope_freqs_change_the_output)
    "llama_rope_freqs_other": ("llama", {"rope_scaling": dict(LLAMA3, factor=2.0,
                                                               original_max_position_embeddings=32)}),
    "phi3_longrope": ("phi3", {"rope_scaling": LONGROPE, "original_max_position_embeddings": 128}),
    "phi3_longrope_attn": ("phi3", {"rope_scaling": dict(LONGROPE, attention_factor=1.5),
                                    "original_max_position_embeddings": 128}),
    # YaRN as GGUF keys (Qwen2.5's long-context form): factor 4 over an original 64 positions,
    # the attention factor derived, or given (as rope.scaling.attn_factor over the derived one).
    "qwen2_yarn": ("qwen2", {"rope_scaling": YARN}),
    "qwen2_yarn_attn": ("qwen2", {"rope_scaling": dict(YARN, attention_factor=1.5)}),
}
CASES += [("llama_rope_freqs", "F32"), ("llama_rope_freqs", "Q4_K"), ("llama_rope_freqs_other", "F32"),
          ("phi3_longrope", "F32"), ("phi3_longrope", "Q8_0"), ("phi3_longrope_attn", "F32"),
          ("qwen2_yarn", "F32"), ("qwen2_yarn", "Q8_0"), ("qwen2_yarn_attn", "F32")]


def tokenizer_dir():
    return os.path.join(demo_repo(), "fortune", "1")


def model_name(arch, types):
    return f"{arch}_{types}".replace("_text", "").lower()


def tiny(arch, seed=3):
    """(config, float32 weights): tied embeddings scaled down so that a token's own
    embedding does not dominate the tied head's logits (greedy would repeat it). `arch`
    may name a ROPE_VARIANTS entry (the same weights as its architecture's)."""
    arch, overrides = ROPE_VARIANTS.get(arch, (arch, {}))
    config = dict(llm_gguf.gguf_config(arch), **overrides)
    weights = ref.random_weights(config, seed)
    if "lm_head.weight" not in weights:
        weights["model.embed_tokens.weight"] = weights["model.embed_tokens.weight"] * np.float32(0.05)
    return config, weights


def write_model(repo, name, arch, types, extra_config="", filename="model.gguf", **kwargs):
    config, weights = tiny(arch)
    version = os.path.join(repo, name, "1")
    os.makedirs(version, exist_ok=True)
    path = os.path.join(version, filename)
    engine = llm_gguf.write_gguf(path, config, weights, Q4_K_M if types == "Q4_K_M" else types, tokenizer_dir(),
                                 **kwargs)
    write_config(repo, name, extra_config)
    return llm_gguf.reference_config(config), engine, path


@pytest.fixture(scope="module")
def models():
    repo = tempfile.mkdtemp(prefix="infera-gguf-")
    out = {}
    for arch, types in CASES:
        name = model_name(arch, types)
        config, engine, _ = write_model(repo, name, arch, types)
        out[(arch, types)] = (name, config, engine)
    yield repo, out
    shutil.rmtree(repo, ignore_errors=True)  # about 35 GGUF files: a loop of runs would fill the disk


@pytest.fixture(scope="module")
def server(models):
    yield from serve(models[0])


def post(server, path, body):
    status, _, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, data


@pytest.mark.parametrize("arch,types", CASES, ids=[model_name(a, t) for a, t in CASES])
def test_greedy_prefill_and_batched_decode_match_reference(server, models, arch, types):
    _, table = models
    name, config, weights = table[(arch, types)]
    alone, together = alone_and_batched(server, name, PROMPTS, copies=2)
    tol = 1e-3 if types in FLOAT_TYPES else LOGPROB_TOL
    for i, prompt in enumerate(PROMPTS):
        expected = ref.greedy(config, weights, prompt, GEN)
        for got, label in ((alone[i], "alone"), (together[i], "batched"), (together[i + len(PROMPTS)], "batched")):
            check_against_reference(config, weights, prompt, *got, f"{name} {label}", FRAGILE, tol, expected)


@pytest.mark.parametrize("variants", [("llama_rope_freqs", "llama_rope_freqs_other"), ("qwen2_yarn", "qwen2_yarn_attn")])
def test_rope_freqs_change_the_output(server, models, variants):
    """The rope_freqs file with other factors (same weights), and the yarn file with another
    attention factor, are served with other logprobs than the first, and the reference
    agrees that they differ (so the checks above would fail if the engine ignored or
    misread the tensor or the key)."""
    _, table = models
    served, expected = [], []
    for variant in variants:
        name, config, weights = table[(variant, "F32")]
        served.append(complete(server, name, PROMPTS[2]))
        expected.append(log_softmax(ref.forward(config, weights, PROMPTS[2])))
    assert np.abs(expected[0] - expected[1]).max() > 10 * LOGPROB_TOL
    (t0, l0), (t1, l1) = served
    assert t0 != t1 or np.abs(np.array(l0) - np.array(l1)).max() > 10 * 1e-3, (t0, t1, l0, l1)


def log_softmax(x):
    return x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))


def test_conventions_change_the_reference_output(models):
    """Undoing llama's q/k permutation and Gemma's +1 each move the reference's logprobs
    far past LOGPROB_TOL (so the comparisons above depend on them)."""
    _, table = models
    _, config, weights = table[("llama", "Q8_0")]
    base = log_softmax(ref.forward(config, weights, PROMPTS[2]))
    permuted = dict(weights)
    for key in list(weights):
        if key.endswith(("q_proj.weight", "k_proj.weight")):
            heads = config["num_attention_heads"] if "q_proj" in key else config["num_key_value_heads"]
            v = weights[key]
            permuted[key] = llm_gguf.BlockWeight(llm_gguf._permute_rows(v.values, heads), v.name)
    assert np.abs(log_softmax(ref.forward(config, permuted, PROMPTS[2])) - base).max() > 10 * LOGPROB_TOL
    _, config, weights = table[("gemma2", "Q8_0")]
    base = log_softmax(ref.forward(config, weights, PROMPTS[2]))
    plus_one = {k: (v + 1.0 if k.endswith("norm.weight") else v) for k, v in weights.items()}
    assert np.abs(log_softmax(ref.forward(config, plus_one, PROMPTS[2])) - base).max() > 10 * LOGPROB_TOL


def test_chat_renders_with_the_gguf_template(server, models):
    """/v1/chat/completions renders the GGUF's tokenizer.chat_template (upper-case roles,
    unlike fortune's own template): its greedy reply equals /v1/completions on the
    prompt that template renders."""
    _, table = models
    name = table[("qwen3", "Q8_0")][0]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me a fortune"}]
    rendered = ("<|im_start|>SYSTEM: Be brief.<|im_end|>\n<|im_start|>USER: Tell me a fortune<|im_end|>\n"
                "<|im_start|>ASSISTANT: ")
    status, data = post(server, "/v1/chat/completions", dict(model=name, messages=messages, max_tokens=GEN,
                                                            temperature=0, ignore_eos=True))
    assert status == 200, data
    chat = json.loads(data)
    status, data = post(server, "/v1/completions", dict(model=name, prompt=rendered, max_tokens=GEN, temperature=0,
                                                       ignore_eos=True))
    assert status == 200, data
    completion = json.loads(data)
    assert chat["usage"]["prompt_tokens"] == completion["usage"]["prompt_tokens"], (chat["usage"], completion["usage"])
    assert chat["choices"][0]["message"]["content"] == completion["choices"][0]["text"]
    # fortune's own template (lower-case roles) gives another prompt
    status, data = post(server, "/v1/completions", dict(model=name, prompt=rendered.replace("SYSTEM", "system"),
                                                       max_tokens=1, temperature=0))
    assert status == 200


def write_hostile(repo):
    """{model: the text its load error must contain}"""
    cases = {}
    _, _, path = write_model(repo, "truncated", "qwen2", "Q8_0")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 1000)
    cases["truncated"] = "model.gguf"
    # wrong shape: attn_k written with the rows of attn_q
    config, weights = tiny("qwen3")
    wrong = dict(weights)
    wrong["model.layers.1.self_attn.k_proj.weight"] = weights["model.layers.1.self_attn.q_proj.weight"]
    version = os.path.join(repo, "wrong_shape", "1")
    os.makedirs(version)
    llm_gguf.write_gguf(os.path.join(version, "model.gguf"), config, wrong, "Q8_0", tokenizer_dir())
    write_config(repo, "wrong_shape")
    cases["wrong_shape"] = "tensor 'blk.1.attn_k.weight' has dims [256,256]"
    write_model(repo, "missing", "llama", "Q4_0", skip=("blk.0.ffn_gate.weight",))
    cases["missing"] = "tensor 'blk.0.ffn_gate.weight' is missing"
    write_model(repo, "falcon", "llama", "Q8_0", extra={"general.architecture": "falcon"})
    cases["falcon"] = "general.architecture 'falcon' is not supported"
    write_model(repo, "two_files", "llama", "Q8_0", filename="a.gguf")
    write_model(repo, "two_files", "llama", "Q8_0", filename="b.gguf")
    cases["two_files"] = "2 GGUF files (a.gguf, b.gguf)"
    # ... which default_model_filename resolves
    write_model(repo, "named", "llama", "Q8_0", filename="a.gguf")
    write_model(repo, "named", "llama", "Q8_0", filename="b.gguf",
                extra_config='default_model_filename: "b.gguf"\n')
    return cases


def test_hostile_gguf_files_are_load_errors_naming_the_problem(tmp_path):
    repo = str(tmp_path)
    cases = write_hostile(repo)
    write_model(repo, "good", "qwen3", "Q8_0")
    s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "good")
    try:
        s.wait_ready()
        for name, message in cases.items():
            status, data = post(s, f"/v2/repository/models/{name}/load", {})
            assert status == 400, (name, status, data)
            error = json.loads(data)["error"]
            assert message in error, (name, error)
            assert complete(s, "good", [5, 6, 7])[0]
        status, data = post(s, "/v2/repository/models/named/load", {})
        assert status == 200, data
        assert complete(s, "named", [5, 6, 7])[0]
        s.assert_serving()
    finally:
        s.stop()


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_q4_0_resident_size_is_near_the_file_size(tmp_path):
    """A 4-layer 1024-wide Q4_0 model (~57 M parameters: 32 MiB of blocks, 229 MiB as
    fp32): the server's resident size grows by about the file's size when it loads and
    serves it, whether the weights are copied onto huge pages (the default) or mapped
    (use_mmap: true); nothing is widened, and both give the same greedy output."""
    repo = str(tmp_path)
    config = ref.tiny_config("llama", hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=2, head_dim=64, rope_scaling=None)
    rng = np.random.default_rng(0)
    weights = {k: v for k, v in ref.random_weights(dict(config, num_hidden_layers=0), 0).items()}
    for i in range(4):
        p = f"model.layers.{i}."
        for key, shape in (("input_layernorm", (1024,)), ("post_attention_layernorm", (1024,)),
                           ("self_attn.q_proj", (1024, 1024)), ("self_attn.k_proj", (128, 1024)),
                           ("self_attn.v_proj", (128, 1024)), ("self_attn.o_proj", (1024, 1024)),
                           ("mlp.gate_proj", (4096, 1024)), ("mlp.up_proj", (4096, 1024)),
                           ("mlp.down_proj", (1024, 4096))):
            weights[p + key + ".weight"] = (rng.standard_normal(shape) * 0.03).astype(np.float32)
    paths = {}
    for name, extra in (("big", ""), ("big_mmap", 'parameters { key: "use_mmap" value { string_value: "true" } }\n')):
        version = os.path.join(repo, name, "1")
        os.makedirs(version)
        paths[name] = os.path.join(version, "model.gguf")
        llm_gguf.write_gguf(paths[name], config, weights, "Q4_0", tokenizer_dir())
        write_config(repo, name, extra)
    s = InferaServer(repo, "--model-control-mode", "explicit")
    try:
        s.wait_ready()
        outputs = {}
        for name, path in paths.items():
            before = rss_bytes(s.process.pid)
            status, data = post(s, f"/v2/repository/models/{name}/load", {})
            assert status == 200, data
            outputs[name] = complete(s, name, list(range(5, 40)))
            after = rss_bytes(s.process.pid)
            size = os.path.getsize(path)
            growth = after - before
            fp32 = sum(v.size for v in weights.values()) * 4
            print(f"{name}: Q4_0 file {size / 2**20:.1f} MiB, fp32 {fp32 / 2**20:.1f} MiB, "
                  f"RSS growth {growth / 2**20:.1f} MiB")
            assert growth < 1.25 * size + 24 * 2**20, (name, size, growth)
            assert growth < fp32 / 3, (name, fp32, growth)
        assert outputs["big"][0] == outputs["big_mmap"][0]
        np.testing.assert_allclose(outputs["big"][1], outputs["big_mmap"][1], atol=1e-6)
    finally:
        s.stop()

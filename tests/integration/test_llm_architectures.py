"""Every decoder architecture the safetensors path loads, against the independent numpy
reference (tests/reference/llm_reference.py, float64, written from the architectures'
descriptions): Llama 3.x (llama3 rope scaling), Mistral (sliding window), Qwen2 (biases),
Qwen3 (q/k norm), Phi-3 (fused qkv / gate-up), Gemma-2 (soft-capping, GeGLU, sandwich
norms, alternating sliding window), Gemma-3 text (q/k norm, local/global layers with
their own rope base). docs/llm.md, "Architectures".

Each tiny random-weight checkpoint (3-4 layers x 64 hidden, 4/2 heads, vocab 1024, the
fortune demo model's tokenizer, sliding window 16) is written as float32 and bfloat16,
and the float32 one is also served with `quantization: int8` and `int4`:
  - the paged runner's logits (tool `llm_logits`: chunked prefill over scrambled block
    tables, batched; float32 and bfloat16) equal the reference's within
    |d| <= 1e-4 + 1e-4 |ref|, and its batched greedy decode equals the reference's tokens;
  - through the real server's /v1/completions (greedy, prompt token ids), prompts of
    3-45 tokens (past the 16-token window), one at a time and 8 concurrently (batched
    decode), produce the reference's tokens, and the chosen tokens' logprobs equal the
    reference's log-softmax within 1e-3 -- for int8 / int4 against the reference run on
    the same blocks dequantised (llm_reference.quantised);
  - a text prompt, tokenized by the server with the fortune tokenizer, continues as the
    reference does from the ids `llm_tokenize` gives for it;
  - Phi-3 longrope is served up to original_max_position_embeddings with its short
    factors by default, and with its long factors for every position when max_model_len
    is larger (each checked against the reference);
  - each architecture-specific feature changes the reference's output on these weights
    (so the comparisons above could fail if the engine ignored it);
  - config fields the engine does not implement are load errors naming the field.
A step where the reference's top-2 logits are within 1e-3 is numerically fragile: the
token comparison stops there.
"""

import json
import os
import subprocess
import shutil
import sys
import tempfile

import numpy as np
import pytest

from infera_server import BINARY, InferaServer, demo_repo
from llm_reference_serving import (GEN, alone_and_batched, check_against_reference, complete, matching_prefix_ok, serve,
                                   write_config)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import llm_reference as ref  # noqa: E402

LLM_LOGITS = os.path.join(os.path.dirname(BINARY), "tools", "llm", "llm_logits")
# Phi-3 with longrope (its 128k variants): short factors and the attention factor, up to
# original_max_position_embeddings (64 here, so a 45-token prompt plus 8 stays inside);
# the long factors with a max_model_len past it
# (test_longrope_long_factors_with_a_longer_max_model_len).
LONGROPE = {"type": "longrope", "short_factor": [1.0, 1.5, 2.0, 1.0, 3.0, 1.0, 1.25, 4.0],
            "long_factor": [8.0] * 8}
CASES = {arch: (arch, {}) for arch in ref.ARCHITECTURES}
CASES["phi3_longrope"] = ("phi3", dict(rope_scaling=LONGROPE, original_max_position_embeddings=64,
                                       max_position_embeddings=1024))
# Qwen2.5 with YaRN as its model card adds it (factor 4 over the original length; 64 here,
# so that the ramp covers dimensions 0-3 of the 8 frequencies and the rest are
# interpolated), and the attention factor 0.1 ln 4 + 1.
YARN = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
CASES["qwen2_yarn"] = ("qwen2", dict(rope_scaling=YARN, max_position_embeddings=64))
ARCHS = sorted(CASES)


def case_config(case):
    arch, overrides = CASES[case]
    return ref.tiny_config(arch, **overrides)
DTYPES = ["float32", "bfloat16"]
# What the server serves: the stored dtypes, and the float32 weights quantised at load.
VARIANTS = DTYPES + ["int8", "int4"]
FRAGILE = 1e-3
PROMPTS = [[7, 300, 42], [(i * 37) % 1000 + 3 for i in range(20)], [(i * 53) % 1000 + 5 for i in range(45)]]


def tokenizer_dir():
    return os.path.join(demo_repo(), "fortune", "1")


@pytest.fixture(scope="module")
def checkpoints():
    """{(arch, variant): (model name, dir, config, weights the engine computes with)}
    under one temporary repository."""
    repo = tempfile.mkdtemp(prefix="infera-arch-")
    out = {}
    for arch in ARCHS:
        for variant in VARIANTS:
            name = f"{arch}_{variant}".replace("_text", "")
            version = os.path.join(repo, name, "1")
            dtype = variant if variant in DTYPES else "float32"
            ref.make_checkpoint(version, case_config(arch), seed=3, dtype=dtype, tokenizer_from=tokenizer_dir())
            quantization = variant if variant not in DTYPES else "none"
            write_config(repo, name,
                         f'parameters {{ key: "quantization" value: {{ string_value: "{quantization}" }} }}\n')
            config, weights = ref.load(version)
            out[(arch, variant)] = (name, version, config, ref.quantised(config, weights, quantization))
    yield repo, out
    shutil.rmtree(repo, ignore_errors=True)  # every architecture's checkpoints: a loop of runs would fill the disk


@pytest.fixture(scope="module")
def server(checkpoints):
    yield from serve(checkpoints[0])


def run_logits(model_dir, prompts, chunk, generate):
    args = [LLM_LOGITS, "--model", model_dir, "--chunk", str(chunk), "--block-size", "4",
            "--generate", str(generate)]
    for p in prompts:
        args += ["--prompt", ",".join(map(str, p))]
    return json.loads(subprocess.check_output(args, timeout=120))["sequences"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("arch", ARCHS)
def test_runner_logits_and_batched_greedy_match_reference(checkpoints, arch, dtype):
    _, models = checkpoints
    _, version, config, weights = models[(arch, dtype)]
    for chunk in (1, 7, 64):
        seqs = run_logits(version, PROMPTS, chunk, GEN if chunk == 7 else 0)
        for prompt, seq in zip(PROMPTS, seqs):
            expected_all = ref.forward(config, weights, prompt)
            k = sum(1 for p in seq["positions"] if p < len(prompt))
            got = np.array(seq["logits"][:k])
            expected = expected_all[seq["positions"][:k]]
            excess = np.abs(got - expected) - (1e-4 + 1e-4 * np.abs(expected))
            assert excess.max() <= 0, f"{arch} {dtype} chunk {chunk}: max |d| {np.abs(got - expected).max()}"
            if seq["generated"]:
                want, margins = ref.greedy(config, weights, prompt, GEN)
                assert matching_prefix_ok(want, margins, seq["generated"], FRAGILE), (
                    arch, prompt, want, seq["generated"])


def complete_ids(server, model, prompt):
    return complete(server, model, prompt)[0]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("arch", ARCHS)
def test_server_greedy_prefill_and_batched_decode_match_reference(server, checkpoints, arch, variant):
    _, models = checkpoints
    name, _, config, weights = models[(arch, variant)]
    prompts = PROMPTS + [[(i * 11 + k * 29) % 1000 + 2 for k in range(4 + 5 * i)] for i in range(5)]
    expected = [ref.greedy(config, weights, p, GEN) for p in prompts]
    alone, together = alone_and_batched(server, name, prompts)
    for prompt, want, one, batched in zip(prompts, expected, alone, together):
        check_against_reference(config, weights, prompt, *one, f"{name} alone", FRAGILE, 1e-3, want)
        check_against_reference(config, weights, prompt, *batched, f"{name} batched", FRAGILE, 1e-3, want)


def test_quantisation_changes_the_reference_output(checkpoints):
    """The int8 / int4 references differ from the float32 one (so serving float32 weights
    for a quantised model would fail the comparisons above)."""
    _, models = checkpoints
    for arch in ARCHS:
        base = ref.forward(models[(arch, "float32")][2], models[(arch, "float32")][3], PROMPTS[1])
        for mode in ("int8", "int4"):
            diff = np.abs(ref.forward(models[(arch, mode)][2], models[(arch, mode)][3], PROMPTS[1]) - base).max()
            assert diff > 2e-3, (arch, mode, diff)


# Each feature, switched off in the reference's config, changes its output: so the
# engine's agreement above depends on implementing it.
FEATURES = {
    "mistral sliding window": ("mistral", {"sliding_window": None}),
    "phi3 sliding window": ("phi3", {"sliding_window": None}),
    "llama3 rope scaling": ("llama", {"rope_scaling": None}),
    "phi3 longrope short factors": ("phi3_longrope", {"rope_scaling": dict(LONGROPE, short_factor=[1.0] * 8)}),
    "phi3 longrope attention factor": ("phi3_longrope", {"max_position_embeddings": 64}),
    "qwen2 yarn": ("qwen2_yarn", {"rope_scaling": None}),
    "qwen2 yarn attention factor": ("qwen2_yarn", {"rope_scaling": dict(YARN, attention_factor=1.0)}),
    "qwen2 yarn ramp (beta_slow)": ("qwen2_yarn", {"rope_scaling": dict(YARN, beta_slow=0.01)}),
    "gemma2 attention soft-cap": ("gemma2", {"attn_logit_softcapping": None}),
    "gemma2 final soft-cap": ("gemma2", {"final_logit_softcapping": None}),
    "gemma2 sliding window": ("gemma2", {"sliding_window": None}),
    "gemma2 query_pre_attn_scalar": ("gemma2", {"query_pre_attn_scalar": 32}),
    "gemma3 local rope base": ("gemma3_text", {"rope_local_base_freq": 1000000.0}),
    "gemma3 global rope scaling": ("gemma3_text", {"rope_scaling": None}),
    "gemma3 local/global pattern": ("gemma3_text", {"sliding_window_pattern": 2}),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_each_feature_changes_the_reference_output(checkpoints, feature):
    _, models = checkpoints
    arch, change = FEATURES[feature]
    _, _, config, weights = models[(arch, "float32")]
    prompt = PROMPTS[2]
    base = ref.forward(config, weights, prompt)
    changed = ref.forward(dict(config, **change), weights, prompt)
    assert np.abs(base - changed).max() > 1e-2, feature


def test_qk_norm_changes_the_reference_output(checkpoints):
    _, models = checkpoints
    for arch in ("qwen3", "gemma3_text"):
        _, _, config, weights = models[(arch, "float32")]
        neutral = dict(weights)
        for key in weights:
            if key.endswith(("q_norm.weight", "k_norm.weight")):
                neutral[key] = np.zeros_like(weights[key]) + (0.0 if arch == "gemma3_text" else 1.0)
        diff = np.abs(ref.forward(config, weights, PROMPTS[1]) - ref.forward(config, neutral, PROMPTS[1])).max()
        assert diff > 1e-2, arch


UNSUPPORTED = {
    "longrope_factors": ("phi3", {"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 3,
                                                   "long_factor": [2.0] * 8}}, "rope_scaling.short_factor"),
    "su_original": ("phi3", {"rope_scaling": {"type": "su", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8},
                             "original_max_position_embeddings": None}, "original_max_position_embeddings"),
    "dynamic": ("qwen3", {"rope_scaling": {"rope_type": "dynamic", "factor": 4.0}}, 'rope_scaling type "dynamic"'),
    "yarn_factor": ("qwen2", {"rope_scaling": {"rope_type": "yarn", "factor": 0.5}}, 'yarn needs a "factor" >= 1'),
    "partial_rotary_factor": ("phi3", {"partial_rotary_factor": 0.75}, "partial_rotary_factor 0.75"),
    "mlp_bias": ("llama", {"mlp_bias": True}, "mlp_bias"),
    "gelu_erf": ("gemma2", {"hidden_activation": "gelu"}, 'hidden_activation "gelu"'),
    "layer_types": ("gemma3_text", {"layer_types": ["sliding_attention", "chunked_attention",
                                                    "full_attention", "sliding_attention"]},
                    'layer_types[1] "chunked_attention"'),
    "quantization_config": ("llama", {"quantization_config": {"quant_method": "gptq"}}, "quantization_config"),
    "bidirectional": ("gemma3_text", {"use_bidirectional_attention": True}, "use_bidirectional_attention"),
    "model_type": ("llama", {"model_type": "falcon"}, 'model_type "falcon"'),
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_unsupported_config_field_is_a_load_error_naming_it(tmp_path, case):
    arch, change, message = UNSUPPORTED[case]
    ref.make_checkpoint(str(tmp_path), ref.tiny_config(arch, **change), seed=1)
    result = subprocess.run([LLM_LOGITS, "--model", str(tmp_path), "--prompt", "1,2,3"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_unsupported_field_fails_that_model_through_the_server(tmp_path):
    """The server reports the load error naming the field and keeps serving the others."""
    repo = str(tmp_path)
    for name, config in (("good", ref.tiny_config("qwen3")),
                         ("dynamic", ref.tiny_config("qwen3", rope_scaling={"rope_type": "dynamic", "factor": 4.0}))):
        ref.make_checkpoint(os.path.join(repo, name, "1"), config, seed=2, tokenizer_from=tokenizer_dir())
        with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
            f.write(f'name: "{name}"\nbackend: "llm"\nmax_batch_size: 0\n'
                    'parameters { key: "kv_cache_memory_bytes" value: { string_value: "2MiB" } }\n')
    s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "good")
    try:
        s.wait_ready()
        status, _, data = s.request("POST", "/v2/repository/models/dynamic/load", "")
        assert status == 400, (status, data)
        error = json.loads(data)["error"]
        assert 'rope_scaling type "dynamic"' in error and "config.json" in error, error
        assert complete_ids(s, "good", [5, 6, 7])
        s.assert_serving()
    finally:
        s.stop()


def test_longrope_is_served_up_to_the_original_length_by_default(checkpoints, server):
    """Without max_model_len a longrope model serves original_max_position_embeddings (64)
    positions with the short factors (exactly Hugging Face's output there: the
    reference tests above); a longer request is refused naming the limit."""
    repo, models = checkpoints
    name = models[("phi3_longrope", "float32")][0]
    body = dict(model=name, prompt=list(range(5, 65)), max_tokens=8, temperature=0)
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    assert status == 400 and "64" in data.decode(errors="replace"), (status, data)
    assert complete_ids(server, name, [5, 6, 7])


def test_longrope_long_factors_with_a_longer_max_model_len(tmp_path):
    """max_model_len past original_max_position_embeddings (200 > 64) selects the long
    factors for every position (llama.cpp's rule). Prompts of 70 and 120 tokens match the
    reference, whose whole-sequence forward past 64 positions uses the long factors
    (Hugging Face's rule); a 3-token prompt matches the reference with the long factors in
    place of the short ones (Hugging Face would use the short ones there: the price of one
    rotation per sequence). Alone and batched."""
    repo = str(tmp_path)
    config = case_config("phi3_longrope")
    version = os.path.join(repo, "longrope_long", "1")
    ref.make_checkpoint(version, config, seed=3, tokenizer_from=tokenizer_dir())
    write_config(repo, "longrope_long", 'parameters { key: "max_model_len" value: { string_value: "200" } }\n')
    config, weights = ref.load(version)
    long_everywhere = dict(config, rope_scaling=dict(config["rope_scaling"],
                                                     short_factor=config["rope_scaling"]["long_factor"]))
    short_prompt = [7, 300, 42]
    long_prompts = [[(i * 37) % 1000 + 3 for i in range(70)], [(i * 53) % 1000 + 5 for i in range(120)]]
    s = InferaServer(repo)
    try:
        s.wait_ready()
        alone, together = alone_and_batched(s, "longrope_long", [short_prompt] + long_prompts)
        for prompt, one, batched in zip([short_prompt] + long_prompts, alone, together):
            reference = long_everywhere if prompt is short_prompt else config
            for label, (got, logprobs) in (("alone", one), ("batched", batched)):
                check_against_reference(reference, weights, prompt, got, logprobs, label, FRAGILE, 1e-3)
        # The short factors would give other tokens: the check above can fail.
        short_want, _ = ref.greedy(config, weights, short_prompt, GEN)
        long_want, _ = ref.greedy(long_everywhere, weights, short_prompt, GEN)
        assert short_want != long_want
        status, _, data = s.request("POST", "/v1/completions",
                                    json.dumps(dict(model="longrope_long", prompt=list(range(5, 200)), max_tokens=8)),
                                    {"Content-Type": "application/json"})
        assert status == 400 and "200" in data.decode(errors="replace"), (status, data)
        s.assert_serving()
    finally:
        s.stop()


LLM_TOKENIZE = os.path.join(os.path.dirname(BINARY), "tools", "llm", "llm_tokenize")
TEXT = "A banker is a fellow who lends you his umbrella when the sun is shining"


@pytest.mark.parametrize("arch", ARCHS)
def test_text_prompt_through_the_fortune_tokenizer_matches_reference(server, checkpoints, arch):
    """A text prompt, tokenized by the server with the fortune tokenizer (the same ids as
    `llm_tokenize` gives): its greedy continuation is the reference's for those ids."""
    _, models = checkpoints
    name, version, config, weights = models[(arch, "float32")]
    encoded = subprocess.run([LLM_TOKENIZE, version], input=json.dumps(TEXT) + "\n", capture_output=True,
                             text=True, timeout=60, check=True)
    prompt = json.loads(encoded.stdout.splitlines()[0])["ids"]
    body = dict(model=name, prompt=TEXT, max_tokens=GEN, temperature=0, ignore_eos=True, logprobs=1,
                return_tokens_as_token_ids=True)
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    assert status == 200, data
    response = json.loads(data)
    assert response["usage"]["prompt_tokens"] == len(prompt) > 5, (response["usage"], prompt)
    got = [int(t.split(":", 1)[1]) for t in response["choices"][0]["logprobs"]["tokens"]]
    want, margins = ref.greedy(config, weights, prompt, GEN)
    assert matching_prefix_ok(want, margins, got, FRAGILE), (arch, want, got)

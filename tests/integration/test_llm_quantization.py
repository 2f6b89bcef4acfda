"""Weight quantisation of LLMs (issue 16; docs/llm.md, "Weight quantisation").

The fortune demo model loaded three times in one server — as is (bf16 on disk, kept
exactly), `quantization: int8` and `quantization: int4` — answers the same greedy
prompts over /v1/completions; the quantised generations must agree with the
unquantised one token by token over most of their length (bounds measured, with
margin, below). A bad `quantization` value fails that model's load with an error naming
the key, and the server keeps serving the others.
"""

import json
import os
import subprocess
import tempfile

import pytest

from infera_server import BINARY, InferaServer, copy_model, demo_repo

LLM_EVAL = os.path.join(os.path.dirname(BINARY), "tools", "llm", "llm_eval")

MAX_TOKENS = 24
# Beginnings of fortunes (the demo model's training text, /usr/share/games/fortunes).
PROMPTS = [
    "A banker is a fellow who lends you his umbrella",
    "As to the Adjective: when in doubt,",
    "Familiarity breeds contempt",
    "I do desire we may be better",
    "It has long been an axiom of mine that",
    "Never laugh at live",
    "So she went into the garden to cut",
    "The human race has one really effective weapon,",
    "There is no character, howsoever good and fine,",
    "When I was younger, I could remember anything,",
]
# Fraction of generated tokens equal to the unquantised model's up to each prompt's
# first divergence (summed over prompts / all tokens). Measured on this machine
# (AVX-512 kernels): int8 0.89, int4 0.54 (llm_eval, 16 prompts of the fortune text:
# int8 0.83, int4 0.64). The bounds leave room for the AVX2/portable kernels' different rounding
# flipping a near tie or two; a broken kernel or layout gives ~0 (random tokens).
MIN_PREFIX_AGREEMENT = {"fortune_int8": 0.6, "fortune_int4": 0.3}


def with_quantization(value):
    def edit(text):
        return text + f'parameters {{ key: "quantization" value: {{ string_value: "{value}" }} }}\n'
    return edit


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as repo:
        copy_model(demo_repo(), "fortune", repo)
        for value in ("int8", "int4"):
            copy_model(demo_repo(), "fortune", repo, with_quantization(value), new_name=f"fortune_{value}")
        copy_model(demo_repo(), "fortune", repo, with_quantization("int3"), new_name="fortune_bad")
        s = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "fortune",
                         "--load-model", "fortune_int8", "--load-model", "fortune_int4")
        s.wait_ready()
        yield s
        s.stop()


def greedy_tokens(server, model):
    """Every prompt's greedy token ids, in one batched request."""
    body = json.dumps({"model": model, "prompt": PROMPTS, "max_tokens": MAX_TOKENS, "temperature": 0,
                       "ignore_eos": True, "logprobs": 0, "return_tokens_as_token_ids": True})
    status, _, data = server.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    assert status == 200, data
    choices = sorted(json.loads(data)["choices"], key=lambda c: c["index"])
    assert len(choices) == len(PROMPTS)
    out = []
    for c in choices:
        tokens = c["logprobs"]["tokens"]
        assert len(tokens) == MAX_TOKENS and c["text"], c
        out.append([int(t.split(":", 1)[1]) for t in tokens])
    return out


def prefix_agreement(got, want):
    matched = 0
    for g, w in zip(got, want):
        n = 0
        while n < len(w) and g[n] == w[n]:
            n += 1
        matched += n
    return matched / sum(len(w) for w in want)


@pytest.mark.parametrize("model", ["fortune_int8", "fortune_int4"])
def test_quantised_fortune_generates_text_close_to_unquantised(server, model):
    reference = greedy_tokens(server, "fortune")
    got = greedy_tokens(server, model)
    agreement = prefix_agreement(got, reference)
    assert agreement >= MIN_PREFIX_AGREEMENT[model], (model, agreement, got, reference)
    # Greedy output does not depend on the batch: one prompt alone gives the same tokens.
    body = json.dumps({"model": model, "prompt": PROMPTS[3], "max_tokens": MAX_TOKENS, "temperature": 0,
                       "ignore_eos": True, "logprobs": 0, "return_tokens_as_token_ids": True})
    status, _, data = server.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    assert status == 200, data
    alone = [int(t.split(":", 1)[1]) for t in json.loads(data)["choices"][0]["logprobs"]["tokens"]]
    assert alone == got[3]


def test_chat_answers_on_int4(server):
    body = json.dumps({"model": "fortune_int4", "messages": [{"role": "user", "content": "Tell me a fortune"}],
                       "max_tokens": 16, "temperature": 0})
    status, _, data = server.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    assert status == 200, data
    assert json.loads(data)["choices"][0]["message"]["content"].strip()


@pytest.mark.parametrize("value", ["int3", "INT8", "", "int4 ", "q4_0"])
def test_bad_quantization_fails_the_load_naming_the_key(server, value):
    config = {"name": "fortune_bad", "backend": "llm", "max_batch_size": 0,
              "parameters": {"quantization": {"string_value": value},
                             "kv_cache_memory_bytes": {"string_value": "16MiB"}}}
    body = json.dumps({"parameters": {"config": json.dumps(config)}})
    status, _, data = server.request("POST", "/v2/repository/models/fortune_bad/load", body)
    assert status == 400, (status, data)
    error = json.loads(data)["error"]
    assert "parameter quantization" in error and "none, int8 or int4" in error, error
    # The others keep serving.
    assert greedy_tokens(server, "fortune_int8")
    server.assert_serving()


def test_bad_value_from_the_repository_and_blas_combination(server):
    status, _, data = server.request("POST", "/v2/repository/models/fortune_bad/load", "")
    assert status == 400, (status, data)
    assert "parameter quantization: 'int3'" in json.loads(data)["error"]
    config = {"name": "fortune_bad", "backend": "llm", "max_batch_size": 0,
              "parameters": {"quantization": {"string_value": "int4"}, "matmul_kernel": {"string_value": "blas"}}}
    status, _, data = server.request("POST", "/v2/repository/models/fortune_bad/load",
                                     json.dumps({"parameters": {"config": json.dumps(config)}}))
    assert status == 400 and "matmul_kernel packed" in json.loads(data)["error"], (status, data)
    server.assert_serving()


def test_log_reports_the_quantised_weight_bytes(server):
    log = server.log()
    sizes = {}
    for name in ("fortune", "fortune_int8", "fortune_int4"):
        line = next(l for l in log.splitlines() if f"model '{name}': llama" in l)
        sizes[name] = float(line.split(" MiB in memory")[0].rsplit("; ", 1)[1])
        assert "quantization" in line, line
    # The embedding stays fp32: the model shrinks, but not 4x / 8x.
    assert sizes["fortune_int4"] < sizes["fortune_int8"] < sizes["fortune"], sizes


def run_eval(text_file, *args):
    return subprocess.run([LLM_EVAL, "--model", os.path.join(demo_repo(), "fortune", "1"), "--text", text_file,
                           "--max-tokens", "256", "--prompts", "4", "--agreement-tokens", "16", *args],
                          capture_output=True, text=True, timeout=120)


def test_llm_eval_reports_perplexity_and_agreement(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("\n%\n".join(PROMPTS) * 3)
    same = run_eval(str(text))
    assert same.returncode == 0, same.stderr
    r = json.loads(same.stdout)
    # Against itself: identical.
    assert r["perplexity"]["model"] == r["perplexity"]["reference"] and r["perplexity"]["top1_agreement"] == 1
    assert r["greedy"]["prefix_fraction"] == 1 and r["greedy"]["prefix_lengths"] == [16] * 4
    q = run_eval(str(text), "--param", "quantization=int4")
    assert q.returncode == 0, q.stderr
    r4 = json.loads(q.stdout)
    assert r4["params"] == {"quantization": "int4"} and r4["weight_bytes"] < r["weight_bytes"]
    assert r4["perplexity"]["model"] != r4["perplexity"]["reference"]  # the weights did change
    # Measured on this text: perplexity 197 (int4) vs 210, top-1 agreement 0.84 (int8:
    # 0.99). A broken kernel or layout gives random logits: agreement ~0, perplexity
    # near or above the vocabulary size (1,024).
    assert r4["perplexity"]["model"] < 1.5 * r4["perplexity"]["reference"], r4
    assert r4["perplexity"]["top1_agreement"] > 0.65, r4


@pytest.mark.parametrize("args, message", [
    (["--param", "quantization=int5"], "parameter quantization"),
    (["--param", "quantization"], "is not key=value"),
    (["--max-tokens", "0"], "--max-tokens"),
    (["--bogus", "1"], "unknown flag"),
])
def test_llm_eval_rejects_bad_arguments_naming_them(tmp_path, args, message):
    text = tmp_path / "text.txt"
    text.write_text(PROMPTS[0])
    result = run_eval(str(text), *args)
    assert result.returncode in (1, 2) and message in result.stderr, (result.returncode, result.stderr)

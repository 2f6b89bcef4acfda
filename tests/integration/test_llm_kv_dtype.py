"""The KV-cache dtype option (`kv_cache_dtype` = fp32 | bf16 | fp16, docs/llm.md
"KV-cache dtype") on the fortune demo LLM, over real sockets:

- each dtype loads and answers over the OpenAI API, streamed and not (same text);
- greedy generations with a 16-bit cache agree with fp32's over most tokens (the bound
  is measured, see AGREEMENT_FLOOR);
- the same byte budget holds twice the tokens in 16-bit (the load log and the
  Prometheus capacity gauge);
- a bad value fails the load with a 400 naming the parameter, and the server keeps
  serving.
"""

import json
import os
import re
import tempfile

import pytest

from infera_server import InferaServer, copy_model, demo_repo
from testutil import greedy_completion

DTYPES = ("fp32", "bf16", "fp16")
ADMIN = {"Authorization": "Bearer t0ken"}
# fortune: 4 layers x 2 x 3 KV heads x 32 x 4 bytes = 3072 bytes per token in fp32, so
# 6 MiB is exactly 128 blocks of 16 tokens in fp32 and 256 in 16-bit.
BUDGET = "6MiB"
FP32_BLOCKS = 128
PROMPTS = [
    "A fool and his money",
    "You will be",
    "The best way to",
    "Never trust a",
    "Q: What is the meaning of life?\nA:",
    "Life is",
]
MAX_TOKENS = 64
# Greedy agreement with fp32: the tokens before the first difference, over every
# prompt's MAX_TOKENS. Measured on fortune (6 prompts x 64 tokens): bf16 1.00, fp16 1.00
# (docs/llm.md, "KV-cache dtype", has the larger run). The floor leaves room for one
# prompt to diverge at its first near-tie without letting a broken cache pass: a cache
# read wrongly (e.g. bf16 words read as fp16) diverges in the first tokens everywhere.
AGREEMENT_FLOOR = 0.75


def with_dtype(dtype):
    def edit(text):
        text = text.replace('string_value: "64MiB"', f'string_value: "{BUDGET}"')
        return text + f'parameters {{ key: "kv_cache_dtype" value: {{ string_value: "{dtype}" }} }}\n'
    return edit


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-kvdtype-")
    for dtype in DTYPES:
        copy_model(demo_repo(), "fortune", repo, with_dtype(dtype), new_name=f"fortune_{dtype}")
    for name, value in (("fortune_bad", "fp8"), ("fortune_upper", "FP16"), ("fortune_empty", "")):
        copy_model(demo_repo(), "fortune", repo, with_dtype(value), new_name=name)
    args = ["--model-control-mode", "explicit", "--admin-token", "t0ken"]
    for dtype in DTYPES:
        args += ["--load-model", f"fortune_{dtype}"]
    s = InferaServer(repo, *args)
    s.wait_ready()
    yield s
    s.stop()


def post(server, path, body, headers=None):
    return server.request("POST", path, json.dumps(body), dict({"Content-Type": "application/json"}, **(headers or {})))


def complete(server, model, prompt, stream=False):
    return greedy_completion(server, model, prompt, MAX_TOKENS, stream)


def test_each_dtype_answers_streamed_and_not(server):
    for dtype in DTYPES:
        model = f"fortune_{dtype}"
        text, tokens, finish = complete(server, model, PROMPTS[0])
        assert len(tokens) == MAX_TOKENS and finish == "length" and text
        streamed, streamed_tokens, streamed_finish = complete(server, model, PROMPTS[0], stream=True)
        assert (streamed, streamed_tokens, streamed_finish) == (text, tokens, finish), dtype
        # Chat too (the demo's ChatML template).
        status, _, data = post(server, "/v1/chat/completions", {
            "model": model, "messages": [{"role": "user", "content": "Tell me a fortune"}], "max_tokens": 24,
            "temperature": 0})
        assert status == 200, data
        assert json.loads(data)["choices"][0]["message"]["content"]


def test_greedy_generations_agree_with_fp32(server):
    reference = {p: complete(server, "fortune_fp32", p)[1] for p in PROMPTS}
    for dtype in ("bf16", "fp16"):
        agreed = 0
        for prompt in PROMPTS:
            tokens = complete(server, f"fortune_{dtype}", prompt)[1]
            ref = reference[prompt]
            same = next((i for i, (a, b) in enumerate(zip(tokens, ref)) if a != b), min(len(tokens), len(ref)))
            agreed += same
        agreement = agreed / (len(PROMPTS) * MAX_TOKENS)
        assert agreement >= AGREEMENT_FLOOR, (dtype, agreement)


def kv_capacity_logged(server, model):
    match = re.search(rf"model '{model}': .*KV cache (\w+) (\d+) blocks x (\d+) tokens = (\d+) tokens", server.log())
    assert match, server.log()
    return match.group(1), int(match.group(2)), int(match.group(4))


def test_sixteen_bit_caches_hold_twice_the_tokens_of_the_same_budget(server):
    for dtype in DTYPES:
        logged_dtype, blocks, tokens = kv_capacity_logged(server, f"fortune_{dtype}")
        assert logged_dtype == dtype
        assert blocks == (FP32_BLOCKS if dtype == "fp32" else 2 * FP32_BLOCKS)
        assert tokens == blocks * 16
        assert server.metric("infera_llm_kv_cache_capacity_tokens", model=f"fortune_{dtype}") == tokens


@pytest.mark.parametrize("model,value", [("fortune_bad", "fp8"), ("fortune_upper", "FP16"), ("fortune_empty", "")])
def test_bad_value_fails_the_load_naming_the_parameter(server, model, value):
    status, _, data = post(server, f"/v2/repository/models/{model}/load", {}, ADMIN)
    assert status == 400, data
    message = json.loads(data)["error"]
    assert "kv_cache_dtype" in message and f"'{value}'" in message and "fp32, bf16 or fp16" in message, message
    status, _, _ = server.request("GET", f"/v2/models/{model}/ready")
    assert status != 200
    # The server keeps serving the loaded ones.
    server.assert_serving()
    assert complete(server, "fortune_bf16", "Hello")[2] == "length"

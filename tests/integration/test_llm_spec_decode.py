"""Speculative decoding by n-gram prompt lookup (docs/speculative_decoding.md) on the
fortune demo LLM, over real sockets:

- greedy generations with `speculative_model: "[ngram]"` are token for token those of
  the same model without it (repetitive prompts, so drafts are accepted and rejected),
  streamed and not, with logprobs;
- vLLM's spec_decode counters move: drafts verified, some accepted, emitted > accepted;
  the model without speculation has none;
- sampling (temperature 1) with speculation ends with the requested length;
- bad parameter values fail the load with a 400 naming the parameter, and the server
  keeps serving.
"""

import json
import re
import tempfile

import pytest

from infera_server import InferaServer, copy_model, demo_repo
from testutil import greedy_completion

ADMIN = {"Authorization": "Bearer t0ken"}
PROMPTS = [
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "1. apples\n2. pears\n3. plums\n4. apples\n5. pears\n6.",
    '"A fool and his money are soon parted," he said. "A fool and his money',
    "You will be",
]
MAX_TOKENS = 64


def params(**values):
    def edit(text):
        return text + "".join(f'parameters {{ key: "{k}" value: {{ string_value: "{v}" }} }}\n'
                              for k, v in values.items())
    return edit


BAD = {
    "fortune_draft": ({"speculative_model": "/models/draft", "num_speculative_tokens": "4"}, "speculative_model"),
    "fortune_no_k": ({"speculative_model": "[ngram]"}, "num_speculative_tokens"),
    "fortune_zero_k": ({"speculative_model": "[ngram]", "num_speculative_tokens": "0"}, "num_speculative_tokens"),
    "fortune_orphan": ({"ngram_prompt_lookup_max": "3"}, "ngram_prompt_lookup_max"),
    "fortune_min_gt_max": ({"speculative_model": "[ngram]", "num_speculative_tokens": "4",
                            "ngram_prompt_lookup_max": "2", "ngram_prompt_lookup_min": "3"}, "ngram_prompt_lookup_min"),
}


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-spec-")
    copy_model(demo_repo(), "fortune", repo)
    copy_model(demo_repo(), "fortune", repo, params(speculative_model="[ngram]", num_speculative_tokens="4",
                                                    ngram_prompt_lookup_max="3", ngram_prompt_lookup_min="1"),
               new_name="fortune_spec")
    for name, (values, _) in BAD.items():
        copy_model(demo_repo(), "fortune", repo, params(**values), new_name=name)
    s = InferaServer(repo, "--model-control-mode", "explicit", "--admin-token", "t0ken",
                     "--load-model", "fortune", "--load-model", "fortune_spec")
    s.wait_ready()
    yield s
    s.stop()


def post(server, path, body, headers=None):
    return server.request("POST", path, json.dumps(body), dict({"Content-Type": "application/json"}, **(headers or {})))


def complete(server, model, prompt, stream=False, **extra):
    return greedy_completion(server, model, prompt, MAX_TOKENS, stream, **extra)


def spec_counter(server, name, model):
    pattern = rf'^vllm:spec_decode_num_{name}_tokens_total{{model_name="{model}",engine="0"}} (\S+)$'
    match = re.search(pattern, server.metrics_text(), re.M)
    assert match, f"no {name} series for {model}"
    return float(match.group(1))


def test_greedy_output_is_identical_with_and_without_speculation(server):
    before = {n: spec_counter(server, n, "fortune_spec") for n in ("draft", "accepted", "emitted")}
    for prompt in PROMPTS:
        plain = complete(server, "fortune", prompt)
        assert len(plain[1]) == MAX_TOKENS and plain[2] == "length"
        assert complete(server, "fortune_spec", prompt) == plain, prompt
        assert complete(server, "fortune_spec", prompt, stream=True) == plain, prompt
    after = {n: spec_counter(server, n, "fortune_spec") for n in ("draft", "accepted", "emitted")}
    drafts, accepted, emitted = (after[n] - before[n] for n in ("draft", "accepted", "emitted"))
    assert drafts > 0 and 0 < accepted <= drafts, (drafts, accepted)
    assert emitted > accepted, (emitted, accepted)
    # The infera series agree with vLLM's names.
    assert server.metric("infera_llm_spec_decode_num_draft_tokens_total", model="fortune_spec") == after["draft"]
    assert spec_counter(server, "draft", "fortune") == 0


def test_sampling_with_speculation_ends_with_the_requested_length(server):
    for seed in (1, 2, 3):
        text, tokens, finish = complete(server, "fortune_spec", PROMPTS[1], temperature=1.0, seed=seed)
        assert len(tokens) == MAX_TOKENS and finish == "length" and text


@pytest.mark.parametrize("model", sorted(BAD))
def test_bad_value_fails_the_load_naming_the_parameter(server, model):
    status, _, data = post(server, f"/v2/repository/models/{model}/load", {}, ADMIN)
    assert status == 400, data
    message = json.loads(data)["error"]
    assert BAD[model][1] in message, message
    server.assert_serving()
    assert complete(server, "fortune_spec", "Hello")[2] == "length"

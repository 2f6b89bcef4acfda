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
import tempfile

import pytest

from infera_server import copy_model, demo_repo
from testutil import (SPEC_ADMIN, SPEC_DECODE_PROMPTS, config_parameters, greedy_completion, post_json,
                      spec_decode_counters, start_spec_decode_server)

PROMPTS = SPEC_DECODE_PROMPTS
MAX_TOKENS = 64


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
    copy_model(demo_repo(), "fortune", repo,
               config_parameters(speculative_model="[ngram]", num_speculative_tokens="4", ngram_prompt_lookup_max="3",
                                 ngram_prompt_lookup_min="1"),
               new_name="fortune_spec")
    for name, (values, _) in BAD.items():
        copy_model(demo_repo(), "fortune", repo, config_parameters(**values), new_name=name)
    s = start_spec_decode_server(repo, ["fortune", "fortune_spec"])
    yield s
    s.stop()


def complete(server, model, prompt, stream=False, **extra):
    return greedy_completion(server, model, prompt, MAX_TOKENS, stream, **extra)


def test_greedy_output_is_identical_with_and_without_speculation(server):
    before = spec_decode_counters(server, "fortune_spec")
    for prompt in PROMPTS:
        plain = complete(server, "fortune", prompt)
        assert len(plain[1]) == MAX_TOKENS and plain[2] == "length"
        assert complete(server, "fortune_spec", prompt) == plain, prompt
        assert complete(server, "fortune_spec", prompt, stream=True) == plain, prompt
    after = spec_decode_counters(server, "fortune_spec")
    drafts, accepted, emitted = (after[n] - before[n] for n in ("draft", "accepted", "emitted"))
    assert drafts > 0 and 0 < accepted <= drafts, (drafts, accepted)
    assert emitted > accepted, (emitted, accepted)
    # The infera series agree with vLLM's names.
    assert server.metric("infera_llm_spec_decode_num_draft_tokens_total", model="fortune_spec") == after["draft"]
    assert spec_decode_counters(server, "fortune")["draft"] == 0


def test_sampling_with_speculation_ends_with_the_requested_length(server):
    for seed in (1, 2, 3):
        text, tokens, finish = complete(server, "fortune_spec", PROMPTS[1], temperature=1.0, seed=seed)
        assert len(tokens) == MAX_TOKENS and finish == "length" and text


@pytest.mark.parametrize("model", sorted(BAD))
def test_bad_value_fails_the_load_naming_the_parameter(server, model):
    status, _, data = post_json(server, f"/v2/repository/models/{model}/load", {}, SPEC_ADMIN)
    assert status == 400, data
    message = json.loads(data)["error"]
    assert BAD[model][1] in message, message
    server.assert_serving()
    assert complete(server, "fortune_spec", "Hello")[2] == "length"

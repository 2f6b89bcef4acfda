"""What test_llm_architectures.py (safetensors) and test_llm_gguf.py (GGUF) share: a
repository of tiny LLMs served by one server, greedy /v1/completions on token-id prompts,
one at a time and all at once (batched decode), and the check of the served tokens and
logprobs against the numpy reference (tests/reference/llm_reference.py).

A step where the reference's top-2 logits are within `fragile` of each other is where the
engine may rightly choose the other token: the comparison stops after it (a different
token there ends it at once).
"""

import concurrent.futures
import json
import os
import sys

import numpy as np

from infera_server import InferaServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import llm_reference as ref  # noqa: E402

GEN = 8
# Small models, 8 sequences at once, 4-token blocks (many block-table crossings), fp32 KV.
CONFIG = ('backend: "llm"\nmax_batch_size: 0\ninstance_group [ { count: 1 kind: KIND_CPU } ]\n'
          'parameters { key: "max_num_seqs" value: { string_value: "8" } }\n'
          'parameters { key: "block_size" value: { string_value: "4" } }\n'
          'parameters { key: "kv_cache_dtype" value: { string_value: "fp32" } }\n'
          'parameters { key: "kv_cache_memory_bytes" value: { string_value: "4MiB" } }\n')


def write_config(repo, name, extra=""):
    """repo/name/config.pbtxt: CONFIG plus `extra` lines."""
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(f'name: "{name}"\n' + CONFIG + extra)


def serve(repo):
    """A module fixture's body (`yield from serve(repo)`): the server on `repo`, stopped after."""
    server = InferaServer(repo)
    server.wait_ready()
    yield server
    server.stop()


def complete(server, model, prompt):
    """(greedy token ids, their logprobs) of /v1/completions for a token-id prompt."""
    body = dict(model=model, prompt=prompt, max_tokens=GEN, temperature=0, ignore_eos=True, logprobs=1,
                return_tokens_as_token_ids=True)
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    assert status == 200, data
    logprobs = json.loads(data)["choices"][0]["logprobs"]
    return [int(t.split(":", 1)[1]) for t in logprobs["tokens"]], logprobs["token_logprobs"]


def alone_and_batched(server, model, prompts, copies=1):
    """complete() of each prompt one at a time, and of `copies` × the prompts all at once:
    (alone, together), together in the order prompts * copies."""
    alone = [complete(server, model, p) for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(len(prompts) * copies) as pool:
        together = list(pool.map(lambda p: complete(server, model, p), prompts * copies))
    return alone, together


def matching_prefix_ok(expected, margins, actual, fragile=1e-3):
    """True when `actual` equals `expected` up to the first step whose reference margin is
    below `fragile` (where rounding differences may legitimately pick the other token);
    after that point nothing is asserted."""
    for i, token in enumerate(expected):
        if i >= len(actual):
            return False
        if actual[i] != token:
            return margins[i] < fragile
        if margins[i] < fragile:
            return True
    return len(actual) >= len(expected)


def check_against_reference(config, weights, prompt, got, logprobs, label, fragile, tol, expected=None):
    """The served greedy tokens `got` are the reference's up to the first fragile step, and
    each chosen token's logprob (to that step) is the reference's log-softmax within
    `tol`. `expected`: ref.greedy's (tokens, margins) when the caller has them."""
    want, margins = expected or ref.greedy(config, weights, prompt, GEN)
    assert matching_prefix_ok(want, margins, got, fragile), (label, len(prompt), want, got, margins)
    logits = ref.forward(config, weights, prompt + got)
    for i, token in enumerate(want):
        if got[i] != token:
            return
        row = logits[len(prompt) - 1 + i]
        reference = row[token] - row.max() - np.log(np.exp(row - row.max()).sum())
        assert abs(logprobs[i] - reference) <= tol, (label, len(prompt), i, logprobs[i], reference)
        if margins[i] < fragile:
            return

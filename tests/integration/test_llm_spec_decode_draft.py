"""Speculative decoding with a draft model (docs/speculative_decoding.md, "Draft model") on
the fortune demo LLM, over real sockets. The test writes its own repository:

- fortune_self: fortune as its own draft (`speculative_model: "draft"`, a copy in
  <version>/draft/): greedy output identical to plain fortune and every draft accepted
  (vLLM's spec_decode counters);
- fortune_l1: a different draft, fortune's weights truncated to its first layer (written
  by the test): greedy outputs identical to plain fortune, one request at a time and 4
  concurrent, streamed and not; some drafts rejected; sampling ends at its length;
- hostile drafts fail the load with a 400 naming the problem (no such directory, not a
  model, a different vocabulary size, a different tokenizer, a symlink out of the model's
  directory, ".." and absolute paths), and the server keeps serving;
- an unload while a speculating request and a grammar-constrained one (response_format
  json_object on /v1/completions) are mid-generation: both end, the unload completes, the
  server serves on, and the model loads again.
"""

import concurrent.futures
import json
import os
import re
import shutil
import tempfile

import pytest

from infera_server import copy_model, demo_repo, wait_for
from testutil import (SPEC_ADMIN, SPEC_DECODE_PROMPTS, config_parameters, greedy_completion, post_json,
                      spec_decode_counters, start_spec_decode_server, truncate_llama_layers)

PROMPTS = SPEC_DECODE_PROMPTS + ["Once upon a time"]
MAX_TOKENS = 48


def draft_model(repo, name, draft, k=4, build=None):
    """A copy of fortune named `name` whose speculative_model is `draft`; build(version_dir)
    writes the draft."""
    dst = copy_model(demo_repo(), "fortune", repo, config_parameters(speculative_model=draft, num_speculative_tokens=k),
                     new_name=name)
    if build:
        build(os.path.join(dst, "1"))
    return dst


def self_draft(version):
    os.mkdir(os.path.join(version, "draft"))
    for f in os.listdir(version):
        if os.path.isfile(os.path.join(version, f)):
            shutil.copy(os.path.join(version, f), os.path.join(version, "draft", f))


def truncated(layers, **kw):
    return lambda version: truncate_llama_layers(version, os.path.join(version, "draft"), layers, **kw)


def other_tokenizer(version):
    truncate_llama_layers(version, os.path.join(version, "draft"), 1)
    path = os.path.join(version, "draft", "tokenizer.json")
    with open(path) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    a, b = (t for t, i in vocab.items() if i in (300, 301))
    vocab[a], vocab[b] = vocab[b], vocab[a]  # the same strings, two ids swapped
    with open(path, "w") as f:
        json.dump(tok, f)


def not_a_model(version):
    os.mkdir(os.path.join(version, "draft"))
    with open(os.path.join(version, "draft", "README"), "w") as f:
        f.write("no model here\n")


OUTSIDE = tempfile.mkdtemp(prefix="infera-draft-outside-")


def escaping_symlink(version):
    truncate_llama_layers(version, os.path.join(OUTSIDE, "model"), 1)
    os.symlink(os.path.join(OUTSIDE, "model"), os.path.join(version, "draft"))


BAD = {  # model: (speculative_model, writes the draft, what the error names)
    "fortune_nodir": ("nodraft", None, "no such directory"),
    "fortune_notmodel": ("draft", not_a_model, "config.json"),
    "fortune_vocab": ("draft", truncated(1, vocab_size=512), "vocabulary has 512 tokens"),
    "fortune_tokenizer": ("draft", other_tokenizer, "differs from the target's"),
    "fortune_escape": ("draft", escaping_symlink, "outside the model's directory"),
    "fortune_dotdot": ("../fortune/1", None, ".."),
    "fortune_absolute": (os.path.join(demo_repo(), "fortune", "1"), None, "absolute path"),
}


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-spec-draft-")
    copy_model(demo_repo(), "fortune", repo)
    draft_model(repo, "fortune_self", "draft", build=self_draft)
    draft_model(repo, "fortune_l1", "draft", build=truncated(1))
    draft_model(repo, "fortune_unload", "draft", build=truncated(2))
    for name, (draft, build, _) in BAD.items():
        draft_model(repo, name, draft, build=build)
    s = start_spec_decode_server(repo, ["fortune", "fortune_self", "fortune_l1", "fortune_unload"])
    yield s
    s.stop()


def complete(server, model, prompt, stream=False, **extra):
    return greedy_completion(server, model, prompt, MAX_TOKENS, stream, **extra)


def running_sequences(server, model):
    m = re.search(rf'^infera_llm_running_sequences{{[^}}]*model="{model}"[^}}]*}} (\S+)$', server.metrics_text(), re.M)
    return float(m.group(1)) if m else 0.0


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


@pytest.fixture(scope="module")
def plain(server):
    return {p: complete(server, "fortune", p) for p in PROMPTS}


def test_self_draft_accepts_every_greedy_draft(server, plain):
    before = spec_decode_counters(server, "fortune_self")
    for prompt in PROMPTS:
        assert complete(server, "fortune_self", prompt) == plain[prompt], prompt
    d = delta(spec_decode_counters(server, "fortune_self"), before)
    assert d["draft"] > 0, d
    assert d["accepted"] == d["draft"], f"greedy self-draft acceptance below 100%: {d}"
    assert d["emitted"] > d["accepted"], d


def test_truncated_draft_gives_identical_greedy_output(server, plain):
    before = spec_decode_counters(server, "fortune_l1")
    for prompt in PROMPTS:
        assert complete(server, "fortune_l1", prompt) == plain[prompt], prompt
        assert complete(server, "fortune_l1", prompt, stream=True) == plain[prompt], prompt
    d = delta(spec_decode_counters(server, "fortune_l1"), before)
    assert 0 < d["accepted"] < d["draft"], f"want accepted and rejected drafts: {d}"


def test_truncated_draft_concurrent_requests(server, plain):
    jobs = [(p, stream) for p in PROMPTS[:4] for stream in (False, True)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = {pool.submit(complete, server, "fortune_l1", p, stream): (p, stream) for p, stream in jobs}
        for f in concurrent.futures.as_completed(futures):
            prompt, stream = futures[f]
            assert f.result() == plain[prompt], (prompt, stream)


def test_sampling_with_a_draft_model_ends_with_the_requested_length(server):
    before = spec_decode_counters(server, "fortune_l1")
    for seed in (1, 2, 3):
        text, tokens, finish = complete(server, "fortune_l1", PROMPTS[1], temperature=1.0, seed=seed)
        assert len(tokens) == MAX_TOKENS and finish == "length" and text
    d = delta(spec_decode_counters(server, "fortune_l1"), before)
    assert d["draft"] > 0 and d["accepted"] > 0, d


@pytest.mark.parametrize("model", sorted(BAD))
def test_bad_draft_fails_the_load_naming_the_problem(server, model):
    status, _, data = post_json(server, f"/v2/repository/models/{model}/load", {}, SPEC_ADMIN)
    assert status == 400, data
    message = json.loads(data)["error"]
    assert "speculative_model" in message and BAD[model][2] in message, message
    server.assert_serving()
    assert complete(server, "fortune_l1", "Hello")[2] == "length"


class Stream:
    """A streamed /v1/completions read event by event on its own connection."""

    def __init__(self, server, body):
        self.conn = server.connection(timeout=300)
        self.conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=True)),
                          {"Content-Type": "application/json"})
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        self.events = []

    def next_event(self):
        while True:
            line = self.response.readline()
            if not line:
                return None  # the connection ended
            line = line.decode().strip()
            if line.startswith("data: "):
                self.events.append(line[len("data: "):])
                return self.events[-1]

    def finish(self):
        """Reads to the end; the last chunk's finish_reason or error."""
        while self.next_event() not in ("[DONE]", None):
            pass
        self.conn.close()
        chunks = [json.loads(e) for e in self.events if e != "[DONE]"]
        assert chunks, "no chunk at all"
        if "error" in chunks[-1]:
            return "error"
        reasons = [c["choices"][0]["finish_reason"] for c in chunks if c.get("choices")]
        return [r for r in reasons if r][-1]


def test_unload_with_speculating_and_constrained_requests_in_flight(server):
    model = "fortune_unload"
    before = spec_decode_counters(server, model)
    spec = Stream(server, {"model": model, "prompt": PROMPTS[0], "max_tokens": 400, "temperature": 0,
                           "ignore_eos": True})
    constrained = Stream(server, {"model": model, "prompt": "A JSON object:", "max_tokens": 400,
                                  "temperature": 0, "response_format": {"type": "json_object"}})
    assert spec.next_event() and constrained.next_event()
    for _ in range(8):
        spec.next_event()
    assert running_sequences(server, model) == 2, "one ended before the unload: nothing tested"
    assert delta(spec_decode_counters(server, model), before)["draft"] > 0  # it is speculating
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        unload = pool.submit(server.request, "POST", f"/v2/repository/models/{model}/unload", "", SPEC_ADMIN)
        assert spec.finish() in ("length", "error")
        assert constrained.finish() in ("stop", "length", "error")
        status, _, body = unload.result(timeout=300)
        assert status == 200, body
    server.assert_serving()
    assert complete(server, "fortune_l1", "Hello")[2] == "length"
    wait_for(lambda: server.get_json(f"/v1/models/{model}")[0] != 200)
    status, _, data = post_json(server, f"/v2/repository/models/{model}/load", {}, SPEC_ADMIN)
    assert status == 200, data
    assert complete(server, model, PROMPTS[3]) == complete(server, "fortune", PROMPTS[3])

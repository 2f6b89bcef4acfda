"""A GGUF model's memory mapping across unloads and reloads with a generation in flight
(docs/gguf.md, "Lifetime"; issue 31).

A GGUF version's tensors are views into its file's read-only mapping, which lives as long
as the version (the GgufFile is owned by the weights). So a streamed generation that a
version admitted must keep reading valid weights while that version drains, even when the
repository API unloads the model, loads a new version beside it, or reloads the same
version from a replaced file -- and the mapping must be let go with the version, not before.
Each test streams thousands of tokens from a tiny GGUF llama (test_llm_gguf.py's
generators: tests/reference/llm_gguf.py) and, while the stream runs:

  - unloads the model: the stream finishes ("length", every token), new requests are
    refused, the unload waits for the stream; the model loads again and gives the same
    greedy tokens;
  - writes version 2 (other weights) and deletes version 1's directory (its mapped file
    is unlinked), then loads: new requests get version 2's tokens at once, the stream
    finishes on version 1's unlinked file;
  - replaces version 1's file by rename (how downloads replace a file) and reloads the
    same version: the new file's tokens, the stream finishes on the old file;
  - unloads with a 1 s drain timeout: the stream is cut, and must end cleanly
    (finish_reason "abort" or an error event, then [DONE], the HTTP stream well
    terminated), after which the version -- and its mapping -- is gone; the server keeps
    serving and the model loads again.
Every case then checks the server still answers and a load works.
"""

import concurrent.futures
import contextlib
import http.client
import json
import os
import re
import shutil
import sys
import tempfile
import time

import numpy as np
import pytest

from infera_server import InferaServer, demo_repo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import llm_gguf  # noqa: E402
import llm_reference as ref  # noqa: E402

MAX_LEN = 16384
STREAM_TOKENS = 6000  # seconds on this model: still running at the swap (checked)
LONG_STREAM_TOKENS = 12000  # far more than the 1 s drain timeout allows
PROMPT = [7, 300, 42, 5, 6]
GEN = 8
CONFIG = ('name: "llm"\nbackend: "llm"\nmax_batch_size: 0\ninstance_group [ { count: 1 kind: KIND_CPU } ]\n'
          'parameters { key: "max_num_seqs" value: { string_value: "4" } }\n'
          'parameters { key: "kv_cache_dtype" value: { string_value: "fp32" } }\n'
          'parameters { key: "kv_cache_memory_bytes" value: { string_value: "64MiB" } }\n')


def write_version(repo, version, seed, filename="model.gguf"):
    """A tiny Q8_0 llama (weights from `seed`) as repo/llm/<version>/<filename>."""
    config = dict(llm_gguf.gguf_config("llama"), max_position_embeddings=MAX_LEN)
    weights = ref.random_weights(config, seed)
    # As test_llm_gguf.tiny: a token's own embedding must not dominate the tied head.
    if "lm_head.weight" not in weights:
        weights["model.embed_tokens.weight"] = weights["model.embed_tokens.weight"] * np.float32(0.05)
    directory = os.path.join(repo, "llm", str(version))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, filename)
    llm_gguf.write_gguf(path, config, weights, "Q8_0", os.path.join(demo_repo(), "fortune", "1"))
    with open(os.path.join(repo, "llm", "config.pbtxt"), "w") as f:
        f.write(CONFIG)
    return path


def start_server(repo, drain_timeout_secs=600):
    # --exit-timeout-secs is also an unload's drain timeout: by default far above the
    # stream's time, so the stream finishes.
    server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "llm",
                          "--exit-timeout-secs", str(drain_timeout_secs))
    server.wait_ready()
    return server


def post(server, path, body=""):
    """(status, body) of a POST. The client waits up to 300 s: an unload or reload answers
    only when the stream it waits for is done (over 60 s on a loaded 2-core machine)."""
    conn = server.connection(timeout=300)
    try:
        conn.request("POST", path, body if isinstance(body, str) else json.dumps(body),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def greedy(server):
    status, data = post(server, "/v1/completions", dict(model="llm", prompt=PROMPT, max_tokens=GEN, temperature=0,
                                                        ignore_eos=True, logprobs=0, return_tokens_as_token_ids=True))
    assert status == 200, data
    return json.loads(data)["choices"][0]["logprobs"]["tokens"]


class Stream:
    """A streamed greedy completion of `max_tokens` tokens read event by event."""

    def __init__(self, server, max_tokens=STREAM_TOKENS):
        self.conn = server.connection(timeout=300)
        body = {"model": "llm", "prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True,
                "stream": True, "stream_options": {"include_usage": True}}
        self.conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        self.events = []

    def next_event(self):
        while True:
            line = self.response.readline()  # raises IncompleteRead on a cut chunked stream
            assert line, f"the stream ended without [DONE] after {self.events[-3:]}"
            line = line.decode().strip()
            if line.startswith("data: "):
                self.events.append(line[len("data: "):])
                return self.events[-1]

    def finish(self):
        """Reads to [DONE] and the end of the response: (finish_reason or None, usage or
        None, error messages)."""
        while self.next_event() != "[DONE]":
            pass
        assert self.response.read().strip() == b"", "bytes after [DONE]"
        self.conn.close()
        chunks = [json.loads(e) for e in self.events[:-1]]
        errors = [c["error"]["message"] for c in chunks if "error" in c]
        reasons = [c["choices"][0]["finish_reason"] for c in chunks if c.get("choices")]
        usage = [c["usage"] for c in chunks if c.get("usage")]
        return (reasons[-1] if reasons else None), (usage[-1] if usage else None), errors


def running_sequences(server):
    _, _, data = server.request("GET", "/metrics")
    m = re.search(r'^infera_llm_running_sequences\{[^}]*model="llm"[^}]*\} (\S+)$', data.decode(), re.M)
    return float(m.group(1)) if m else 0.0


def wait_until(predicate, server, what, timeout=60):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"{what} never happened:\n{server.log()}"
        time.sleep(0.01)


def ready_versions(server):
    status, data = post(server, "/v2/repository/index")
    assert status == 200, data
    index = json.loads(data)
    return sorted(m.get("version") for m in index if m["name"] == "llm" and m.get("state") == "READY")


def assert_finished_in_full(stream):
    reason, usage, errors = stream.finish()
    assert not errors, errors
    assert (reason, usage["completion_tokens"]) == ("length", STREAM_TOKENS), (reason, usage)


def assert_serves_and_loads(server, tokens):
    """Liveness, a load of the model and its greedy tokens."""
    server.assert_serving()
    status, data = post(server, "/v2/repository/models/llm/load")
    assert status == 200, data
    assert greedy(server) == tokens


@pytest.fixture
def repo():
    path = tempfile.mkdtemp(prefix="infera-gguf-lifecycle-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def stream_in_flight(repo, max_tokens=STREAM_TOKENS, drain_timeout_secs=600):
    """Version 1 (seed 3) of a new model in `repo` served, and a stream of `max_tokens`
    generating on it (its first event read): (server, version 1's greedy tokens, stream).
    The server is stopped after."""
    write_version(repo, 1, seed=3)
    server = start_server(repo, drain_timeout_secs)
    try:
        tokens = greedy(server)
        stream = Stream(server, max_tokens)
        stream.next_event()
        yield server, tokens, stream
    finally:
        server.stop()


def assert_request_waited_for_the_stream(server, stream, request, what):
    """`request` (a repository call's future) waits for the stream: pending, with the
    stream still generating; then the stream finishes in full and the call succeeds."""
    assert not request.done(), f"the {what} finished before the stream"
    assert running_sequences(server) >= 1, f"the stream ended before the {what}: nothing tested"
    assert_finished_in_full(stream)
    status, data = request.result(timeout=300)
    assert status == 200, data


def test_unload_while_streaming_lets_the_stream_finish(repo):
    with stream_in_flight(repo) as (server, tokens, stream), concurrent.futures.ThreadPoolExecutor(1) as pool:
        unload = pool.submit(post, server, "/v2/repository/models/llm/unload")
        wait_until(lambda: server.get_json("/v1/models/llm")[0] != 200, server, "the unload")
        status, data = post(server, "/v1/completions", dict(model="llm", prompt=PROMPT, max_tokens=2))
        assert status in (404, 503), data
        assert_request_waited_for_the_stream(server, stream, unload, "unload")
        assert ready_versions(server) == []
        assert_serves_and_loads(server, tokens)


def test_new_version_while_streaming_and_the_old_file_deleted(repo):
    with stream_in_flight(repo) as (server, old_tokens, stream), concurrent.futures.ThreadPoolExecutor(1) as pool:
        write_version(repo, 2, seed=4)
        shutil.rmtree(os.path.join(repo, "llm", "1"))  # version 1's mapped file is unlinked
        load = pool.submit(post, server, "/v2/repository/models/llm/load")
        wait_until(lambda: ready_versions(server) == ["2"], server, "version 2 serving alone")
        new_tokens = greedy(server)
        assert new_tokens != old_tokens, "version 2 gives version 1's tokens: nothing tested"
        assert_request_waited_for_the_stream(server, stream, load, "load")
        assert "cancelling them" not in server.log()
        assert_serves_and_loads(server, new_tokens)


def test_same_version_reloaded_from_a_replaced_file(repo):
    with stream_in_flight(repo) as (server, old_tokens, stream), concurrent.futures.ThreadPoolExecutor(1) as pool:
        # Written beside the old file and renamed over it: the old mapping keeps the old
        # inode, the reload maps the new one.
        path = os.path.join(repo, "llm", "1", "model.gguf")
        shutil.move(write_version(repo, "staging", seed=4), path + ".part")
        shutil.rmtree(os.path.join(repo, "llm", "staging"))
        os.replace(path + ".part", path)
        load = pool.submit(post, server, "/v2/repository/models/llm/load")
        wait_until(lambda: greedy(server) != old_tokens, server, "the replaced file serving")
        assert_request_waited_for_the_stream(server, stream, load, "reload")
        new_tokens = greedy(server)
        assert new_tokens != old_tokens
        assert "cancelling them" not in server.log()
        assert_serves_and_loads(server, new_tokens)


def test_drain_timeout_cuts_the_stream_cleanly(repo):
    with stream_in_flight(repo, LONG_STREAM_TOKENS, drain_timeout_secs=1) as (server, tokens, stream):
        status, data = post(server, "/v2/repository/models/llm/unload")
        assert status == 200, data
        assert "cancelling them" in server.log(), "the stream ended within the drain timeout: nothing tested"
        try:
            reason, usage, errors = stream.finish()
        except http.client.HTTPException as e:  # a cut response, not a clean end
            raise AssertionError(f"the stream was not terminated cleanly: {e!r}") from e
        # Cut short: finish_reason "abort" with the tokens so far, or an error event naming why.
        assert errors or (reason == "abort" and usage["completion_tokens"] < LONG_STREAM_TOKENS), (
            reason, usage, errors)
        assert all(errors), errors
        assert ready_versions(server) == []
        assert_serves_and_loads(server, tokens)

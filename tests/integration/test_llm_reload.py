"""An LLM's in-flight requests across a reload and an unload (issue 13, finding 3), and the
HTTP I/O thread staying free while a huge prompt is tokenised (finding 8).

A request admitted before a reload or unload must finish on the version that admitted it
— over the OpenAI API (a stream) and KServe infer — with finish_reason "length", not an
abort, while new requests go to the new version. The model is a tiny random Llama (see
llm_testutil.py); generations are long enough (thousands of tokens) to still be running
when the version is swapped, and the test checks that they were.
"""

import concurrent.futures
import json
import re
import select
import socket
import tempfile
import time

import llm_testutil as u
from infera_server import InferaServer

MAX_LEN = 16384
MAX_TOKENS = 6000  # seconds on the tiny model, two at once: still running at the swap
ADMIN = {"Authorization": "Bearer t0ken"}
PARAMETERS = {"max_num_seqs": 8, "kv_cache_memory_bytes": "64MiB"}


def write_repo(repo, drop_from_vocab=None):
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
    n = len(vocab)
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", [("<|endoftext|>", n)])
    if drop_from_vocab:
        # A character outside the vocabulary (no unknown token, no byte fallback) is
        # dropped: the tokenizer has no bytes-per-token bound, so a prompt of it is
        # tokenised, not refused from its size.
        del tokenizer["model"]["vocab"][drop_from_vocab]
        assert not any(drop_from_vocab in m for m in tokenizer["model"]["merges"])
    config = u.tiny_config(vocab_size=n + 1, max_position_embeddings=MAX_LEN, eos_token_id=n)
    u.write_llm_repo(repo, "llm", config, u.random_weights(config, seed=3), tokenizer,
                     {"eos_token": "<|endoftext|>"}, parameters=PARAMETERS)


def override(max_model_len):
    """A load-API config override of the same model with another max_model_len."""
    params = dict(PARAMETERS, max_model_len=max_model_len)
    return json.dumps({"parameters": {"config": json.dumps({
        "name": "llm", "backend": "llm", "max_batch_size": 0,
        "input": [{"name": "text_input", "data_type": "TYPE_STRING", "dims": [1]},
                  {"name": "sampling_parameters", "data_type": "TYPE_STRING", "dims": [1], "optional": True}],
        "output": [{"name": "text_output", "data_type": "TYPE_STRING", "dims": [-1]}],
        "instance_group": [{"count": 4, "kind": "KIND_CPU"}],
        "parameters": {k: {"string_value": str(v)} for k, v in params.items()}})}})


def start_server(repo, *extra):
    # --exit-timeout-secs is also the drain timeout: far above the generations' time.
    server = InferaServer(repo, "--model-control-mode", "explicit", "--load-model", "llm",
                          "--admin-token", "t0ken", "--exit-timeout-secs", "600", *extra)
    server.wait_ready()
    return server


class Stream:
    """A streamed completion read event by event on its own connection."""

    def __init__(self, server, max_tokens=MAX_TOKENS):
        self.conn = server.connection(timeout=300)
        body = {"model": "llm", "prompt": "Hello", "max_tokens": max_tokens, "ignore_eos": True,
                "stream": True, "stream_options": {"include_usage": True}}
        self.conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        self.events = []

    def next_event(self):
        while True:
            line = self.response.readline()
            assert line, "the stream ended without [DONE]"
            line = line.decode().strip()
            if line.startswith("data: "):
                event = line[len("data: "):]
                self.events.append(event)
                return event

    def finish(self):
        """Reads to [DONE]; returns (finish_reason, completion_tokens)."""
        while self.next_event() != "[DONE]":
            pass
        self.conn.close()
        chunks = [json.loads(e) for e in self.events[:-1]]
        assert not any("error" in c for c in chunks), chunks[-3:]
        reasons = [c["choices"][0]["finish_reason"] for c in chunks if c.get("choices")]
        usage = chunks[-1]["usage"]
        return reasons[-1], usage["completion_tokens"]


def kserve_generate(server, max_tokens=MAX_TOKENS // 3):
    payload = {"inputs": [
        {"name": "text_input", "datatype": "BYTES", "shape": [1], "data": ["Hello"]},
        {"name": "sampling_parameters", "datatype": "BYTES", "shape": [1],
         "data": [json.dumps({"max_tokens": max_tokens, "ignore_eos": True})]}]}
    status, _, data = server.request("POST", "/v2/models/llm/infer", json.dumps(payload))
    return status, data


def running_sequences(server):
    _, _, data = server.request("GET", "/metrics")
    m = re.search(r'^infera_llm_running_sequences\{[^}]*model="llm"[^}]*\} (\S+)$', data.decode(), re.M)
    return float(m.group(1)) if m else 0.0


def wait_running(server, count, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if running_sequences(server) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"{count} sequences never ran:\n{server.log()}")


def max_model_len(server):
    status, model = server.get_json("/v1/models/llm")
    assert status == 200, model
    return model["max_model_len"]


def test_reload_lets_in_flight_requests_finish_on_the_old_version():
    with tempfile.TemporaryDirectory(prefix="infera-llm-reload-") as repo:
        write_repo(repo)
        server = start_server(repo)
        try:
            assert max_model_len(server) == MAX_LEN
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                stream = Stream(server)
                stream.next_event()  # generating on version 1 as first loaded
                # Shorter than the stream: the scheduler's drain waits for it, not for the stream.
                kserve = pool.submit(kserve_generate, server)
                wait_running(server, 2)  # the KServe request is generating too
                load = pool.submit(server.request, "POST", "/v2/repository/models/llm/load", override(16000), ADMIN)
                # New requests go to the new version while the old one drains.
                deadline = time.time() + 60
                while max_model_len(server) != 16000:
                    assert time.time() < deadline, server.log()
                    time.sleep(0.01)
                assert not load.done(), "the reload finished before the in-flight requests"
                # Both long requests still run on the old version (it has not retired, so
                # scraping its series is safe).
                assert running_sequences(server) >= 2, "they ended before the swap: nothing tested"
                status, _, data = server.request("POST", "/v1/completions", json.dumps(
                    {"model": "llm", "prompt": "Hi", "max_tokens": 4, "ignore_eos": True}))
                assert status == 200, data
                assert json.loads(data)["usage"]["completion_tokens"] == 4
                assert stream.finish() == ("length", MAX_TOKENS)
                status, data = kserve.result(timeout=300)
                assert status == 200, data
                text = json.loads(data)["outputs"][0]["data"][0]
                assert text.startswith("Hello") and len(text) > len("Hello")
                status, _, body = load.result(timeout=300)
                assert status == 200, body
            assert max_model_len(server) == 16000
            assert "cancelling them" not in server.log()
        finally:
            server.stop()


def test_unload_lets_in_flight_requests_finish():
    with tempfile.TemporaryDirectory(prefix="infera-llm-unload-") as repo:
        write_repo(repo)
        server = start_server(repo)
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                stream = Stream(server)
                stream.next_event()
                kserve = pool.submit(kserve_generate, server)
                wait_running(server, 2)
                unload = pool.submit(server.request, "POST", "/v2/repository/models/llm/unload", "", ADMIN)
                deadline = time.time() + 60
                while server.get_json("/v1/models/llm")[0] == 200:
                    assert time.time() < deadline, server.log()
                    time.sleep(0.01)
                assert not unload.done(), "the unload finished before the in-flight requests"
                assert running_sequences(server) >= 2, "they ended before the unload: nothing tested"
                status, _, data = server.request("POST", "/v1/completions", json.dumps(
                    {"model": "llm", "prompt": "Hi", "max_tokens": 4}))
                assert status in (404, 503), data  # not served any more
                assert stream.finish() == ("length", MAX_TOKENS)
                status, data = kserve.result(timeout=300)
                assert status == 200, data
                status, _, body = unload.result(timeout=300)
                assert status == 200, body
            server.assert_serving()
        finally:
            server.stop()


def read_http_response(sock):
    """(status line, JSON body) of one Content-Length response."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    return head.split(b"\r\n")[0].decode(), json.loads(body)


def test_health_answers_while_a_huge_prompt_is_tokenised():
    with tempfile.TemporaryDirectory(prefix="infera-llm-huge-") as repo:
        # A prompt far past the context whose size proves it is refused at once (issue 26,
        # test_prompt_limits.py); one that must be tokenised needs a tokenizer that can
        # drop text: "~" is not in this one's vocabulary.
        write_repo(repo, drop_from_vocab="~")
        # One I/O thread: a prompt tokenised on it would hold every other connection.
        server = start_server(repo, "--http-thread-count", "1")
        try:
            prompt = "~" * (30 << 20)  # 30 MB that tokenise to nothing: an empty prompt
            body = json.dumps({"model": "llm", "prompt": prompt, "max_tokens": 1}).encode()
            head = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
            with socket.create_connection(("127.0.0.1", server.port), timeout=300) as huge:
                start = time.monotonic()
                huge.sendall(head + body)
                # Liveness, again and again until the huge prompt is answered: each must be
                # answered while the prompt is still being processed (not queued behind it
                # on the I/O thread, which the old code tokenised it on).
                latencies = []
                while not select.select([huge], [], [], 0.02)[0]:
                    assert time.monotonic() - start < 300, "the huge prompt was never answered"
                    sent = time.monotonic()
                    status, _, _ = server.request("GET", "/v2/health/live")
                    assert status == 200
                    latencies.append(time.monotonic() - sent)
                status_line, error = read_http_response(huge)
                prompt_seconds = time.monotonic() - start
            assert status_line.startswith("HTTP/1.1 400"), (status_line, error)
            message = error["error"]["message"]
            assert "the prompt is empty" in message, message
            assert latencies, "the huge prompt was answered at once: nothing was tested"
            # Relative, not absolute: liveness takes a small part of the prompt's time.
            assert max(latencies) < prompt_seconds / 4, (max(latencies), prompt_seconds)
            server.assert_serving()
        finally:
            server.stop()

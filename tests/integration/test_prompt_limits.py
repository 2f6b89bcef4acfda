"""Prompts far past the context are refused from their size, before they are queued or
tokenised (issue 26, finding 5), on every path that tokenises client text: completions
(a string, a batch), chat, KServe `text_input` on an LLM; the `tokenize` backend
truncates a huge text from its start.

Before the fix a 40 MB prompt cost the model's one prompt worker seconds of
tokenisation before its 400, and every prompt queued behind it waited. The assertions
are on outcomes and order, never on timings; the timings are printed (pytest -s).
"""

import concurrent.futures
import json
import socket
import tempfile
import time

import pytest

import llm_testutil as u
from infera_server import InferaServer, write_model
from testutil import bert_tokenizer_json

MAX_LEN = 512
HUGE = 40 << 20  # bytes of prompt: inside the default --http-max-input-size (64 MiB)
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
BERT_VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world"])}


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-prompt-limits-")
    vocab, merges = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
    n = len(vocab)
    added = [("<|endoftext|>", n), ("<|im_start|>", n + 1), ("<|im_end|>", n + 2)]
    tokenizer = u.byte_level_tokenizer_json(vocab, merges, "gpt2", added)
    config = u.tiny_config(vocab_size=n + 3, max_position_embeddings=MAX_LEN, eos_token_id=n)
    weights = u.random_weights(config, seed=9)
    tok_config = {"eos_token": "<|endoftext|>", "chat_template": CHATML}
    u.write_llm_repo(repo, "llm", config, weights, tokenizer, tok_config,
                     parameters={"kv_cache_memory_bytes": "8MiB"})
    # One prompt may wait for the prompt worker: a huge prompt held there would make
    # every other request to the model a 429 while it is tokenised.
    u.write_llm_repo(repo, "llm_q1", config, weights, tokenizer, tok_config,
                     parameters={"kv_cache_memory_bytes": "8MiB", "max_waiting_requests": 1}, kserve=False)
    write_model(repo, "bert_tokenize", """
name: "bert_tokenize"
backend: "tokenize"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 8 ] } ]
parameters { key: "max_length" value { string_value: "8" } }
""", files={"tokenizer.json": json.dumps(bert_tokenizer_json(BERT_VOCAB, ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]))})
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def post(server, path, body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, _, raw = server.request("POST", path, data, {"Content-Type": "application/json"})
    return status, json.loads(raw)


def assert_refused_naming_the_context(status, answer):
    assert status == 400, answer
    message = answer["error"]["message"] if "error" in answer else answer["error"]
    assert f"maximum context length is {MAX_LEN} tokens (max_model_len)" in message, message
    return message


def small_completion(server, model="llm"):
    status, answer = post(server, "/v1/completions", {"model": model, "prompt": "Once upon a time", "max_tokens": 5,
                                                      "temperature": 0, "ignore_eos": True})
    assert status == 200, answer
    assert answer["usage"]["completion_tokens"] == 5
    return answer


@pytest.mark.parametrize("path,body", [
    ("/v1/completions", {"model": "llm", "prompt": "x" * HUGE, "max_tokens": 5}),
    ("/v1/completions", {"model": "llm", "prompt": ["hello", "y" * HUGE], "max_tokens": 5}),
    ("/v1/completions", {"model": "llm", "prompt": "hello " * (HUGE // 6), "n": 4}),
    ("/v1/chat/completions", {"model": "llm", "messages": [{"role": "user", "content": "z" * HUGE}]}),
    ("/v1/chat/completions", {"model": "llm", "messages": [{"role": "system", "content": "be brief"},
                                                           {"role": "user", "content": " hi " * (HUGE // 4)}],
                              "max_tokens": 8}),
], ids=["completion", "batch", "n4", "chat", "chat_words"])
def test_a_huge_prompt_is_refused_from_its_size(server, path, body):
    status, answer = post(server, path, body)
    message = assert_refused_naming_the_context(status, answer)
    assert "at least" in message and "bytes in one token" in message, message
    small_completion(server)


def test_a_huge_kserve_text_input_is_refused_from_its_size(server):
    body = {"inputs": [{"name": "text_input", "datatype": "BYTES", "shape": [1], "data": ["x" * HUGE]}]}
    status, _, raw = server.infer("llm", body)
    answer = json.loads(raw)
    assert status == 400, answer
    assert f"maximum context length is {MAX_LEN} tokens (max_model_len)" in answer["error"], answer
    small_completion(server)


def send_raw(server, path, data):
    """Sends one POST and returns its socket, the answer unread."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=300)
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    sock.sendall(head + data)
    return sock


def read_answer(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    sock.close()
    return int(head.split(b" ")[1]), json.loads(body)


def test_huge_prompts_hold_no_prompt_worker_and_a_small_completion_keeps_going(server):
    # The model's prompt worker queues one prompt at most (max_waiting_requests 1). Four
    # huge prompts at once used to be: one tokenised for seconds, one queued, two refused
    # 429 ("prompts waiting to be tokenised"), and a completion sent meanwhile a 429 too.
    # Now each is refused from its size, 400, none reaches the worker, and completions
    # go on being served among them.
    small_completion(server, "llm_q1")  # warm
    alone = []
    for _ in range(3):
        start = time.monotonic()
        small_completion(server, "llm_q1")
        alone.append(time.monotonic() - start)
    big = json.dumps({"model": "llm_q1", "prompt": "x" * HUGE, "max_tokens": 5}).encode()
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        socks = list(pool.map(lambda _: send_raw(server, "/v1/completions", big), range(4)))
    sent = time.monotonic() - start
    during = []
    for _ in range(3):  # while the four answers are unread
        t = time.monotonic()
        small_completion(server, "llm_q1")
        during.append(time.monotonic() - t)
    answers = [read_answer(s) for s in socks]
    refused = time.monotonic() - start
    for status, answer in answers:
        assert_refused_naming_the_context(status, answer)
    print(f"\nsmall completion alone: {[round(x, 3) for x in alone]} s; "
          f"with four {HUGE >> 20} MiB prompts in flight: {[round(x, 3) for x in during]} s; "
          f"the four sent in {sent:.2f} s, all four refused {refused:.2f} s after the first byte")


def test_a_huge_text_to_the_tokenize_backend_gives_its_first_ids(server):
    # 40 MB of words: the ids of its start, [CLS] hello world ... [SEP], cut at max_length.
    text = "hello world " * (HUGE // 12)
    body = {"inputs": [{"name": "TEXT", "datatype": "BYTES", "shape": [1], "data": [text]}]}
    start = time.monotonic()
    status, _, raw = server.infer("bert_tokenize", body)
    seconds = time.monotonic() - start
    assert status == 200, raw
    ids = json.loads(raw)["outputs"][0]["data"]
    assert ids == [2, 4, 5, 4, 5, 4, 5, 3], ids
    print(f"\ntokenize backend, {len(text) >> 20} MiB of words truncated to 8 ids: {seconds:.2f} s")

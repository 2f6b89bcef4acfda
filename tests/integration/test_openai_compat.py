"""OpenAI / vLLM API details clients rely on (issue 14, items 8, 9, 10, 12, 13), black box:

  - batched prompts and n > 1 for completions and chat: one choice per prompt x n in
    prompt-major order, usage summed, several choices streamed with their index and one
    [DONE]; seeded choices follow vLLM's seed + index; limits answer 400 naming them;
  - logprobs with top_logprobs (completions' dicts and text_offset, chat's content[]
    with bytes), streamed per chunk, vLLM's return_tokens_as_token_ids, and the values
    checked against the PyTorch reference's log-softmax of the raw logits;
  - response ids `cmpl-`/`chatcmpl-` + 32 random hex digits;
  - a model still loading: listed by /v1/models with status "loading", completions 503
    ServiceUnavailableError with Retry-After (the load is held on a FIFO, so the test
    waits on events, not on time);
  - /v1/embeddings: 404 naming the missing model type, the usual 404 for an unknown model;
  - the official `openai` npm client (tests/clients, installed by npm_install.sh) for all
    of the above. Missing node or the package is a failure, never a skip.
"""

import concurrent.futures
import json
import math
import os
import re
import subprocess
import tempfile
import threading
import time

import pytest
import torch

import llm_testutil as u
from infera_server import ROOT, InferaServer

CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")
CLIENTS = os.path.join(ROOT, "tests", "clients")

VOCAB, MERGES = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
N = len(VOCAB)
TOKENIZER = u.byte_level_tokenizer_json(VOCAB, MERGES, "gpt2",
                                        [("<|endoftext|>", N), ("<|im_start|>", N + 1), ("<|im_end|>", N + 2)])
CONFIG = u.tiny_config(vocab_size=N + 3, max_position_embeddings=1024, eos_token_id=N)
WEIGHTS = u.random_weights(CONFIG, seed=21)
REF_WEIGHTS = u.loaded_weights(WEIGHTS, "float32")
TOK_CONFIG = {"eos_token": "<|endoftext|>", "chat_template": CHATML}
PARAMETERS = {"max_num_seqs": 16, "kv_cache_memory_bytes": "16MiB"}


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-openai-compat-")
    u.write_llm_repo(repo, "tiny", CONFIG, WEIGHTS, TOKENIZER, TOK_CONFIG, parameters=PARAMETERS, kserve=False)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def post(server, path, body):
    status, headers, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, headers, json.loads(data) if data and not data.startswith(b"data:") else data


def complete(server, **fields):
    body = {"model": "tiny", "max_tokens": 4, "temperature": 0, "ignore_eos": True} | fields
    status, _, data = post(server, "/v1/completions", body)
    assert status == 200, data
    return data


def sse(data):
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events.count("[DONE]") == 1 and events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


# --- item 8: batched prompts and n ------------------------------------------------------

def test_batched_prompts_with_n_are_prompt_major_and_match_single_requests(server):
    prompts = ["Hello there", [5, 6, 7], "The quick"]
    batch = complete(server, prompt=prompts, n=2)
    assert [c["index"] for c in batch["choices"]] == list(range(6))
    singles = [complete(server, prompt=p) for p in prompts]
    for i, single in enumerate(singles):
        for k in range(2):  # greedy: every choice of a prompt is that prompt's completion
            assert batch["choices"][2 * i + k]["text"] == single["choices"][0]["text"]
            assert batch["choices"][2 * i + k]["finish_reason"] == "length"
    usage = batch["usage"]
    assert usage["prompt_tokens"] == sum(s["usage"]["prompt_tokens"] for s in singles)  # once per prompt
    assert usage["completion_tokens"] == 6 * 4
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_seeded_n_choices_follow_vllm_seed_plus_index(server):
    body = dict(prompt="Hello", n=3, temperature=1.0, seed=7, max_tokens=8)
    first, again = complete(server, **body), complete(server, **body)
    texts = [c["text"] for c in first["choices"]]
    assert texts == [c["text"] for c in again["choices"]]  # repeatable
    for k in range(3):  # choice k is the single request seeded seed + k
        single = complete(server, prompt="Hello", temperature=1.0, seed=7 + k, max_tokens=8)
        assert single["choices"][0]["text"] == texts[k]
    assert len(set(texts)) > 1, texts  # the seeds differ, so do the samples (8 tokens of 300)


def test_chat_with_n(server):
    status, _, data = post(server, "/v1/chat/completions", {
        "model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "n": 3, "max_tokens": 3,
        "temperature": 0, "ignore_eos": True})
    assert status == 200, data
    assert [c["index"] for c in data["choices"]] == [0, 1, 2]
    assert len({c["message"]["content"] for c in data["choices"]}) == 1
    assert all(c["message"]["role"] == "assistant" for c in data["choices"])
    assert data["usage"]["completion_tokens"] == 9


def test_streamed_choices_carry_their_index_and_one_done(server):
    body = {"model": "tiny", "prompt": ["Hello", "The cat"], "n": 2, "max_tokens": 5, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}, "echo": True}
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body))
    assert status == 200, data
    chunks = sse(data)
    texts, finishes = ["", "", "", ""], [None] * 4
    for chunk in chunks[:-1]:
        assert len(chunk["choices"]) == 1 and chunk["id"] == chunks[0]["id"]
        c = chunk["choices"][0]
        texts[c["index"]] += c["text"]
        if c["finish_reason"]:
            assert finishes[c["index"]] is None
            finishes[c["index"]] = c["finish_reason"]
    assert finishes == ["length"] * 4
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 20
    whole = complete(server, **{k: v for k, v in body.items() if k not in ("stream", "stream_options")})
    assert texts == [c["text"] for c in whole["choices"]]
    assert texts[0].startswith("Hello") and texts[2].startswith("The cat")  # echo per choice


def test_chat_stream_with_n(server):
    body = {"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "n": 2, "max_tokens": 4,
            "temperature": 0, "ignore_eos": True, "stream": True}
    status, _, data = server.request("POST", "/v1/chat/completions", json.dumps(body))
    assert status == 200, data
    roles = [0, 0]
    texts = ["", ""]
    for chunk in sse(data):
        c = chunk["choices"][0]
        roles[c["index"]] += c["delta"].get("role") == "assistant"
        texts[c["index"]] += c["delta"]["content"]
    assert roles == [1, 1] and texts[0] == texts[1] and texts[0]


BAD_FANOUT = [
    ({"n": 17}, "'n' must be in [1, 16]"),
    ({"n": 0}, "'n' must be in [1, 16]"),
    ({"prompt": ["x"] * 65}, "at most 64 prompts"),
    ({"prompt": ["x"] * 64, "n": 3}, "at most 128 choices"),
    ({"n": 2, "best_of": 3}, "'best_of' must equal n"),
    ({"prompt": ["x", 5]}, "'prompt'"),
    ({"prompt": [[1, 2], []]}, "'prompt'"),
    ({"prompt": [[1, "a"]]}, "'prompt'"),
    ({"prompt": []}, "'prompt'"),
    ({"prompt": ["x", [1, 99999]]}, "vocabulary"),  # refused at admission: the sibling is cancelled
]


@pytest.mark.parametrize("fields,needle", BAD_FANOUT)
def test_fanout_limits_are_400_naming_them(server, fields, needle):
    status, _, data = post(server, "/v1/completions", {"model": "tiny", "prompt": "x", "max_tokens": 2} | fields)
    assert status == 400, data
    assert needle in data["error"]["message"], data
    assert data["error"]["type"] == "BadRequestError"
    complete(server, prompt="still serving")


def test_a_refused_choice_fails_a_stream_before_it_starts(server):
    body = {"model": "tiny", "prompt": [[1, 2], [1, 99999]], "n": 2, "max_tokens": 500, "ignore_eos": True,
            "stream": True}
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body))
    assert status == 400 and "vocabulary" in json.loads(data)["error"]["message"], data
    complete(server, prompt="still serving")


def test_max_fanout_is_served(server):
    data = complete(server, prompt=["ab"] * 64, n=2, max_tokens=1)
    assert [c["index"] for c in data["choices"]] == list(range(128))
    assert data["usage"]["completion_tokens"] == 128


# --- item 9: logprobs ---------------------------------------------------------------------

def token_id(text):
    assert text.startswith("token_id:"), text
    return int(text[len("token_id:"):])


def test_completion_top_logprobs_match_the_reference(server):
    prompt = [3, 17, 42, 8, 99, 120]
    k = 5
    data = complete(server, prompt=prompt, max_tokens=6, logprobs=k, return_tokens_as_token_ids=True)
    lp = data["choices"][0]["logprobs"]
    ids = [token_id(t) for t in lp["tokens"]]
    ref = torch.log_softmax(u.reference_logits(CONFIG, REF_WEIGHTS, prompt + ids), dim=-1)
    for i, tid in enumerate(ids):
        row = ref[len(prompt) - 1 + i]
        assert abs(lp["token_logprobs"][i] - row[tid].item()) < 1e-3, (i, lp["token_logprobs"][i], row[tid])
        top = {token_id(t): v for t, v in lp["top_logprobs"][i].items()}
        assert len(top) == k or (len(top) == k + 1 and ids[i] in top), top  # + the sampled token
        assert abs(top[ids[i]] - lp["token_logprobs"][i]) < 1e-6
        values, want = torch.topk(row, k + 1)
        for j in range(k):
            if j + 1 < k + 1 and values[j] - values[j + 1] < 1e-3:
                continue  # a near tie: either order is right
            assert int(want[j]) in top, (i, j, top, want)
            assert abs(top[int(want[j])] - values[j].item()) < 1e-3
        assert ids[i] == max(top, key=top.get) or max(top.values()) - top.get(ids[i], -1e9) < 1e-3  # greedy


def check_offsets(prompt, text, lp):
    assert text.startswith(prompt)
    offsets = lp["text_offset"]
    assert offsets[0] == len(prompt), (prompt, offsets)
    for i in range(1, len(offsets)):
        assert offsets[i] - offsets[i - 1] == len(lp["tokens"][i - 1])
    assert "".join(lp["tokens"]) == text[len(prompt):]
    assert all(1 <= len(t) <= 2 for t in lp["top_logprobs"])


@pytest.mark.parametrize("k", [0, 1])
def test_completion_top_logprobs_always_hold_the_sampled_token(server, k):
    """OpenAI: "up to logprobs+1 elements" — the sampled token is listed even when it is
    not among the k most likely (sampling at a high temperature makes that common)."""
    data = complete(server, prompt="Hello", max_tokens=16, temperature=5.0, seed=3, logprobs=k,
                    return_tokens_as_token_ids=True)
    lp = data["choices"][0]["logprobs"]
    outside = 0
    for i, tok in enumerate(lp["tokens"]):
        top = lp["top_logprobs"][i]
        assert tok in top and abs(top[tok] - lp["token_logprobs"][i]) < 1e-6, (tok, top)
        assert len(top) <= k + 1
        outside += len(top) == k + 1
    assert k == 0 or outside > 0  # some sampled tokens were not the most likely


def test_text_offsets_and_echo(server):
    """Offsets start after the echoed prompt, also when a choice's first output arrives
    before its admission (more likely with many choices: repeated a few times)."""
    prompts = ["Hello", "Hi there"]
    body = {"model": "tiny", "prompt": prompts, "n": 4, "max_tokens": 5, "temperature": 0, "ignore_eos": True,
            "logprobs": 2, "echo": True}
    for _ in range(3):
        data = complete(server, **body)
        for c in data["choices"]:
            check_offsets(prompts[c["index"] // 4], c["text"], c["logprobs"])
        status, _, stream = server.request("POST", "/v1/completions", json.dumps(body | {"stream": True}))
        assert status == 200
        texts = [""] * 8
        merged = [{"tokens": [], "text_offset": [], "top_logprobs": []} for _ in range(8)]
        for chunk in sse(stream):
            c = chunk["choices"][0]
            texts[c["index"]] += c["text"]
            if c["logprobs"]:
                for key in merged[c["index"]]:
                    merged[c["index"]][key] += c["logprobs"][key]
        for i in range(8):
            check_offsets(prompts[i // 4], texts[i], merged[i])


def assert_token_bytes(entry):
    """`bytes` are the token's raw bytes; `token` is their text (U+FFFD for a partial
    UTF-8 sequence)."""
    try:
        assert bytes(entry["bytes"]).decode("utf-8") == entry["token"], entry
    except UnicodeDecodeError:
        assert "\ufffd" in entry["token"], entry


def test_chat_top_logprobs_with_bytes(server):
    status, _, data = post(server, "/v1/chat/completions", {
        "model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0,
        "ignore_eos": True, "logprobs": True, "top_logprobs": 3})
    assert status == 200, data
    content = data["choices"][0]["logprobs"]["content"]
    assert len(content) == 4
    for entry in content:
        assert_token_bytes(entry)
        top = entry["top_logprobs"]
        assert len(top) == 3
        assert [t["logprob"] for t in top] == sorted((t["logprob"] for t in top), reverse=True)
        assert top[0]["logprob"] >= entry["logprob"] - 1e-6
        for t in top:
            assert_token_bytes(t)
        assert sum(math.exp(t["logprob"]) for t in top) <= 1.0 + 1e-4
    assert "".join(e["token"] for e in content) == data["choices"][0]["message"]["content"]


def test_streamed_logprobs_equal_the_whole_answer(server):
    body = {"model": "tiny", "prompt": "Hello", "max_tokens": 6, "temperature": 0, "ignore_eos": True,
            "logprobs": 2}
    whole = complete(server, **body)["choices"][0]["logprobs"]
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body | {"stream": True}))
    assert status == 200
    merged = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    for chunk in sse(data):
        lp = chunk["choices"][0]["logprobs"]
        if lp:
            for key in merged:
                merged[key] += lp[key]
    assert merged == whole
    # Chat streams carry logprobs.content per chunk too.
    chat = {"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "temperature": 0,
            "ignore_eos": True, "logprobs": True, "top_logprobs": 1, "return_tokens_as_token_ids": True}
    status, _, data = server.request("POST", "/v1/chat/completions", json.dumps(chat | {"stream": True}))
    entries = [e for c in sse(data) if c["choices"][0]["logprobs"] for e in c["choices"][0]["logprobs"]["content"]]
    assert len(entries) == 3 and all(e["token"].startswith("token_id:") for e in entries)
    assert all(len(e["top_logprobs"]) == 1 for e in entries)


@pytest.mark.parametrize("body,needle", [
    ({"logprobs": 21}, "'logprobs' must be an integer in [0, 20]"),
    ({"logprobs": "3"}, "'logprobs'"),
    ({"return_tokens_as_token_ids": 1}, "return_tokens_as_token_ids"),
])
def test_bad_logprobs_fields(server, body, needle):
    status, _, data = post(server, "/v1/completions", {"model": "tiny", "prompt": "x"} | body)
    assert status == 400 and needle in data["error"]["message"], data


@pytest.mark.parametrize("body,needle", [
    ({"logprobs": True, "top_logprobs": 21}, "'top_logprobs' must be an integer in [0, 20]"),
    ({"top_logprobs": 2}, "needs 'logprobs': true"),
    ({"logprobs": 1}, "'logprobs' must be a boolean"),
])
def test_bad_chat_logprobs_fields(server, body, needle):
    status, _, data = post(server, "/v1/chat/completions",
                           {"model": "tiny", "messages": [{"role": "user", "content": "x"}]} | body)
    assert status == 400 and needle in data["error"]["message"], data


# --- item 10: response ids ------------------------------------------------------------------

def test_response_ids_are_random(server):
    ids = [complete(server, prompt="a", max_tokens=1)["id"] for _ in range(3)]
    assert all(re.fullmatch(r"cmpl-[0-9a-f]{32}", i) for i in ids), ids
    assert len(set(ids)) == 3
    status, _, chat = post(server, "/v1/chat/completions", {"model": "tiny", "max_tokens": 1,
                                                             "messages": [{"role": "user", "content": "x"}]})
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{32}", chat["id"]), chat["id"]


# --- item 13: embeddings ----------------------------------------------------------------------

@pytest.mark.parametrize("body,status,needle,kind", [
    ({"model": "tiny", "input": "x"}, 404, "'tiny' is not an embedding model", "NotFoundError"),
    ({"model": "tiny", "input": [[1, 2], [3]]}, 404, "/v1/embeddings needs", "NotFoundError"),
    ({"model": "nope", "input": "x"}, 404, "The model `nope` does not exist.", "NotFoundError"),
    ({"model": "tiny"}, 400, "'input'", "BadRequestError"),
    ({"input": "x"}, 400, "'model'", "BadRequestError"),
    ({"model": "tiny", "input": [1, "a"]}, 400, "'input'", "BadRequestError"),
    ({"model": "tiny", "input": "x", "encoding_format": "hex"}, 400, "'encoding_format'", "BadRequestError"),
])
def test_embeddings_errors(server, body, status, needle, kind):
    got, _, data = post(server, "/v1/embeddings", body)
    assert got == status and needle in data["error"]["message"] and data["error"]["type"] == kind, data
    assert server.request("GET", "/v1/embeddings")[0] == 405
    assert server.request("POST", "/v1/embeddings", "{nope")[0] == 400


def test_models_list_status_ready(server):
    status, _, data = server.request("GET", "/v1/models")
    models = json.loads(data)["data"]
    assert [(m["id"], m["status"]) for m in models] == [("tiny", "ready")]
    assert json.loads(server.request("GET", "/v1/models/tiny")[2])["status"] == "ready"


# --- item 12: a loading model -------------------------------------------------------------------

class HeldLoad:
    """A repository whose LLM's tokenizer.json is a FIFO: its load blocks reading it
    until release() writes the file, so the model stays LOADING exactly that long."""

    def __init__(self):
        self.repo = tempfile.mkdtemp(prefix="infera-openai-loading-")
        u.write_llm_repo(self.repo, "slow", CONFIG, WEIGHTS, TOKENIZER, TOK_CONFIG, parameters=PARAMETERS,
                         kserve=False)
        self.fifo = os.path.join(self.repo, "slow", "1", "tokenizer.json")
        os.remove(self.fifo)
        os.mkfifo(self.fifo)
        self.server = InferaServer(self.repo, "--model-control-mode", "explicit")
        self.server.wait_ready()
        self.load_result = None
        self.loader = threading.Thread(target=self._load)
        self.loader.start()
        deadline = time.time() + 60
        while self.status() != "loading":  # the load has begun
            assert time.time() < deadline, self.server.log()[-3000:]
            time.sleep(0.02)

    def _load(self):
        self.load_result = self.server.request("POST", "/v2/repository/models/slow/load", "")

    def status(self):
        models = json.loads(self.server.request("GET", "/v1/models")[2])["data"]
        return next((m["status"] for m in models if m["id"] == "slow"), None)

    def release(self):
        with open(self.fifo, "w") as f:  # opens once the loader reads
            json.dump(TOKENIZER, f, ensure_ascii=False)
        self.loader.join(120)
        assert self.load_result and self.load_result[0] == 200, self.load_result


@pytest.fixture
def held_load():
    held = HeldLoad()
    try:
        yield held
    finally:
        if held.loader.is_alive():
            held.release()
        held.server.stop()


def test_a_loading_model_is_listed_and_answers_retryable_503(held_load):
    server = held_load.server
    entry = json.loads(server.request("GET", "/v1/models/slow")[2])
    assert entry["id"] == "slow" and entry["status"] == "loading" and entry["object"] == "model"
    for path, body in [("/v1/completions", {"model": "slow", "prompt": "x"}),
                       ("/v1/chat/completions", {"model": "slow", "messages": [{"role": "user", "content": "x"}]}),
                       ("/v1/embeddings", {"model": "slow", "input": "x"})]:
        status, headers, data = server.request("POST", path, json.dumps(body))
        error = json.loads(data)["error"]
        assert status == 503 and error["type"] == "ServiceUnavailableError", (path, status, data)
        assert "LOADING" in error["message"] and int(headers["Retry-After"]) >= 1
    assert held_load.status() == "loading"  # still held: the answers came during the load
    held_load.release()
    assert held_load.status() == "ready"
    status, _, data = server.request("POST", "/v1/completions",
                                     json.dumps({"model": "slow", "prompt": "x", "max_tokens": 2}))
    assert status == 200, data


# --- the official openai npm client -----------------------------------------------------------

def run_node(server, scenario, model):
    subprocess.run([os.path.join(CLIENTS, "npm_install.sh")], check=True, timeout=600)
    result = subprocess.run(["node", os.path.join(CLIENTS, "openai_client.mjs"),
                             f"http://127.0.0.1:{server.port}/v1", scenario, model],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_openai_node_client(server):
    report = run_node(server, "serving", "tiny")
    assert report["batch"]["usage"]["completion_tokens"] == 12
    assert report["stream"]["usage"]["completion_tokens"] == 8
    assert report["embeddings_error"]["status"] == 404
    assert len(report["chat_logprobs"]) == 3
    # What the client parsed is what the server computes.
    again = complete(server, prompt="Hello", max_tokens=4, logprobs=3)["choices"][0]["logprobs"]
    assert report["completion_logprobs"] == again


def test_openai_node_client_while_loading(held_load):
    report = run_node(held_load.server, "loading", "slow")
    assert report["loading_error"]["status"] == 503 and int(report["loading_error"]["retry_after"]) >= 1
    assert held_load.status() == "loading"


def test_ids_differ_across_restarts(tmp_path):
    """A fresh process does not start its ids over (a counter from 0 would repeat)."""
    repo = str(tmp_path)
    u.write_llm_repo(repo, "tiny", CONFIG, WEIGHTS, TOKENIZER, TOK_CONFIG, parameters=PARAMETERS, kserve=False)
    first_ids = []
    for _ in range(2):
        s = InferaServer(repo)
        try:
            s.wait_ready()
            first_ids.append(complete(s, prompt="a", max_tokens=1)["id"])
        finally:
            s.stop()
    assert all(re.fullmatch(r"cmpl-[0-9a-f]{32}", i) for i in first_ids), first_ids
    assert first_ids[0] != first_ids[1]

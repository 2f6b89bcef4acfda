"""Structured output and tool calling on the OpenAI routes (issue 27, item 2), black box
(docs/structured_output.md "OpenAI surface"):

  - refusals: every malformed or unsupported structured-output / tools field is a 400
    naming it; /v1/completions refuses tools; a Llama-2 template refuses tools;
  - tool_choice auto: OpenAI's wire shape whole and streamed on whatever a random model
    writes; a tool message round trip goes through the chat template (the prompt grows);
  - constrained (needs the grammar engine, src/grammar/ in the LLM engine): json_object,
    json_schema (validated with jsonschema), guided_choice, guided_regex;
  - tools render into every family's prompt through its own template (the prompt grows); tool_choice
    required / named give valid calls at temperature 1 on a random-weights model, whole
    and as delta.tool_calls; auto parses the call each family's model (ChatML/Hermes,
    Llama-3, Mistral) was made to write by a guided_grammar;
  - the official `openai` npm client (tests/clients/openai_tools_client.mjs) for both.
"""

import json
import os
import re
import subprocess
import tempfile

import jsonschema
import pytest

import llm_testutil as u
from infera_server import ROOT, InferaServer

# The models' own chat templates (tests/data/chat_templates/, rendered by src/jinja): each
# family's template renders tools, tool calls and tool results itself.
TEMPLATES = os.path.join(ROOT, "tests", "data", "chat_templates")


def fixture(name):
    with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
        return f.read()


CHATML = fixture("qwen2_5.jinja")  # ChatML with Hermes/Qwen tool calls
LLAMA2 = "{% if system %}[INST] <<SYS>>\n{{ system }}\n<</SYS>>\n\n{% endif %}[INST] {{ c }} [/INST]"
LLAMA3 = fixture("llama3_1_style.jinja")
MISTRAL = fixture("mistral_v0_3.jinja")
CLIENTS = os.path.join(ROOT, "tests", "clients")

VOCAB, MERGES = u.train_byte_level_bpe(u.SAMPLE_TEXT, 40)
N = len(VOCAB)
TOKENIZER = u.byte_level_tokenizer_json(VOCAB, MERGES, "gpt2",
                                        [("<|endoftext|>", N), ("<|im_start|>", N + 1), ("<|im_end|>", N + 2)])
CONFIG = u.tiny_config(vocab_size=N + 3, max_position_embeddings=4096, eos_token_id=N)  # room for the tools blocks
WEIGHTS = u.random_weights(CONFIG, seed=27)
PARAMETERS = {"max_num_seqs": 8, "kv_cache_memory_bytes": "16MiB"}

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city now",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]}, "celsius": {"type": "boolean"}},
                   "required": ["city", "celsius"], "additionalProperties": False}}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def server():
    repo = tempfile.mkdtemp(prefix="infera-openai-tools-")
    u.write_llm_repo(repo, "tiny", CONFIG, WEIGHTS, TOKENIZER, {"eos_token": "<|endoftext|>", "chat_template": CHATML},
                     parameters=PARAMETERS, kserve=False)
    for name, template in [("tiny-llama2", LLAMA2), ("tiny-llama3", LLAMA3), ("tiny-mistral", MISTRAL)]:
        u.write_llm_repo(repo, name, CONFIG, WEIGHTS, TOKENIZER, {"eos_token": "<|endoftext|>", "chat_template": template},
                         parameters=PARAMETERS, kserve=False)
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def post(server, body, path="/v1/chat/completions"):
    status, _, data = server.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    return status, data


def chat(server, **fields):
    status, data = post(server, {"model": "tiny", "messages": ASK} | fields)
    assert status == 200, data
    return json.loads(data)


def sse(data):
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events.count("[DONE]") == 1 and events[-1] == "[DONE]", events[-3:]
    return [json.loads(e) for e in events[:-1]]


def streamed_calls(chunks):
    """delta.tool_calls reassembled: OpenAI's shape (index, id + type + name first)."""
    calls, content, finish = [], "", None
    for chunk in chunks:
        for c in chunk["choices"]:
            finish = c["finish_reason"] or finish
            content += c["delta"].get("content") or ""
            for t in c["delta"].get("tool_calls", []):
                if "id" in t:
                    assert t["index"] == len(calls) and t["type"] == "function", t
                    calls.append({"id": t["id"], "name": t["function"]["name"],
                                  "arguments": t["function"]["arguments"]})
                else:
                    assert set(t) == {"index", "function"} and set(t["function"]) == {"arguments"}, t
                    calls[t["index"]]["arguments"] += t["function"]["arguments"]
    return calls, content, finish


def check_weather(arguments):
    jsonschema.validate(json.loads(arguments), WEATHER["function"]["parameters"])


# --- refusals (no grammar engine needed) -----------------------------------------------------

@pytest.mark.parametrize("fields,named", [
    ({"response_format": {"type": "xml"}}, "response_format.type"),
    ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
    ({"guided_json": "{not json"}, "guided_json"),
    ({"guided_choice": []}, "guided_choice"),
    ({"guided_whitespace_pattern": "\\s*"}, "guided_whitespace_pattern"),
    ({"guided_regex": "a", "guided_choice": ["a"]}, "at most one output constraint"),
    ({"guided_json": {"type": "object", "patternProperties": {"a": {}}}}, "patternProperties"),
    ({"tools": [{"type": "function", "function": {"name": "has space"}}]}, "tools[0].function.name"),
    ({"tools": [WEATHER, WEATHER]}, "given twice"),
    ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "other"}}},
     "tool_choice.function.name"),
    ({"tool_choice": "required"}, "needs 'tools'"),
    ({"tools": [WEATHER], "tool_choice": "required", "response_format": {"type": "json_object"}},
     "one output constraint"),
    ({"functions": [{"name": "f"}]}, "functions"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
])
def test_refusals_name_the_field(server, fields, named):
    status, data = post(server, {"model": "tiny", "messages": ASK, "max_tokens": 2} | fields)
    assert status == 400, data
    error = json.loads(data)["error"]
    assert named in error["message"] and error["type"] == "BadRequestError", error


def test_completions_refuse_tools_and_llama2_refuses_tools(server):
    status, data = post(server, {"model": "tiny", "prompt": "x", "tools": [WEATHER]}, "/v1/completions")
    assert status == 400 and "'tools'" in json.loads(data)["error"]["message"], data
    status, data = post(server, {"model": "tiny-llama2", "messages": ASK, "tools": [WEATHER], "max_tokens": 2})
    assert status == 400 and "no tool-call format" in json.loads(data)["error"]["message"], data


# --- tool_choice auto and tool messages: wire shapes ------------------------------------------

def test_auto_wire_shape_whole_and_streamed(server):
    body = {"tools": [WEATHER], "max_tokens": 12, "temperature": 0}
    whole = chat(server, **body)
    message = whole["choices"][0]["message"]
    assert message["role"] == "assistant"
    assert isinstance(message["content"], str) or message["tool_calls"], message
    assert whole["choices"][0]["finish_reason"] in ("stop", "length", "tool_calls")
    status, data = post(server, {"model": "tiny", "messages": ASK, "stream": True} | body)
    assert status == 200, data
    chunks = sse(data)
    calls, content, finish = streamed_calls(chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert finish == whole["choices"][0]["finish_reason"]
    assert content == (message["content"] or "") and len(calls) == len(message.get("tool_calls", []))


def test_tool_message_round_trip_reaches_the_template(server):
    without = chat(server, max_tokens=1)
    history = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"celsius\": true}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 degrees and sunny"}]
    with_tools = chat(server, messages=history, tools=[WEATHER], max_tokens=1)
    # The tools block, the call and the result are all in the prompt.
    grown = with_tools["usage"]["prompt_tokens"] - without["usage"]["prompt_tokens"]
    assert grown > len("21 degrees and sunny") // 4 + 40, (grown, with_tools["usage"])


# --- constrained (needs the grammar engine) ---------------------------------------------------

def test_response_formats_and_guided_fields_constrain_the_output(server):
    schema = {"type": "object", "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]}, "score": {"type": "integer", "minimum": 0, "maximum": 9},
        "tags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
        "required": ["answer", "score", "tags"], "additionalProperties": False}
    for seed in range(3):
        common = {"temperature": 1.0, "seed": seed, "max_tokens": 800}
        out = chat(server, response_format={"type": "json_schema",
                                            "json_schema": {"name": "v", "schema": schema, "strict": True}}, **common)
        assert out["choices"][0]["finish_reason"] == "stop", out
        jsonschema.validate(json.loads(out["choices"][0]["message"]["content"]), schema)
        out = chat(server, response_format={"type": "json_object"}, **common)
        if out["choices"][0]["finish_reason"] == "stop":  # any object may run past max_tokens
            assert isinstance(json.loads(out["choices"][0]["message"]["content"]), dict), out
        out = chat(server, guided_choice=["red", "green", "blue"], **common)
        assert out["choices"][0]["message"]["content"] in ("red", "green", "blue"), out
        out = chat(server, guided_regex="[a-c]{2,4}-[0-9]{3}", **common)
        assert re.fullmatch("[a-c]{2,4}-[0-9]{3}", out["choices"][0]["message"]["content"]), out
        status, data = post(server, {"model": "tiny", "prompt": "x", "guided_json": schema} | common, "/v1/completions")
        assert status == 200, data
        jsonschema.validate(json.loads(json.loads(data)["choices"][0]["text"]), schema)


def test_required_and_named_tool_choice_give_valid_calls(server):
    # One call (parallel_tool_calls false) of bounded arguments is bounded output (the
    # grammar's whitespace is bounded too): it ends well within max_tokens whatever the
    # random model samples. Several calls may run on: those are checked when they end.
    time_tool = {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"utc": {"type": "boolean"}}, "required": ["utc"],
        "additionalProperties": False}}}
    schemas = {"get_weather": WEATHER["function"]["parameters"], "get_time": time_tool["function"]["parameters"]}
    ended_with_calls = 0
    for seed in range(4):
        one = chat(server, tools=[WEATHER, time_tool], tool_choice="required", parallel_tool_calls=False,
                   temperature=1.0, seed=seed, max_tokens=800)
        choice = one["choices"][0]
        assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None, choice
        [call] = choice["message"]["tool_calls"]
        assert re.fullmatch("call_[0-9a-f]{32}", call["id"]) and call["type"] == "function"
        jsonschema.validate(json.loads(call["function"]["arguments"]), schemas[call["function"]["name"]])
        several = chat(server, tools=[WEATHER, time_tool], tool_choice="required", temperature=1.0, seed=seed,
                       max_tokens=1200)["choices"][0]
        if several["finish_reason"] == "tool_calls":
            ended_with_calls += 1
            for call in several["message"]["tool_calls"]:
                jsonschema.validate(json.loads(call["function"]["arguments"]), schemas[call["function"]["name"]])
        else:  # cut short: the text is content, unparsed
            assert several["finish_reason"] == "length" and several["message"]["content"].startswith("["), several
        named = chat(server, tools=[WEATHER, time_tool], temperature=1.0, seed=seed, max_tokens=800,
                     tool_choice={"type": "function", "function": {"name": "get_weather"}})
        calls = named["choices"][0]["message"]["tool_calls"]
        assert named["choices"][0]["finish_reason"] == "stop" and len(calls) == 1, named
        assert calls[0]["function"]["name"] == "get_weather"
        check_weather(calls[0]["function"]["arguments"])
    print("required with parallel calls: ended with calls for", ended_with_calls, "of 4 seeds")


def test_streamed_tool_calls_match_the_whole_answer(server):
    for tool_choice in ["required", {"type": "function", "function": {"name": "get_weather"}}]:
        body = {"model": "tiny", "messages": ASK, "tools": [WEATHER], "tool_choice": tool_choice, "temperature": 1.0,
                "seed": 5, "max_tokens": 800, "parallel_tool_calls": False}
        whole = chat(server, **{k: v for k, v in body.items() if k not in ("model", "messages")})
        status, data = post(server, body | {"stream": True})
        assert status == 200, data
        calls, content, finish = streamed_calls(sse(data))
        assert content == "" and finish == whole["choices"][0]["finish_reason"]
        assert [(c["name"], c["arguments"]) for c in calls] == [
            (c["function"]["name"], c["function"]["arguments"]) for c in whole["choices"][0]["message"]["tool_calls"]]
        for c in calls:
            check_weather(c["arguments"])


ARGS = '"{\\"city\\": \\"" ("Paris" | "Oslo") "\\", \\"celsius\\": " ("true" | "false") "}"'
# What each family's model is made to write (by a guided_grammar), and the content before the call.
FAMILY_CALLS = {
    "tiny": ('root ::= "Checking.\\n<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": " '
             + ARGS + ' "}\\n</tool_call>"', "Checking."),
    "tiny-llama3": ('root ::= "{\\"name\\": \\"get_weather\\", \\"parameters\\": " ' + ARGS + ' "}"', None),
    "tiny-mistral": ('root ::= "Checking.[TOOL_CALLS] [{\\"name\\": \\"get_weather\\", \\"arguments\\": " '
                     + ARGS + ' "}]"', "Checking."),
}


@pytest.mark.parametrize("model", sorted(FAMILY_CALLS))
def test_auto_parses_the_call_each_family_writes(server, model):
    # tool_choice auto must read the family's call format back as tool_calls, whole and
    # streamed; the text before it is content.
    grammar, content = FAMILY_CALLS[model]
    body = {"model": model, "messages": ASK, "tools": [WEATHER], "guided_grammar": grammar, "temperature": 1.0,
            "seed": 1, "max_tokens": 400}  # the tiny tokenizer: about a byte per token
    status, data = post(server, body)
    assert status == 200, data
    choice = json.loads(data)["choices"][0]
    assert choice["finish_reason"] == "tool_calls", choice
    assert choice["message"]["content"] == content
    [call] = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    check_weather(call["function"]["arguments"])
    status, data = post(server, body | {"stream": True})
    calls, streamed_content, finish = streamed_calls(sse(data))
    assert finish == "tool_calls" and streamed_content.strip() == (content or "")
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", call["function"]["arguments"])]


def test_tools_render_for_every_family(server):
    for model in ["tiny", "tiny-llama3", "tiny-mistral"]:
        plain = chat(server, model=model, max_tokens=1)
        with_tools = chat(server, model=model, tools=[WEATHER], max_tokens=1)
        assert with_tools["usage"]["prompt_tokens"] > plain["usage"]["prompt_tokens"] + 30, model


def test_a_template_that_cannot_be_parsed_fails_the_load_naming_the_construct():
    repo = tempfile.mkdtemp(prefix="infera-openai-badtemplate-")
    bad = "{% for m in messages %}\n{{ m.content | frobnicate }}{% endfor %}"
    u.write_llm_repo(repo, "bad", CONFIG, WEIGHTS, TOKENIZER, {"eos_token": "<|endoftext|>", "chat_template": bad},
                     parameters=PARAMETERS, kserve=False)
    s = InferaServer(repo)
    try:
        s.wait_ready()
        index = json.loads(s.request("POST", "/v2/repository/index", "")[2])
        [entry] = [e for e in index if e["name"] == "bad"]
        assert entry["state"] == "UNAVAILABLE", entry
        assert "line 2: unsupported filter 'frobnicate'" in entry["reason"], entry
    finally:
        s.stop()


# --- the official openai npm client -----------------------------------------------------------

def run_node(server, scenario):
    subprocess.run([os.path.join(CLIENTS, "npm_install.sh")], check=True, timeout=600)
    result = subprocess.run(["node", os.path.join(CLIENTS, "openai_tools_client.mjs"),
                             f"http://127.0.0.1:{server.port}/v1", scenario, "tiny"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_openai_node_client_tool_shapes(server):
    report = run_node(server, "shapes")
    assert report["auto"]["message"]["role"] == "assistant"
    assert len(report["errors"]) == 4
    assert report["round_trip"]["usage"]["completion_tokens"] == 4


def test_openai_node_client_constrained(server):
    report = run_node(server, "constrained")
    assert report["json_schema"]["answer"] in ("yes", "no")
    assert report["required"] and report["named"]["function"]["name"] == "get_weather"
    assert [len(s["calls"]) >= 1 for s in report["streamed"]] == [True, True]

#!/usr/bin/env python3
"""Structured-output validity benchmark (issue 27's target): COUNT generated JSON-schema
requests, COUNT guided_regex requests and COUNT guided_choice requests to a running
server's /v1/chat/completions at temperature 1; every output is checked as a client would
check it (json.loads + python3-jsonschema with format checking, re.fullmatch, membership).
The target is 100 % valid on the random-weights bench model.

    /usr/bin/python3 bench/structured_output/run_validity.py URL MODEL COUNT \\
        [--seed 0] [--max-tokens 1900] [--concurrency 8] [--kinds json_schema,regex,choice]
        [--endpoint chat|completions]
    /usr/bin/python3 bench/structured_output/run_validity.py --self-test

Prints one line per invalid output (the constraint and the text), then a summary per
kind: valid, invalid, finish_reason "length" (the grammar was not finished inside
max_tokens: counted invalid), HTTP errors. Exit status 0 only when every output is valid.
--self-test checks the generator and the validators offline (no server).
--endpoint completions sends the same constraints to /v1/completions (a model without a
chat template, such as the bench model of bench/llm/make_bench_model.py).
"""

import argparse
import concurrent.futures
import json
import random
import sys
import urllib.error
import urllib.request

import schema_gen

PROMPT = "Answer with the requested structure."


def make_request(kind, rng, model, max_tokens, seed, endpoint):
    body = {"model": model, "temperature": 1.0, "max_tokens": max_tokens, "seed": seed}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": PROMPT}]
    else:
        body["prompt"] = PROMPT
    if kind == "json_schema":
        constraint = schema_gen.top_schema(rng)
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": constraint, "strict": True}}
    elif kind == "regex":
        constraint = schema_gen.random_regex(rng)
        body["guided_regex"] = constraint
    else:
        constraint = schema_gen.random_choices(rng)
        body["guided_choice"] = constraint
    return constraint, body


def check(kind, text, constraint):
    if kind == "json_schema":
        return schema_gen.validate_json(text, constraint)
    if kind == "regex":
        return schema_gen.validate_regex(text, constraint)
    return schema_gen.validate_choice(text, constraint)


def post(url, endpoint, body, timeout):
    path = "/v1/chat/completions" if endpoint == "chat" else "/v1/completions"
    req = urllib.request.Request(url.rstrip("/") + path,
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def run_one(args, kind, index):
    rng = random.Random(f"{args.seed}-{kind}-{index}")
    constraint, body = make_request(kind, rng, args.model, args.max_tokens, args.seed + index, args.endpoint)
    status, answer = post(args.url, args.endpoint, body, args.timeout)
    if status != 200:
        return kind, "http_error", constraint, f"HTTP {status}: {str(answer)[:300]}"
    choice = answer["choices"][0]
    text = (choice["message"].get("content") if args.endpoint == "chat" else choice.get("text")) or ""
    if choice.get("finish_reason") == "length":
        return kind, "length", constraint, text
    why = check(kind, text, constraint)
    return kind, ("valid" if why is None else "invalid"), constraint, f"{why}: {text!r}"


def self_test():
    """Offline: the generator is deterministic and covers the keywords; the validators
    accept valid outputs and reject invalid ones."""
    a = [schema_gen.top_schema(random.Random(f"0-json_schema-{i}")) for i in range(200)]
    b = [schema_gen.top_schema(random.Random(f"0-json_schema-{i}")) for i in range(200)]
    assert a == b, "the generator is not deterministic"
    text = json.dumps(a)
    for keyword in ["properties", "required", "additionalProperties", "items", "prefixItems",
                    "minItems", "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref",
                    "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
                    "exclusiveMinimum", "exclusiveMaximum", "nullable", "\"type\": [", "$defs"]:
        assert f'"{keyword}' in text or keyword in text, f"no schema uses {keyword}"
    schema = {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 9, "nullable": True},
        "d": {"type": "string", "format": "date"},
        "t": {"type": "string", "format": "date-time"}},
        "required": ["n"], "additionalProperties": False}
    good = ['{"n": 3}', '{"n": null, "d": "2024-02-28"}', '{"n":0,"t":"2024-01-01T10:00:00Z"}']
    bad = ['{"n": 10}', '{"n": 3, "x": 1}', '{}', '{"n": 1', '{"n": 1, "d": "2024-02-30"}',
           '{"n": 1, "t": "2024-01-01 10:00"}', '[1]']
    for g in good:
        assert schema_gen.validate_json(g, schema) is None, g
    for x in bad:
        assert schema_gen.validate_json(x, schema) is not None, x
    assert schema_gen.validate_regex("555-1234", r"\d{3}-\d{4}") is None
    assert schema_gen.validate_regex("555-12345", r"\d{3}-\d{4}") is not None
    assert schema_gen.validate_choice("yes", ["yes", "no"]) is None
    assert schema_gen.validate_choice("yes ", ["yes", "no"]) is not None
    print("self-test: ok")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?")
    parser.add_argument("model", nargs="?")
    parser.add_argument("count", nargs="?", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=1900)
    parser.add_argument("--endpoint", choices=["chat", "completions"], default="chat")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--kinds", default="json_schema,regex,choice")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return 0
    if not args.url or not args.model:
        parser.error("URL and MODEL are required (or --self-test)")
    kinds = args.kinds.split(",")
    counts = {k: {"valid": 0, "invalid": 0, "length": 0, "http_error": 0} for k in kinds}
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        futures = [pool.submit(run_one, args, k, i) for k in kinds for i in range(args.count)]
        for f in concurrent.futures.as_completed(futures):
            kind, outcome, constraint, detail = f.result()
            counts[kind][outcome] += 1
            if outcome != "valid":
                print(f"{kind} {outcome}: {json.dumps(constraint)[:400]}\n    {detail[:400]}")
    ok = True
    for kind, c in counts.items():
        total = sum(c.values())
        print(f"{kind}: {c['valid']}/{total} valid ({100.0 * c['valid'] / max(total, 1):.1f} %), "
              f"invalid {c['invalid']}, length {c['length']}, http errors {c['http_error']}")
        ok &= c["valid"] == total
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

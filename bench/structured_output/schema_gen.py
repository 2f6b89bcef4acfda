"""Seeded random constraints for the structured-output validity benchmark (issue 27).

random_schema() draws JSON schemas over the keywords infera's compiler supports
(docs/structured_output.md): every type and type arrays, nullable, properties / required
/ additionalProperties, items / prefixItems / minItems / maxItems, enum, const, anyOf,
oneOf (disjoint branches), allOf with one schema, local $ref (recursive ones too),
minLength / maxLength, pattern, format, integer and number bounds. random_regex() and
random_choices() draw guided_regex and guided_choice values. validate_*() check an
output the way a client would (python3-jsonschema with format checking, re.fullmatch,
membership).

Sizes are kept modest (a few properties, short lists, most strings bounded) so that a
random-weights model at temperature 1 — whose byte-level bench tokenizer leaves a string
about one chance in two hundred to close at each byte — still finishes inside the bench
model's 2048-token context. Unbounded strings, unanchored patterns and extra properties
(whose keys are unbounded strings) stay in, rarer.
"""

import json
import random
import re

FORMATS = ["date", "time", "date-time", "uuid", "email", "ipv4"]
WORDS = ["alpha", "beta", "gamma", "delta", "red", "green", "blue", "yes", "no", "maybe",
         "café", "naïve", "東京", "a\"quote", "back\\slash", "tab\there", "x y"]
PROPERTY_NAMES = ["name", "id", "age", "tags", "value", "kind", "count", "items", "note",
                  "enabled", "score", "created", "owner", "children", "title", "size"]
REGEXES = [
    r"[a-z]{1,8}", r"\d{3}-\d{4}", r"(yes|no|maybe)", r"[A-Z][a-z]{0,6}( [A-Z][a-z]{0,6})?",
    r"0x[0-9a-f]{2,8}", r"\w{1,10}@\w{1,10}\.(com|org)", r"-?\d{1,5}(\.\d{1,3})?",
    r"(ab|cd)+", r"[^\n\"]{0,12}", r"\(\d{3}\) \d{3}-\d{4}", r"v\d\.\d\.\d",
    r"(?:red|green|blue)(,(?:red|green|blue)){0,3}", r"[ -~]{1,6}", r"\s?[.!?]",
    r"(true|false|null)", r"[\u00e9\u00e8]{1,3}x", r"a?b*c{2}",
]


def _string_schema(rng):
    r = rng.random()
    if r < 0.35:
        s = {"type": "string", "maxLength": rng.randint(0, 12)}
        if rng.random() < 0.5:
            s["minLength"] = rng.randint(0, s["maxLength"])
        return s
    if r < 0.55:
        return {"type": "string", "format": rng.choice(FORMATS)}
    if r < 0.75:
        pattern = rng.choice(REGEXES)
        anchored = rng.random() < 0.97  # unanchored: any text around the match (long)
        return {"type": "string", "pattern": f"^{pattern}$" if anchored else pattern}
    if r < 0.95:
        return {"type": "string", "enum": rng.sample(WORDS, rng.randint(1, 5))}
    return {"type": "string"}


def _integer_schema(rng):
    s = {"type": "integer"}
    r = rng.random()
    lo = rng.choice([-1000, -50, -1, 0, 1, 7, 100, 12345])
    if r < 0.3:
        s["minimum"] = lo
        s["maximum"] = lo + rng.choice([0, 1, 9, 10, 99, 1000, 123456])
    elif r < 0.5:
        s["exclusiveMinimum"] = lo
    elif r < 0.65:
        s["exclusiveMaximum"] = lo
    elif r < 0.75:
        s["minimum"] = lo
    return s


def _number_schema(rng):
    s = {"type": "number"}
    r = rng.random()
    lo = rng.choice([-100, -1, 0, 1, 5])
    if r < 0.3:
        s["minimum"] = lo
        s["maximum"] = lo + rng.choice([0, 1, 10, 100])
    elif r < 0.45:
        s["exclusiveMinimum"] = lo
    elif r < 0.55:
        s["maximum"] = lo
    elif r < 0.65:
        s["exclusiveMinimum"] = lo
        s["exclusiveMaximum"] = lo + rng.choice([1, 2, 10])
    return s


def _object_schema(rng, depth, defs):
    names = rng.sample(PROPERTY_NAMES, rng.randint(0, 5))
    props = {n: random_schema(rng, depth + 1, defs) for n in names}
    s = {"type": "object", "properties": props}
    if names:
        s["required"] = [n for n in names if rng.random() < 0.6]
    r = rng.random()
    if r < 0.8:
        s["additionalProperties"] = False
    elif r < 0.9:
        s["additionalProperties"] = {"type": "integer", "minimum": 0, "maximum": 9}
    # else: absent (the runner sends strict, so still no extras)
    return s


def _array_schema(rng, depth, defs):
    s = {"type": "array"}
    r = rng.random()
    if r < 0.2:
        s["prefixItems"] = [random_schema(rng, depth + 1, defs) for _ in range(rng.randint(1, 3))]
        s["items"] = False if rng.random() < 0.5 else random_schema(rng, depth + 1, defs)
    else:
        s["items"] = random_schema(rng, depth + 1, defs)
    s["maxItems"] = rng.randint(0, 4)
    if rng.random() < 0.5:
        most = s["maxItems"]
        if s.get("items") is False:
            most = min(most, len(s["prefixItems"]))
        s["minItems"] = rng.randint(0, most)
    return s


def _tree_def(defs):
    """A recursive definition: a node with a value and at most two optional children."""
    defs["node"] = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "maxLength": 4},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2},
        },
        "required": ["label"],
        "additionalProperties": False,
    }
    return {"$ref": "#/$defs/node"}


def random_schema(rng, depth=0, defs=None):
    """One schema (a dict); `defs` collects $defs for the top level."""
    leaf = depth >= 3
    choices = ["string", "integer", "number", "boolean", "null", "enum", "const", "types"]
    if not leaf:
        choices += ["object"] * 3 + ["array"] * 2 + ["anyOf", "oneOf", "allOf", "ref", "nullable"]
    kind = rng.choice(choices)
    if kind == "string":
        return _string_schema(rng)
    if kind == "integer":
        return _integer_schema(rng)
    if kind == "number":
        return _number_schema(rng)
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "null":
        return {"type": "null"}
    if kind == "enum":
        pool = [1, 2.5, -3, True, None, "x", "y z", [1, 2], {"k": "v"}] + WORDS[:6]
        return {"enum": rng.sample(pool, rng.randint(1, 5)), "description": "an enum"}
    if kind == "const":
        return {"const": rng.choice([42, "fixed", True, None, [1, "a"], {"a": 1}])}
    if kind == "types":
        return {"type": rng.sample(["string", "integer", "boolean", "null"], rng.randint(1, 3)),
                "maxLength": 5}
    if kind == "object":
        return _object_schema(rng, depth, defs)
    if kind == "array":
        return _array_schema(rng, depth, defs)
    if kind == "anyOf":
        return {"anyOf": [random_schema(rng, depth + 1, defs) for _ in range(rng.randint(1, 3))]}
    if kind == "oneOf":
        branches = [_string_schema(rng), _integer_schema(rng), {"type": "boolean"},
                    {"type": "null"}]
        return {"oneOf": rng.sample(branches, rng.randint(1, 3))}
    if kind == "allOf":
        return {"allOf": [random_schema(rng, depth + 1, defs)], "title": "wrapped"}
    if kind == "nullable":
        s = rng.choice([_string_schema, _integer_schema])(rng)
        s["nullable"] = True
        return s
    if defs is None:  # a ref needs the top level's $defs
        return _integer_schema(rng)
    if rng.random() < 0.4:
        return _tree_def(defs)
    name = f"def{len(defs)}"
    defs[name] = {}  # reserved: the definition may add definitions of its own
    defs[name] = random_schema(rng, depth + 1, defs)
    return {"$ref": f"#/$defs/{name}"}


def top_schema(rng):
    """A top-level schema: an object most of the time (what response_format is used for)."""
    defs = {}
    s = _object_schema(rng, 0, defs) if rng.random() < 0.8 else random_schema(rng, 0, defs)
    if defs:
        s = dict(s)
        s["$defs"] = defs
    return s


def random_regex(rng):
    return rng.choice(REGEXES)


def random_choices(rng):
    return rng.sample(WORDS + ["", "two words", "{\"json\": 1}", "42"], rng.randint(1, 6))


def openapi_nullable(schema):
    """`schema` with OpenAPI 3.0's `nullable: true` written as JSON schema (null added to
    `type` / `enum`): the meaning infera gives it, which plain JSON schema lacks."""
    if isinstance(schema, list):
        return [openapi_nullable(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: openapi_nullable(v) if k not in ("enum", "const") else v for k, v in schema.items()}
    if out.pop("nullable", False):
        if "enum" in out:
            out["enum"] = list(out["enum"]) + [None]
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = types + ["null"]
    return out


_RFC3339_TIME = re.compile(
    r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)")


def _format_checker():
    """Draft 2020-12's format checker plus RFC 3339 time and date-time, which
    python3-jsonschema only checks with rfc3339-validator installed (not in Debian 12)."""
    import datetime
    import jsonschema
    draft = getattr(jsonschema.Draft202012Validator, "FORMAT_CHECKER", None) or \
        jsonschema.draft202012_format_checker
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(draft.checkers)

    @checker.checks("time")
    def _time(instance):
        return not isinstance(instance, str) or bool(_RFC3339_TIME.fullmatch(instance))

    @checker.checks("date-time", raises=ValueError)
    def _date_time(instance):
        if not isinstance(instance, str):
            return True
        date, sep, time = instance[:10], instance[10:11], instance[11:]
        return (date.isascii() and bool(datetime.date.fromisoformat(date)) and sep in "Tt"
                and bool(_RFC3339_TIME.fullmatch(time)))

    return checker


def validate_json(text, schema):
    """None when `text` is a JSON document valid against `schema`, else the reason."""
    import jsonschema  # python3-jsonschema (scripts/install_deps.sh)
    try:
        doc = json.loads(text)
    except ValueError as e:
        return f"not JSON: {e}"
    validator = jsonschema.Draft202012Validator(openapi_nullable(schema),
                                                format_checker=_format_checker())
    errors = sorted(validator.iter_errors(doc), key=str)
    return f"invalid: {errors[0].message}" if errors else None


def validate_regex(text, regex):
    return None if re.fullmatch(regex, text) else "no full match"


def validate_choice(text, choices):
    return None if text in choices else "not one of the choices"


if __name__ == "__main__":
    rng = random.Random(0)
    for _ in range(3):
        print(json.dumps(top_schema(rng)))

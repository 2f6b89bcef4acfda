"""Reference check of infera's Jinja engine (src/jinja, docs/jinja.md) against Python's
jinja2 (Debian's python3-jinja2), configured as Hugging Face's apply_chat_template
configures it: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True), its
tojson (json.dumps with ensure_ascii=False), raise_exception and strftime_now.

For every chat template in tests/data/chat_templates/ (README.md there: sources and
licences) x every conversation below (system, multi-turn, tools, assistant tool calls,
tool results, add_generation_prompt true/false, non-ASCII text), jinja_render's output
must equal jinja2's byte for byte; where jinja2 raises, jinja_render must fail too, with
raise_exception's message. SNIPPETS does the same for small templates that pin one
semantic each (whitespace control, operators, filters, undefined values).

Environment: JINJA_RENDER (the jinja_render binary), CHAT_TEMPLATES (the fixtures).
"""

import datetime
import json
import os
import subprocess
import tempfile

import jinja2
import jinja2.sandbox
import pytest

RENDER = os.environ.get("JINJA_RENDER", "build/src/jinja/jinja_render")
TEMPLATES = os.environ.get("CHAT_TEMPLATES",
                           os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "chat_templates"))
NOW = 1754006400  # 2025-08-01 00:00:00 UTC: strftime_now's clock on both sides


def hf_environment():
    """Hugging Face's _compile_jinja_template environment (transformers 4.4x)."""
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.datetime.fromtimestamp(NOW, datetime.timezone.utc).strftime(format)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


ENV = hf_environment()

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city, now",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]},
                                  "celsius": {"type": "boolean", "description": "°C or °F"},
                                  "days": {"type": "array", "items": {"type": "integer"}, "description": " 1-7 "},
                                  "unit": {"type": ["string", "null"]},
                                  "extra": {"type": "object", "additionalProperties": {"type": "number"}}},
                   "required": ["city"]}}}
# A schema whose every type the Hermes / Command-R tool_use macros resolve: their
# json_to_python_type recurses on each character of a type string it does not know
# (`"null" is iterable`), so WEATHER's ["string", "null"] union is a RecursionError in
# jinja2 (and "macro calls nest deeper than 64" here); this tool lets them render
# (Command-R's also needs every parameter described).
SEARCH = {"type": "function", "function": {
    "name": "search", "description": "Search the notes",
    "parameters": {"type": "object",
                   "properties": {"query": {"type": "string", "description": "words"},
                                  "limit": {"type": ["integer", "string"], "description": "how many"},
                                  "tags": {"type": "array", "items": {"type": "string"}, "description": "any of"},
                                  "weights": {"type": "object", "additionalProperties": {"type": "number"},
                                              "description": "tag -> weight"},
                                  "exact": {"type": "boolean", "description": "whole words"}},
                   "required": ["query"]}}}
CLOCK = {"type": "function", "function": {"name": "get_time", "description": "What time it is",
                                          "parameters": {"type": "object", "properties": {}}}}
CALL = {"id": "abc123xyz", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "celsius": True}}}

CONVERSATIONS = {
    "user": [{"role": "user", "content": "Hi"}],
    "system_multi_turn": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                          {"role": "assistant", "content": "Hello! How can I help?"},
                          {"role": "user", "content": "  Tell me a joke.\n"}],
    "no_system_multi_turn": [{"role": "user", "content": "One"}, {"role": "assistant", "content": "Two"},
                             {"role": "user", "content": "Three"}],
    "unicode_and_quotes": [{"role": "user", "content": "Grüße, 世界! \"quoted\" 'single' {{ not a tag }} \\ 🙂"}],
    "thinking": [{"role": "user", "content": "2+2?"},
                 {"role": "assistant", "content": "<think>\nadd\n</think>\n\n4"},
                 {"role": "user", "content": "3+3?"}],
    "tools": [{"role": "system", "content": "You can call tools."},
              {"role": "user", "content": "Weather in Paris?"}],
    "typed_tools": [{"role": "user", "content": "Find my notes on Jinja."}],
    "tool_round_trip": [{"role": "user", "content": "Weather in Paris?"},
                        {"role": "assistant", "content": None, "tool_calls": [CALL]},
                        {"role": "tool", "tool_call_id": "abc123xyz", "content": "21 degrees and sunny"},
                        {"role": "assistant", "content": "It is 21 °C."},
                        {"role": "user", "content": "Thanks"}],
}
TOOLS = {"tools": [WEATHER, CLOCK], "typed_tools": [SEARCH, CLOCK], "tool_round_trip": [WEATHER]}


def cases():
    for template in sorted(f for f in os.listdir(TEMPLATES) if f.endswith(".jinja")):
        for name, messages in CONVERSATIONS.items():
            for add_generation_prompt in (True, False):
                yield pytest.param(template, name, messages, add_generation_prompt,
                                   id=f"{template[:-6]}-{name}-{'gen' if add_generation_prompt else 'nogen'}")


def render_infera(source, context):
    with tempfile.TemporaryDirectory() as d:
        tpath, cpath = os.path.join(d, "t.jinja"), os.path.join(d, "c.json")
        with open(tpath, "w", encoding="utf-8") as f:
            f.write(source)
        with open(cpath, "w", encoding="utf-8") as f:
            json.dump(context, f, ensure_ascii=False)
        r = subprocess.run([RENDER, tpath, cpath, str(NOW)], capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def render_jinja2(source, context):
    try:
        return 0, ENV.from_string(source).render(**context)
    except jinja2.exceptions.TemplateError as e:
        return 1, str(e)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
            RecursionError) as e:
        return 1, str(e)


def check(source, context):
    code, expected = render_jinja2(source, context)
    rc, out, err = render_infera(source, context)
    if code == 0:
        assert rc == 0, f"jinja2 rendered {expected!r}; infera failed: {err}"
        assert out == expected
    else:
        assert rc != 0, f"jinja2 failed ({expected}); infera rendered {out!r}"
        return expected, err
    return None


@pytest.mark.parametrize("template,name,messages,add_generation_prompt", list(cases()))
def test_chat_template_matches_jinja2(template, name, messages, add_generation_prompt):
    with open(os.path.join(TEMPLATES, template), encoding="utf-8") as f:
        source = f.read()
    context = {"messages": messages, "tools": TOOLS.get(name), "documents": None,
               "add_generation_prompt": add_generation_prompt, "bos_token": "<s>", "eos_token": "</s>"}
    failed = check(source, context)
    if failed and "raise_exception" in source:
        expected, err = failed
        assert expected in err


def test_fixtures_render_something():
    # Each family fixture renders the plain conversation (a fixture that always raised
    # would compare nothing).
    for template in os.listdir(TEMPLATES):
        if template.endswith(".jinja"):
            with open(os.path.join(TEMPLATES, template), encoding="utf-8") as f:
                ctx = {"messages": CONVERSATIONS["no_system_multi_turn"], "tools": None,
                       "add_generation_prompt": True, "bos_token": "<s>", "eos_token": "</s>"}
                assert render_jinja2(f.read(), ctx)[0] == 0, template


SNIPPETS = [
    # whitespace control: trim_blocks, lstrip_blocks, '-', '+', comments, trailing newline
    ("  {% if true %}\n  x\n  {% endif %}\n  y\n", {}),
    ("a  {%- if true -%}  b  {%- endif -%}  c", {}),
    ("a\n  {%+ if true %}b{% endif %}\n", {}),
    ("a {# c #}\n  {# d #}\nb\n\n", {}),
    ("{% if true %}\r\nx\r\n{% endif %}\r\n", {}),
    ("  {{ 'v' }}\n  {% set x = 1 %}\nz{{ x }}", {}),
    ("{% for i in [1,2] %}\n  {{ i }}\n{% endfor %}\n", {}),
    ("{%- for i in [1,2] -%}\n {{ i }} \n{%- endfor %}", {}),
    ("x {%- raw_is_not -%}", {}),
    # literals and operators
    ("{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 5 // -2 }} {{ -5 % 3 }} {{ 5.5 % 2 }}", {}),
    ("{{ 'a' + 'b' }} {{ 'a' ~ 1 ~ 2.0 ~ true }} {{ [1] + [2] }} {{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ 1 < 2 <= 2 }}", {}),
    ("{{ true and 'x' }} {{ false or '' or 'y' }} {{ not 0 }} {{ 'a' if 0 else 'b' }} {{ 'c' if 1 }}|{{ 'd' if 0 }}|", {}),
    ("{{ 'abc'[1] }} {{ 'abc'[-1] }} {{ 'abcdef'[1:4] }} {{ 'abcdef'[::2] }} {{ [1,2,3][::-1] }} {{ [1,2,3][-2:] }} {{ 'héllo'[1:3] }}", {}),
    ("{{ x.a }} {{ x['a'] }} {{ x.b.c }} {{ x.missing }}|{{ x.items() | list }} {{ x.get('zz', 'dflt') }} {{ x.keys() | list }}",
     {"x": {"a": 1, "b": {"c": [1, 2]}}}),
    ("{{ 1.0 }} {{ 1.5e3 }} {{ 0.000123 }} {{ 123456789012345678 }} {{ 1/3 }} {{ 2.0 ** 0.5 }} {{ 10 / 4 }} {{ 1e300 * 1e10 }}", {}),
    ("{{ [1, 'a', none, true, 1.5, {'k': [1]}] }} {{ {'a': \"it's\", 'b': 'say \"hi\"'} }} {{ ('x',) }} {{ 'tab\\there' }}", {}),
    ("{{ 'x' in {'x': 1} }} {{ 2 in [1, 2] }} {{ 'bc' in 'abcd' }} {{ 'z' not in 'abc' }}", {}),
    # undefined
    ("[{{ nope }}] [{{ nope | default('d') }}] [{{ nope is defined }}] [{% for x in nope %}x{% endfor %}] [{{ nope | length }}]", {}),
    ("{{ nope.attr }}", {}),
    ("{{ nope + 1 }}", {}),
    ("{{ d.missing.deeper }}", {"d": {}}),
    ("{{ [] | first }}|{{ none }}|{{ none is none }}|{{ nope == nope }}", {}),
    # set, scopes and namespaces
    ("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}", {}),
    ("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}", {}),
    ("{% set a, b = [1, 2] %}{{ a }}{{ b }} {% set c = 1, 2 %}{{ c }}", {}),
    ("{% if true %}{% set y = 5 %}{% endif %}{{ y }}", {}),
    ("{% set x = 1 %}{% set x = x + 1 %}{{ x }}", {}),
    # loops
    ("{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{{ loop.index0 }}{{ loop.revindex0 }}{% endfor %}", {}),
    ("{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %} {% for c in 'hé' %}[{{ c }}]{% endfor %}", {}),
    ("{% for i in range(5) if i is odd %}{{ i }}{{ loop.length }}{% else %}none{% endfor %}", {}),
    ("{% for i in [] %}x{% else %}empty{% endfor %}", {}),
    ("{% for i in range(1, 10, 3) %}{{ i }}{{ loop.nextitem | default('.') }}{% endfor %} {{ range(3, 0, -1) | list }}", {}),
    ("{% for x in [1, 2] %}{% for y in [3, 4] %}{{ loop.index }}{% if y == 3 %}{% continue %}{% endif %}{{ y }}{% endfor %}{{ loop.index }}{% endfor %}", {}),
    # macros and call blocks
    ("{% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='y') }} {{ m(a=4) }}", {}),
    ("{% macro m(n) %}{% if n > 0 %}{{ n }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(3) }}", {}),
    ("{% macro outer() %}[{{ caller() }}]{% endmacro %}{% call outer() %}inside {{ v }}{% endcall %}", {"v": 7}),
    ("{% macro list(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) list([1, 2]) %}<{{ x }}>{% endcall %}", {}),
    ("{% set g = 'top' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}", {}),
    # filters
    ("{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ [1, 2] | join('-') }}|{{ [{'n': 'a'}, {'n': 'b'}] | join(',', attribute='n') }}", {}),
    ("{{ [3, 1, 2] | first }} {{ [3, 1, 2] | last }} {{ 'abc' | last }} {{ 'abc' | list }} {{ {'a': 1} | list }} {{ 'abc' | length }}", {}),
    ("{{ users | map(attribute='name') | join(',') }} {{ users | selectattr('admin') | map(attribute='name') | list }} {{ users | rejectattr('admin') | list | length }}",
     {"users": [{"name": "a", "admin": True}, {"name": "b", "admin": False}, {"name": "c"}]}),
    ("{{ users | selectattr('role', 'equalto', 'x') | list | length }} {{ users | selectattr('role', 'defined') | list | length }} {{ [1, 2, 3, 4] | select('even') | list }} {{ [1, 2, 3] | reject('odd') | list }}",
     {"users": [{"role": "x"}, {"role": "y"}, {}]}),
    ("{{ ['B', 'a', 'C'] | sort }} {{ ['B', 'a', 'C'] | sort(case_sensitive=true) }} {{ users | sort(attribute='n') | map(attribute='n') | list }} {{ ['a', 'A', 'b'] | unique | list }}",
     {"users": [{"n": 2}, {"n": 1}]}),
    ("{{ {'b': 1, 'A': 2, 'a': 0} | dictsort }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} {{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}", {}),
    ("{{ 'hello world' | upper }} {{ 'HeLLo' | lower }} {{ 'hello WORLD' | capitalize }} {{ \"they're bill's (friends)-x\" | title }} {{ 'aaa' | replace('a', 'b', 2) }}", {}),
    ("{{ 'x\ny\n\nz' | indent }}|{{ 'x\ny' | indent(2, first=true) }}|{{ 'x\n\ny' | indent(1, blank=true) }}|{{ '' | indent }}", {}),
    ("{{ 3.14159 | round(2) }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.45 | round(1, 'floor') }} {{ 2.41 | round(1, 'ceil') }} {{ 7 | round }} {{ -1.5 | abs }}", {}),
    ("{{ '12' | int }} {{ 'x' | int }} {{ 'x' | int(5) }} {{ '3.9' | int }} {{ '1.5' | float }} {{ 'q' | float }} {{ true | int }} {{ 5 | string ~ 'x' }}", {}),
    ("{{ [] | default('e') }} {{ [] | default('e', true) }} {{ 0 | d(1) }} {{ x | items | list }}", {"x": {"k": "v"}}),
    ("{{ x | tojson }} {{ x | tojson(indent=4) }} {{ 'é\u2028</script>' | tojson }} {{ x | tojson(ensure_ascii=true) }}",
     {"x": {"a": [1, 2.5, None, True], "b": {}, "c": [], "d": "é\u0001\t"}}),
    ("{{ [1, 2, 3] | sum }} {{ [1.5, 2] | sum }} {{ ['a', 'b'] | max }} {{ [] | min }}| {{ [3, 1] | reverse | list }} {{ 'abc' | reverse }} {{ 'a b  c' | wordcount }}", {}),
    ("{% filter upper %}a{{ 'b' }}c{% endfilter %} {% filter replace('a', 'x') | upper %}banana{% endfilter %}", {}),
    # tests
    ("{{ 1 is odd }} {{ 2 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is string }} {{ 1 is string }} {{ {} is mapping }} {{ [] is mapping }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ [] is sequence }}", {}),
    ("{{ true is true }} {{ 1 is true }} {{ false is false }} {{ true is boolean }} {{ 1 is boolean }} {{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1.0 is integer }} {{ true is integer }} {{ 1.5 is float }}", {}),
    ("{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 'a' is in 'cat' }} {{ 2 is in [1, 2] }} {{ range is callable }} {{ 'x' is callable }} {{ x is none }} {{ x is not none }} {{ 1 is ne 2 }} {{ 3 is gt 2 }} {{ 'abc' is lower }} {{ 'ABC' is upper }}", {"x": None}),
    # methods
    ("{{ ' a '.strip() }}|{{ 'xax'.strip('x') }}|{{ ' a '.lstrip() }}|{{ ' a '.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}", {}),
    ("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith('bc') }} {{ 'abc'.upper() }} {{ 'ABC'.lower() }} {{ 'hello world'.title() }} {{ \"it's 3rd\".title() }} {{ 'aXa'.replace('a', 'b') }}", {}),
    ("{{ '{} and {}'.format(1, 'two') }} {{ '{0}{1}{0}'.format('a', 'b') }} {{ '{x}!'.format(x=5) }} {{ '-'.join(['a', 'b']) }} {{ 'banana'.count('an') }} {{ 'banana'.find('n') }} {{ 'abc'.capitalize() }}", {}),
    ("{{ [1, 2, 1].count(1) }} {{ [1, 2].index(2) }} {{ x.values() | list }} {{ 'a\\nb'.splitlines() }} {{ '12'.isdigit() }}", {"x": {"a": 1}}),
    # globals and errors
    ("{{ raise_exception('bad input: ' ~ 3) }}", {}),
    ("{% if messages | length > 1 %}{{ raise_exception('only one message') }}{% endif %}ok", {"messages": [1, 2]}),
    ("{{ strftime_now('%Y-%m-%d %H:%M') }} {{ strftime_now('%d %b %Y') }}", {}),
    ("{{ dict(a=1, b=2) }} {{ dict({'x': 1}, y=2) }} {{ namespace(a=1).a }} {{ range(3) | list }} {{ range(2, 5) | list }}", {}),
    ("{{ range(100001) | length }}", {}),
    ("{{ [].append(1) }}", {}),
    ("{{ 1 / 0 }}", {}),
    ("{{ 'a' + 1 }}", {}),
    ("{{ 1 < 'a' }}", {}),
    ("{% for x in 5 %}{% endfor %}", {}),
    ("{{ 'a' * 3 }}{{ [1] * 2 }}{{ 3 * 'b' }}", {}),
    ("{% set x = {'a': 1} %}{{ x.update({'b': 2}) }}", {}),
    # scoping across iterations, macro closures, printf-style %, Python's round and int
    ("{% for i in [1,2] %}{% if i == 2 %}[{{ x }}]{% endif %}{% set x = i %}{% endfor %}", {}),
    ("{% set x = 5 %}{% for i in [1,2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}", {}),
    ("{{ '%s and %d%%' % ('x', 3) }} {{ '%r' % 'q' }} {{ '%s' % none }}", {}),
    ("{{ 5 | round(1) }} {{ 2.675 | round(2) }} {{ 0.5 | round }} {{ 1.5 | round }} {{ -2.5 | round }} {{ 1234.5678 | round(-2, 'floor') }}", {}),
    ("{{ x | int }}{{ '0x1A' | int }}{{ ' 12 ' | int }}{{ '1_000' | int }} {{ 'inf' | int }} {{ '1e3' | int }}", {"x": "-5"}),
    ("{{ m[0]['content'] | tojson }} {{ [m[0]['content']] }} {{ 1e22 }} {{ 123456789.123 }} {{ -0.0 }} {{ 1.5e-7 }}",
     {"m": [{"content": "a\u2028b\u00e9\U0001F642\u007f\u0007'"}]}),
    # Jinja2's lazy filters: map/select/reject/selectattr/rejectattr return nothing for a
    # false input (none, undefined, ''); they, unique and items return a generator, reverse
    # of a list a list_reverseiterator: always true, iterated once, no len(), not JSON
    ("{{ none | selectattr('a') | list }} {{ none | map('upper') | list }} {{ 0 | reject('odd') | list }} {{ '' | select | list }} {{ nope | rejectattr('x') | list }} {{ none | map(attribute='a') | join }}", {}),
    ("{% if [] | select('odd') %}a{% endif %}{% if [1] | reject %}b{% endif %}{% if {} | items %}c{% endif %}{% if [] | reverse %}d{% endif %}{{ [] | unique is iterable }}{{ [] | map('int') is sequence }}", {}),
    ("{% set g = [1, 2, 3, 4, 5] | select('odd') %}{{ g | first }}{{ g | list }}{{ g | list }}{% set h = [1, 2, 3] | map('string') %}{{ 2 in h }}{{ h | join }}{% for x in h %}{{ x }}{% else %}empty{% endfor %}", {}),
    ("{% set g = [1, 2] | reject('odd') %}{{ g == g }} {{ g is sameas g }} {{ g == [2] }} {{ g[0] }}|{{ [3, 1, 2] | reverse | list }} {{ {'a': 1, 'b': 2} | reverse | list }} {{ (1, 2) | reverse | list }} {{ [1, 2] | map('string') | reverse }}", {}),
    ("{{ tools | map(attribute='function') | tojson }}", {"tools": [{"function": {"name": "f"}}]}),
    ("{{ [1, 2] | select('odd') | length }}", {}),
    ("{{ [1, 2] | reverse | tojson }}", {}),
    ("{{ {'a': 1} | items | tojson }}", {}),
    ("{{ [1, 2] | map('string') | last }}", {}),
    # markupsafe's Markup from `safe`: `+` HTML-escapes the plain str operand; `~` gives a str
    ("{{ 'a<' | safe + '<b>\"\\'&' }} {{ '<' + '&' | safe }} {{ ('x' | safe) * 2 + '<' }} {{ ['x' | safe] }} {{ ('<' | safe ~ '<') + '<' }} {{ 5 | safe + '>' }} {{ ('<' | safe + '>') | length }}", {}),
    ("{{ '>' | safe + 1 }}", {}),
    ("{{ 'x' | safe is string }} {{ '<' | safe == '<' }} {{ ('&' | safe + '&') | tojson }}", {}),
    # a macro that recurses without end (a str is iterable, and so is each character):
    # RecursionError in jinja2, the macro depth limit here
    ("{% macro walk(t) %}{% if t is iterable %}{% for c in t %}{{ walk(c) }}{% endfor %}{% endif %}{% endmacro %}{{ walk('ab') }}", {}),
    # attribute lookup tries the method first: a dict's `.items` is the method, not the key
    ("{% macro m(s) %}{{ s.items is callable }}[{{ s.items.type }}]{{ s['items'].type }}{% endmacro %}{{ m({'items': {'type': 'x'}}) }}", {}),
]


@pytest.mark.parametrize("source,context", SNIPPETS, ids=[str(i) for i in range(len(SNIPPETS))])
def test_snippet_matches_jinja2(source, context):
    try:
        ENV.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError:
        rc, out, err = render_infera(source, context)
        assert rc != 0, f"jinja2 refuses the syntax; infera rendered {out!r}"
        return
    failed = check(source, context)
    if failed and "raise_exception" in source:
        expected, err = failed
        assert expected in err

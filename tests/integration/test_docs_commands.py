"""Every shell command README.md and docs/*.md show runs as written (issue 30).

The commands are extracted from the Markdown and run, one by one, against ONE demo server
started as `make run` starts it (scripts/run_demo.sh: the demo repository, loopback),
plus `--allow-admin-api logging,trace`, which the docs name for their admin examples.

What counts as a command
  A fenced block labelled sh, bash, shell or console, or an unlabelled one with a line
  that starts as a command does (`$ `, `curl `, `infera `, `build/...`, `make `,
  `cmake `, `python3 `, `bench/*.py|sh`, `kubectl `, `podman `, `docker `: COMMAND_START).
  In a block where some line starts with `$ ` only those lines are commands (the rest is
  their output);
  otherwise every line is, with `# comment` lines dropped, and a line continued by a
  trailing `\\`, `|`, `&&`, `||` or an open quote joined to the next. Indented
  blocks (four spaces) are examples of output, not commands.

How it runs
  With bash -o pipefail, a timeout, in a scratch folder laid out like the repository
  root after `make run` (demo-models/ is INFERA_DEMO_REPO, build/ the binary's folder,
  scripts/, proto/, bench/ the source tree's), so relative paths run as written. Only
  these are rewritten: localhost:8000 / 127.0.0.1:8000 -> the server's HTTP port, 8001
  -> its gRPC port, 8002 -> its metrics port; `build/infera` and a leading `infera` -> the
  binary under test; every `curl` gets `-f` (so an HTTP error fails the command); an
  `infera bench` without `-u` (make run's default address) gets `-u` with the server's.
  Variable assignments (`IMG=...`) are kept for the later commands of their block.
  python3 is /usr/bin/python3 (Debian's, as on the machine README.md starts from).
  A command passes when it exits 0 and its answer has every complete `"key": value` that
  the `# ...` comment lines after it show (values cut short with `...` / `…` and ids and
  timestamps are not compared; numbers within 0.1 %).

Markers (the only way to leave a command out; each names its reason)
  An HTML comment on the lines just above a block:
    <!-- docs-test: skip (reason) -->                 the whole block
    <!-- docs-test: skip `PREFIX` (reason) -->        the block's commands starting PREFIX
    <!-- docs-test: append `FLAGS` to `PREFIX` (reason) -->
                                                       FLAGS added to those commands (e.g. a
                                                       bench's duration shortened)
  A marker that matches no command fails the test, so stale markers do not pile up. The
  convention is described for writers in docs/cli.md ("Commands in the docs").
"""

import json
import os
import re
import subprocess
import time

import pytest

from infera_server import BINARY, ROOT, InferaServer, demo_repo

# The files whose commands are checked: README.md and every docs page.
DOC_FILES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
# Extraction must find at least this many runnable commands (it finds more; a parser
# regression that finds none must fail, not pass vacuously).
MIN_COMMANDS_RUN = 28
COMMAND_TIMEOUT_S = 30
SHELL_LABELS = {"sh", "bash", "shell", "console"}
COMMAND_START = re.compile(
    r"^(\$ |curl |infera |build/\S+ |make \w|cmake |(/usr/bin/)?python3 |bench/\S+\.(py|sh) |kubectl |podman |docker )")
MARKER = re.compile(
    r"<!--\s*docs-test:\s*(?P<verb>skip|append)\s*"
    r"(?:`(?P<first>[^`]+)`\s*)?(?:to\s+`(?P<second>[^`]+)`\s*)?\((?P<reason>[^)]*(?:\([^)]*\)[^)]*)*)\)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")


class Marker:
    def __init__(self, match, where):
        self.verb = match.group("verb")
        if self.verb == "skip":
            self.prefix, self.flags = match.group("first"), None
        else:
            assert match.group("first") and match.group("second"), f"{where}: append needs `FLAGS` to `PREFIX`"
            self.flags, self.prefix = match.group("first"), match.group("second")
        self.reason = match.group("reason").strip()
        assert self.reason, f"{where}: a docs-test marker needs a reason"
        self.where = where
        self.used = False

    def matches(self, command):
        return self.prefix is None or command.startswith(self.prefix)


class Block:
    def __init__(self, path, line, label, lines, markers):
        self.path, self.line, self.label, self.lines, self.markers = path, line, label, lines, markers

    def is_command_block(self):
        if self.label in SHELL_LABELS:
            return True
        return self.label == "" and any(COMMAND_START.match(l) for l in self.lines)

    def commands(self):
        return [command for command, _ in self.commands_with_output()]

    def commands_with_output(self):
        """[(command, the `# ` comment lines after it)]: continuation lines joined."""
        if any(l.startswith("$ ") for l in self.lines):
            return [(l[2:].strip(), []) for l in self.lines if l.startswith("$ ")]
        commands, pending = [], ""
        for line in self.lines:
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                if commands and line.lstrip().startswith("#"):
                    commands[-1][1].append(line.lstrip()[1:].strip())
                continue
            pending = pending + "\n" + line if pending else line
            if not _continues(pending):
                commands.append((pending.strip(), []))
                pending = ""
        if pending:
            commands.append((pending.strip(), []))
        return commands


# A complete `"key": value` in a shown answer (a string, number, literal or flat list; one
# cut short with `...` or `…` is not complete and not compared).
_SHOWN_PAIR = re.compile(r'"([\w.-]+)":\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null|'
                         r'\[\s*(?:(?:"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)\s*(?:,\s*|(?=\])))*\])')
# Keys whose value differs on every run.
_VOLATILE_KEYS = {"id", "created", "system_fingerprint"}


def shown_pairs(comment_lines):
    """The (key, value) pairs a command's `# {...}` comment lines show of its answer."""
    text = " ".join(comment_lines)
    pairs = []
    for m in _SHOWN_PAIR.finditer(text):
        if m.group(1) in _VOLATILE_KEYS:
            continue
        try:
            pairs.append((m.group(1), json.loads(m.group(2))))
        except ValueError:
            pass
    return pairs


def _same(shown, got):
    if isinstance(shown, list):
        return isinstance(got, list) and len(shown) == len(got) and all(map(_same, shown, got))
    if isinstance(shown, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and \
            abs(shown - got) <= 1e-3 * max(abs(shown), 1e-6)
    return shown == got


def answer_has(output, key, value):
    """Whether `output` has `"key": <value>` somewhere (numbers within 0.1 %)."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r'"' + re.escape(key) + r'":\s*', output):
        try:
            got, _ = decoder.raw_decode(output, m.end())
        except ValueError:
            continue
        if _same(value, got):
            return True
    return False


def _open_quote(text):
    """Whether `text` ends inside a '...' or "..." string (comments outside quotes ignored)."""
    quote = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote is None:
            if c in "'\"":
                quote = c
            elif c == "\\":
                i += 1
            elif c == "#" and (i == 0 or text[i - 1] in " \t\n"):
                while i < len(text) and text[i] != "\n":
                    i += 1
        elif c == quote:
            quote = None
        elif c == "\\" and quote == '"':
            i += 1
        i += 1
    return quote is not None


def _code_part(line):
    """A line without its trailing `# comment` (outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote is None and c in "'\"":
            quote = c
        elif c == quote:
            quote = None
        elif quote is None and c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _is_assignment(command):
    """Whether `command` only sets a shell variable (`HDR='{...}'$(( ... ))`): NAME= and no
    blank outside quotes and $( ) — not an environment prefix such as `A=1 cmd`."""
    if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", command):
        return False
    quote, depth = None, 0
    for i, c in enumerate(command):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c.isspace() and depth == 0:
            return False
    return True


def _continues(text):
    if _open_quote(text):
        return True
    last = _code_part(text.split("\n")[-1])
    return last.endswith(("\\", "|", "&&", "||"))


def parse_blocks(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, label = i, m.group(1)
        # markers: the comment lines directly above the fence (blank lines between allowed)
        markers, j = [], start - 1
        while j >= 0 and (not lines[j].strip() or lines[j].lstrip().startswith("<!--")):
            mm = MARKER.search(lines[j])
            if mm:
                markers.append(Marker(mm, f"{path}:{j + 1}"))
            elif "docs-test" in lines[j]:
                raise AssertionError(f"{path}:{j + 1}: unreadable docs-test marker: {lines[j]}")
            j -= 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        blocks.append(Block(path, start + 1, label, body, markers))
    return blocks


def _append(command, flags):
    """`command` with `flags` added at its end, before a trailing `# comment`."""
    head, _, last = command.rpartition("\n")
    code = _code_part(last)
    return (head + "\n" if head else "") + code + " " + flags + last[len(code):]


def rewrite(command, server, binary):
    ports = {"8000": server.port, "8001": server.grpc_port, "8002": server.metrics_port}
    command = re.sub(r"\b(localhost|127\.0\.0\.1):(800[012])\b",
                     lambda m: f"{m.group(1)}:{ports[m.group(2)]}", command)
    # `infera bench` without -u talks to make run's default address: give it the server's
    if re.match(r"(build/)?infera bench (?!plot)", command) and not re.search(r"(^|\s)(-u|--url)\s", command):
        port = server.grpc_port if re.search(r"\s-i\s+grpc\b", command) else server.port
        command = _append(command, f"-u 127.0.0.1:{port}")
    command = re.sub(r"(?<![\w/.-])build/infera(?![\w/.-])", binary, command)
    command = re.sub(r"(^|[|;&(]\s*|\$\(\s*)infera(?= )", lambda m: m.group(1) + binary, command)
    command = re.sub(r"(^|[|;&(]\s*|\$\(\s*|\n\s*)curl(?= )", lambda m: m.group(1) + "curl -f", command)
    return command


def scratch_root(tmp):
    """A folder laid out like the repository root after `make run`."""
    for name in ("scripts", "proto", "bench", "deploy", "tools"):
        if os.path.exists(os.path.join(ROOT, name)):
            os.symlink(os.path.join(ROOT, name), os.path.join(tmp, name))
    os.symlink(demo_repo(), os.path.join(tmp, "demo-models"))
    os.symlink(os.path.dirname(os.path.abspath(BINARY)), os.path.join(tmp, "build"))
    return tmp


@pytest.fixture(scope="module")
def server():
    s = InferaServer(demo_repo(), "--allow-admin-api", "logging,trace",
                     env={"OMP_WAIT_POLICY": "passive"})
    s.metrics_port = int(re.search(r"Metrics server listening on [^\s]*:(\d+)", s.log()).group(1))
    s.wait_ready()
    status, _, _ = s.request("GET", "/v2/health/ready")
    assert status == 200, s.log()
    yield s
    s.stop()


def run_command(where, command, shown, setup, server, cwd, env):
    """Runs one doc command (after its block's assignments `setup`); its failures, if any:
    a non-zero exit, a timeout, or a value the doc shows (`shown`) missing from the answer."""
    script = "\n".join(setup + [rewrite(command, server, os.path.abspath(BINARY))])
    try:
        result = subprocess.run(["bash", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [f"{where}: over {COMMAND_TIMEOUT_S} s: {command}"]
    failures = []
    if result.returncode != 0:
        failures.append(f"{where}: exit {result.returncode}: {command}\n  ran: {script}\n"
                        f"  stdout: {result.stdout[-600:]!r}\n  stderr: {result.stderr[-600:]!r}")
    output = result.stdout.decode("utf-8", "replace")
    for key, value in shown_pairs(shown):
        if not answer_has(output, key, value):
            failures.append(f"{where}: the doc shows \"{key}\": {json.dumps(value)} after\n"
                            f"  {command}\n  but the answer is: {output[:800]!r}")
    return failures


def test_every_doc_command_runs_as_written(server, tmp_path):
    cwd = scratch_root(str(tmp_path))
    # python3 is Debian's, as on the fresh Debian 12 machine README.md starts from
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    failures, counts, skipped = [], {}, []
    started = time.monotonic()
    for path in DOC_FILES:
        ran = skip = 0
        for block in parse_blocks(path):
            if not block.is_command_block():
                assert not block.markers, f"{block.markers[0].where}: marker above a block with no commands"
                continue
            setup = []
            for command, shown in block.commands_with_output():
                where = f"{path}:{block.line}"
                skip_marker = next((m for m in block.markers if m.verb == "skip" and m.matches(command)), None)
                if skip_marker:
                    skip_marker.used = True
                    skip += 1
                    skipped.append(f"{where}: {command.splitlines()[0][:70]} -- {skip_marker.reason}")
                    continue
                for m in block.markers:
                    if m.verb == "append" and m.matches(command):
                        m.used = True
                        command = _append(command, m.flags)
                if _is_assignment(command):
                    setup.append(command)
                    continue
                failures += run_command(where, command, shown, setup, server, cwd, env)
                ran += 1
            for m in block.markers:
                assert m.used, f"{m.where}: docs-test marker matches no command of its block (stale?)"
        counts[path] = (ran, skip)
    summary = "\n".join(f"  {p}: ran {r}, skipped {s}" for p, (r, s) in counts.items() if r or s)
    print(f"doc commands ({time.monotonic() - started:.1f} s):\n{summary}\nskipped:\n  " + "\n  ".join(skipped))
    assert not failures, f"{len(failures)} doc command(s) failed:\n" + "\n".join(failures)
    total = sum(r for r, _ in counts.values())
    assert total >= MIN_COMMANDS_RUN, f"only {total} doc commands ran (floor {MIN_COMMANDS_RUN}):\n{summary}"
    server.assert_serving()


def test_extraction_reads_the_shapes_the_docs_use():
    """The parser itself: continuation lines, pipes, open quotes, `$ ` transcripts, markers."""
    block = Block("x.md", 1, "sh", [
        "# a comment line", "curl -s a \\", "  -d '{}'", "echo '{\"a\":1,", " \"b\":2}' |",
        "  gzip -c | wc -c   # trailing comment", "IMG=x.jpg", "build/infera bench -m simple"], [])
    assert block.commands() == ["curl -s a \\\n  -d '{}'", "echo '{\"a\":1,\n \"b\":2}' |\n  gzip -c | wc -c   # trailing comment",
                                "IMG=x.jpg", "build/infera bench -m simple"]
    assert _is_assignment("HDR='{\"a\": '$(( $(stat -c%s $IMG) + 4 ))'}'") and _is_assignment("IMG=x.jpg")
    assert not _is_assignment("A=1 bench/scenarios.py cold_start")
    shown = Block("x.md", 1, "sh", ["curl a", '# {"id":"x-1","shape":[1,5],"data":[0.5,0.25],"OUT":[2,3,…]}',
                                     '#  "name":"LABELS"} ...'], [])
    (command, comments), = shown.commands_with_output()
    assert command == "curl a"
    assert shown_pairs(comments) == [("shape", [1, 5]), ("data", [0.5, 0.25]), ("name", "LABELS")]
    assert answer_has('{"shape": [1,5], "data":[0.50001,0.25]}', "data", [0.5, 0.25])
    assert not answer_has('{"data":[0.5,0.26]}', "data", [0.5, 0.25])
    transcript = Block("x.md", 1, "", ["$ infera diagnose -u localhost:8000 -m slow", "model slow ..."], [])
    assert transcript.is_command_block() and transcript.commands() == ["infera diagnose -u localhost:8000 -m slow"]
    assert not Block("x.md", 1, "", ["repo/", "  resnet18/"], []).is_command_block()
    m = MARKER.search("<!-- docs-test: append `--duration 1` to `build/infera bench` (short (1 s) run) -->")
    assert m and m.group("first") == "--duration 1" and m.group("second") == "build/infera bench"
    assert m.group("reason") == "short (1 s) run"

    class Ports:
        port, grpc_port, metrics_port = 1, 2, 3
    assert rewrite("curl -s localhost:8000/x | infera bench -u 127.0.0.1:8001", Ports, "/b/infera") == \
        "curl -f -s localhost:1/x | /b/infera bench -u 127.0.0.1:2"

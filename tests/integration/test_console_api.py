"""The web console's server side over plain HTTP: the redirect, the embedded assets
(content types, ETag / 304, CSP, hostile paths and methods) and the statistics stream
(/v2/console/stream: event JSON, live rates under load, bad parameters, the subscriber
bound, disconnects, shutdown with open streams). docs/console.md."""

import json
import os
import signal
import tempfile
import threading
import time

import pytest

from console_client import CANARIED, ConsoleStream
from infera_server import InferaServer, copy_model, demo_repo, wait_for, write_model


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory() as d:
        copy_model(demo_repo(), "identity_fp32", d)
        copy_model(demo_repo(), "simple", d)
        copy_model(demo_repo(), "fortune", d)
        write_model(d, "broken", 'name: "broken"\nbackend: "no_such_backend"\n')
        write_model(d, "canaried", CANARIED, versions=(1, 2))
        yield d


@pytest.fixture(scope="module")
def server(repo):
    s = InferaServer(repo)
    s.wait_ready()
    yield s
    s.stop()


def infer_identity(server, n=4):
    payload = {"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [n], "data": [1.0] * n}]}
    status, _, body = server.infer("identity_fp32", payload)
    assert status == 200, body


def test_root_redirects_to_console(server):
    status, headers, _ = server.request("GET", "/")
    assert status == 302
    assert headers["Location"] == "/console"


def test_page_and_assets_have_types_etag_and_csp(server):
    status, headers, body = server.request("GET", "/console")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert b"/console/console.js" in body
    csp = headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp
    assert "http" not in csp and "*" not in csp
    assert headers["Cache-Control"] == "no-cache"
    assert headers["X-Content-Type-Options"] == "nosniff"
    for path, ctype in [("/console/console.js", "text/javascript"), ("/console/chart.js", "text/javascript"),
                        ("/console/console.css", "text/css")]:
        status, headers, body = server.request("GET", path)
        assert status == 200 and headers["Content-Type"].startswith(ctype) and body, path
        etag = headers["ETag"]
        status, headers304, body304 = server.request("GET", path, headers={"If-None-Match": etag})
        assert status == 304 and body304 == b"", path
        assert headers304["ETag"] == etag
        status, headers_head, body_head = server.request("HEAD", path)
        assert status == 200 and body_head == b"" and headers_head["ETag"] == etag


def split_response(data):
    """(status line, headers dict, rest) of the first HTTP response in `data`."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    assert sep, data[:300]
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, rest


@pytest.mark.parametrize("path", ["/console/console.js", "/console", "/v2/health/ready",
                                  "/v2/models/identity_fp32", "/v2/models/no_such_model"])
def test_head_carries_the_get_headers_and_no_body(server, path):
    """RFC 9110: HEAD answers with the GET's headers (Content-Length of the GET's body),
    sends no body, and the connection serves the next request."""
    get = server.raw(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    get_status, get_headers, get_body = split_response(get)
    assert int(get_headers["content-length"]) == len(get_body), get[:300]
    assert get_headers.pop("connection").lower() == "close"  # asked for by this GET only
    # HEAD, then a GET on the same connection (pipelined): what follows the HEAD answer's
    # header block must be the next answer's status line, not body bytes.
    both = server.raw(f"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    status, headers, rest = split_response(both)
    assert status == get_status
    assert headers == get_headers  # the same headers, Content-Length included
    assert "connection" not in headers or headers["connection"].lower() != "close"
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n"), both[:600]
    _, live_headers, live_body = split_response(rest)
    assert live_headers["content-length"] == "0" and live_body == b""


def test_head_on_the_stream_sends_its_headers_and_closes(server):
    reply = server.raw(b"HEAD /v2/console/stream HTTP/1.1\r\nHost: x\r\n\r\n")
    status, headers, rest = split_response(reply)
    assert status == "HTTP/1.1 200 OK" and headers["content-type"] == "text/event-stream"
    assert headers["connection"].lower() == "close"
    assert rest == b""  # no event, and the server closed the connection (raw() read to EOF)
    server.assert_serving()


def test_hostile_paths_and_methods(server):
    for path in ["/console/nope.js", "/console/../v2/health/ready", "/console/..%2f..%2fetc%2fpasswd",
                 "/console/%2e%2e/%2e%2e/etc/passwd", "/console//console.js", "/console/console.js/",
                 "/console/" + "a" * 4000]:
        status, _, body = server.request("GET", path)
        assert status == 404, path
        assert b"root:" not in body
    # Raw bytes: no client-side normalisation of the dot segments.
    answer = server.raw(b"GET /console/../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404"), answer[:100]
    for method in ["POST", "PUT", "DELETE", "PATCH"]:
        status, headers, _ = server.request(method, "/console/console.js", body=b"x")
        assert status == 405, method
        assert headers["Allow"] == "GET, HEAD"
    status, _, _ = server.request("POST", "/v2/console/stream", body=b"{}")
    assert status == 405
    server.assert_serving()


@pytest.mark.parametrize("query", ["?interval_ms=0", "?interval_ms=100", "?interval_ms=10001", "?interval_ms=abc",
                                   "?interval_ms=", "?interval_ms=1000&interval_ms=500", "?interval_ms=-1",
                                   "?interval_ms=" + "9" * 40])
def test_bad_interval_is_400_naming_it(server, query):
    status, _, body = server.request("GET", "/v2/console/stream" + query)
    assert status == 400, query
    assert "interval_ms" in json.loads(body)["error"]


def test_unknown_stream_parameter_is_400(server):
    status, _, body = server.request("GET", "/v2/console/stream?every=1")
    assert status == 400
    assert "every" in json.loads(body)["error"]


def test_stream_lists_the_repository_index_and_shows_load(server):
    stream = ConsoleStream(server.port, "?interval_ms=250")
    try:
        assert stream.status == 200
        assert stream.headers["Content-Type"] == "text/event-stream"
        first = stream.next_stats()
        assert first["interval_ms"] == 250
        status, _, body = server.request("POST", "/v2/repository/index", b"{}")
        assert status == 200
        index = json.loads(body)
        assert sorted((m["name"], m.get("state")) for m in first["models"]) == sorted(
            (m["name"], m.get("state")) for m in index)
        broken = next(m for m in first["models"] if m["name"] == "broken")
        assert broken["state"] == "UNAVAILABLE" and "no_such_backend" in broken["reason"]
        identity = next(m for m in first["models"] if m["name"] == "identity_fp32")
        assert identity["instances"][0]["kind"] == "KIND_CPU"
        assert identity["llm"] is None
        assert identity["canary"] is None
        # Both versions of the canaried model, each with the split and its verdict.
        canaried = [m for m in first["models"] if m["name"] == "canaried"]
        assert sorted(m["version"] for m in canaried) == [1, 2]
        for m in canaried:
            assert m["canary"]["canary_version"] == 2 and m["canary"]["baseline_version"] == 1
            assert m["canary"]["weight_percent"] == 20 and m["canary"]["state"] == "ACTIVE"
        assert first["server"]["control_mode"] == "none"
        assert first["server"]["admin_token_required"] is False
        before = identity["counters"]["requests"]
        # Load from another thread until the stream shows a non-zero request rate.
        stop = threading.Event()

        def load():
            while not stop.is_set():
                infer_identity(server)

        worker = threading.Thread(target=load)
        worker.start()
        try:
            busy = stream.next_stats(lambda d: any(
                m["name"] == "identity_fp32" and m["rates"]["requests"] > 0 and m["latency_ms"]["p99"] > 0
                for m in d["models"]))
        finally:
            stop.set()
            worker.join()
        identity = next(m for m in busy["models"] if m["name"] == "identity_fp32")
        assert identity["counters"]["requests"] > before
        assert identity["batch_sizes"] == [] or identity["batch_sizes"][0]["executions"] > 0
    finally:
        stream.close()


def test_subscriber_bound_and_disconnects(server):
    streams = []

    def fill():
        # Streams closed by earlier tests are dropped at the server's next tick: retry.
        while len(streams) < 32:
            s = ConsoleStream(server.port, "?interval_ms=250")
            if s.status != 200:
                s.close()
                return False
            streams.append(s)
        return True

    try:
        wait_for(fill, timeout=10, interval=0.3)
        extra = ConsoleStream(server.port)
        assert extra.status == 503
        assert extra.headers.get("Retry-After") == "1"
        extra.close()
        # (Its first events may predate the later subscribers.)
        streams[0].next_stats(lambda d: d["server"]["console_subscribers"] == 32)
        # Closing the clients frees the slots: a new stream soon sees only itself.
        for s in streams:
            s.close()
        streams = []

        def alone():
            s = ConsoleStream(server.port, "?interval_ms=250")
            try:
                return s.status == 200 and s.next_stats(deadline_s=2)["server"]["console_subscribers"] == 1
            finally:
                s.close()

        wait_for(alone, timeout=10, interval=0.3)
        server.assert_serving()
    finally:
        for s in streams:
            s.close()


def test_shutdown_with_open_stream_is_prompt(repo):
    s = InferaServer(repo)
    s.wait_ready()
    stream = ConsoleStream(s.port, "?interval_ms=250")
    assert stream.next_stats()["models"]
    started = time.time()
    s.process.send_signal(signal.SIGTERM)
    events = []
    while True:
        e = stream.next_event(deadline_s=10)
        if e is None:
            break
        events.append(e[0])
    assert events and events[-1] == "end"
    s.process.wait(timeout=10)
    # The default exit timeout is 30 s: the open stream did not hold the drain.
    assert time.time() - started < 10
    stream.close()
    s.stop()


def test_llm_figures_follow_a_generation(server):
    stream = ConsoleStream(server.port, "?interval_ms=250")
    try:
        fortune = lambda d: next(m for m in d["models"] if m["name"] == "fortune")  # noqa: E731
        first = fortune(stream.next_stats())
        assert first["backend"] == "llm"
        llm = first["llm"]
        assert llm is not None and 0 <= llm["kv_cache_usage"] <= 1
        assert llm["running"] == 0 and llm["waiting"] == 0
        before = llm["generation_tokens"]
        body = json.dumps({"model": "fortune", "max_tokens": 8, "temperature": 0,
                           "messages": [{"role": "user", "content": "a fortune"}]})
        status, _, answer = server.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        assert status == 200, answer
        produced = json.loads(answer)["usage"]["completion_tokens"]
        after = stream.next_stats(lambda d: fortune(d)["llm"]["generation_tokens"] >= before + produced)
        llm = fortune(after)["llm"]
        assert llm["ttft_ms"]["p50"] > 0 and llm["prompt_tokens"] > 0
        if produced > 1:
            assert llm["tpot_ms"]["p50"] > 0
    finally:
        stream.close()

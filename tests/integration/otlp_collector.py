"""A tiny OTLP/HTTP (JSON) trace receiver for the tracing tests: it keeps every span it
is sent and lets a test wait — on a condition variable, not a sleep — until the spans it
expects have arrived. `blackhole=True` accepts connections and never answers (a hanging
collector)."""

import http.server
import json
import socket
import threading


class Collector:
    def __init__(self, blackhole=False):
        self.requests = []  # (path, body) per export, in arrival order
        self._changed = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with outer._changed:
                    outer.requests.append((self.path, json.loads(body)))
                    outer._changed.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        if blackhole:
            self.socket = socket.socket()
            self.socket.bind(("127.0.0.1", 0))
            self.socket.listen(64)
            self.port = self.socket.getsockname()[1]
            self.server = None
        else:
            self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            self.port = self.server.server_address[1]
            threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def spans(self):
        with self._changed:
            return self._spans_locked()

    def wait_for(self, predicate, timeout=20):
        """Waits until predicate(spans) holds; returns the spans (the last seen on timeout)."""
        with self._changed:
            self._changed.wait_for(lambda: predicate(self._spans_locked()), timeout)
            return self._spans_locked()

    def trace(self, trace_id, count, timeout=20):
        """The spans of trace `trace_id` once at least `count` have arrived."""
        spans = self.wait_for(lambda s: sum(x["traceId"] == trace_id for x in s) >= count, timeout)
        return [s for s in spans if s["traceId"] == trace_id]

    def _spans_locked(self):
        return [span for _, body in self.requests
                for rs in body["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]

    def close(self):
        if self.server:
            self.server.shutdown()
        else:
            self.socket.close()

"""Reads the web console's event stream (GET /v2/console/stream) over a real socket."""

import http.client
import json
import time

# A model with two versions and a canary split (20 % to version 2): the console shows
# the split and its verdict on both rows.
CANARIED = """name: "canaried"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
version_policy { specific { versions: [ 1, 2 ] } }
parameters { key: "canary.version" value { string_value: "2" } }
parameters { key: "canary.weight_percent" value { string_value: "20" } }
"""


class ConsoleStream:
    """One open stream; events() yields (event name, data) as they arrive."""

    def __init__(self, port, query="", timeout=15.0):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.request("GET", "/v2/console/stream" + query)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = dict(self.response.getheaders())
        self.buffer = b""

    def next_event(self, deadline_s=15.0):
        """The next (event, data) pair, or None when the body ended."""
        deadline = time.time() + deadline_s
        while b"\n\n" not in self.buffer:
            if time.time() > deadline:
                raise AssertionError("no event in time")
            chunk = self.response.read1(65536)
            if not chunk:
                return None
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\n\n", 1)
        name, data = None, None
        for line in raw.decode().split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if name is None:  # e.g. the "retry:" preamble
            return self.next_event(max(0.1, deadline - time.time()))
        return name, data

    def next_stats(self, predicate=lambda d: True, deadline_s=15.0):
        deadline = time.time() + deadline_s
        while time.time() < deadline:
            event = self.next_event(max(0.1, deadline - time.time()))
            assert event is not None, "stream ended"
            if event[0] == "stats" and predicate(event[1]):
                return event[1]
        raise AssertionError("no matching stats event in time")

    def close(self):
        self.conn.close()

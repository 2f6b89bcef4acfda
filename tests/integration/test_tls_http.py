"""TLS and mutual TLS on the HTTP and metrics ports (docs/tls.md), black box: curl and
Python's ssl against the real binary; client-certificate modes; hostile handshakes
(plaintext to the TLS port, TLS to a plaintext port, stalled and flooded handshakes);
certificate rotation without a restart; the plaintext health port. Certificates are made
here with the openssl CLI."""

import hashlib
import http.client
import json
import os
import re
import selectors
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest

from infera_server import InferaServer, SIMPLE_CONFIG, write_model


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_key_and_csr(pki, name, subject):
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=pki)


def make_ca(pki, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}", cwd=pki)


def sign(pki, name, ca, extensions, days="2"):
    with open(os.path.join(pki, f"{name}.ext"), "w") as f:
        f.write(extensions)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", days, "-extfile", f"{name}.ext", cwd=pki)


def make_expired(pki, name, ca):
    """A client certificate of `ca` valid for one day in 2020 (`openssl ca` takes dates)."""
    make_key_and_csr(pki, name, f"/CN={name}")
    os.makedirs(os.path.join(pki, "ca-db"), exist_ok=True)
    open(os.path.join(pki, "ca-db", "index.txt"), "w").close()
    with open(os.path.join(pki, "ca-db", "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(pki, "ca.cnf"), "w") as f:
        f.write(f"""[ca]
default_ca = test
[test]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
certificate = {ca}.pem
private_key = {ca}.key
default_md = sha256
policy = any
x509_extensions = client
[any]
commonName = supplied
[client]
extendedKeyUsage = clientAuth
""")
    openssl("ca", "-batch", "-config", "ca.cnf", "-startdate", "20200101000000Z", "-enddate",
            "20200102000000Z", "-in", f"{name}.csr", "-out", f"{name}.pem", "-notext", cwd=pki)


SERVER_EXT = "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
CLIENT_EXT = "extendedKeyUsage=clientAuth\n"


@pytest.fixture(scope="module")
def pki():
    with tempfile.TemporaryDirectory(prefix="infera-tls-") as path:
        make_ca(path, "ca")
        make_ca(path, "other-ca")
        for name in ("server", "server2"):
            make_key_and_csr(path, name, "/CN=127.0.0.1")
            sign(path, name, "ca", SERVER_EXT)
        make_key_and_csr(path, "client", "/CN=client")
        sign(path, "client", "ca", CLIENT_EXT)
        make_key_and_csr(path, "foreign", "/CN=foreign")
        sign(path, "foreign", "other-ca", CLIENT_EXT)
        make_expired(path, "expired", "ca")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "selfsigned.key", "-out", "selfsigned.pem", "-days", "2", "-subj", "/CN=client",
                cwd=path)
        yield path


IDENTITY_CONFIG = """
name: "identity_fp32"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
"""


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-tls-repo-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        write_model(path, "identity_fp32", IDENTITY_CONFIG)
        yield path


def p(pki, name):
    return os.path.join(pki, name)


def tls_args(pki, *extra):
    return ("--tls-cert-file", p(pki, "server.pem"), "--tls-key-file", p(pki, "server.key"), *extra)


def logged_port(server, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        match = re.search(what + r" server listening on [^\s]*:(\d+)", server.log())
        if match:
            return int(match.group(1))
        time.sleep(0.02)
    raise AssertionError(f"no {what} port in the log:\n{server.log()}")


def client_context(pki, cert=None):
    context = ssl.create_default_context(cafile=p(pki, "ca.pem"))
    if cert:
        context.load_cert_chain(p(pki, f"{cert}.pem"), p(pki, f"{cert}.key"))
    return context


def https_get(port, context, path="/v2/health/ready", method="GET", body=None, headers=None):
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def curl(pki, url, cert=None, *extra):
    args = ["curl", "-sS", "--max-time", "20", "--cacert", p(pki, "ca.pem"), "-o", "-", "-w", "\n%{http_code}"]
    if cert:
        args += ["--cert", p(pki, f"{cert}.pem"), "--key", p(pki, f"{cert}.key")]
    result = subprocess.run(args + list(extra) + [url], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def simple_payload():
    return {"inputs": [
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}]}


def client_hello():
    """The bytes of a TLS ClientHello, as a client would send them first."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def read_until_closed(sock, timeout):
    """Everything the server sends until it closes the connection; fails on a timeout."""
    sock.settimeout(timeout)
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def handshake_failures(port, context):
    status, _, body = https_get(port, context, "/metrics")
    assert status == 200
    match = re.search(r"^infera_http_tls_handshake_failures_total (\S+)$", body.decode(), re.M)
    return float(match.group(1))


@pytest.fixture(scope="module")
def tls_server(pki, repo):
    s = InferaServer(repo, *tls_args(pki), "--http-read-timeout-secs", "2", "--http-health-port", "0")
    s.wait_ready()
    s.metrics_port = logged_port(s, "Metrics")
    s.health_port = logged_port(s, "Health")
    yield s
    s.stop()


def test_startup_log_says_tls_per_port(tls_server):
    log = tls_server.log()
    assert re.search(r"HTTP server listening on \S+ \(TLS, client certificates: none\)", log), log
    assert re.search(r"Metrics server listening on \S+ \(TLS, client certificates: none\)", log), log
    assert re.search(r"Health server listening on \S+ \(plaintext", log), log


def test_curl_and_python_over_tls_on_http_and_metrics_ports(pki, tls_server):
    code, out, err = curl(pki, f"https://127.0.0.1:{tls_server.port}/v2/health/ready")
    assert code == 0 and out.endswith("\n200"), err
    code, out, err = curl(pki, f"https://127.0.0.1:{tls_server.metrics_port}/metrics")
    assert code == 0 and out.endswith("\n200") and "infera_http_tls_handshake_failures_total" in out, err
    context = client_context(pki)
    assert https_get(tls_server.port, context)[0] == 200
    assert https_get(tls_server.metrics_port, context, "/metrics")[0] == 200
    # A KServe inference, and the same with curl's Expect: 100-continue.
    status, _, body = https_get(tls_server.port, context, "/v2/models/simple/infer", "POST",
                                json.dumps(simple_payload()))
    assert status == 200, body
    sums = {o["name"]: o["data"] for o in json.loads(body)["outputs"]}["OUTPUT0"]
    assert sums == [i + 1 for i in range(16)]
    code, out, err = curl(pki, f"https://127.0.0.1:{tls_server.port}/v2/models/simple/infer", None,
                          "-H", "Expect: 100-continue", "--data-binary", json.dumps(simple_payload()))
    assert code == 0 and out.endswith("\n200"), (out, err)
    # A client that does not trust the CA refuses the server.
    code, _, _ = subprocess.run(["curl", "-sS", "--max-time", "20", f"https://127.0.0.1:{tls_server.port}/"],
                                capture_output=True).returncode, None, None
    assert code != 0


def test_keep_alive_pipelining_and_head_over_tls(pki, tls_server):
    context = client_context(pki)
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=30) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            request = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
            s.sendall(request * 3 + b"HEAD /v2/models/simple HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = read_until_closed(s, 30)
    assert data.count(b"HTTP/1.1 200 OK") == 4, data
    head = data.split(b"HTTP/1.1 200 OK")[-1]
    assert head.endswith(b"\r\n\r\n"), head  # headers only: no body after HEAD


def test_bodies_larger_than_a_record_both_ways_over_tls(pki, tls_server):
    """A request and a response of several TLS records each (16 KiB of plaintext a record)."""
    context = client_context(pki)
    padded = json.dumps(simple_payload()).replace("{", "{" + " " * 40000, 1)  # 40 KB of JSON whitespace
    status, _, body = https_get(tls_server.port, context, "/v2/models/simple/infer", "POST", padded)
    assert status == 200, body
    # An answer of several records: 8,000 floats through identity_fp32 (http.client checks
    # Content-Length against the bytes that arrive).
    values = [i + 0.5 for i in range(8000)]
    request = {"inputs": [{"name": "INPUT0", "shape": [8000], "datatype": "FP32", "data": values}]}
    status, headers, body = https_get(tls_server.port, context, "/v2/models/identity_fp32/infer", "POST",
                                      json.dumps(request))
    assert status == 200 and len(body) > 3 * 16384 and int(headers["Content-Length"]) == len(body), body[:200]
    assert json.loads(body)["outputs"][0]["data"] == values


def test_server_sent_events_stream_over_tls(pki, tls_server):
    conn = http.client.HTTPSConnection("127.0.0.1", tls_server.port, context=client_context(pki), timeout=30)
    try:
        conn.request("GET", "/v2/console/stream")
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
        buffer = b""
        while buffer.count(b"event: ") < 2:  # two events: the stream goes on over TLS
            chunk = response.read1(65536)
            assert chunk, "stream ended"
            buffer += chunk
    finally:
        conn.close()


def test_plaintext_http_to_the_tls_port_is_closed(pki, tls_server):
    before = handshake_failures(tls_server.metrics_port, client_context(pki))
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=30) as s:
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = read_until_closed(s, 30)
    assert b"200" not in reply
    assert handshake_failures(tls_server.metrics_port, client_context(pki)) >= before + 1
    assert https_get(tls_server.port, client_context(pki))[0] == 200


def test_client_hello_to_a_plaintext_port_gets_400(pki, tls_server):
    with socket.create_connection(("127.0.0.1", tls_server.health_port), timeout=30) as s:
        s.sendall(client_hello())
        reply = read_until_closed(s, 30)
    assert reply.startswith(b"HTTP/1.1 400"), reply
    with socket.create_connection(("127.0.0.1", tls_server.health_port), timeout=30) as s:
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert read_until_closed(s, 30).startswith(b"HTTP/1.1 200")


def test_stalled_handshakes_are_closed_at_the_read_timeout(pki, tls_server):
    hello = client_hello()
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=30) as silent, \
            socket.create_connection(("127.0.0.1", tls_server.port), timeout=30) as half:
        half.sendall(hello[: len(hello) // 2])
        start = time.monotonic()
        assert read_until_closed(silent, 30) == b""
        assert read_until_closed(half, 30) == b""
        # --http-read-timeout-secs 2: closed by the timeout, long before the client's 30 s.
        assert time.monotonic() - start < 15


def test_handshake_flood_is_bounded_and_a_good_client_is_served(pki, tls_server):
    hello = client_hello()
    flood = []
    try:
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", tls_server.port), timeout=30)
            s.sendall(hello[:40])
            flood.append(s)
        # While all 200 stall mid-handshake, a good client is served.
        context = client_context(pki)
        for _ in range(5):
            assert https_get(tls_server.port, context)[0] == 200
        # Every stalled one is closed by the server at the read timeout.
        selector = selectors.DefaultSelector()
        for s in flood:
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ)
        open_count = len(flood)
        deadline = time.monotonic() + 30
        while open_count and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
                try:
                    data = key.fileobj.recv(4096)
                except ConnectionResetError:
                    data = b""
                assert data == b"", data
                selector.unregister(key.fileobj)
                open_count -= 1
        assert open_count == 0, f"{open_count} stalled handshakes still open"
    finally:
        for s in flood:
            s.close()
    assert https_get(tls_server.port, client_context(pki))[0] == 200
    assert "TLS handshake failed" not in tls_server.log()  # VERBOSE only: not in an INFO log


def test_health_port_answers_only_health(tls_server):
    conn = http.client.HTTPConnection("127.0.0.1", tls_server.health_port, timeout=30)
    try:
        for path, expected in (("/v2/health/live", 200), ("/v2/health/ready", 200), ("/v2/models/simple", 404),
                               ("/metrics", 404), ("/v2", 404)):
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            assert response.status == expected, path
    finally:
        conn.close()


@pytest.fixture(scope="module")
def mtls_server(pki, repo):
    s = InferaServer(repo, *tls_args(pki, "--tls-ca-file", p(pki, "ca.pem"), "--tls-client-auth", "require"),
                     "--http-health-port", "0")
    s.wait_ready()
    s.metrics_port = logged_port(s, "Metrics")
    s.health_port = logged_port(s, "Health")
    yield s
    s.stop()


@pytest.mark.parametrize("cert", [None, "foreign", "expired", "selfsigned"])
def test_mtls_require_refuses_a_client_without_a_valid_certificate(pki, mtls_server, cert):
    before = handshake_failures(mtls_server.metrics_port, client_context(pki, "client"))
    code, out, err = curl(pki, f"https://127.0.0.1:{mtls_server.port}/v2/health/ready", cert)
    assert code != 0 and not out.endswith("200"), (out, err)
    with pytest.raises((ssl.SSLError, ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)):
        https_get(mtls_server.port, client_context(pki, cert))
    assert handshake_failures(mtls_server.metrics_port, client_context(pki, "client")) >= before + 2
    assert https_get(mtls_server.port, client_context(pki, "client"))[0] == 200


def test_mtls_require_serves_a_valid_client(pki, mtls_server):
    assert "(TLS, client certificates: require)" in mtls_server.log()
    code, out, err = curl(pki, f"https://127.0.0.1:{mtls_server.port}/v2/health/ready", "client")
    assert code == 0 and out.endswith("\n200"), err
    code, out, err = curl(pki, f"https://127.0.0.1:{mtls_server.metrics_port}/metrics", "client")
    assert code == 0 and out.endswith("\n200"), err
    status, _, body = https_get(mtls_server.port, client_context(pki, "client"), "/v2/models/simple/infer", "POST",
                                json.dumps(simple_payload()))
    assert status == 200, body
    # Probes without a certificate: the plaintext health port.
    conn = http.client.HTTPConnection("127.0.0.1", mtls_server.health_port, timeout=30)
    conn.request("GET", "/v2/health/ready")
    assert conn.getresponse().status == 200
    conn.close()


def test_mtls_optional(pki, repo):
    s = InferaServer(repo, *tls_args(pki, "--tls-ca-file", p(pki, "ca.pem"), "--tls-client-auth", "optional"))
    try:
        s.wait_ready()
        port = s.port
        assert https_get(port, client_context(pki))[0] == 200  # no certificate: served
        assert https_get(port, client_context(pki, "client"))[0] == 200
        for bad in ("selfsigned", "expired", "foreign"):  # a certificate that is sent is verified
            with pytest.raises((ssl.SSLError, ConnectionResetError, http.client.RemoteDisconnected,
                                BrokenPipeError)):
                https_get(port, client_context(pki, bad))
        assert https_get(port, client_context(pki))[0] == 200
    finally:
        s.stop()


def fingerprint(pem_text):
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem_text)).hexdigest()


def served_fingerprint(port):
    return fingerprint(ssl.get_server_certificate(("127.0.0.1", port)))


def file_fingerprint(path):
    with open(path) as f:
        return fingerprint(f.read())


def test_certificate_rotation_without_restart(pki, repo):
    live = tempfile.mkdtemp(prefix="infera-tls-live-")
    try:
        cert, key = os.path.join(live, "tls.crt"), os.path.join(live, "tls.key")
        shutil.copy(p(pki, "server.pem"), cert)
        shutil.copy(p(pki, "server.key"), key)
        s = InferaServer(repo, "--tls-cert-file", cert, "--tls-key-file", key)
        try:
            s.wait_ready()
            assert served_fingerprint(s.port) == file_fingerprint(p(pki, "server.pem"))
            context = client_context(pki)
            kept = http.client.HTTPSConnection("127.0.0.1", s.port, context=context, timeout=30)
            kept.request("GET", "/v2/health/live")
            assert kept.getresponse().read() == b""
            # Overwrite both files in place with another certificate (cert-manager style).
            shutil.copy(p(pki, "server2.pem"), cert)
            shutil.copy(p(pki, "server2.key"), key)
            wanted = file_fingerprint(p(pki, "server2.pem"))
            deadline = time.monotonic() + 20
            while served_fingerprint(s.port) != wanted:
                assert time.monotonic() < deadline, "new certificate not served"
                time.sleep(0.1)
            kept.request("GET", "/v2/health/live")  # the open connection keeps working
            response = kept.getresponse()
            response.read()
            assert response.status == 200
            kept.close()
            # A bad replacement (the key of another certificate): the last good one stays,
            # one ERROR for the change. (A check between the two copies above may have
            # logged one for the half-rotated pair: count from here.)
            errors_before = s.log().count("cannot be used")
            shutil.copy(p(pki, "client.key"), key)
            deadline = time.monotonic() + 20
            while s.log().count("cannot be used") == errors_before:
                assert time.monotonic() < deadline, "bad replacement not noticed"
                assert served_fingerprint(s.port) == wanted
                time.sleep(0.1)
            end = time.monotonic() + 2.5  # over two more checks of the unchanged files
            while time.monotonic() < end:
                assert served_fingerprint(s.port) == wanted
                time.sleep(0.1)
            assert s.log().count("cannot be used") == errors_before + 1, s.log()
            assert https_get(s.port, context)[0] == 200
        finally:
            s.stop()
    finally:
        shutil.rmtree(live)


def test_startup_with_a_key_that_does_not_match_exits_naming_the_file(pki, repo):
    with pytest.raises(RuntimeError) as error:
        InferaServer(repo, "--tls-cert-file", p(pki, "server.pem"), "--tls-key-file", p(pki, "client.key"))
    message = str(error.value)
    assert "exited with 1" in message and p(pki, "client.key") in message, message


def test_drain_closes_idle_and_handshaking_tls_connections(pki, repo):
    s = InferaServer(repo, *tls_args(pki))
    s.wait_ready()
    context = client_context(pki)
    idle = http.client.HTTPSConnection("127.0.0.1", s.port, context=context, timeout=30)
    idle.request("GET", "/v2/health/live")
    assert idle.getresponse().read() == b""
    stalled = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    stalled.sendall(client_hello()[:40])
    try:
        start = time.monotonic()
        s.stop()  # SIGTERM; exits 0
        assert time.monotonic() - start < 20  # not held by the open connections
        assert read_until_closed(stalled, 5) == b""
    finally:
        idle.close()
        stalled.close()

"""TLS and mutual TLS on the gRPC port (docs/grpc.md, "TLS and mutual TLS"), black box.

Certificates are made here with the `openssl` CLI: a CA, a server certificate for
127.0.0.1/localhost, a client certificate, an expired one, a self-signed one and one from
another CA. The clients are grpcio's (`ssl_channel_credentials`) and Python's ssl module
(the served certificate's fingerprint, protocol versions).
"""

import hashlib
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import warnings

import grpc
import pytest

from grpc_stubs import pb, pb_grpc
from infera_server import BINARY, InferaServer, SIMPLE_CONFIG, wait_for, write_model

EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(directory, name):
    _openssl("req", "-x509", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", f"/CN=infera test {name}", cwd=directory)


def _issued(directory, name, ca, days=2, server=False, serial=1):
    """A key and a certificate signed by `ca` (self-signed when ca is None); `days` < 0
    makes one that has expired."""
    _openssl("req", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
             cwd=directory)
    ext = os.path.join(directory, f"{name}.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n" if server else "extendedKeyUsage=clientAuth\n")
    signer = ["-CA", f"{ca}.pem", "-CAkey", f"{ca}.key"] if ca else ["-signkey", f"{name}.key"]
    _openssl("x509", "-req", "-in", f"{name}.csr", *signer, "-set_serial", str(serial), "-days", str(days),
             "-extfile", ext, "-out", f"{name}.pem", cwd=directory)


@pytest.fixture(scope="module")
def pki():
    directory = tempfile.mkdtemp(prefix="infera-tls-grpc-")
    _ca(directory, "ca")
    _ca(directory, "other_ca")
    _issued(directory, "server", "ca", server=True, serial=10)
    _issued(directory, "server2", "ca", server=True, serial=11)
    _issued(directory, "client", "ca", serial=20)
    _issued(directory, "expired_client", "ca", days=-1, serial=21)
    _issued(directory, "self_signed_client", None, serial=22)
    _issued(directory, "other_ca_client", "other_ca", serial=23)
    yield lambda name: os.path.join(directory, name)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def repo():
    with tempfile.TemporaryDirectory(prefix="infera-tls-grpc-repo-") as path:
        write_model(path, "simple", SIMPLE_CONFIG)
        yield path


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def tls_channel(server, pki, client=None, root="ca.pem"):
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read(pki(root)),
        private_key=_read(pki(f"{client}.key")) if client else None,
        certificate_chain=_read(pki(f"{client}.pem")) if client else None)
    return grpc.secure_channel(f"127.0.0.1:{server.grpc_port}", credentials)


def server_live(channel):
    return pb_grpc.GRPCInferenceServiceStub(channel).ServerLive(pb.ServerLiveRequest(), timeout=20).live


def assert_serves(server, pki, client=None):
    with tls_channel(server, pki, client) as channel:
        assert server_live(channel), server.log()


def assert_refused(server, pki, client=None, root="ca.pem"):
    with tls_channel(server, pki, client, root) as channel:
        with pytest.raises(grpc.RpcError) as error:
            server_live(channel)
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE, error.value.details()


def tls_server(repo, pki, *flags):
    server = InferaServer(repo, *flags)
    server.wait_ready()
    return server


def infera_tls_flags(pki, client_auth=None, key="server.key"):
    flags = ["--tls-cert-file", pki("server.pem"), "--tls-key-file", pki(key)]
    if client_auth:
        flags += ["--tls-ca-file", pki("ca.pem"), "--tls-client-auth", client_auth]
    return flags


def served_fingerprint(server, pki):
    """SHA-256 of the certificate the gRPC port serves to a new connection (None when
    the handshake fails)."""
    context = ssl.create_default_context(cafile=pki("ca.pem"))
    context.set_alpn_protocols(["h2"])
    try:
        with socket.create_connection(("127.0.0.1", server.grpc_port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()
    except (ssl.SSLError, OSError):
        return None


def file_fingerprint(path):
    with open(path) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def test_model_infer_over_tls_and_plaintext_client_refused(repo, pki):
    server = tls_server(repo, pki, *infera_tls_flags(pki))
    try:
        assert "gRPC TLS on (client certificates: none" in server.log()
        with tls_channel(server, pki) as channel:
            stub = pb_grpc.GRPCInferenceServiceStub(channel)
            assert stub.ServerLive(pb.ServerLiveRequest(), timeout=20).live
            request = pb.ModelInferRequest(model_name="simple")
            for name, values in (("INPUT0", list(range(16))), ("INPUT1", [1] * 16)):
                request.inputs.add(name=name, datatype="INT32", shape=[1, 16])
                request.raw_input_contents.append(struct.pack("<16i", *values))
            response = stub.ModelInfer(request, timeout=20)
            assert list(struct.unpack("<16i", response.raw_output_contents[0])) == [v + 1 for v in range(16)]
            assert list(struct.unpack("<16i", response.raw_output_contents[1])) == [v - 1 for v in range(16)]
        # A plaintext client on the TLS port fails cleanly; the server serves on.
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as plain:
            with pytest.raises(grpc.RpcError) as error:
                server_live(plain)
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE, error.value.details()
        # So does a client that trusts another CA.
        assert_refused(server, pki, root="other_ca.pem")
        assert_serves(server, pki)
    finally:
        server.stop()


def test_plaintext_port_logs_tls_off(repo, pki):
    server = tls_server(repo, pki)
    try:
        assert "gRPC TLS off" in server.log()
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as plain:
            assert server_live(plain)
        assert_refused(server, pki)  # a TLS client on the plaintext port
    finally:
        server.stop()


def test_mutual_tls_required(repo, pki):
    server = tls_server(repo, pki, *infera_tls_flags(pki, "require"))
    try:
        assert "gRPC TLS on (client certificates: require" in server.log()
        for client in (None, "other_ca_client", "expired_client", "self_signed_client"):
            assert_refused(server, pki, client)
        assert_serves(server, pki, "client")
    finally:
        server.stop()


def test_mutual_tls_optional(repo, pki):
    server = tls_server(repo, pki, *infera_tls_flags(pki, "optional"))
    try:
        assert "gRPC TLS on (client certificates: optional" in server.log()
        assert_serves(server, pki)  # no certificate: served
        assert_serves(server, pki, "client")
        for client in ("other_ca_client", "expired_client", "self_signed_client"):
            assert_refused(server, pki, client)  # one that is sent must verify
    finally:
        server.stop()


def test_tritons_flag_names(repo, pki):
    server = tls_server(repo, pki, "--grpc-use-ssl-mutual=true", "--grpc-server-cert", pki("server.pem"),
                        "--grpc-server-key", pki("server.key"), "--grpc-root-cert", pki("ca.pem"))
    try:
        assert "gRPC TLS on (client certificates: require" in server.log()
        assert_refused(server, pki)
        assert_refused(server, pki, "expired_client")
        assert_serves(server, pki, "client")
        server.assert_serving()  # the HTTP port stays plaintext: Triton's flags are gRPC's alone
    finally:
        server.stop()
    server = tls_server(repo, pki, "--grpc-use-ssl=true", "--grpc-server-cert", pki("server.pem"),
                        "--grpc-server-key", pki("server.key"))
    try:
        assert "gRPC TLS on (client certificates: none" in server.log()
        assert_serves(server, pki)
    finally:
        server.stop()


def test_tls_versions_below_1_2_refused(repo, pki):
    server = tls_server(repo, pki, *infera_tls_flags(pki))
    try:
        assert served_fingerprint(server, pki) == file_fingerprint(pki("server.pem"))
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(pki("ca.pem"))
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client offer TLS 1.1 at all
        with warnings.catch_warnings():  # the names themselves are deprecated
            warnings.simplefilter("ignore", DeprecationWarning)
            old.minimum_version = ssl.TLSVersion.TLSv1
            old.maximum_version = ssl.TLSVersion.TLSv1_1
        with socket.create_connection(("127.0.0.1", server.grpc_port), timeout=10) as raw:
            with pytest.raises(ssl.SSLError):
                old.wrap_socket(raw, server_hostname="127.0.0.1")
        assert_serves(server, pki)
    finally:
        server.stop()


def _start_failure(repo, *flags):
    result = subprocess.run([BINARY, "serve", "--model-repository", repo, "--http-address", "127.0.0.1",
                             "--http-port", "0", "--grpc-address", "127.0.0.1", "--grpc-port", "0",
                             "--metrics-port", "0", *flags], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_bad_files_fail_the_start_naming_the_file(repo, pki):
    output = _start_failure(repo, *infera_tls_flags(pki, key="client.key"))
    assert pki("client.key") in output and "does not belong to the certificate" in output, output
    output = _start_failure(repo, "--tls-cert-file", pki("server.key"), "--tls-key-file", pki("server.key"))
    assert pki("server.key") in output and "no PEM certificate" in output, output


def test_rotated_certificate_served_without_restart(repo, pki):
    directory = tempfile.mkdtemp(prefix="infera-tls-rotate-")
    cert, key = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    shutil.copy(pki("server.pem"), cert)
    shutil.copy(pki("server.key"), key)
    server = tls_server(repo, pki, "--tls-cert-file", cert, "--tls-key-file", key)
    try:
        assert served_fingerprint(server, pki) == file_fingerprint(pki("server.pem"))
        with tls_channel(server, pki) as old_channel:
            assert server_live(old_channel)
            # Replace both files, each atomically (write beside, rename over).
            for source, target in ((pki("server2.key"), key), (pki("server2.pem"), cert)):
                shutil.copy(source, target + ".new")
                os.replace(target + ".new", target)
            rotated = file_fingerprint(pki("server2.pem"))
            # gRPC re-reads the files every 5 s: well inside this bound.
            wait_for(lambda: served_fingerprint(server, pki) == rotated, timeout=30, interval=0.2)
            assert_serves(server, pki)
            assert server_live(old_channel)  # the open connection serves on
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


# --- infera bench and infera_grpc_load over TLS (perf_analyzer's --ssl-grpc-* flags) -------

BENCH_FAST = ["--measurement-interval", "300", "--warmup", "200", "--max-trials", "4", "--max-duration", "60",
              "--progress", "off"]


def run_bench(server, *args):
    return subprocess.run([BINARY, "bench", "-u", f"127.0.0.1:{server.grpc_port}", "-i", "grpc", "-m", "simple",
                           *BENCH_FAST, *args], capture_output=True, text=True, timeout=120)


def test_bench_over_mutual_tls(repo, pki, tmp_path):
    server = tls_server(repo, pki, *infera_tls_flags(pki, "require"))
    try:
        client = ["--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", pki("ca.pem"),
                  "--ssl-grpc-private-key-file", pki("client.key"),
                  "--ssl-grpc-certificate-chain-file", pki("client.pem")]
        for streaming in ([], ["--streaming"]):
            report_path = str(tmp_path / f"report{len(streaming)}.json")
            result = run_bench(server, *client, *streaming, "--concurrency-range", "2", "--check",
                               "--json", report_path)
            assert result.returncode == 0, result.stdout + result.stderr
            with open(report_path) as f:
                totals = json.load(f)["totals"]
            assert totals["ok"] > 0 and totals["errors"] == 0, totals
            assert totals["server_requests"] == totals["sent"], totals  # statistics over TLS too
        # Without the client certificate the server refuses the handshake.
        refused = run_bench(server, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", pki("ca.pem"))
        assert refused.returncode == 2 and "UNAVAILABLE" in refused.stderr, refused.stdout + refused.stderr
        # A plaintext bench against the TLS port fails the same way.
        plain = run_bench(server)
        assert plain.returncode == 2 and "UNAVAILABLE" in plain.stderr, plain.stdout + plain.stderr
        missing = str(tmp_path / "missing.pem")
        unreadable = run_bench(server, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", missing)
        assert unreadable.returncode == 2, unreadable.stdout + unreadable.stderr
        assert "--ssl-grpc-root-certifications-file" in unreadable.stderr and missing in unreadable.stderr
        usage = run_bench(server, "--ssl-grpc-private-key-file", pki("client.key"))
        assert usage.returncode == 2 and "--ssl-grpc-use-ssl" in usage.stderr, usage.stderr
        # The benchmark load generator (tools/grpc_load) with the same flags.
        load = subprocess.run([os.path.join(os.path.dirname(BINARY), "tools", "grpc_load", "infera_grpc_load"),
                               "--target", f"127.0.0.1:{server.grpc_port}", "--concurrency", "2",
                               "--warmup-s", "0", "--duration-s", "1", *client[1:]],
                              capture_output=True, text=True, timeout=60)
        assert load.returncode == 0, load.stdout + load.stderr
        result = json.loads(load.stdout.split("RESULT ", 1)[1])
        assert result["requests"] > 0 and result["errors"] == 0, result
    finally:
        server.stop()

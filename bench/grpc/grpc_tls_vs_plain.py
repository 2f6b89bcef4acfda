#!/usr/bin/python3
"""gRPC over TLS vs plaintext, side by side (docs/benchmarks.md, "gRPC TLS").

Makes a throw-away CA and server certificate with the `openssl` CLI, starts two infera
processes on loopback with the same flags — one serving gRPC in plaintext, one over TLS
(--tls-cert-file/--tls-key-file; with --mtls also --tls-client-auth require and a client
certificate) — and alternates measured runs of the gRPC load generator
(tools/grpc_load, `simple`, one TCP connection per virtual client, every answer checked)
between them, so both see the same machine noise. Each measured run opens its connections
(16 handshakes: negligible next to 10 s of load) after a separate warm-up run. Prints
every run, then the medians and the server's CPU time per request.

    bench/grpc/grpc_tls_vs_plain.py --build build --repo demo-models \\
        [--concurrency 16] [--duration 10] [--reps 5] [--mtls]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grpc_vs_http import result_of, server_cpu_seconds  # noqa: E402

import re  # noqa: E402
import time  # noqa: E402


def make_pki(directory):
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=bench ca")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        with open(os.path.join(directory, f"{name}.ext"), "w") as f:
            f.write(ext + "\n")
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "7",
                "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")


def start_server(build, repo, extra):
    log = tempfile.NamedTemporaryFile(prefix="infera-tls-bench-", suffix=".log", delete=False)
    process = subprocess.Popen([os.path.join(build, "infera"), "serve", "--model-repository", repo,
                                "--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "0",
                                "--grpc-address", "127.0.0.1", "--grpc-port", "0", *extra],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        text = open(log.name).read()
        grpc = re.search(r"gRPC server listening on [^\s]*:(\d+)", text)
        if grpc and "server is" in text:
            return process, int(grpc.group(1))
        if process.poll() is not None:
            sys.exit(f"infera exited:\n{text}")
        time.sleep(0.1)
    sys.exit("infera did not start")


def run_load(build, port, concurrency, duration, tls_flags):
    cmd = [os.path.join(build, "tools", "grpc_load", "infera_grpc_load"), "--target", f"127.0.0.1:{port}",
           "--model", "simple", "--concurrency", str(concurrency), "--warmup-s", "0", "--duration-s",
           str(duration), *tls_flags]
    out = subprocess.run(cmd, capture_output=True, text=True)
    result = result_of(out.stdout)
    if out.returncode != 0 or result["errors"]:
        sys.exit(f"run failed ({' '.join(cmd)}):\n{out.stdout}{out.stderr}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--repo", default="demo-models")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--mtls", action="store_true", help="require and send a client certificate")
    args = parser.parse_args()
    pki = tempfile.mkdtemp(prefix="infera-tls-bench-pki-")
    make_pki(pki)
    p = lambda name: os.path.join(pki, name)  # noqa: E731
    server_tls = ["--tls-cert-file", p("server.pem"), "--tls-key-file", p("server.key")]
    client_tls = ["--ssl-grpc-root-certifications-file", p("ca.pem")]
    if args.mtls:
        server_tls += ["--tls-ca-file", p("ca.pem"), "--tls-client-auth", "require"]
        client_tls += ["--ssl-grpc-private-key-file", p("client.key"), "--ssl-grpc-certificate-chain-file",
                       p("client.pem")]
    servers = {"plain": (start_server(args.build, args.repo, []), []),
               "tls": (start_server(args.build, args.repo, server_tls), client_tls)}
    runs = {name: [] for name in servers}
    try:
        for rep in range(args.reps):
            for name, ((process, port), flags) in servers.items():
                run_load(args.build, port, args.concurrency, args.warmup, flags)  # warm-up, not measured
                cpu_before = server_cpu_seconds(process.pid)
                r = run_load(args.build, port, args.concurrency, args.duration, flags)
                r["server_cpu_us"] = 1e6 * (server_cpu_seconds(process.pid) - cpu_before) / r["requests"]
                runs[name].append(r)
                print(f"rep {rep + 1} {name:5} c={args.concurrency} {r['throughput_rps']:9.0f} req/s  "
                      f"p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  server {r['server_cpu_us']:.0f} us CPU/req",
                      flush=True)
    finally:
        for (process, _), _ in servers.values():
            process.terminate()
            process.wait()
        shutil.rmtree(pki, ignore_errors=True)
    print(f"\nmedians over {args.reps} runs, c={args.concurrency}{' (mutual TLS)' if args.mtls else ''}:")
    for name, results in runs.items():
        med = lambda key: statistics.median(r[key] for r in results)  # noqa: E731
        print(f"  {name:5} {med('throughput_rps'):9.0f} req/s  p50 {med('p50_ms'):.3f} ms  "
              f"p99 {med('p99_ms'):.3f} ms  server {med('server_cpu_us'):.0f} us CPU/req")
    ratio = statistics.median(r["throughput_rps"] for r in runs["tls"]) / statistics.median(
        r["throughput_rps"] for r in runs["plain"])
    print(f"  tls/plain throughput: {ratio:.2f}")


if __name__ == "__main__":
    main()

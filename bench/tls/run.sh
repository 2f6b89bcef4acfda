#!/usr/bin/env bash
# TLS vs plaintext throughput of the `simple` model over HTTP keep-alive (docs/benchmarks.md,
# "TLS on the HTTP port"). Two servers on loopback, one plaintext and one TLS (a throwaway
# P-256 certificate made here); wrk loads one at a time, alternating, RUNS times each.
#   bench/tls/run.sh [build/infera] [demo-models]     (env: CONNECTIONS=16 DURATION=10s RUNS=3)
set -euo pipefail
BINARY=${1:-build/infera}
REPO=${2:-demo-models}
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-10s}
RUNS=${RUNS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" \
  -out "$WORK/cert.pem" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

start() {  # start NAME ARGS...: prints the HTTP port once the server is ready
  local name=$1; shift
  "$BINARY" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port 0 --grpc-port 0 \
    --metrics-port 0 "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  until grep -q "server is ready" "$WORK/$name.log"; do
    kill -0 "${PIDS[-1]}" || { cat "$WORK/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  grep -o "HTTP server listening on [^ ]*" "$WORK/$name.log" | grep -o '[0-9]*$'
}
plain_port=$(start plain)
tls_port=$(start tls --tls-cert-file "$WORK/cert.pem" --tls-key-file "$WORK/key.pem")

rate() {  # rate URL: requests/s of one wrk run
  wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$HERE/simple_infer.lua" "$1" | awk '/Requests\/sec/ {print $2}'
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
plain=() tls=()
for ((i = 0; i < RUNS; i++)); do
  plain+=("$(rate "http://127.0.0.1:$plain_port/v2/models/simple/infer")")
  tls+=("$(rate "https://127.0.0.1:$tls_port/v2/models/simple/infer")")
done
p=$(printf '%s\n' "${plain[@]}" | median)
t=$(printf '%s\n' "${tls[@]}" | median)
echo "plaintext req/s: ${plain[*]} (median $p)"
echo "TLS       req/s: ${tls[*]} (median $t)"
awk -v p="$p" -v t="$t" 'BEGIN {printf "TLS / plaintext: %.2f\n", t / p}'

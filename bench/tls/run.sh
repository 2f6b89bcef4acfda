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

start() {  # start NAME ARGS...: sets PORT and PID once the server is ready
  local name=$1; shift
  "$BINARY" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port 0 --grpc-port 0 \
    --metrics-port 0 "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  until grep -qs "server is ready" "$WORK/$name.log"; do
    kill -0 "${PIDS[-1]}" || { cat "$WORK/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  PID=${PIDS[-1]}
  PORT=$(grep -o "HTTP server listening on [^ ]*" "$WORK/$name.log" | grep -o '[0-9]*$')
}
start plain
plain_port=$PORT plain_pid=$PID
start tls --tls-cert-file "$WORK/cert.pem" --tls-key-file "$WORK/key.pem"
tls_port=$PORT tls_pid=$PID

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # the server's user + system time
# run URL PID: "requests/s server-µs-per-request" of one wrk run (the server's CPU time per
# request, from /proc: on a small machine wrk's own TLS work competes with the server's).
run() {
  local before after out
  before=$(cpu_ticks "$2")
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$HERE/simple_infer.lua" "$1")
  after=$(cpu_ticks "$2")
  awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '
    /^Requests\/sec/ {rate = $2} /requests in/ {n = $1}
    END {printf "%s %.1f\n", rate, ticks / hz * 1e6 / n}' <<<"$out"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
plain=() tls=() plain_cpu=() tls_cpu=()
for ((i = 0; i < RUNS; i++)); do
  read -r r c < <(run "http://127.0.0.1:$plain_port/v2/models/simple/infer" "$plain_pid")
  plain+=("$r") plain_cpu+=("$c")
  read -r r c < <(run "https://127.0.0.1:$tls_port/v2/models/simple/infer" "$tls_pid")
  tls+=("$r") tls_cpu+=("$c")
done
p=$(printf '%s\n' "${plain[@]}" | median) pc=$(printf '%s\n' "${plain_cpu[@]}" | median)
t=$(printf '%s\n' "${tls[@]}" | median) tc=$(printf '%s\n' "${tls_cpu[@]}" | median)
echo "plaintext req/s: ${plain[*]} (median $p); server CPU µs/request: ${plain_cpu[*]} (median $pc)"
echo "TLS       req/s: ${tls[*]} (median $t); server CPU µs/request: ${tls_cpu[*]} (median $tc)"
awk -v p="$p" -v t="$t" -v pc="$pc" -v tc="$tc" \
  'BEGIN {printf "TLS / plaintext: throughput %.2f, server CPU per request %.2f\n", t / p, tc / pc}'

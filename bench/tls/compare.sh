#!/usr/bin/env bash
# Two builds side by side on TLS vs plaintext throughput of the `simple` model over HTTP
# keep-alive (docs/benchmarks.md, "TLS on the HTTP port"): for a change to the TLS path,
# measured on a shared machine. Four servers on loopback (each binary plaintext and TLS, a
# throwaway P-256 certificate made here); wrk loads one at a time, round-robin
# (old plain, old TLS, new plain, new TLS, each round starting one later), RUNS rounds, so
# drifting background load falls on all four alike.
#   bench/tls/compare.sh OLD_BINARY NEW_BINARY [demo-models]   (env: CONNECTIONS=16 DURATION=5s RUNS=5)
# Per server: the median req/s, the server's CPU µs per request (/proc, user + system) and
# wrk's (its own TLS work shares the machine); per binary: TLS / plaintext.
set -euo pipefail
OLD=$1
NEW=$2
REPO=${3:-demo-models}
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-5s}
RUNS=${RUNS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" \
  -out "$WORK/cert.pem" -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

declare -A URL PID
start() {  # start NAME BINARY ARGS...: fills URL[NAME] and PID[NAME] once the server is ready
  local name=$1 binary=$2 scheme=http; shift 2
  [[ $# -gt 0 ]] && scheme=https
  "$binary" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port 0 --grpc-port 0 \
    --metrics-port 0 "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  until grep -qs "server is ready" "$WORK/$name.log"; do
    kill -0 "${PIDS[-1]}" || { cat "$WORK/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  PID[$name]=${PIDS[-1]}
  URL[$name]="$scheme://127.0.0.1:$(grep -o "HTTP server listening on [^ ]*" "$WORK/$name.log" | grep -o '[0-9]*$')/v2/models/simple/infer"
}
TLS=(--tls-cert-file "$WORK/cert.pem" --tls-key-file "$WORK/key.pem")
start old_plain "$OLD"
start old_tls "$OLD" "${TLS[@]}"
start new_plain "$NEW"
start new_tls "$NEW" "${TLS[@]}"
NAMES=(old_plain old_tls new_plain new_tls)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system time
# run NAME: "requests/s server-µs-per-request wrk-µs-per-request" of one wrk run
run() {
  local before after out
  before=$(cpu_ticks "${PID[$1]}")
  out=$(/usr/bin/time -f "wrk-cpu %U %S" wrk -t2 -c"$CONNECTIONS" -d"$DURATION" -s "$HERE/simple_infer.lua" "${URL[$1]}" 2>&1)
  after=$(cpu_ticks "${PID[$1]}")
  awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '
    /^Requests\/sec/ {rate = $2} /requests in/ {n = $1} /^wrk-cpu/ {client = $2 + $3}
    END {printf "%s %.2f %.2f\n", rate, ticks / hz * 1e6 / n, client * 1e6 / n}' <<<"$out"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
declare -A RATES SERVER CLIENT
for name in "${NAMES[@]}"; do wrk -t2 -c"$CONNECTIONS" -d1s -s "$HERE/simple_infer.lua" "${URL[$name]}" >/dev/null; done
for ((i = 0; i < RUNS; i++)); do
  for ((k = 0; k < 4; k++)); do  # each round starts one server later: no server always goes first
    name=${NAMES[(i + k) % 4]}
    read -r r s c < <(run "$name")
    RATES[$name]+="$r " SERVER[$name]+="$s " CLIENT[$name]+="$c "
  done
done
declare -A MEDIAN
for name in "${NAMES[@]}"; do
  MEDIAN[$name]=$(tr ' ' '\n' <<<"${RATES[$name]}" | grep . | median)
  printf '%-9s req/s: %s(median %s); server µs/request median %s; wrk µs/request median %s\n' "$name" \
    "${RATES[$name]}" "${MEDIAN[$name]}" "$(tr ' ' '\n' <<<"${SERVER[$name]}" | grep . | median)" \
    "$(tr ' ' '\n' <<<"${CLIENT[$name]}" | grep . | median)"
done
# Per round too: how many rounds reached 0.8 (each TLS run over the same round's plaintext run).
for bin in old new; do
  read -r -a p <<<"${RATES[${bin}_plain]}"
  read -r -a t <<<"${RATES[${bin}_tls]}"
  per_round=$(for ((i = 0; i < RUNS; i++)); do awk -v p="${p[i]}" -v t="${t[i]}" 'BEGIN {printf "%.2f ", t / p}'; done)
  awk -v b="$bin" -v p="${MEDIAN[${bin}_plain]}" -v t="${MEDIAN[${bin}_tls]}" -v r="$per_round" \
    'BEGIN {n = split(r, v, " "); k = 0; for (i = 1; i <= n; i++) if (v[i] >= 0.8) k++;
            printf "%s: TLS / plaintext (medians) %.2f; per round %s(%d of %d >= 0.8)\n", b, t / p, r, k, n}'
done

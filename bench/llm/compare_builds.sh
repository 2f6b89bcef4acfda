#!/usr/bin/env bash
# Two infera binaries side by side on the LLM serving benchmark (docs/benchmarks.md,
# "LLM serving: before / after"): the random 45.6 M-parameter Llama of run_llm_bench.sh,
# streamed /v1/completions, 64-token prompts, 64 output tokens, C=1 and C=16.
# Never part of `make test`.
#
#   bench/llm/compare_builds.sh OLD_BINARY NEW_BINARY [REPEATS]
#
# Both servers load the same repository and stay up for the whole run; each round runs
# every row on both, back to back, the order swapped every round, so the machine's load
# of the moment falls on both sides alike. The medians of REPEATS (default 3) rounds
# come from bench/llm/summarize.py, labelled "old C=…" and "new C=…".
set -euo pipefail
OLD=$(realpath "$1")
NEW=$(realpath "$2")
REPEATS=${3:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPO=$(mktemp -d /tmp/infera-llm-compare.XXXXXX)
OUT=$REPO/results.jsonl
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$REPO"' EXIT

/usr/bin/python3 "$ROOT/bench/llm/make_bench_model.py" --out "$REPO" --threads 1 >/dev/null

start() {  # binary, log → the HTTP port on stdout
  OMP_WAIT_POLICY=passive "$1" serve --model-repository "$REPO" --http-address 127.0.0.1 \
    --http-port 0 --grpc-port 0 --metrics-port 0 --http-thread-count 1 >"$2" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 600); do grep -q "server is" "$2" && break; sleep 0.1; done
  grep -q "server is ready" "$2" || { echo "$1 did not become ready:" >&2; cat "$2" >&2; exit 1; }
}
start "$OLD" "$REPO/old.log"
start "$NEW" "$REPO/new.log"
port() { grep -o "HTTP server listening on [^ ]*" "$1" | head -1 | sed 's/.*://'; }
declare -A PORT=([old]=$(port "$REPO/old.log") [new]=$(port "$REPO/new.log"))

run() {  # side, concurrency
  local n=$(( $2 < 4 ? 16 : 4 * $2 ))
  /usr/bin/python3 "$ROOT/bench/llm/openai_bench.py" --port "${PORT[$1]}" --prompt-tokens 64 --max-tokens 64 \
    --model bench_nocache --concurrency "$2" --requests "$n" --warmup "$2" \
    | /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); r['label']='$1 C=$2'; print(json.dumps(r))" \
    >>"$OUT"
}

for R in $(seq "$REPEATS"); do
  echo "# round $R: $(uptime)"
  if (( R % 2 )); then sides=(old new); else sides=(new old); fi
  for C in 1 16; do
    for side in "${sides[@]}"; do run "$side" "$C"; done
  done
done
echo "# medians of $REPEATS ($OLD vs $NEW)"
/usr/bin/python3 "$ROOT/bench/llm/summarize.py" "$OUT" | sort

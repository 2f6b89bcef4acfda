#!/usr/bin/env bash
# LLM serving benchmark (docs/benchmarks.md, "LLM serving"): the random 45.6 M-parameter
# Llama, 64-token prompts, 64 output tokens, over /v1/completions streaming, measured by
# bench/llm/openai_bench.py. Never part of `make test`.
#
#   bench/llm/run_llm_bench.sh [BUILD_DIR] [THREADS] [REPEATS] [ab|quant]
#
# Every row runs REPEATS times (default 3), round-robin, with `uptime` before each round;
# bench/llm/summarize.py prints the medians. With `ab`, each round also runs C=1 and C=8
# on `bench_blas` (the OpenBLAS matmul) and `bench_other_threads` (the other thread
# count) right after the same rows on `bench_nocache`, in the same server: ratios
# side by side under the same machine load.
# With `quant` (docs/llm.md, "Weight quantisation"), the rounds are instead C=1, 8 and
# 16 on the bench model as fp32 (`bench_nocache`), bf16, int8 and int4 and on the fortune
# demo model (from $INFERA_DEMO_REPO, default demo-models/; skipped when missing) as is
# (bf16), int8 and int4, round-robin in one server; the server log's weight and KV
# memory lines for every model are printed at the end.
set -euo pipefail
BUILD=${1:-build}
THREADS=${2:-1}
REPEATS=${3:-3}
AB=${4:-}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
REPO=$(mktemp -d /tmp/infera-llm-bench.XXXXXX)
LOG=$REPO/server.log
OUT=$REPO/results.jsonl
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$REPO"' EXIT

MODE_FLAG=
if [ "$AB" = ab ]; then MODE_FLAG=--ab; elif [ "$AB" = quant ]; then MODE_FLAG=--quant; fi
/usr/bin/python3 "$ROOT/bench/llm/make_bench_model.py" --out "$REPO" --threads "$THREADS" $MODE_FLAG >/dev/null
DEMO=${INFERA_DEMO_REPO:-$ROOT/demo-models}
FORTUNES=()
if [ "$AB" = quant ] && [ -d "$DEMO/fortune" ]; then
  for Q in none int8 int4; do
    NAME=fortune_$Q
    mkdir -p "$REPO/$NAME"
    cp -r "$DEMO/fortune/1" "$REPO/$NAME/1"
    sed -e "s/name: \"fortune\"/name: \"$NAME\"/" \
        -e "s/\"max_num_seqs\" value: { string_value: \"8\" }/\"max_num_seqs\" value: { string_value: \"16\" }/" \
        -e "s/\"num_threads\" value: { string_value: \"1\" }/\"num_threads\" value: { string_value: \"$THREADS\" }/" \
        "$DEMO/fortune/config.pbtxt" >"$REPO/$NAME/config.pbtxt"
    echo "parameters { key: \"quantization\" value: { string_value: \"$Q\" } }" >>"$REPO/$NAME/config.pbtxt"
    echo "parameters { key: \"enable_prefix_caching\" value: { string_value: \"false\" } }" >>"$REPO/$NAME/config.pbtxt"
    FORTUNES+=("$NAME")
  done
fi
OMP_WAIT_POLICY=passive "$ROOT/$BUILD/infera" serve --model-repository "$REPO" --http-address 127.0.0.1 \
  --http-port 0 --grpc-port 0 --http-thread-count 1 >"$LOG" 2>&1 &
PID=$!
for _ in $(seq 600); do grep -q "server is" "$LOG" && break; sleep 0.1; done
PORT=$(grep -o "HTTP server listening on [^ ]*" "$LOG" | head -1 | sed 's/.*://')
BENCH="/usr/bin/python3 $ROOT/bench/llm/openai_bench.py --port $PORT --prompt-tokens 64 --max-tokens 64"

run() {  # label, then openai_bench arguments
  local label=$1
  shift
  $BENCH "$@" | /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); r['label']='$label'; print(json.dumps(r))" \
    | tee -a "$OUT"
}

echo "# threads=$THREADS repeats=$REPEATS"
if [ "$AB" = quant ]; then
  for R in $(seq "$REPEATS"); do
    echo "# round $R: $(uptime)"
    for C in 1 8 16; do
      N=$(( C < 4 ? 8 : 2 * C ))
      for M in bench_nocache bench_bf16 bench_int8 bench_int4; do
        run "quant C=$C $M" --model "$M" --concurrency "$C" --requests "$N" --warmup "$C"
      done
      for M in "${FORTUNES[@]}"; do
        run "quant C=$C $M" --model "$M" --concurrency "$C" --requests "$N" --warmup "$C" --vocab 1024
      done
    done
  done
  echo "# medians of $REPEATS"
  /usr/bin/python3 "$ROOT/bench/llm/summarize.py" "$OUT"
  echo "# memory (server log)"
  grep -o "model '[a-z0-9_]*': .*MiB); max_model_len" "$LOG" || true
  exit 0
fi
for R in $(seq "$REPEATS"); do
  echo "# round $R: $(uptime)"
  for C in 1 4 8 16; do
    N=$(( C < 4 ? 16 : 4 * C ))
    run "C=$C" --model bench_nocache --concurrency "$C" --requests "$N" --warmup "$C"
  done
  # 48 of 64 prompt tokens shared, C=8: prefix caching on, then off.
  run "shared48 cache on" --model bench --concurrency 8 --requests 32 --warmup 8 --shared-prefix 48 --seed $((7 + R))
  run "shared48 cache off" --model bench_nocache --concurrency 8 --requests 32 --warmup 8 --shared-prefix 48 \
    --seed $((7 + R))
  if [ -n "$AB" ]; then
    for C in 1 8; do
      N=$(( C < 4 ? 16 : 4 * C ))
      for M in bench_nocache bench_blas bench_other_threads; do
        run "ab C=$C $M" --model "$M" --concurrency "$C" --requests "$N" --warmup "$C"
      done
    done
  fi
done
echo "# medians of $REPEATS"
/usr/bin/python3 "$ROOT/bench/llm/summarize.py" "$OUT"

#!/usr/bin/env bash
# Response cache: hit latency vs execution (docs/response_cache.md, docs/benchmarks.md).
#
#   bench/response_cache.sh [DEMO_REPO] [SECONDS]
#
# Serves a cached and an uncached copy of `simple` (add_sub: execution is nearly free)
# and of `resnet18` (TorchScript, tens of ms) from a scratch repository (hard links into
# DEMO_REPO), with --cache-config local,size=256 MiB, and runs `infera bench` at
# concurrency 1 against each: --input-data zero sends one payload, so every request to a
# cached copy after the first is a hit. Prints bench's table and each copy's cache
# statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO=${1:-demo-models}
SECONDS_PER_RUN=${2:-5}
BIN=build/infera
REPO=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$REPO"' EXIT

for model in simple resnet18; do
  for copy in "$model" "${model}_cached"; do
    cp -rl "$DEMO/$model" "$REPO/$copy"
    config=$(sed "s/name: \"$model\"/name: \"$copy\"/" "$DEMO/$model/config.pbtxt")
    rm "$REPO/$copy/config.pbtxt"
    printf '%s\n' "$config" > "$REPO/$copy/config.pbtxt"
    [ "$copy" = "$model" ] || echo 'response_cache { enable: true }' >> "$REPO/$copy/config.pbtxt"
  done
done

LOG=$REPO/server.log
"$BIN" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port 0 --grpc-port 0 \
  --metrics-port 0 --cache-config local,size=268435456 >"$LOG" 2>&1 &
SERVER=$!
until grep -q "server is ready\|server is NOT ready" "$LOG"; do
  kill -0 "$SERVER" || { cat "$LOG"; exit 1; }
  sleep 0.2
done
PORT=$(sed -n 's/.*HTTP server listening on [^ ]*:\([0-9]*\).*/\1/p' "$LOG" | head -1)

for model in simple simple_cached resnet18 resnet18_cached; do
  echo "== $model"
  "$BIN" bench -m "$model" -u "127.0.0.1:$PORT" --input-data zero --input-tensor-format binary \
    --output-tensor-format binary --concurrency-range 1 --warmup 1000 --duration "$SECONDS_PER_RUN"
  curl -s "http://127.0.0.1:$PORT/v2/models/$model/stats" |
    /usr/bin/python3 -c 'import json,sys; s=json.load(sys.stdin)["model_stats"][0]; i=s["inference_stats"]; print("executions", s["execution_count"], "cache_hit", i["cache_hit"], "cache_miss", i["cache_miss"])'
done

#!/usr/bin/env bash
# `make bench`: the benchmark suite (never part of `make test`). Each scenario runs its
# sides in one invocation and prints medians of repeated runs; docs/benchmarks.md quotes
# the output together with the command.
#
#   bench/run_all.sh BUILD_DIR DEMO_REPO                  everything (~15 min on 2 cores)
#   bench/run_all.sh BUILD_DIR DEMO_REPO SCENARIO... [--quick] [--repeats N]
#       only the infera bench scenarios named: overhead, baseline, limit, batching,
#       instances, overload, slo, observability, memory, shm, pipeline
#       (bench/scenarios.py; --quick: one short repeat, a smoke test)
set -euo pipefail
BUILD=${1:-build}
REPO=${2:-demo-models}
shift $(( $# >= 2 ? 2 : $# ))
HERE=$(cd "$(dirname "$0")" && pwd)

if [ $# -eq 0 ]; then
  echo "== Tensor codec (JSON and binary), Google Benchmark, medians of 3"
  "$BUILD/bench/micro/codec_benchmark" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_filter='median' 2>/dev/null || \
  "$BUILD/bench/micro/codec_benchmark" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

  echo
  echo "== In-process latency through the pytorch backend (1 thread, median of 3)"
  for model_batch in resnet18:1 resnet18:8 ranker:1 ranker:256 text_encoder:1 text_encoder:64; do
    model=${model_batch%%:*}
    batch=${model_batch##*:}
    for optimize in false true; do
      OMP_WAIT_POLICY=passive "$BUILD/bench/micro/torch_backend_bench" --repo "$REPO" --model "$model" \
        --batch "$batch" --optimize "$optimize" --threads 1 --repeats 3
    done
  done
  echo
fi

echo "== infera bench scenarios (bench/scenarios.py)"
/usr/bin/python3 "$HERE/scenarios.py" --build "$BUILD" --repo "$REPO" "$@"

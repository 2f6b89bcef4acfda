#!/usr/bin/env bash
# Accuracy of the weight quantisations (docs/llm.md, "Weight quantisation"): llm_eval on
# the fortune demo model and the random 45.6 M bench model, one markdown row per
# configuration against the unquantised model. Never part of `make test`.
#
#   bench/llm/run_quant_eval.sh [BUILD_DIR] [DEMO_REPO]
#
# Texts: fortune — /usr/share/games/fortunes/literature (its training text: the demo is
# trained on every fortune, so there is no held-out fortune) and
# /usr/share/common-licenses/GPL-3 (held out: never trained on, out of distribution);
# bench — GPL-3 (random weights: only the agreement columns mean anything there).
set -euo pipefail
BUILD=${1:-build}
DEMO=${2:-demo-models}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EVAL="$ROOT/$BUILD/tools/llm/llm_eval"
TMP=$(mktemp -d /tmp/infera-quant-eval.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$ROOT/bench/llm/make_bench_model.py" --out "$TMP" --quant >/dev/null

row() {  # label, text, then llm_eval arguments
  local label=$1 text=$2
  shift 2
  "$EVAL" --text "$text" --max-tokens 1024 --prompts 16 --prompt-tokens 16 --agreement-tokens 32 "$@" |
    /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin); p = r['perplexity']; g = r['greedy']
print(f\"| $label | {r['weight_bytes'] / 2**20:.1f} | {p['reference']:.3f} | {p['model']:.3f} | {p['top1_agreement']:.3f} | {g['prefix_fraction']:.3f} | {g['teacher_forced_fraction']:.3f} |\")"
}

echo "| model, text, weights | weight MiB | ppl reference | ppl | top-1 agreement (text) | greedy prefix agreement | greedy teacher-forced agreement |"
echo "|---|---|---|---|---|---|---|"
case $DEMO in /*) ;; *) DEMO=$ROOT/$DEMO ;; esac
FORTUNE="$DEMO/fortune/1"
if [ -d "$FORTUNE" ]; then
  for text in /usr/share/games/fortunes/literature /usr/share/common-licenses/GPL-3; do
    for q in none int8 int4; do
      row "fortune, $(basename "$text"), $q" "$text" --model "$FORTUNE" --param quantization=$q
    done
  done
fi
B="$TMP/bench/1"
row "bench, GPL-3, fp32" /usr/share/common-licenses/GPL-3 --model "$B"
row "bench, GPL-3, bf16" /usr/share/common-licenses/GPL-3 --model "$TMP/bench_bf16/1" --reference-model "$B"
for q in int8 int4; do
  row "bench, GPL-3, $q" /usr/share/common-licenses/GPL-3 --model "$B" --param quantization=$q
done

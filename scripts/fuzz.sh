#!/usr/bin/env bash
# Runs the libFuzzer targets of build-asan/fuzz (built by scripts/hardening_checks.sh fuzz-build,
# or `make fuzz`) for a bounded time each, on their seed corpora (fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh [seconds-per-target] [target...]     default: 300 s, every target
#
# Targets run FUZZ_JOBS at a time (default: the number of CPUs): each libFuzzer process is
# single-threaded, so on a 2-core CI machine two at once halve the stage's wall time
# without shortening any target's own time budget.
#
# New inputs go to build-asan/fuzz-work/<target>/ (the committed corpus is only read);
# a crash, leak, timeout or sanitizer report stops that target, leaves the input in
# build-asan/fuzz-artifacts/ and makes the script exit non-zero after the other targets.
# Prints each target's total executions and executions per second.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-300}
shift || true
BUILD=${FUZZ_BUILD_DIR:-build-asan}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=()
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
SUPP="$PWD/scripts/sanitizers"
export ASAN_OPTIONS=${ASAN_OPTIONS:-"detect_leaks=1:halt_on_error=1"}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-"halt_on_error=1:print_stacktrace=1:suppressions=$SUPP/ubsan.supp"}
export LSAN_OPTIONS=${LSAN_OPTIONS:-"suppressions=$SUPP/lsan.supp"}

mkdir -p "$BUILD/fuzz-artifacts"
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
results="$BUILD/fuzz-artifacts/results"
rm -rf "$results" && mkdir -p "$results"

# Runs one target; writes its summary line to $results/<target>.summary and, when it fails,
# $results/<target>.failed (the parent collects both once every target has ended).
run_target() {
  local target=$1
  local binary="$BUILD/fuzz/$target"
  if [ ! -x "$binary" ]; then
    echo "fuzz: $binary is missing (build it: scripts/hardening_checks.sh fuzz-build)" >&2
    touch "$results/$target.failed"; return
  fi
  local work="$BUILD/fuzz-work/$target"
  mkdir -p "$work"
  local log="$BUILD/fuzz-artifacts/$target.log"
  echo "== fuzz: $target for ${SECONDS_PER_TARGET}s"
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: an input may not make the
  # process grow past 2 GiB (libFuzzer's default, stated).
  "$binary" "$work" "fuzz/corpus/$target" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$BUILD/fuzz-artifacts/$target-" >"$log" 2>&1
  local rc=$?
  local execs rate cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  printf '%-22s execs %-10s execs/s %-7s %s rc %s\n' "$target" "${execs:-?}" "${rate:-?}" \
    "${cov:-}" "$rc" >"$results/$target.summary"
  if [ $rc -ne 0 ]; then
    {
      echo "fuzz: $target FAILED (exit $rc); its log: $log"
      grep -A40 -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|==ERROR' "$log" ||
        tail -40 "$log"
    } >&2
    touch "$results/$target.failed"
  fi
}

running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
  run_target "$target" &
  running=$((running + 1))
done
wait

failed=()
summary=()
for target in "${targets[@]}"; do
  [ -f "$results/$target.summary" ] && summary+=("$(cat "$results/$target.summary")")
  [ -f "$results/$target.failed" ] && failed+=("$target")
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${SECONDS_PER_TARGET}s each without a finding"

#!/usr/bin/env bash
# The hardening stages of `make test` (docs/reliability.md), each in its own build
# directory next to the release build:
#
#   asan-build  build-asan: clang, -fsanitize=address,undefined plus libFuzzer's coverage
#               instrumentation (-fsanitize=fuzzer-no-link): infera, the unit tests but the
#               tools' (ASAN_SKIP_UNIT) and the fuzz targets, from one set of objects. The
#               units that include LibTorch's headers are compiled by gcc with the same
#               sanitizers (cmake/LibTorchUnits.cmake: LibTorch 1.13's headers do not
#               compile with clang in C++20 mode).
#   fuzz        every fuzz target for FUZZ_SECONDS (default 20) on its seed corpus
#               (scripts/fuzz.sh).
#   tsan        build-tsan: clang, -fsanitize=thread; the scheduler, LLM engine, HTTP
#               server, console and OpenAI unit tests.
#   tsa         clang's thread-safety analysis (-Wthread-safety -Werror=thread-safety,
#               syntax only) over the translation units of build-asan that the clang
#               builds above did not already compile with those flags: the tools' and
#               benchmarks' (scripts/thread_safety_check.py); needs asan-build's
#               generated headers.
#   asan-test   the unit tests and the integration suites in ASAN_INTEGRATION against
#               build-asan (its infera binary), JOBS at a time.
#
#   scripts/hardening_checks.sh [stage...]   default: every stage, in the order above
#
# One more stage, not in the default list: fuzz-build builds only the fuzz targets of
# build-asan (`make fuzz`).
#
# Each stage prints its wall time; the script stops at the first failing stage and exits
# non-zero. DEMO_REPO (default demo-models) must exist for the integration suites.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

JOBS=${JOBS:-$(nproc)}
DEMO_REPO=$(realpath "${DEMO_REPO:-demo-models}")
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
# The integration suites run under ASan: those that drive the most server code per second
# (docs/reliability.md says why these).
ASAN_INTEGRATION=${ASAN_INTEGRATION:-integration_kserve_http|integration_grpc|integration_lifecycle|integration_scheduling|integration_openai_api|integration_hostile_input|integration_config_limits|integration_reload_safety|integration_shutdown|integration_triton_wire|integration_shared_memory|integration_shared_memory_shrink|integration_admin_defaults|integration_ensemble|integration_image_preprocess|integration_postprocess_backends|integration_tokenize_backend|integration_console_api|integration_grpc_async|integration_grpc_cq_only|integration_lifecycle_stress|integration_decoupled|integration_generate_llm|integration_api_keys|integration_tls_http|integration_sequence_batching|integration_response_cache|integration_request_compression|integration_triton_answers|integration_triton_metrics|integration_trace_file|integration_log_settings|integration_openai_tools|integration_llm_spec_decode}
# Unit tests of the client-side tools (the load generator, analyze, diagnose): run in the
# release build only. Their code is in the ASan build (infera's subcommands) and the
# integration suites drive it; their test executables would add ~20 sanitized
# compilations and cover no server code. And packed_matmul_test: the rounding contract of
# the packed projections' AVX2 clone is a property of gcc's code generation, the release
# build's (src/llm/CMakeLists.txt).
ASAN_SKIP_UNIT=${ASAN_SKIP_UNIT:-bench_test|analyze_test|diagnose_command_test|packed_matmul_test}
CCACHE=$(command -v ccache || true)
PYTHON=${PYTHON:-/usr/bin/python3}
# Sanitized objects carry line tables only, so the build directory need not be part of
# ccache's key: with ccache's base_dir set, another work tree reuses these objects.
export CCACHE_NOHASHDIR=1
# The unit tests' precompiled header (infera_unit_test) is cacheable only with this.
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
SUPP="$ROOT/scripts/sanitizers"

# Sanitizer run-time settings for everything the stages run (tests, the servers they
# start, the fuzzers). ASan, UBSan and TSan stop at the first report (UBSan is compiled
# recoverable only so that ubsan.supp can work); leaks fail the process.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$SUPP/ubsan.supp"
export LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}

configure() {  # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${CCACHE:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CCACHE} "$@" >/dev/null
}
FUZZ_TARGETS=$(sed -n 's/^infera_fuzz_target(\([a-z_]*\).*/\1/p' fuzz/CMakeLists.txt)

configure_asan() {
  configure build-asan -DCMAKE_CXX_COMPILER=clang++ -DINFERA_SANITIZE=address,undefined -DINFERA_FUZZ=ON
}

stage_asan-build() {
  configure_asan
  # Only what asan-test and fuzz run: infera (the integration suites), the unit tests
  # (their ctest names are their target names) and the fuzz targets. The benchmarks and
  # tools are not run sanitized; tsa still analyses their sources (it reads
  # compile_commands.json, not objects).
  local unit_tests
  unit_tests=$(cd build-asan && ctest -N -L unit -E "^($ASAN_SKIP_UNIT)\$" | sed -n 's/^ *Test *#[0-9]*: //p')
  [ -n "$unit_tests" ] || { echo "asan-build: ctest lists no unit test" >&2; exit 1; }
  echo "== asan-build: infera, the unit tests and the fuzz targets (clang, ASan+UBSan+coverage)"
  # shellcheck disable=SC2086  # one target per word
  cmake --build build-asan -j "$JOBS" --target infera $unit_tests $FUZZ_TARGETS
}

stage_fuzz-build() {
  configure_asan
  echo "== fuzz-build: the fuzz targets (clang, libFuzzer+ASan+UBSan)"
  # shellcheck disable=SC2086  # one target per word
  cmake --build build-asan -j "$JOBS" --target $FUZZ_TARGETS
}

stage_tsa() {
  echo "== tsa: clang -Wthread-safety -Werror=thread-safety on every translation unit"
  # Units the clang builds (asan-build, tsan: -Werror=thread-safety) compiled as they are
  # now are not analysed twice: hence this stage runs after them.
  "$PYTHON" scripts/thread_safety_check.py build-asan --jobs "$JOBS" --skip-built-in build-asan --skip-built-in build-tsan
}

stage_fuzz() {
  FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh "$FUZZ_SECONDS"
}

stage_tsan() {
  configure build-tsan -DCMAKE_CXX_COMPILER=clang++ -DINFERA_SANITIZE=thread
  echo "== tsan: scheduling_test llm_test http_test console_test openai_test (clang, TSan)"
  cmake --build build-tsan -j "$JOBS" --target scheduling_test llm_test http_test console_test openai_test
  (cd build-tsan && ctest --output-on-failure -j "$JOBS" -R "^(scheduling_test|llm_test|http_test|console_test|openai_test)$")
}

stage_asan-test() {
  echo "== asan-test: unit tests"
  (cd build-asan && ctest --output-on-failure -j "$JOBS" -L unit -E "^($ASAN_SKIP_UNIT)\$")
  echo "== asan-test: integration suites ($ASAN_INTEGRATION)"
  # JOBS suites at a time, as the release run does (each starts its own servers on
  # ephemeral loopback ports and temporary repositories).
  (cd build-asan && INFERA_DEMO_REPO="$DEMO_REPO" ctest --output-on-failure -j "$JOBS" -L integration \
     -R "^($ASAN_INTEGRATION)\$")
}

stages=("$@")
if [ ${#stages[@]} -eq 0 ]; then stages=(asan-build fuzz tsan tsa asan-test); fi
timings=()
for stage in "${stages[@]}"; do
  start=$(date +%s)
  "stage_$stage"
  timings+=("$stage $(( $(date +%s) - start ))s")
done
echo "hardening stages passed: ${timings[*]}"

#!/usr/bin/env bash
# Compiler launcher of the units that include LibTorch's headers, in a clang build
# (cmake/LibTorchUnits.cmake): LibTorch 1.13's headers do not compile with clang in C++20
# mode (std::vector<c10::IValue> used while IValue is incomplete, pytorch/pytorch#97689),
# so these units are compiled by gcc with the same flags, less clang's own.
#
#   gcc_for_libtorch.sh GXX [CCACHE] -- CLANGXX ARGS...
#
# CMake runs the launcher as `<launcher...> <compiler> <args>`: the compiler clang++ is
# replaced by GXX (through CCACHE where given). Dropped: clang's thread-safety analysis
# flags (these units hold no annotations; scripts/thread_safety_check.py lists them as
# skipped), libFuzzer's coverage instrumentation (no fuzz target reaches LibTorch) and the
# sanitizer ignore list; -gline-tables-only becomes gcc's -g1. -fsanitize=address,undefined
# stays: gcc's instrumentation calls the same run-time interface as clang's
# (__asan_version_mismatch_check_v8, __ubsan_handle_*_v1), and a version that drifts
# apart is an undefined symbol at link, not a silent gap.
set -euo pipefail
gxx=$1
shift
launcher=()
if [ "$1" != -- ]; then launcher=("$1"); shift; fi
[ "$1" = -- ] || { echo "gcc_for_libtorch.sh: usage: GXX [CCACHE] -- CLANGXX ARGS..." >&2; exit 2; }
shift 2   # '--' and clang++
args=()
for a in "$@"; do
  case "$a" in
    -Wthread-safety|-Werror=thread-safety|-Wno-thread-safety) ;;
    -fsanitize=fuzzer-no-link|-fsanitize-ignorelist=*|-fcolor-diagnostics) ;;
    -gline-tables-only) args+=(-g1) ;;
    *) args+=("$a") ;;
  esac
done
exec "${launcher[@]}" "$gxx" "${args[@]}"

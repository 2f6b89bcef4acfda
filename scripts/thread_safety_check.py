#!/usr/bin/env python3
"""clang's thread-safety analysis over every translation unit of a build (make test).

    scripts/thread_safety_check.py BUILD_DIR [--jobs N] [--skip-built-in CLANG_BUILD_DIR ...]

Reads BUILD_DIR/compile_commands.json (any compiler; the hardening stages use the ASan
build's) and runs `clang++ -fsyntax-only -Wthread-safety -Werror=thread-safety` on
each translation unit with its own include paths and defines, gcc-only and code
generation flags dropped. Exit status 1 and the diagnostics when any unit has a
thread-safety error (or fails to parse).

Units that a clang build (build-asan, build-tsan: clang with -Werror=thread-safety, see
cmake/Hardening.cmake) has already compiled from the same
sources are not analysed again (--skip-built-in): its up-to-date objects (every recorded
dependency older than the object) are the same analysis. The units such a build compiled
with gcc (cmake/LibTorchUnits.cmake) do not count. make test runs this stage after those
builds; what is left is the units of targets they do not build (tools, benchmarks).

Units that cannot hold an annotation are not analysed: the analysis only reports on
entities annotated with abseil's macros (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED,
absl::Mutex's own annotations ...), which come from absl/base/thread_annotations.h; a unit
whose dependencies (the build's own depfile record, `ninja -t deps`) do not include that
header has nothing to check. Where the record is missing or stale, the unit is analysed.

Units that include LibTorch's headers (directly, or when clang fails on them through one
of our headers) are skipped and listed: LibTorch 1.13's headers do
not compile with clang in C++20 mode (std::vector<c10::IValue> used while IValue is
incomplete, pytorch/pytorch#97689). They hold no locks of their own; the headers they
share with the rest of the server are checked in the units that include them.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

DROP_PREFIXES = ("-fsanitize", "-fno-sanitize", "-g", "-O", "-MD", "-MMD", "-fno-omit-frame-pointer",
                 "-fopenmp-simd", "-march", "-mtune")
TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch|ATen|c10)/', re.M)
TORCH_ERROR = re.compile(r"/usr/include/(ATen|c10|torch)/.*error|c10::IValue")


def clang_command(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    if os.path.basename(args[0]) in ("ccache", "sccache"):
        args = args[1:]
    out, skip = ["clang++"], 0
    for i, a in enumerate(args[1:], start=1):
        if skip:
            skip -= 1
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = 1
            continue
        # The precompiled header of the unit tests (infera_unit_test), gcc's or clang's: built
        # with the sanitizer flags this command drops, so clang would refuse it. The units
        # include what they use themselves. gcc: -include <pch.hxx>; clang: -Xclang
        # -include-pch -Xclang <pch> -Xclang -include -Xclang <pch.hxx>.
        if a == "-include" and i + 1 < len(args) and args[i + 1].endswith("cmake_pch.hxx"):
            skip = 1
            continue
        if a == "-Xclang" and i + 1 < len(args) and args[i + 1] in ("-include-pch", "-include"):
            skip = 3
            continue
        if a == "-Winvalid-pch":
            continue
        # -w (generated protobuf code) would silence the analysis as well.
        if a in ("-c", "-w") or a.startswith(DROP_PREFIXES):
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Wno-everything", "-Wthread-safety", "-Werror=thread-safety"]


PLANTED = """#include "absl/synchronization/mutex.h"
struct Planted { absl::Mutex mu; int x ABSL_GUARDED_BY(mu) = 0; };
int Unguarded(Planted& p) { return p.x; }
"""


def analysis_active(entry):
    """The stage's own check: the flags it uses must reject an unguarded read."""
    command = [a for a in clang_command(entry) if a != entry["file"]]
    r = subprocess.run(command + ["-x", "c++", "-"], cwd=entry["directory"], input=PLANTED,
                       capture_output=True, text=True)
    return r.returncode != 0 and "requires holding mutex" in r.stderr


ANNOTATIONS_HEADER = "absl/base/thread_annotations.h"


def object_of(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    return args[args.index("-o") + 1] if "-o" in args else None


def units_without_annotations(build_dir):
    """Object files whose recorded dependencies lack the annotations header (ninja's deps
    log; empty when it cannot be read, so every unit is analysed)."""
    try:
        out = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    without, current, valid, annotated = set(), None, False, False
    for line in out.splitlines() + [""]:
        if line and not line[0].isspace():
            current, valid, annotated = line.split(":", 1)[0], line.rstrip().endswith("(VALID)"), False
        elif line.strip():
            annotated = annotated or line.strip().endswith(ANNOTATIONS_HEADER)
        else:
            if current and valid and not annotated:
                without.add(current)
            current = None
    return without


def objects_with_deps(build_dir):
    """{object: [dependencies]} from ninja's deps log (VALID records only; {} when it
    cannot be read)."""
    try:
        out = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    objects, current = {}, None
    for line in out.splitlines():
        if line and not line[0].isspace():
            current = line.split(":", 1)[0] if line.rstrip().endswith("(VALID)") else None
            if current:
                objects[current] = []
        elif line.strip() and current:
            objects[current].append(line.strip())
    return objects


GCC_LAUNCHER = "gcc_for_libtorch.sh"


def objects_compiled_by_gcc(build_dir):
    """Objects of a clang build that cmake/gcc_for_libtorch.sh compiled with gcc (the
    LibTorch targets, cmake/LibTorchUnits.cmake): no analysis ran on them. compile_commands.json
    does not show a compiler launcher; ninja's own expansion of each rule does."""
    try:
        out = subprocess.run(["ninja", "-C", build_dir, "-t", "compdb"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {object_of(e) for e in json.loads(out) if GCC_LAUNCHER in e.get("command", "")}


def sources_built_in(build_dir):
    """Source files whose object in `build_dir` is up to date (older than none of its
    recorded dependencies) and was compiled by clang: that build analysed them as they
    are now."""
    path = os.path.join(build_dir, "compile_commands.json")
    by_gcc = objects_compiled_by_gcc(build_dir)
    if not os.path.exists(path) or by_gcc is None:
        return set()
    with open(path) as f:
        source_of = {object_of(e): e["file"] for e in json.load(f) if object_of(e) not in by_gcc}
    built = set()
    for obj, deps in objects_with_deps(build_dir).items():
        src = source_of.get(obj)
        full = os.path.join(build_dir, obj)
        if src is None or not os.path.exists(full):
            continue
        made = os.path.getmtime(full)
        paths = [src] + [d if os.path.isabs(d) else os.path.join(build_dir, d) for d in deps]
        try:
            if all(os.path.getmtime(d) <= made for d in paths):
                built.add(os.path.realpath(src))
        except OSError:
            continue
    return built


def check(entry):
    r = subprocess.run(clang_command(entry), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], r.returncode, r.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-built-in", action="append", default=[], metavar="CLANG_BUILD_DIR",
                        help="skip units this clang build (-Werror=thread-safety) compiled from the same sources")
    args = parser.parse_args()
    with open(os.path.join(args.build_dir, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if e["file"].endswith(".cc")]
    checked, skipped = [], []
    for e in entries:
        with open(e["file"], errors="replace") as src:
            (skipped if TORCH_INCLUDE.search(src.read()) else checked).append(e)
    if not checked or not analysis_active(checked[0]):
        print("thread-safety: the analysis accepted a planted unguarded read; it is not active",
              file=sys.stderr)
        return 1
    built = set()
    for d in args.skip_built_in:
        built |= sources_built_in(d)
    already = [e for e in checked if os.path.realpath(e["file"]) in built]
    checked = [e for e in checked if os.path.realpath(e["file"]) not in built]
    without = units_without_annotations(args.build_dir)
    unannotated = [e for e in checked if object_of(e) in without]
    checked = [e for e in checked if object_of(e) not in without]
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for path, rc, stderr in pool.map(check, checked):
            if rc == 0:
                continue
            if "-Wthread-safety" not in stderr and TORCH_ERROR.search(stderr):
                # Includes LibTorch through one of our headers (e.g. llama_weights.h).
                skipped.append(next(e for e in checked if e["file"] == path))
                continue
            failures.append((path, stderr))
    checked = [e for e in checked if e not in skipped]
    for path, stderr in failures:
        print(f"== {path}\n{stderr}", file=sys.stderr)
    root = os.path.commonpath([e["file"] for e in entries])
    print("thread-safety: skipped (LibTorch headers): " +
          " ".join(sorted(os.path.relpath(e["file"], root) for e in skipped)))
    print(f"thread-safety: {len(checked) - len(failures)} of {len(checked)} translation units pass "
          f"clang -Wthread-safety -Werror=thread-safety ({len(unannotated)} more include no "
          f"{ANNOTATIONS_HEADER}: nothing to analyse; {len(already)} were compiled with "
          f"-Werror=thread-safety by {' and '.join(args.skip_built_in) or 'no clang build'})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

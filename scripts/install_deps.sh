#!/usr/bin/env bash
# Installs the Debian packages infera needs. Idempotent: packages already present are
# skipped; apt-get runs only when something is missing. Uses sudo when not root.
# Debian 12 (bookworm) is the supported base.
#
#   scripts/install_deps.sh          build, serve and test (make run / make test)
#   scripts/install_deps.sh --bench  also the benchmark peers (make bench)
#   scripts/install_deps.sh --build-only  only what compiling build/infera needs (the
#                                    container image's builder stage, see Dockerfile)
set -euo pipefail

# Build toolchain and libraries linked into the server.
BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev            # Status/StatusOr, synchronisation, thread-safety annotations
  libboost-dev           # Boost.Beast / Asio: the HTTP stack (header-only in 1.74)
  libprotobuf-dev protobuf-compiler   # config.pbtxt via TextFormat against our .proto
  libgrpc++-dev protobuf-compiler-grpc  # KServe v2 gRPC frontend
  rapidjson-dev          # JSON for KServe v2 requests and responses
  libtorch-dev           # LibTorch 1.13 (CPU): the pytorch_libtorch backend
  libopenblas0-openmp    # optimised BLAS; the reference BLAS makes Linear layers 8-30x slower
  prometheus-cpp-dev     # Prometheus registry and text exposition
  libjpeg62-turbo-dev libpng-dev  # image_preprocess: JPEG (libjpeg-turbo, SIMD) and PNG decoding
  libjemalloc-dev        # the infera binary's malloc (-DINFERA_ALLOCATOR, docs/benchmarks.md "Allocator")
  libgoogle-perftools-dev  # tcmalloc: the other -DINFERA_ALLOCATOR choice and a side of `make bench allocator`
  zlib1g-dev             # gzip / deflate request bodies (http/content_coding.h)
  libgtest-dev libgmock-dev libbenchmark-dev
)
# The hardening stages of `make test` (docs/reliability.md): clang for ASan/UBSan, TSan,
# libFuzzer and the thread-safety analysis; the sanitizer and libFuzzer runtimes (not
# pulled in by clang with --no-install-recommends); llvm-symbolizer for readable reports.
HARDENING_PKGS=(
  clang libclang-rt-14-dev llvm
)
# Tools used to make demo models and to test the server from outside.
TOOL_PKGS=(
  python3 python3-torch python3-torchvision python3-numpy   # demo models + reference checks
  python3-jinja2         # the reference renderer of chat templates (src/jinja/jinja_reference_test.py)
  python3-pil python3-skimage  # demo photos (scikit-image's sample data) + their PIL reference
  python3-pytest         # integration tests drive the real binary from Python
  python3-grpcio python3-grpc-tools python3-protobuf  # independent gRPC client for tests
  fortunes-min           # text the demo LLM is trained on
  curl
  prometheus             # promtool: checks and unit-tests deploy/monitoring rules (make test)
  python3-yaml           # reads the rendered manifests and rule files (tests/deploy)
  python3-jsonschema     # validates structured outputs (bench/structured_output)
  chromium               # the web console's browser test (tests/browser, driven headless by playwright-core)
)
# Peers that `make bench` compares infera with.
BENCH_PKGS=(
  nginx-light            # the HTTP ceiling: a static 200
  wrk                    # load generator for the nginx/infera overhead comparison
  python3-flask gunicorn # the seeds' starting point: Flask + Gunicorn + PyTorch
)

wanted=("${BUILD_PKGS[@]}" "${HARDENING_PKGS[@]}" "${TOOL_PKGS[@]}")
if [ "${1:-}" = "--bench" ]; then wanted+=("${BENCH_PKGS[@]}"); fi
# Node >= 18 + npm validate the Kubernetes manifests (tests/deploy). A preinstalled Node
# is used as is; Debian's nodejs/npm only when there is none (or it is too old).
node_major=$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || true)
if ! [ "${node_major:-0}" -ge 18 ] 2>/dev/null || ! command -v npm >/dev/null; then
  wanted+=(nodejs npm)
fi
if [ "${1:-}" = "--build-only" ]; then wanted=("${BUILD_PKGS[@]}"); fi

missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install_deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

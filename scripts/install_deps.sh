#!/usr/bin/env bash
# Installs the Debian packages infera needs to build, test and serve its demo models.
# Idempotent: packages already present are skipped; apt-get runs only when something is
# missing. Uses sudo when not root. Debian 12 (bookworm) is the supported base.
set -euo pipefail

# Build toolchain and libraries linked into the server.
BUILD_PKGS=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev            # Status/StatusOr, containers, synchronisation
  libboost-dev           # Boost.Beast / Asio: the HTTP stack (header-only in 1.74)
  libprotobuf-dev protobuf-compiler   # config.pbtxt via TextFormat against our .proto
  rapidjson-dev          # JSON for KServe v2 requests and responses
  libtorch-dev           # LibTorch 1.13 (CPU): the pytorch_libtorch backend
  libopenblas0-openmp    # optimised BLAS; the reference BLAS makes Linear layers 8-30x slower
  libgtest-dev libgmock-dev libbenchmark-dev
)
# Tools used to make demo models and to test the server from outside.
TOOL_PKGS=(
  python3 python3-torch python3-torchvision python3-numpy   # demo models + reference checks
  python3-pytest         # integration tests drive the real binary from Python
  curl
)

missing=()
for pkg in "${BUILD_PKGS[@]}" "${TOOL_PKGS[@]}"; do
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

#!/usr/bin/env bash
# `make image`: builds the infera container image from the repository's Dockerfile.
#
#   Docker (when `docker info` works): docker build, pulling debian:bookworm-slim.
#   Otherwise podman as root (this project's machines): a private podman configuration
#   (podman_env.sh), debian:bookworm-slim made by debootstrap (base_image.sh, cached), then
#   podman build --pull=never --format docker (Docker format keeps the HEALTHCHECK).
#   podman/buildah/runc/debootstrap are installed with apt when neither engine exists.
#
# Environment:
#   IMAGE                 tag to build (default infera:<version>, or infera:demo when baking)
#   BAKE_DEMO_MODELS=1    bake the demo repository into /models
#   BUILD_JOBS=N          parallel compile jobs inside the build (default: one per CPU)
#   INFERA_CONTAINER_ENGINE=docker|podman   force an engine
# Prints the image reference on the last line of stdout.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

version=$(sed -n 's/^project(infera VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
bake=${BAKE_DEMO_MODELS:-0}
if [ "$bake" = 1 ]; then default_tag="infera:demo"; else default_tag="infera:${version:-latest}"; fi
IMAGE=${IMAGE:-$default_tag}

engine=${INFERA_CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then engine=docker
  elif command -v podman >/dev/null; then engine=podman
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "build_image: no docker or podman; installing podman, buildah, runc, debootstrap (apt)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      podman buildah runc debootstrap containernetworking-plugins catatonit >/dev/null
    engine=podman
  else
    echo "build_image: neither docker nor podman is available" >&2; exit 1
  fi
fi

args=(--build-arg "BAKE_DEMO_MODELS=$bake" --build-arg "VERSION=${version:-0.0.0}"
      --build-arg "BUILD_JOBS=${BUILD_JOBS:-}" -t "$IMAGE" -f Dockerfile .)
start=$(date +%s)
if [ "$engine" = docker ]; then
  DOCKER_BUILDKIT=1 docker build "${args[@]}" >&2   # BuildKit: RUN --mount=type=cache
  size=$(docker image inspect --format '{{.Size}}' "$IMAGE")
else
  # shellcheck source=podman_env.sh
  source "$root/deploy/image/podman_env.sh"
  "$root/deploy/image/base_image.sh" >&2
  podman build --pull=never --format docker --network=host --layers "${args[@]}" >&2
  size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
fi
echo "build_image: $IMAGE built with $engine in $(( $(date +%s) - start )) s, $(( size / 1000000 )) MB" >&2
echo "$IMAGE"

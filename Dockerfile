# infera container image. Same file for podman/buildah (here: `make image`, base image
# from debootstrap, see docs/deploy.md) and for Docker/BuildKit elsewhere.
#
#   docker build -t infera:0.1.0 .                              models mounted at /models
#     (Docker >= 23 or DOCKER_BUILDKIT=1: the builder uses a BuildKit cache mount)
#   docker build -t infera:demo --build-arg BAKE_DEMO_MODELS=1 .  demo repository baked in
#   docker run --rm -p 8000:8000 -v /path/to/repo:/models:ro infera:0.1.0
#
# Stages: deps (toolchain via scripts/install_deps.sh) -> builder (cmake, the infera target
# only) -> models-0 / models-1 (empty /models, or the generated demo repository) ->
# runtime (slim Debian + the packages that own infera's shared libraries + OpenBLAS).
# The runtime stage has no compiler, no headers, no Python.

ARG DEBIAN_IMAGE=debian:bookworm-slim
# 1: bake the demo repository (as `make demo-models` makes it; python3-torch is installed
# in a throwaway stage, so the first such build is slower). 0: /models is empty, mount yours.
ARG BAKE_DEMO_MODELS=0

FROM ${DEBIAN_IMAGE} AS deps
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /src
COPY scripts/install_deps.sh scripts/install_deps.sh
# ccache: with the cache mount below, a rebuild after a small source change recompiles
# only what changed (BuildKit and buildah both keep the cache between builds).
RUN scripts/install_deps.sh --build-only \
 && apt-get install -y --no-install-recommends ccache \
 && rm -rf /var/lib/apt/lists/*

FROM deps AS builder
# Parallel compile jobs; empty = one per CPU.
ARG BUILD_JOBS=
ENV CCACHE_DIR=/root/.cache/ccache
COPY CMakeLists.txt ./
COPY proto proto
COPY tools tools
COPY src src
COPY deploy/image/runtime_packages.sh deploy/image/runtime_packages.sh
# Test directories are not sent (.dockerignore); CMake only needs their add_subdirectory
# targets to exist, so each gets an empty CMakeLists.txt.
RUN --mount=type=cache,target=/root/.cache/ccache \
    sed -n 's/^add_subdirectory(\(tests\/[^)]*\)).*/\1/p' CMakeLists.txt | \
      while read -r d; do mkdir -p "$d" && : >"$d/CMakeLists.txt"; done \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null \
 && cmake --build build --target infera -- ${BUILD_JOBS:+-j$BUILD_JOBS} \
 && mkdir -p /out \
 && deploy/image/runtime_packages.sh build/infera >/out/runtime-packages.txt \
 && cp build/infera /out/infera \
 && cat /out/runtime-packages.txt

FROM deps AS models-0
RUN mkdir -p /out/models

# The same steps as `make demo-models` (tensor models, then the demo LLM when present).
FROM deps AS models-1
COPY scripts scripts
RUN scripts/install_deps.sh && rm -rf /var/lib/apt/lists/* \
 && /usr/bin/python3 scripts/make_demo_repo.py --out /out/models \
 && if [ -f scripts/make_llm_demo.py ]; then \
      /usr/bin/python3 scripts/make_llm_demo.py --out /out/models; fi

FROM models-${BAKE_DEMO_MODELS} AS models
# The server runs as 10001: every model file must be world-readable (generators may
# create private temporary directories and rename them into place).
RUN chmod -R a+rX /out/models

FROM ${DEBIAN_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="infera" \
      org.opencontainers.image.description="Inference server: KServe v2 HTTP/gRPC, TorchScript (LibTorch) models" \
      org.opencontainers.image.version="${VERSION}"
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=builder /out/runtime-packages.txt /tmp/runtime-packages.txt
# Runtime libraries only (the packages that own infera's NEEDED libraries; apt adds their
# dependencies), the OpenMP OpenBLAS (LibTorch calls whatever libblas.so.3 is selected;
# the reference BLAS is 8-30x slower) and curl for the HEALTHCHECK. The check after the
# install fails the build if the reference BLAS was selected.
RUN apt-get update \
 && apt-get install -y --no-install-recommends $(cat /tmp/runtime-packages.txt) libopenblas0-openmp curl \
 && readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 | grep -q openblas \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log \
           /tmp/runtime-packages.txt \
 && groupadd --system --gid 10001 infera \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin infera
COPY --from=builder /out/infera /usr/local/bin/infera
# Root-owned and read-only for the server: models are mounted (or baked) here.
COPY --from=models /out/models /models

# libgomp reads OMP_WAIT_POLICY when it loads, before main(): idle OpenMP workers sleep
# instead of spinning on cores the I/O threads need (docs/torch_backend.md). HOME points
# at the one writable path (an emptyDir/tmpfs under a read-only root filesystem).
ENV OMP_WAIT_POLICY=passive \
    HOME=/tmp
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000 8001 8002
# SIGTERM starts infera's drain (readiness false, in-flight requests finish, exit 0).
STOPSIGNAL SIGTERM
# Docker-format images only (podman: --format docker); Kubernetes uses its own probes.
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD curl -fsS -o /dev/null http://127.0.0.1:8000/v2/health/live || exit 1
ENTRYPOINT ["infera", "serve"]
CMD ["--model-repository=/models"]

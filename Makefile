# infera — the two commands are `make run` and `make test`; everything else supports them.
BUILD_DIR  ?= build
BUILD_TYPE ?= Release
DEMO_REPO  ?= demo-models
PYTHON     ?= /usr/bin/python3
CTEST_ARGS ?=

.PHONY: all deps configure build demo-models run test unit-test integration-test container-test fuzz bench clean image

all: build

deps:
	@scripts/install_deps.sh

# ccache, where installed, makes rebuilds in several work trees cheap; it is optional.
# The unit tests' precompiled header (infera_unit_test) is cacheable only with this
# sloppiness (ccache's manual, "Precompiled headers").
CCACHE := $(shell command -v ccache 2>/dev/null)
export CCACHE_SLOPPINESS ?= pch_defines,time_macros
configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR)

# Deterministic (seeded) demo models, regenerated only when the script changes.
demo-models: deps
	@$(PYTHON) scripts/make_demo_repo.py --out $(DEMO_REPO)
	@$(PYTHON) scripts/make_llm_demo.py --out $(DEMO_REPO)

# Ports: INFERA_HTTP_PORT (8000), INFERA_GRPC_PORT (8001), INFERA_METRICS_PORT (8002), from
# the environment or the command line (`make run INFERA_HTTP_PORT=9000 ...`); the script
# prints the console URL and requests once GET /v2/health/ready answers (README).
run: build demo-models
	@scripts/run_demo.sh $(BUILD_DIR)/infera $(DEMO_REPO)

# Every test: the hardening stages (scripts/hardening_checks.sh, docs/reliability.md: a clang
# ASan+UBSan build, fuzz targets included; each fuzz target for FUZZ_SMOKE_SECONDS; TSan on the scheduler, LLM
# engine, HTTP server, console and OpenAI tests; clang's thread-safety analysis of every
# translation unit; the unit and the main integration tests under ASan), then the tools'
# unit tests, the black-box integration tests against the release binary and the offline
# deployment checks. Nothing in it skips: a missing prerequisite fails. HARDENING=0 runs only the
# release tests (a faster inner loop, not what CI runs). The container smoke test (it
# builds the image: well over 10 minutes cold on 2 cores) is `make container-test`.
HARDENING ?= 1
FUZZ_SMOKE_SECONDS ?= 5
# The unit tests of the client-side tools (load generator, analyze, diagnose) and of the
# packed projections' kernels (whose rounding contract is a property of the release
# compiler's code generation: src/llm/CMakeLists.txt) run in the release build only; every
# other unit test runs under ASan+UBSan in the hardening stages and is not built or run a
# second time in the release build (docs/reliability.md).
RELEASE_ONLY_UNIT := bench_test|analyze_test|diagnose_command_test|packed_matmul_test
# The release run's integration suites run TEST_JOBS at a time (default: the CPUs). Each
# starts its own servers on ephemeral loopback ports and temporary repositories, so they
# are independent; on the 2-core CI machine two at once take about half the wall time
# (docs/reliability.md).
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
test: build demo-models
	@if [ "$(HARDENING)" != 0 ]; then \
	  DEMO_REPO=$(DEMO_REPO) FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) ASAN_SKIP_UNIT='$(RELEASE_ONLY_UNIT)' \
	    scripts/hardening_checks.sh && \
	  cmake --build $(BUILD_DIR) --target $(subst |, ,$(RELEASE_ONLY_UNIT)) && \
	  cd $(BUILD_DIR) && \
	  ctest --output-on-failure -L unit -R '^($(RELEASE_ONLY_UNIT))$$' $(CTEST_ARGS) && \
	  INFERA_DEMO_REPO=$(abspath $(DEMO_REPO)) ctest --output-on-failure -j $(TEST_JOBS) -LE 'container|unit' $(CTEST_ARGS); \
	else \
	  cmake --build $(BUILD_DIR) --target unit_tests && \
	  cd $(BUILD_DIR) && INFERA_DEMO_REPO=$(abspath $(DEMO_REPO)) ctest --output-on-failure -LE container $(CTEST_ARGS); \
	fi

unit-test: build demo-models
	@cmake --build $(BUILD_DIR) --target unit_tests
	@cd $(BUILD_DIR) && INFERA_DEMO_REPO=$(abspath $(DEMO_REPO)) ctest --output-on-failure -L unit $(CTEST_ARGS)

integration-test: build demo-models
	@cd $(BUILD_DIR) && INFERA_DEMO_REPO=$(abspath $(DEMO_REPO)) ctest --output-on-failure -L integration $(CTEST_ARGS)

# Builds the container image and smoke-tests it (docs/deploy.md); fails where it cannot run.
container-test: build demo-models
	@cd $(BUILD_DIR) && INFERA_CONTAINER_TEST=1 INFERA_DEMO_REPO=$(abspath $(DEMO_REPO)) \
	  ctest --output-on-failure -L container $(CTEST_ARGS)

# Each libFuzzer target (fuzz/) for FUZZ_SECONDS on its corpus; findings are left in
# build-asan/fuzz-artifacts/ (docs/reliability.md).
FUZZ_SECONDS ?= 300
fuzz: deps
	@scripts/hardening_checks.sh fuzz-build
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Benchmarks are never part of `make test`. BENCH_ARGS selects scenarios, e.g.
# `make bench BENCH_ARGS="overhead baseline"` or BENCH_ARGS="overhead --quick".
BENCH_ARGS ?=
bench: build demo-models
	@scripts/install_deps.sh --bench
	@cmake --build $(BUILD_DIR) --target micro_benchmarks
	@bench/run_all.sh $(BUILD_DIR) $(DEMO_REPO) $(BENCH_ARGS)

# Container image from the Dockerfile: podman here (base image via debootstrap, cached),
# Docker where it runs. `make image BAKE_DEMO_MODELS=1` bakes the demo repository
# (tag infera:demo); IMAGE=name:tag overrides the tag. See docs/deploy.md.
image:
	@deploy/image/build_image.sh

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz build-tsan $(DEMO_REPO)

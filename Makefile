# Taxel — developer entry points. See README.md.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test bench run demo clean python wheel
.PHONY: test-asan test-tsan image image-test deploy-render

all: build

deps:
	scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# Sanitizer builds (build-asan, build-tsan): the whole suite under ASan+UBSan; the concurrency
# tests under TSan. Any sanitizer report fails the target. See scripts/sanitizers.sh.
test-asan: deps
	JOBS=$(JOBS) scripts/sanitizers.sh asan

test-tsan: deps
	JOBS=$(JOBS) scripts/sanitizers.sh tsan

bench: build
	$(BUILD_DIR)/bench/taxel-bench $(BENCH_ARGS)

# Listens on this machine only; RUN_ARGS="--address=0.0.0.0:50051 ..." to expose it.
RUN_ARGS ?= --address=127.0.0.1:50051 --metrics_address=127.0.0.1:9464
run: build
	$(BUILD_DIR)/server/taxel-server $(RUN_ARGS)

demo: build
	BUILD_DIR=$(BUILD_DIR) scripts/demo.sh

# The Python client in ./.venv (Debian's python3 + its grpcio/protobuf/numpy via system site-packages).
python: deps
	[ -x .venv/bin/python ] || /usr/bin/python3 -m venv --system-site-packages .venv
	.venv/bin/pip install --no-index --no-build-isolation client/python

# dist/taxel-$(cat VERSION)-py3-none-any.whl, built offline (client/python/build_wheel.py: Debian's
# setuptools + wheel through pip, no index). `pip install dist/taxel-*.whl` into any Python >= 3.9.
wheel: deps
	/usr/bin/python3 client/python/build_wheel.py --out dist

# libFuzzer targets (fuzz/) in their own clang + ASan/UBSan build, FUZZ_SECONDS per target.
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 30
.PHONY: fuzz
fuzz: deps
	FUZZ_BUILD_DIR=$(FUZZ_BUILD_DIR) JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_SECONDS)

# The container image (docker, else podman; see scripts/image.sh). image-test builds it and
# smoke-tests a running container.
IMAGE ?= localhost/taxel:latest
image:
	scripts/image.sh build $(IMAGE)

image-test:
	scripts/image.sh test $(IMAGE)

# deploy/k8s/rendered/*.yaml: every overlay rendered with kubectl kustomize (the deploy test
# validates those files and checks them against a fresh rendering where kubectl exists).
deploy-render:
	deploy/validate/render.sh

clean:
	rm -rf $(BUILD_DIR)

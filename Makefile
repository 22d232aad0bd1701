# Taxel — developer entry points. See README.md.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test bench run demo clean python

all: build

deps:
	scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

bench: build
	$(BUILD_DIR)/bench/taxel-bench $(BENCH_ARGS)

run: build
	$(BUILD_DIR)/server/taxel-server $(RUN_ARGS)

demo: build
	BUILD_DIR=$(BUILD_DIR) scripts/demo.sh

# The Python client in ./.venv (Debian's python3 + its grpcio/protobuf/numpy via system site-packages).
python: deps
	[ -x .venv/bin/python ] || /usr/bin/python3 -m venv --system-site-packages .venv
	.venv/bin/pip install --no-index --no-build-isolation client/python

clean:
	rm -rf $(BUILD_DIR)

#!/usr/bin/env bash
# Installs the Debian 12 packages Taxel needs to build, test and benchmark.
# Idempotent: quiet and fast when everything is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config git ccache
  # core
  libeigen3-dev libabsl-dev libnanoflann-dev
  # service
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  golang-github-gogo-googleapis-dev prometheus-cpp-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libembree-dev
  # python client (Debian packages; no PyPI)
  python3 python3-grpcio python3-protobuf python3-numpy python3-pytest python3-venv python3-pip
  python3-setuptools python3-wheel python3-matplotlib
  # real simulators for the examples, and MJCF/URDF import (taxel-cli import); the MuJoCo sample
  # models (humanoid, mug) are the import tests' real files
  libmujoco-dev libmujoco-samples libbullet-dev
  # deploy/ tests: promtool and a real Prometheus; node for the offline manifest validation
  # (deploy/validate); PyYAML for the PrometheusRule generator and the bad-manifest cases
  prometheus nodejs python3-yaml
  # the live viewer's browser test: headless Chromium and Pillow for its screenshot's pixels
  chromium python3-pil
)
# npm: Debian's package, unless a node that ships its own npm is installed (NodeSource's nodejs
# provides npm and conflicts with Debian's).
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

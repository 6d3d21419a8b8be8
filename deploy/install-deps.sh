#!/usr/bin/env bash
# Installs, from Debian's packages (and npm for web/), everything mculab's build, demo and tests
# need. Idempotent: a second run installs nothing and returns quickly.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libboost-dev libssl-dev libusb-1.0-0-dev libsqlite3-dev sqlite3 umockdev libumockdev-dev
  libpq-dev postgresql-15
  libtomlplusplus-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-system-arm
  python3 procps iproute2 chromium openssl bubblewrap util-linux
  clang libclang-rt-14-dev libfuzzer-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages already installed"
fi

# Web front end and browser tests (npm, only when web/ has a lockfile). Node.js comes from the
# machine when it has one (the build machines have Node.js 20), else from Debian.
if [ -f "$here/web/package-lock.json" ] && [ "${MCULAB_SKIP_NPM:-0}" != 1 ]; then
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: installing nodejs npm"
    sudo_cmd=""
    if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends nodejs npm
  fi
  stamp="$here/web/node_modules/.mculab-lock-stamp"
  if [ ! -f "$stamp" ] || ! cmp -s "$here/web/package-lock.json" "$stamp" ||
     [ ! -f "$here/web/vendor/uPlot.esm.js" ]; then
    (cd "$here/web" && npm ci --no-audit --no-fund)
    cp "$here/web/package-lock.json" "$stamp"
  else
    echo "install-deps: web/node_modules up to date"
  fi
fi

# TFLite's own interpreter (npm @tensorflow/tfjs-tflite, wasm) for the tests that compare the
# runner's int8 interpreter with it, layer by layer (tools/tflite_reference).
ref="$here/tools/tflite_reference"
if [ -f "$ref/package-lock.json" ] && [ "${MCULAB_SKIP_NPM:-0}" != 1 ] && command -v npm >/dev/null 2>&1; then
  stamp="$ref/node_modules/.mculab-lock-stamp"
  if [ ! -f "$stamp" ] || ! cmp -s "$ref/package-lock.json" "$stamp"; then
    (cd "$ref" && npm ci --no-audit --no-fund)
    cp "$ref/package-lock.json" "$stamp"
  else
    echo "install-deps: tools/tflite_reference/node_modules up to date"
  fi
fi

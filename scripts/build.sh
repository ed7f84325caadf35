#!/usr/bin/env bash
# Configures and builds convtune and its tests.
#   scripts/build.sh          ./build, Release (the binary users run)
#   scripts/build.sh asan     ./build-asan, clang with ASan + UBSan and the
#                             libFuzzer parser fuzzers (cmake/sanitizers.cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-release}" in
  release)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$(nproc)" ;;
  asan)
    CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCONVTUNE_SANITIZE=ON >/dev/null
    cmake --build build-asan -j"$(nproc)" ;;
  *)
    echo "convtune: error: unknown build '$1'; use scripts/build.sh [release|asan]" >&2
    exit 2 ;;
esac

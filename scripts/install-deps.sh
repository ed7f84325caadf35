#!/usr/bin/env bash
# Installs the Debian packages convtune builds and runs with. Idempotent: does
# nothing when they are all present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev
      libpapi-dev libgtest-dev python3-matplotlib libdnnl-dev libopenblas-dev
      clang libclang-rt-dev libomp-dev   # the ASan/UBSan + libFuzzer build (scripts/build.sh asan)
      slurm-wlm munge parallel           # tuning on a cluster: tests/cluster/, bench/cluster/
      libonnx-dev libprotobuf-dev        # --onnx
      libxnnpack-dev libpthreadpool-dev  # the XNNPACK baseline of bench
      libxsmm-dev                        # the LIBXSMM baseline of bench
      python3-torch python3-onnx         # bench/pytorch_conv.py, bench/models.py; tests/data/make_*_models.py
      python3-torchvision)               # bench/models.py
# NEON under qemu-aarch64 on other hosts (tests/neon_test.cpp); AArch64 runs it natively.
[ "$(uname -m)" = aarch64 ] || pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "convtune: installing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null; then
  SUDO="sudo"
else
  echo "convtune: error: need root or sudo to install: ${missing[*]}; install them and re-run" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

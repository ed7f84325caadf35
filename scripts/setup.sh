#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is needed, build, and
# run the main job on the shipped default (tune yolo9000-12 against the
# shipped AVX-512 class table, 20 trials of the default search).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
./build/convtune tune --layer yolo9000-12 --trials 20 --out convtune-out/yolo9000-12 --resume

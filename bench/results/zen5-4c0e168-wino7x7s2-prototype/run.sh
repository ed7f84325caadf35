#!/bin/sh
# Builds the prototype with GCC (the system compiler, as convtune's kernels
# are) and with clang, and times each against convtune's resnet18-1 kernel
# on CPU 1. Run from this directory on a quiet machine.
set -e
D=../zen5-2041daf-paired-200-p5/tune/resnet18-1
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
gcc -O3 -march=native -I"$D" -c "$D/resnet18-1.c" -o "$W/direct.o"
for NT in ${NTS:-4 2}; do
  NT=$NT /usr/bin/python3 gen.py > "$W/proto.c"
  # -fno-tree-ter: without it GCC 12 spills 475 vectors in group (clang: none)
  for CCF in "gcc -fno-tree-ter" "gcc" "clang"; do
    $CCF -O3 -march=native -c "$W/proto.c" -o "$W/proto.o"
    gcc -O3 -march=native -I"$D" main.c "$W/direct.o" "$W/proto.o" -o "$W/bench" -lm
    echo "NT=$NT, $CCF:"; taskset -c 1 "$W/bench"
  done
done

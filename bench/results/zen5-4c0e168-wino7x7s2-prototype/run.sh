#!/bin/sh
# Builds the prototype with GCC (the system compiler, as convtune's kernels
# are) and with clang, and times each against convtune's delivered resnet18-1
# kernel (exported from ../zen5-2041daf-paired-200-p5's log) on CPU 1. Run
# from this directory on a quiet machine; CONVTUNE names the binary.
set -e
CONVTUNE=${CONVTUNE:-../../../build/convtune}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$CONVTUNE" export --layer resnet18-1 --logs ../zen5-2041daf-paired-200-p5/tune --threads 1 --any-machine \
  --out "$W/lib" --name r18 > /dev/null
for NT in ${NTS:-4 2}; do
  NT=$NT /usr/bin/python3 gen.py > "$W/proto.c"
  # -fno-tree-ter: without it GCC 12 spills 475 vectors in group (clang: none)
  for CCF in "gcc -fno-tree-ter" "gcc" "clang"; do
    $CCF -O3 -march=native -c "$W/proto.c" -o "$W/proto.o"
    gcc -O3 -march=native -I"$W/lib" main.c "$W/proto.o" "$W/lib/libr18.a" -fopenmp -o "$W/bench" -lm
    echo "NT=$NT, $CCF:"; taskset -c 1 "$W/bench"
  done
done

#!/usr/bin/env python3
"""Does a tuned kernel's speed depend on where the linker puts it?

Builds one kernel (a tune's <out>/<layer>.c) twice, as objects A and B with
their own symbol names, with the ISA's cflags (microkernels/isa/<isa>.json,
or --flags), and links programs harness, B, N bytes of padding, A for
N = 0, 16, 32, 48: B stays where it is and A moves. Each program times A and
B interleaved on the same buffers; a line is the median of time(A)/time(B)
over --reps pairs, with its quartiles. A and B are the same code, so ratios
that change with N are the link position alone.

    /usr/bin/python3 bench/link_position.py convtune-out/yolo9000-23/yolo9000-23.c
    /usr/bin/python3 bench/link_position.py convtune-out/yolo9000-23/yolo9000-23.c \\
        --flags "-O2 -mavx2 -mfma -fno-align-loops"     # the flags without -falign-functions=64

With GCC's default function alignment of 16 the ratio can move with N (by a
few % at some N for a resnet18-12 kernel); with
-falign-functions=64, which the ISA flags carry, it cannot, since the linker
keeps each kernel on a 64-byte line.
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

fail = benchlib.make_fail("link_position")

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void A_k_pack(const float *, float *); void A_k(const float *, const float *, float *);
void B_k_pack(const float *, float *); void B_k(const float *, const float *, float *);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static float *buffer(long n) { float *p = aligned_alloc(64, ((size_t)n * 4 + 4095) / 4096 * 4096); memset(p, 0, (size_t)n * 4); return p; }
int main(int argc, char **argv) {
  long ni = atol(argv[1]), nw = atol(argv[2]), np = atol(argv[3]), no = atol(argv[4]); int reps = atoi(argv[5]);
  float *in = buffer(ni), *kcrs = buffer(nw), *w = buffer(np), *o = buffer(no);
  for (long i = 0; i < ni; ++i) in[i] = (float)((i * 7) % 13) / 13.f;
  for (long i = 0; i < nw; ++i) kcrs[i] = (float)((i * 5) % 11) / 11.f;
  A_k_pack(kcrs, w);
  double *ta = malloc(reps * sizeof(double)), *tb = malloc(reps * sizeof(double)), *r = malloc(reps * sizeof(double));
  A_k(in, w, o); B_k(in, w, o);
  for (int i = 0; i < reps; ++i) {
    double t = now(); A_k(in, w, o); ta[i] = now() - t;
    t = now(); B_k(in, w, o); tb[i] = now() - t; r[i] = ta[i] / tb[i];
  }
  qsort(ta, reps, sizeof(double), cmp); qsort(tb, reps, sizeof(double), cmp); qsort(r, reps, sizeof(double), cmp);
  printf("time(A)/time(B) %.4f (quartiles %.4f %.4f); A %.3f ms, B %.3f ms\n", r[reps / 2], r[reps / 4],
         r[3 * reps / 4], ta[reps / 2] * 1e3, tb[reps / 2] * 1e3);
  return 0;
}
"""


def sizes(src):
    """Input, KCRS weight, packed weight and output floats from the generated header comment."""
    m = re.search(r"shape:\s+(\S+)", src)
    if not m:
        fail("no 'shape:' line in the kernel's header comment; give a .c that tune wrote")
    d = dict(kv.split("=") for kv in m.group(1).split(","))
    n, k, c, h = (int(d[x]) for x in "NKCH")
    w, r = int(d.get("W", h)), int(d["R"])
    s, st, pad = int(d.get("S", r)), int(d.get("stride", 1)), int(d.get("pad", 0))
    ho, wo = (h + 2 * pad - r) // st + 1, (w + 2 * pad - s) // st + 1
    packed = re.search(r"_packed_floats = (\d+)", src)
    if not packed:
        fail("no '<name>_packed_floats' in the kernel; give a .c that tune wrote")
    return n * h * w * c, k * c * r * s, int(packed.group(1)), n * ho * wo * k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernel", help="a generated kernel, e.g. convtune-out/<layer>/<layer>.c")
    ap.add_argument("--isa", default="avx2", help="whose cflags build both objects (default avx2)")
    ap.add_argument("--flags", help="these compiler flags instead of the ISA's")
    ap.add_argument("--reps", type=int, default=51, help="interleaved pairs per padding")
    a = ap.parse_args()
    isa_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "microkernels", "isa", a.isa + ".json")
    if not os.path.isfile(isa_file):
        fail(f"no ISA description '{a.isa}'; choose one of microkernels/isa/*.json, e.g. avx2")
    flags = a.flags.split() if a.flags else json.load(open(isa_file))["cflags"]
    src = open(a.kernel).read()
    fn = re.search(r"^void (\w+)_pack\(", src, re.M)
    if not fn:
        fail("no '<name>_pack' function in the kernel; give a .c that tune wrote")
    name = fn.group(1)
    cc = os.environ.get("CC", "cc").split()
    print(f"flags: {' '.join(flags)}")
    with tempfile.TemporaryDirectory() as tmp:
        for who in ("A", "B"):
            open(f"{tmp}/{who}.c", "w").write(src.replace(name, who + "_k"))  # the kernel, _pack, _packed_floats
            benchlib.run(cc + flags + ["-c", f"{tmp}/{who}.c", "-o", f"{tmp}/{who}.o"], "link_position", True)
        open(f"{tmp}/harness.c", "w").write(HARNESS)
        args = [str(x) for x in sizes(src)] + [str(a.reps)]
        for pad in (0, 16, 32, 48):
            open(f"{tmp}/pad.s", "w").write(
                f".section .note.GNU-stack,\"\",@progbits\n.text\n.p2align 4\n.fill {pad}, 1, 0x90\n")
            exe = f"{tmp}/ab_{pad}"
            benchlib.run(cc + ["-O2", f"{tmp}/harness.c", f"{tmp}/B.o", f"{tmp}/pad.s", f"{tmp}/A.o", "-o", exe],
                         "link_position", True)
            print(f"A {pad:2d} bytes further: {benchlib.run([exe] + args, 'link_position')}", end="")


if __name__ == "__main__":
    main()

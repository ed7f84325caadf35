#!/usr/bin/python3
"""ctest: bench/pytorch_conv.py on two tiny --shape layers with fast timing,
joined with a made-up bench/batch.py CSV holding one of them; its error without
torch; its reference check on a wrong output.
usage: tests/bench/pytorch_conv_test.py CONVTUNE_BINARY   (exit 77 = skipped)
"""
import csv
import importlib.util
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "pytorch_conv.py")
SHAPES = ["K=8,C=4,H=6,R=3", "K=4,C=3,H=7,R=1,stride=2"]
IDS = ["N1_K8_C4_H6_W6_R3_S3_st1_p1", "N1_K4_C3_H7_W7_R1_S1_st2_p0"]  # convtune's layer_id


def check(cond, what):
    if not cond:
        sys.exit(f"pytorch_conv_test: FAILED: {what}")


def run(args, interpreter=(sys.executable,)):
    return subprocess.run(list(interpreter) + [SCRIPT] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def main():
    if importlib.util.find_spec("torch") is None:
        print(f"pytorch_conv_test: skipped: {sys.executable} has no torch (sudo apt-get install python3-torch)")
        return 77
    convtune = os.path.abspath(sys.argv[1])
    # --help prints (a stray % in a help text makes argparse raise instead).
    p = run(["--help"])
    check(p.returncode == 0 and "--peak PEAK" in p.stdout and "% of peak" in p.stdout, f"--help: {p.stderr}")
    with tempfile.TemporaryDirectory(prefix="convtune-pytorch-") as out:
        # A batch.py CSV with the first layer only: convtune 4x and oneDNN 2x PyTorch's time, set below.
        bench_csv = os.path.join(out, "batch.csv")
        with open(bench_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["network", "layer", "shape", "convtune_wall_ms", "onednn_wall_ms"])
            w.writerow(["custom", IDS[0], "N=1,K=8,C=4,H=6,W=6,R=3,S=3,stride=1,pad=1", "0.0005", "0.001"])
        p = run(["--convtune", convtune, "--shape", SHAPES[0], "--shape", SHAPES[1], "--name", "tiny", "--out", out,
                 "--min-repeat-ms", "2", "--repeat", "1", "--peak", "10", "--bench-csv", bench_csv])
        check(p.returncode == 0, f"exited {p.returncode}:\n{p.stderr}")
        check(p.stdout.split() == [os.path.join(out, "tiny-pytorch." + e) for e in ("csv", "md")], p.stdout)
        with open(os.path.join(out, "tiny-pytorch.csv")) as f:
            rows = list(csv.DictReader(f))
        check([r["layer"] for r in rows] == IDS, f"layers {[r['layer'] for r in rows]}")
        r0, r1 = rows
        check((r0["Ho"], r0["Wo"], r1["Ho"], r1["Wo"]) == ("6", "6", "4", "4"), "output sizes")
        check(math.isclose(float(r0["mflop"]), 2 * 8 * 4 * 9 * 36 * 1e-6, rel_tol=1e-5), f"mflop {r0['mflop']}")
        for r in rows:
            ms, gf = float(r["pytorch_ms"]), float(r["pytorch_gflops"])
            check(ms > 0 and math.isclose(gf, float(r["mflop"]) / ms, rel_tol=1e-4), f"{r['layer']}: {ms} {gf}")
            check(math.isclose(float(r["pytorch_pct"]), gf * 10, rel_tol=1e-4), f"{r['layer']}: % of a 10 GFLOP/s peak")
            check(float(r["max_error"]) <= float(r["tolerance"]), f"{r['layer']}: error {r['max_error']}")
            check(r["backend"] and r["backend"] != "unknown", f"{r['layer']}: backend {r['backend']}")
            check(r["threads"] == "1" and r["cpus"] == str(max(os.sched_getaffinity(0))), f"pinned to {r['cpus']}")
        check(math.isclose(float(r0["ratio_convtune_pytorch"]), float(r0["pytorch_ms"]) / 0.0005, rel_tol=1e-4)
              and math.isclose(float(r0["ratio_onednn_pytorch"]), float(r0["pytorch_ms"]) / 0.001, rel_tol=1e-4),
              "ratios")
        check(r1["ratio_convtune_pytorch"] == "nan", "a layer missing from --bench-csv has no ratio")
        with open(os.path.join(out, "tiny-pytorch.md")) as f:
            md = f.read()
        total = [x.strip() for x in md.split("| **total** |")[1].split("\n")[0].split("|")]
        ms = float(r0["pytorch_ms"]) + float(r1["pytorch_ms"])
        check(math.isclose(float(total[3]), (float(r0["mflop"]) + float(r1["mflop"])) / ms, abs_tol=0.051),
              f"total GFLOP/s {total}")
        for text in ("### tiny: PyTorch conv2d", f"| {IDS[0]} | N=1,K=8,C=4,H=6,W=6,R=3,S=3,stride=1,pad=1 | 0.0207 |",
                     f"| {IDS[1]} | N=1,K=4,C=3,H=7,W=7,R=1,S=1,stride=2,pad=0 | 0.000384 |", "| - | - |",
                     "| **total** |", "geomean"):
            check(text in md, f"Markdown lacks {text!r}:\n{md}")
        # A bench CSV of other layers fails before any timing.
        p = run(["--convtune", convtune, "--shape", SHAPES[1], "--out", out, "--bench-csv", bench_csv])
        check(p.returncode == 1 and p.stderr == f"pytorch_conv.py: error: --bench-csv '{bench_csv}' holds none of "
                                                "these layers; give the CSV of the same layers\n", p.stderr)
        # A CSV from before the wall-clock columns (probe-speed times only) is refused.
        old_csv = os.path.join(out, "old.csv")
        with open(old_csv, "w", newline="") as f:
            csv.writer(f).writerows([["network", "layer", "shape", "convtune_ms", "onednn_ms"],
                                     ["custom", IDS[0], "N=1,K=8,C=4,H=6,W=6,R=3,S=3,stride=1,pad=1", "0.0005", "0.001"]])
        p = run(["--convtune", convtune, "--shape", SHAPES[0], "--out", out, "--bench-csv", old_csv])
        check(p.returncode == 1 and p.stderr == f"pytorch_conv.py: error: --bench-csv '{old_csv}' lacks the columns "
                                                "layer, shape, convtune_wall_ms, onednn_wall_ms; give a CSV "
                                                "bench/batch.py wrote (an older one: run batch.py again with "
                                                "--bench-only --resume)\n", p.stderr)
        # Without site-packages (-S) Debian's python3 has no torch: one line naming the package, exit 2.
        p = run(["--convtune", convtune, "--shape", SHAPES[0], "--out", out], interpreter=(sys.executable, "-S"))
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("pytorch_conv.py: error: torch is not "
                                                                               "importable by")
              and "/usr/bin/python3" in lines[0] and "python3-torch" in lines[0], f"{p.returncode}: {p.stderr}")
    # A wrong output is the script's error, naming the element.
    sys.path.insert(0, os.path.dirname(SCRIPT))
    import pytorch_conv
    import torch
    ref = torch.zeros(1, 2, 3, 3, dtype=torch.float64)
    out = ref.float()
    check(pytorch_conv.check("L", out, ref, 1e-5) == 0, "equal outputs")
    out[0, 1, 2, 0] = 1e-3
    try:
        pytorch_conv.check("L", out, ref, 1e-5)
        check(False, "a wrong output passed")
    except SystemExit as e:
        check(str(e) == "pytorch_conv.py: error: L: PyTorch's conv2d disagrees with the float64 reference at output "
                        "(n=0,h=2,w=0,k=1): 0.001 instead of 0 (tolerance 1e-05); check the python3-torch installation",
              str(e))
    print("pytorch_conv_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

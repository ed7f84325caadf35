#!/usr/bin/python3
"""ctest: bench/batch.py end to end on a two-layer network with a few trials
and fast timing, resumed twice (the logs grown, then complete), then the
figures from its outputs.
usage: tests/batch_test.py CONVTUNE_BINARY   (exit 77 = skipped)
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = "K=32,C=16,H=8,R=3;K=16,C=8,H=6,R=1"


def check(cond, what):
    if not cond:
        sys.exit(f"batch_test: FAILED: {what}")


def run(args):
    p = subprocess.run([sys.executable] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, f"{' '.join(args[:2])} exited {p.returncode}:\n{p.stderr}")
    return p.stdout


def host_isa(convtune):
    """The ISA convtune picks without --arch, as it says on stderr: the shipped
    table must be that ISA's on any host (AVX-512 or AVX2-only)."""
    p = subprocess.run([convtune, "table"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"--arch not given; using (\w+),", p.stderr)
    check(m, f"convtune table did not say which ISA it chose:\n{p.stderr}")
    return m.group(1)


def main():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("batch_test: skipped: python3-matplotlib is missing (sudo apt-get install python3-matplotlib)")
        return 77
    convtune = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="convtune-batch-") as out:
        batch = [os.path.join(ROOT, "bench", "batch.py"), "--shapes", SHAPES, "--name", "tiny", "--out", out,
                 "--convtune", convtune, "--min-repeat-ms", "2", "--repeat", "1",
                 # No duel: its compiles would be a third of this test, and finalist_test covers it.
                 "--tune-args", "--duel-rounds 0 --table " +
                 os.path.join(ROOT, "configs", "tables", host_isa(convtune) + ".json")]
        run(batch + ["--trials", "2"])
        # {layer} in --tune-args: a second batch starts each layer's hill climb from the first's kernel.
        refine = os.path.join(out, "refine")
        run(batch[:batch.index("--out") + 1] + [refine] + batch[batch.index("--out") + 2:-1] +
            [batch[-1] + " --search hillclimb --start-from " + os.path.join(out, "tune", "{layer}"), "--trials", "2"])
        for layer in ("tiny-0", "tiny-1"):
            with open(os.path.join(out, "tune", layer, "finalists.json")) as f:
                winner = json.load(f)["winner"]
            with open(os.path.join(refine, "tune", layer, "log.jsonl")) as f:
                first = json.loads(f.readline())
            check(first["config"] == winner, f"{layer}: the refinement started from {first['config']}, not {winner}")
        bench0 = os.path.join(out, "bench", "tiny-0.json")
        first = os.path.getmtime(bench0)
        # Resumed with one more trial: the logs grow, so both layers are benched again.
        run(batch + ["--trials", "3", "--resume"])
        check(os.path.getmtime(bench0) > first, "the grown log was not benched again")
        # Resumed at the trials the logs hold: complete, so neither tuned (no finalist re-measure) nor benched.
        fin0 = os.path.join(out, "tune", "tiny-0", "finalists.json")
        stamps = [os.path.getmtime(f) for f in (bench0, fin0)]
        run(batch + ["--trials", "3", "--resume"])
        check([os.path.getmtime(f) for f in (bench0, fin0)] == stamps, "a complete log was tuned or benched again")
        with open(os.path.join(out, "tiny.csv")) as f:
            rows = list(csv.DictReader(f))
        check([r["layer"] for r in rows] == ["tiny-0", "tiny-1"], f"layers {[r['layer'] for r in rows]}")
        for r in rows:
            check(r["trials"] == "3", f"{r['layer']}: trials {r['trials']}")
            for col in ("best20_pct", "bestN_log_pct", "convtune_pct", "convtune_ms", "peak_gflops", "mflop"):
                check(float(r[col]) > 0, f"{r['layer']}: {col} = {r[col]}")
            check(r["onednn_impl"] and r["blas_impl"], f"{r['layer']}: baseline names missing")
            check(r["onednn_impl"] == "missing" or float(r["ratio_convtune_onednn"]) > 0, "ratio")
            # The wall-clock ratio is the bench's own: oneDNN's wall time over convtune's.
            with open(os.path.join(out, "bench", r["layer"] + ".json")) as f:
                b = json.load(f)
            if r["onednn_impl"] != "missing":
                want = b["onednn"]["wall_seconds"] / b["convtune"]["wall_seconds"]
                # The CSV keeps 6 significant digits.
                check(abs(float(r["ratio_wall"]) - want) <= 1e-5 * want,
                      f"{r['layer']}: ratio_wall {r['ratio_wall']}, want {want}")
                # And the wall-clock times themselves (pytorch_conv.py --bench-csv compares them).
                for impl in ("convtune", "onednn"):
                    ms = b[impl]["wall_seconds"] * 1e3
                    check(abs(float(r[impl + "_wall_ms"]) - ms) <= 1e-5 * ms, f"{r['layer']}: {impl}_wall_ms")
        check(rows[0]["K"] == "32" and rows[1]["R"] == "1", "shape columns")
        # Memory: the layer's tensors (fp32, once each) over convtune's time, and the triad's bandwidth.
        mb = 4 * (16 * 8 * 8 + 32 * 16 * 9 + 32 * 8 * 8) * 1e-6
        check(abs(float(rows[0]["mbytes"]) - mb) <= 1e-5 * mb, f"mbytes {rows[0]['mbytes']}, want {mb}")
        for r in rows:
            gbs = float(r["mbytes"]) * 1e-3 / (float(r["convtune_ms"]) * 1e-3)
            check(abs(float(r["convtune_gbs"]) - gbs) <= 1e-4 * gbs, f"{r['layer']}: convtune_gbs {r['convtune_gbs']}")
            check(float(r["triad_gbs"]) > 0, f"{r['layer']}: triad_gbs {r['triad_gbs']}")
        check(float(rows[0]["real_frac"]) < 1 and float(rows[1]["real_frac"]) == 1, "real MAC fraction")
        with open(os.path.join(out, "tiny.md")) as f:
            md = f.read()
        for text in ("### tiny", "| tiny-0 | 32,16,8 3x3 s1 p1 |", "| tiny-1 | 16,8,6 1x1 s1 p0 |", "FLOP-weighted average",
                     "geomean", "convtune best of N (N=3)", "wall-clock convtune/oneDNN"):
            check(text in md, f"Markdown lacks {text!r}:\n{md}")
        # --bench-only: the same kernels benched again, with no trial and no
        # finalist re-measure (the log and finalists.json stay as they were).
        kept = {}
        for f in ("log.jsonl", "finalists.json"):
            with open(os.path.join(out, "tune", "tiny-0", f)) as g:
                kept[f] = g.read()
        os.rename(os.path.join(out, "bench"), os.path.join(out, "bench-before"))
        run(batch + ["--trials", "5", "--bench-only", "--resume"])
        check(os.path.exists(bench0), "--bench-only did not bench")
        for f, text in kept.items():
            with open(os.path.join(out, "tune", "tiny-0", f)) as g:
                check(g.read() == text, f"--bench-only changed {f}")
        with open(os.path.join(out, "tiny.csv")) as f:
            check([r["trials"] for r in csv.DictReader(f)] == ["3", "3"], "--bench-only tuned")
        with open(os.path.join(out, "tiny.md")) as f:
            check("convtune best of N (N=3)" in f.read(), "--bench-only: N is not the logs' 3 trials")
        # --processes 2: a cached bench of one process is not kept; each bench ran in two.
        before = os.path.getmtime(bench0)
        run(batch + ["--trials", "5", "--bench-only", "--resume", "--processes", "2"])
        check(os.path.getmtime(bench0) > before, "--processes 2 kept the one-process bench")
        with open(bench0) as f:
            b = json.load(f)
        check(b["processes"] == 2 and len(b["convtune"]["samples"]) == 2, f"bench of 2 processes: {b}")
        with open(os.path.join(out, "tiny.csv")) as f:
            r = next(csv.DictReader(f))
        check(r["processes"] == "2", f"processes column {r['processes']}")
        if r["onednn_impl"] != "missing":
            ratios = b["process_ratios"]
            check(len(ratios) == 2 and abs(float(r["ratio_min"]) - min(ratios)) <= 1e-5 * min(ratios),
                  f"ratio_min {r['ratio_min']} of {ratios}")
            # The headline: the median of the paired, same-process ratios (of two, their mean).
            check(abs(float(r["ratio_convtune_onednn"]) - sum(ratios) / 2) <= 1e-5 * min(ratios),
                  f"ratio_convtune_onednn {r['ratio_convtune_onednn']} of {ratios}")
            medians = b["onednn"]["seconds"] / b["convtune"]["seconds"]
            check(abs(float(r["ratio_of_medians"]) - medians) <= 1e-5 * medians,
                  f"ratio_of_medians {r['ratio_of_medians']}, not {medians}")
        with open(os.path.join(out, "tiny.md")) as f:
            check("in 2 fresh processes per layer" in f.read(), "the Markdown does not say how many processes")
        # Without a log there is nothing to bench: one line that says what to do.
        empty = os.path.join(out, "empty")
        p = subprocess.run([sys.executable] + batch + ["--out", empty, "--bench-only"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        want = (f"batch: error: --bench-only: tiny-0 has no log at {os.path.join(empty, 'tune', 'tiny-0', 'log.jsonl')}; "
                "tune it first (drop --bench-only)\n")
        check(p.returncode != 0 and p.stderr == want, f"--bench-only without a log: exit {p.returncode}, {p.stderr!r}")
        # Each figure from one command.
        for args in (["fig9", os.path.join(out, "tiny.csv")], ["fig10", os.path.join(out, "tune", "tiny-0")],
                     ["fig11", os.path.join(out, "tune")]):
            png = os.path.join(out, args[0] + ".png")
            run([os.path.join(ROOT, "bench", "figures.py")] + args + ["-o", png])
            check(os.path.getsize(png) > 1000, f"{png} is empty")
    print("batch_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

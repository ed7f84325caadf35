#!/usr/bin/python3
"""Tunes every layer of ResNet-18 and Yolo-9000 with random sampling and
writes a table: % of measured peak of the best of the first 20 and the best of
N trials, FLOP-weighted average per network, wall time and seconds per
candidate (issue: the online stage's bench).

usage: bench/tune_networks.py [--trials 100] [--networks resnet18,yolo9000]
                              [--out bench/results/tune] [--convtune build/convtune]
Resumable: logs live in OUT/<layer>/log.jsonl and are continued (--resume).
Layers listed in --short (default yolo9000-23) get --short-trials (default 20).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd):
    return benchlib.run(cmd, "tune_networks", whole_stderr=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--networks", default="resnet18,yolo9000")
    ap.add_argument("--short", default="yolo9000-23")
    ap.add_argument("--short-trials", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "tune"))
    ap.add_argument("--convtune", default=os.path.join(ROOT, "build", "convtune"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--extra", default="", help="extra arguments for convtune tune")
    a = ap.parse_args()
    short = set(x for x in a.short.split(",") if x)
    layers = []
    for line in run([a.convtune, "layers"]).splitlines()[1:]:
        name = line.split()[0]
        if name.rsplit("-", 1)[0] in a.networks.split(","):
            layers.append(name)
    rows = []
    for name in layers:
        trials = a.short_trials if name in short else a.trials
        out = os.path.join(a.out, name)
        t0 = time.time()
        res = json.loads(run([a.convtune, "tune", "--layer", name, "--trials", str(trials), "--seed", str(a.seed),
                              "--out", out, "--resume", "--json", "-q", "--threads", "1"] + a.extra.split()))
        wall = time.time() - t0
        recs = benchlib.read_log(os.path.join(out, "log.jsonl"), missing_ok=False)
        peak = res["peak_gflops"]
        ok = [r for r in recs if r["status"] == "ok"]

        def best_of(n):
            v = [r["gflops"] for r in recs[:n] if r["status"] == "ok"]
            return 100 * max(v) / peak if v else 0.0

        flops = None
        for line in run([a.convtune, "layers"]).splitlines()[1:]:
            parts = line.split()
            if parts[0] == name:
                flops = float(parts[-1]) * 1e6
        rows.append(dict(layer=name, network=name.rsplit("-", 1)[0], trials=len(recs), failed=len(recs) - len(ok),
                         best20=best_of(20), bestN=best_of(trials), peak=peak, flops=flops,
                         wall=wall, new=res["new_trials"],
                         per_cand=(wall / res["new_trials"]) if res["new_trials"] else float("nan"),
                         best_gflops=res["best"]["gflops"] if res["best"] else 0.0,
                         config=res["best"]["config"] if res["best"] else "-"))
        print(f"{name}: best-of-20 {rows[-1]['best20']:.1f}%  best-of-{trials} {rows[-1]['bestN']:.1f}%  "
              f"({len(recs)} trials, {wall:.0f} s)", file=sys.stderr)
    lines = [f"| layer | trials | failed | best of 20 (% peak) | best of N (% peak) | GFLOP/s | peak | wall s (this run) | s/candidate |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layer']} | {r['trials']} | {r['failed']} | {r['best20']:.1f} | {r['bestN']:.1f} | "
                     f"{r['best_gflops']:.1f} | {r['peak']:.1f} | {r['wall']:.0f} | {r['per_cand']:.2f} |")
    for net in a.networks.split(","):
        rs = [r for r in rows if r["network"] == net]
        if not rs:
            continue
        tot = sum(r["flops"] for r in rs)
        w20 = sum(r["flops"] * r["best20"] for r in rs) / tot
        wN = sum(r["flops"] * r["bestN"] for r in rs) / tot
        lines.append(f"| **{net} FLOP-weighted** | | | **{w20:.1f}** | **{wN:.1f}** | | | "
                     f"{sum(r['wall'] for r in rs):.0f} | |")
    table = "\n".join(lines) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(a.out, "table.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(table)


if __name__ == "__main__":
    main()

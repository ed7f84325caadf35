#!/usr/bin/python3
"""Convergence of the search strategies on one space with one budget:
each strategy with several seeds on a few layers; best so far after 5, 10, 20,
50 and 100 trials as % of the best configuration any run found, and wall time.

usage: bench/convergence.py [--layers yolo9000-5,yolo9000-12,yolo9000-18,resnet18-2,resnet18-9]
                            [--shapes "K=256,C=64,H=56,R=1;K=32,C=3,H=224,R=3,stride=2,pad=1"]
                            [--strategies random,droplet,opevo,hillclimb,csa] [--seeds 5]
                            [--trials 100] [--out DIR]
                            [--convtune build/convtune] [--extra "--min-repeat-ms 50"]
A --shapes entry (shapes of other networks than the zoo's, ';' between them)
is tuned with --shape and reported under its layer id.
Each run is `convtune tune --layer L --search S --seed N --trials T --out OUT/L/S/seedN
--resume --json -q`, so an interrupted bench continues where it stopped.
Writes OUT/convergence.md, OUT/convergence.csv and OUT/convergence.png (a
Fig. 10-style plot: one panel per layer, one curve per strategy, the median
over seeds). csa proposes one configuration; its curve stays flat after it.
"""
import argparse
import csv
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECKPOINTS = (5, 10, 20, 50, 100)
GOAL = (95.0, 20)  # the compass: some strategy at 95% of the best within 20 trials


fail = benchlib.make_fail("convergence")
A = None  # the parsed arguments (main)


def layer_id(shape):
    """The layer id convtune gives an ad-hoc shape (`convtune layers --shape S --list`)."""
    p = subprocess.run([A.convtune, "layers", "--shape", shape, "--list"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(p.stderr.strip().removeprefix("convtune: error: ") or f"bad shape '{shape}'")
    return p.stdout.split("\t")[0]


def run_one(a, layer, strategy, seed):
    """Runs (or resumes) one tuning; returns this call's wall time, accumulated in wall.json."""
    out = os.path.join(a.out, layer, strategy, f"seed{seed}")
    what = ["--shape", a.shape_of[layer]] if layer in a.shape_of else ["--layer", layer]
    os.makedirs(out, exist_ok=True)
    side = os.path.join(out, "wall.json")
    try:
        with open(side) as f:
            done = json.load(f)
    except (OSError, ValueError):
        done = {}
    # A finished run is not resumed again: that would only add the tuner's start-up to its wall time.
    # (csa stops after its one configuration; older wall.json files lack "trials".)
    if done.get("trials", 0) >= a.trials or (done and (strategy == "csa" or len(benchlib.read_log(
            os.path.join(out, "log.jsonl"))) >= a.trials)):
        return True
    cmd = [a.convtune, "tune"] + what + ["--search", strategy, "--seed", str(seed), "--trials",
           str(a.trials), "--out", out, "--resume", "--json", "-q", "--threads", "1"] + a.skip_onednn + \
        shlex.split(a.extra)  # one core, as bench/batch.py tunes by default
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    if p.returncode == 130:
        fail("interrupted; run the same command again to continue")
    if p.returncode != 0:
        print(f"convergence: {layer} {strategy} seed {seed} failed: {p.stderr.strip()}", file=sys.stderr)
        return False
    with open(side, "w") as f:
        json.dump({"wall_s": done.get("wall_s", 0.0) + wall, "trials": a.trials}, f)
    return True


def curve(recs, n):
    """Best GFLOP/s so far after 1..n trials (held after the run's end)."""
    best, out = 0.0, []
    for i in range(n):
        if i < len(recs) and recs[i].get("status") == "ok":
            best = max(best, recs[i].get("gflops", 0.0))
        out.append(best)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="yolo9000-5,yolo9000-12,yolo9000-18,resnet18-2,resnet18-9")
    ap.add_argument("--shapes", default="", help="ad-hoc shapes, ';' between them")
    ap.add_argument("--strategies", default="random,droplet,opevo,hillclimb,csa")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "convergence"))
    ap.add_argument("--convtune", default=os.path.join(ROOT, "build", "convtune"))
    ap.add_argument("--extra", default="", help="extra arguments for convtune tune, e.g. \"--repeat 5\"")
    ap.add_argument("--report-only", action="store_true", help="only tabulate the logs already in --out")
    global A
    a = A = ap.parse_args()
    if not a.report_only and not os.access(a.convtune, os.X_OK):
        fail(f"no convtune binary at '{a.convtune}'; build it (cmake --build build) or pass --convtune")
    if a.trials < 1 or a.seeds < 1:
        fail("--trials and --seeds must be at least 1")
    # The search is under test, not the closing oneDNN comparison: skip it where the binary has one.
    a.skip_onednn = []
    if not a.report_only:
        help_text = subprocess.run([a.convtune, "tune", "--help"], stdout=subprocess.PIPE, text=True).stdout
        if "--no-onednn" in help_text and "--no-onednn" not in a.extra:
            a.skip_onednn = ["--no-onednn"]
    layers = [x for x in a.layers.split(",") if x]
    a.shape_of = {layer_id(x): x for x in a.shapes.split(";") if x}
    layers += list(a.shape_of)
    strategies = [x for x in a.strategies.split(",") if x]
    seeds = list(range(1, a.seeds + 1))
    checkpoints = [c for c in CHECKPOINTS if c < a.trials] + [a.trials]

    failed = 0
    if not a.report_only:
        for layer in layers:
            for s in strategies:
                for seed in seeds:
                    print(f"convergence: {layer} {s} seed {seed}", file=sys.stderr, flush=True)
                    failed += not run_one(a, layer, s, seed)

    rows, curves, peaks, dates = [], {}, {}, []
    for layer in layers:
        runs = {}
        for s in strategies:
            for seed in seeds:
                d = os.path.join(a.out, layer, s, f"seed{seed}")
                recs = benchlib.read_log(os.path.join(d, "log.jsonl"))[: a.trials]
                if not recs:
                    continue
                try:
                    with open(os.path.join(d, "wall.json")) as f:
                        wall = json.load(f)["wall_s"]
                except (OSError, ValueError, KeyError):
                    wall = float("nan")
                runs[(s, seed)] = (recs, wall)
                peaks.setdefault(layer, []).extend(r["peak_gflops"] for r in recs if r.get("peak_gflops"))
                dates += [r["timestamp"][:10] for r in recs if r.get("timestamp")]
        best = max((r.get("gflops", 0.0) for recs, _ in runs.values() for r in recs if r.get("status") == "ok"),
                   default=0.0)
        for (s, seed), (recs, wall) in runs.items():
            c = [100 * g / best if best > 0 else 0.0 for g in curve(recs, a.trials)]
            curves.setdefault(layer, {}).setdefault(s, []).append(c)
            reach = next((i + 1 for i, v in enumerate(c) if v >= GOAL[0]), None)
            row = dict(layer=layer, strategy=s, seed=seed, trials=len(recs),
                       failed=sum(r.get("status") != "ok" for r in recs), wall_s=round(wall, 1),
                       best_gflops=round(max([r["gflops"] for r in recs if r.get("status") == "ok"], default=0.0), 2),
                       layer_best_gflops=round(best, 2), trials_to_95=reach if reach else "")
            for n in checkpoints:
                row[f"pct_at_{n}"] = round(c[n - 1], 1)
            rows.append(row)
    if not rows:
        fail(f"no logs under '{a.out}'; run without --report-only first")

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "convergence.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    machine = benchlib.cpu_model()
    date = max(dates) if dates else datetime.date.today().isoformat()
    med = statistics.median
    lines = [f"# Convergence of the search strategies",
             "",
             f"{machine}; {len(seeds)} seeds, budget {a.trials} trials; {date}. Cells: median over seeds of the best "
             f"so far, as % of the best configuration any run found on the layer. Wall: median seconds per run.",
             ""]
    goal_met = []
    for layer in layers:
        rs = [r for r in rows if r["layer"] == layer]
        if not rs:
            continue
        pk = med(peaks[layer]) if peaks.get(layer) else float("nan")
        lines.append(f"## {layer}: best {rs[0]['layer_best_gflops']:.1f} GFLOP/s ({100 * rs[0]['layer_best_gflops'] / pk:.1f}% "
                     f"of peak {pk:.1f})")
        lines.append("")
        lines.append("| strategy | runs | " + " | ".join(f"@{n}" for n in checkpoints) + " | trials to 95% | wall s |")
        lines.append("|---|---|" + "---|" * len(checkpoints) + "---|---|")
        winners = []
        for s in strategies:
            sr = [r for r in rs if r["strategy"] == s]
            if not sr:
                continue
            cells = [f"{med(r[f'pct_at_{n}'] for r in sr):.1f}" for n in checkpoints]
            reach = [r["trials_to_95"] for r in sr if r["trials_to_95"] != ""]
            reach_txt = f"{med(reach):.0f} ({len(reach)}/{len(sr)})" if reach else f"- (0/{len(sr)})"
            lines.append(f"| {s} | {len(sr)} | " + " | ".join(cells) + f" | {reach_txt} | {med(r['wall_s'] for r in sr):.0f} |")
            if med(c[min(GOAL[1], a.trials) - 1] for c in curves[layer][s]) >= GOAL[0]:
                winners.append(s)
        goal_met.append((layer, winners))
        lines.append("")
    lines.append(f"Goal ({GOAL[0]:.0f}% of the best within {GOAL[1]} trials, median over seeds):")
    for layer, winners in goal_met:
        lines.append(f"- {layer}: {', '.join(winners) if winners else 'no strategy'}")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "convergence.md"), "w") as f:
        f.write(table)
    print(table)

    plt = benchlib.plt("convergence", optional=True)
    if plt is None:
        return 1 if failed else 0
    shown = [l for l in layers if l in curves]
    cols = min(3, len(shown))
    nrows = (len(shown) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.axis("off")
    for ax, layer in zip(axes.flat, shown):
        for s in strategies:
            cs = curves[layer].get(s)
            if not cs:
                continue
            ys = [med(c[i] for c in cs) for i in range(a.trials)]
            ax.plot(range(1, a.trials + 1), ys, label=s, drawstyle="steps-post")
        ax.axhline(GOAL[0], color="grey", lw=0.6, ls=":")
        if GOAL[1] <= a.trials:
            ax.axvline(GOAL[1], color="grey", lw=0.6, ls=":")
        pk = med(peaks[layer]) if peaks.get(layer) else float("nan")
        ax.set_title(f"{layer} (peak {pk:.0f} GFLOP/s)", fontsize=9)
        ax.set_xlabel("trials")
        ax.set_ylabel("best so far, % of best found")
        ax.set_ylim(0, 102)
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Convergence (Fig. 10 style): median of {len(seeds)} seeds\n{machine}, single core, {date}", fontsize=10)
    fig.tight_layout()
    png = os.path.join(a.out, "convergence.png")
    fig.savefig(png, dpi=120)
    print(f"convergence: wrote {png}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

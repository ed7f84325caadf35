#!/usr/bin/python3
"""The paper's figures (000 §5, §6.1) as PNGs from batch outputs and tuning logs.

usage: bench/figures.py fig9 CSV [-o PNG]        per-layer bars of the batch table
       bench/figures.py fig10 LOG... [-o PNG]    best so far against trials on one layer, one
                                                 curve per log, coloured by strategy (e.g.
                                                 OUT/yolo9000-12 of bench/convergence.py
                                                 --seeds 8 --out OUT: every candidate's record)
       bench/figures.py fig11 LOG... [-o PNG]    cumulative distribution of sampled
                                                 performance, one panel per layer
       bench/figures.py fig6 [TABLE] [-o PNG]    microkernel heatmap (bench/heatmap.py)
A LOG may be a log.jsonl or a directory searched for them. Output: bench/results/ by default.
"""
import argparse
import csv
import datetime
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


fail = benchlib.make_fail("figures")


def log_paths(args):
    out = []
    for a in args:
        if os.path.isdir(a):
            for d, _, files in sorted(os.walk(a)):
                out += [os.path.join(d, f) for f in sorted(files) if f == "log.jsonl"]
        elif os.path.exists(a):
            out.append(a)
        else:
            fail(f"no log at '{a}'; pass log.jsonl files or directories holding them")
    if not out:
        fail("no log.jsonl found in " + " ".join(args))
    return out


def read_log(path):
    return benchlib.read_log(path, missing_ok=False, empty_fails="figures")


def title(what, machine, peaks, dates):
    peak = statistics.median(peaks) if peaks else float("nan")
    date = max(dates) if dates else datetime.date.today().isoformat()
    return f"{what}\n{machine}, peak {peak:.1f} GFLOP/s, {date}"


def save(fig, out, default):
    out = out or os.path.join(HERE, "results", default)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


def pct(r):
    return r["percent_peak"] if r["status"] == "ok" else 0.0


def fig9(a):
    try:
        with open(a.inputs[0]) as f:
            rows = list(csv.DictReader(f))
    except (OSError, IndexError) as e:
        fail(f"cannot read the batch CSV ({e}); run bench/batch.py first")
    if not rows:
        fail(f"{a.inputs[0]} has no rows; run bench/batch.py first")
    p = benchlib.plt("figures")
    nets = list(dict.fromkeys(r["network"] for r in rows))
    series = [("best20_pct", "convtune best of 20"), ("convtune_pct", "convtune best of N"),
              ("onednn_pct", "oneDNN"), ("blas_pct", "im2col+OpenBLAS")]
    fig, axes = p.subplots(len(nets), 1, figsize=(max(8, 0.9 * len(rows)), 4 * len(nets)), squeeze=False)
    for ax, net in zip(axes[:, 0], nets):
        rs = [r for r in rows if r["network"] == net]
        width = 0.8 / len(series)
        for i, (col, label) in enumerate(series):
            vals = [float(r[col]) if r[col] not in ("", "nan") else 0.0 for r in rs]
            ax.bar([j + (i - 1.5) * width for j in range(len(rs))], vals, width, label=label)
        ax.axhline(100, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels([r["layer"] for r in rs], rotation=45, ha="right")
        ax.set_ylabel("% of measured peak (nominal FLOPs)")
        ax.set_xlabel(f"{net} layer")
        ax.legend(fontsize=8, ncol=4)
        ax.set_title(title(f"Fig. 9: {net}, single core", rs[0]["machine"],
                           [float(r["peak_gflops"]) for r in rs], [r["date"] for r in rs]), fontsize=10)
    save(fig, a.out, "fig9-" + "-".join(nets) + ".png")


def fig10(a):
    logs = [(path, read_log(path)) for path in log_paths(a.inputs)]
    layers = sorted({r["layer"] for _, recs in logs for r in recs})
    if len(layers) != 1:
        fail(f"fig10 draws one layer; these logs hold {', '.join(layers)}")
    p = benchlib.plt("figures")
    fig, ax = p.subplots(figsize=(8, 5))
    runs = {}
    for _, recs in logs:
        runs.setdefault(recs[0].get("strategy", "random"), []).append(recs)
    for i, (strategy, group) in enumerate(sorted(runs.items())):
        for j, recs in enumerate(group):
            best, trace = 0.0, []
            for r in recs:
                best = max(best, pct(r))
                trace.append(best)
            ax.plot(range(1, len(trace) + 1), trace, drawstyle="steps-post", color=f"C{i}", alpha=0.7,
                    linewidth=1.2, label=f"{strategy} ({len(group)} runs, seeds differ)" if j == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("candidates measured (trials)")
    ax.set_ylabel("best so far, % of measured peak")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    recs = [r for _, x in logs for r in x]
    ax.set_title(title(f"Fig. 10: convergence on {layers[0]}, best so far of {len(logs)} runs",
                       a.machine or benchlib.cpu_model(),
                       [r["peak_gflops"] for r in recs if r.get("peak_gflops")],
                       [r.get("timestamp", "")[:10] for r in recs if r.get("timestamp")]), fontsize=10)
    save(fig, a.out, f"fig10-{layers[0]}.png")


def fig11(a):
    by_layer = {}
    for path in log_paths(a.inputs):
        for r in read_log(path):
            by_layer.setdefault(r["layer"], []).append(r)
    names = sorted(by_layer, key=lambda n: (n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])
                                            if n.rsplit("-", 1)[-1].isdigit() else 0, n))
    p = benchlib.plt("figures")
    cols = min(4, len(names))
    rows = math.ceil(len(names) / cols)
    fig, axes = p.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows + 0.8), squeeze=False, sharex=True)
    recs_all = []
    for ax, name in zip(axes.flat, names):
        recs = by_layer[name]
        recs_all += recs
        vals = sorted(pct(r) for r in recs)
        n = len(vals)
        # fraction of draws at or above x (000 Fig. 11)
        ax.step(vals, [1 - i / n for i in range(n)], where="post")
        ax.axvline(max(vals), color="red", linewidth=1.5)
        ax.set_title(f"{name} ({n} draws)", fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        ax.grid(True, alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("fraction of draws above x")
    for ax in axes[-1, :]:
        ax.set_xlabel("% of measured peak")
    fig.suptitle(title("Fig. 11: distribution of sampled performance (red: best draw)",
                       a.machine or benchlib.cpu_model(),
                       [r["peak_gflops"] for r in recs_all if r.get("peak_gflops")],
                       [r.get("timestamp", "")[:10] for r in recs_all if r.get("timestamp")]), fontsize=10)
    save(fig, a.out, "fig11.png")


def fig6(a):
    cmd = [sys.executable, os.path.join(HERE, "heatmap.py")] + a.inputs[:1] + (["-o", a.out] if a.out else [])
    sys.exit(subprocess.call(cmd))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("figure", choices=["fig9", "fig10", "fig11", "fig6"])
    ap.add_argument("inputs", nargs="*", help="CSV (fig9), logs or directories (fig10, fig11), table (fig6)")
    ap.add_argument("-o", "--out", help="PNG path (default: bench/results/<figure>...png)")
    ap.add_argument("--machine", help="machine name for titles of log figures (default: this CPU's model)")
    a = ap.parse_args()
    if a.figure in ("fig9", "fig10", "fig11") and not a.inputs:
        fail(f"{a.figure} needs its input; see --help")
    {"fig9": fig9, "fig10": fig10, "fig11": fig11, "fig6": fig6}[a.figure](a)


if __name__ == "__main__":
    main()

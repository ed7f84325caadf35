#!/usr/bin/python3
"""Multi-core scaling (issue 12): tunes every layer of a network once per thread
count, then benches all counts in ONE `convtune bench --threads 1,N` run per
layer, so convtune and oneDNN at 1 and N threads are timed in the same process.
Writes <name>-scaling.csv and .md: per layer % of peak (peak = threads x the
measured one-core peak), convtune tN/t1, oneDNN tN/t1 and convtune/oneDNN at N.

usage: bench/scaling.py --network resnet18,yolo9000 --threads 1,2 --trials 20 \
           --out bench/results/scaling [--tune-args "--search droplet"] [--warm-start] [--resume]
Layout under --out: tune/<layer>/t<n>/log.jsonl (bench's --threads list layout),
bench/<layer>.jsonl (the bench run's JSON Lines, one object per count).
A log already holding --trials records is not tuned again (--resume), so a
previous single-thread run's tune/<layer> can be copied to tune/<layer>/t1.
"""
import argparse
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch  # noqa: E402  (layers_of, run, fmt)
import benchlib  # noqa: E402

fail = benchlib.make_fail("scaling")


def row_for(a, net, name, sel, counts):
    tdir = os.path.join(a.out, "tune", name)
    timing = ["--min-repeat-ms", str(a.min_repeat_ms), "--repeat", str(a.repeat)] + a.cpu
    for n in counts:
        # --warm-start: the larger counts begin at the smallest count's best kernel, lifted (tune --start-from).
        warm = ["--start-from", os.path.join(tdir, f"t{counts[0]}")] if a.warm_start and n != counts[0] else []
        batch.run([a.convtune, "tune"] + sel + ["--trials", str(a.trials), "--seed", str(a.seed), "--out",
                                                 os.path.join(tdir, f"t{n}"), "--json", "-q", "--no-onednn",
                                                 "--resume", "--threads", str(n)] + warm + timing + a.tune_args.split())
    cache = os.path.join(a.out, "bench", name + ".jsonl")
    if not (a.resume and os.path.exists(cache)):
        out = batch.run([a.convtune, "bench"] + sel + ["--out", tdir, "--json", "-q", "--threads",
                                                       ",".join(map(str, counts))] + timing)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache, "w") as f:
            f.write(out)
    with open(cache) as f:
        runs = {b["threads"]: b for b in (json.loads(x) for x in f if x.strip())}
    lo, hi = runs[counts[0]], runs[counts[-1]]
    r = dict(network=net, layer=name, shape=lo["shape"], mflop=lo["flops"] * 1e-6, machine=lo["machine"],
             date=lo["date"][:10], peak1_gflops=lo["peak_gflops"] / counts[0], cpus=",".join(map(str, hi.get("cpus", []))))
    for n, b in runs.items():
        for key, col in (("convtune", "convtune"), ("onednn", "onednn")):
            e = b.get(key) or {}
            r[f"{col}_t{n}_pct"] = e.get("percent_peak", float("nan"))
            r[f"{col}_t{n}_ms"] = e.get("seconds", float("nan")) * 1e3
        r[f"onednn_t{n}_impl"] = (b.get("onednn") or {}).get("impl", "missing")
        r[f"config_t{n}"] = b["config"]
    n0, n1 = counts[0], counts[-1]
    r["convtune_speedup"] = r[f"convtune_t{n0}_ms"] / r[f"convtune_t{n1}_ms"]
    r["onednn_speedup"] = r[f"onednn_t{n0}_ms"] / r[f"onednn_t{n1}_ms"]
    r["ratio_convtune_onednn"] = r[f"onednn_t{n1}_ms"] / r[f"convtune_t{n1}_ms"]
    # The same run's one-thread ratio: issue 11's figure without a second bench.
    r["ratio_convtune_onednn_t1"] = r[f"onednn_t{n0}_ms"] / r[f"convtune_t{n0}_ms"]
    return r


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def markdown(rows, counts):
    n0, n1 = counts[0], counts[-1]
    f = batch.fmt
    out = []
    for net in dict.fromkeys(r["network"] for r in rows):
        rs = [r for r in rows if r["network"] == net]
        out += [f"### {net}: {n0} vs {n1} threads", "",
                f"{rs[0]['machine']}, CPUs {rs[0]['cpus']}, {rs[0]['date']}. One `convtune bench --threads {n0},{n1}` "
                f"run per layer; % of peak is of {n1} x the one-core peak measured in that run for {n1} threads. "
                f"convtune t{n1}/t{n0} and oneDNN t{n1}/t{n0} are speedups; convtune/oneDNN is oneDNN's time over "
                f"convtune's at {n0} and at {n1} threads (> 1: convtune faster).", "",
                f"| layer | MFLOP | convtune t{n0} % / ms | convtune t{n1} % / ms | oneDNN t{n0} % / ms | "
                f"oneDNN t{n1} % / ms | convtune t{n1}/t{n0} | oneDNN t{n1}/t{n0} | convtune/oneDNN at {n0} | "
                f"convtune/oneDNN at {n1} | parallel loop (t{n1}) |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            cfg = r[f"config_t{n1}"]
            par = ", ".join(p for p in cfg.strip("[]").split(", ") if p.startswith("P(")) or "-"
            out.append(f"| {r['layer']} | {batch.fmt_small(r['mflop'])} | "
                       + " | ".join(f"{f(r[f'{c}_pct'])} / {batch.fmt_small(r[f'{c}_ms'])}"
                                    for c in (f"convtune_t{n0}", f"convtune_t{n1}", f"onednn_t{n0}", f"onednn_t{n1}"))
                       + f" | {f(r['convtune_speedup'], '.2f')} | {f(r['onednn_speedup'], '.2f')} | "
                       f"{f(r['ratio_convtune_onednn_t1'], '.2f')} | {f(r['ratio_convtune_onednn'], '.2f')} | {par} |")
        out += [f"| **geomean** | | | | | | **{f(geomean(r['convtune_speedup'] for r in rs), '.2f')}** | "
                f"**{f(geomean(r['onednn_speedup'] for r in rs), '.2f')}** | "
                f"**{f(geomean(r['ratio_convtune_onednn_t1'] for r in rs), '.2f')}** | "
                f"**{f(geomean(r['ratio_convtune_onednn'] for r in rs), '.2f')}** | |", ""]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    batch.add_layer_args(ap)
    ap.add_argument("--threads", default="1,2", help="thread counts, ascending (default 1,2)")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true", help="keep bench results already written")
    ap.add_argument("--out", default=os.path.join(batch.HERE, "results", "scaling"))
    ap.add_argument("--convtune", default=os.path.join(batch.ROOT, "build", "convtune"))
    ap.add_argument("--cpu", type=int, help="first core to measure on (default: convtune's)")
    ap.add_argument("--min-repeat-ms", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tune-args", default="", help="extra arguments for convtune tune")
    ap.add_argument("--warm-start", action="store_true",
                    help="tune the larger thread counts from the smallest count's best kernel (tune --start-from)")
    a = ap.parse_args()
    try:
        counts = sorted({int(x) for x in a.threads.split(",")})
    except ValueError:
        fail(f"--threads '{a.threads}' is not a list of integers; give e.g. 1,2")
    if len(counts) < 2 or counts[0] < 1:
        fail(f"--threads '{a.threads}' needs two or more positive counts to compare; give e.g. 1,2")
    if not os.access(a.convtune, os.X_OK):
        fail(f"no convtune binary at {a.convtune}; build it (scripts/build.sh) or pass --convtune")
    a.cpu = ["--cpu", str(a.cpu)] if a.cpu is not None else []
    rows = []
    for net, name, sel in batch.layers_of(a):
        print(f"scaling: {name}: tune ({a.trials} trials at {a.threads} threads) and bench", file=sys.stderr)
        rows.append(row_for(a, net, name, sel, counts))
        r = rows[-1]
        print(f"scaling: {name}: convtune t{counts[-1]}/t{counts[0]} {batch.fmt(r['convtune_speedup'], '.2f')}  "
              f"convtune/oneDNN {batch.fmt(r['ratio_convtune_onednn'], '.2f')}", file=sys.stderr)
    stem = os.path.join(a.out, (a.name if a.shapes else a.network.replace(",", "-")) + "-scaling")
    os.makedirs(a.out, exist_ok=True)
    with open(stem + ".csv", "w", newline="") as f:
        cols = list(dict.fromkeys(k for r in rows for k in r))
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    with open(stem + ".md", "w") as f:
        f.write(markdown(rows, counts))
    print(stem + ".csv")
    print(stem + ".md")


if __name__ == "__main__":
    main()

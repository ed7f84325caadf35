#!/usr/bin/python3
"""On paper: how long tuning a model zoo takes on 1, 8 and 64 nodes, from the
seconds per candidate of whole tuning logs.

A candidate's wall cost is its compile time (the record's compile_seconds)
plus its measurement, rebuilt from the record's median t per call and the
timing protocol (microkernels/timing.c): one warm-up call, a calibration of
about 0.16 s when t < 0.1 s (calls until one measurement lasts
--min-repeat-ms), then 1 discarded + --repeat kept measurements of
max(min_repeat, t) each. A layer costs trials x its mean candidate, plus two
peak measurements (start and end, about 1.7 s each: 6 x 200 ms plus a
calibration and the compile) and the finalists' re-measure (--top x
--top-rounds measurements of the best). The timestamps of the same logs give
a measured seconds per candidate as a check (they include compile batches
run in parallel and each run's process start).

Nodes run one layer at a time (its timings alone on the node); Slurm starts
array tasks in index order as nodes free up: greedy list scheduling of the
layers in `layers --list` order, ResNet-18's array first.
usage: bench/cluster/estimate.py --logs 'OUT/tune/*/log.jsonl' [--trials 100] [--nodes 1,8,64]
(whole tuning logs, every candidate's record: e.g. the --out of bench/batch.py or bench/tune_networks.py;
bench/trim_logs.py's cut logs hold too few)
"""
import argparse
import glob
import heapq
import json
import math
import os
import re
from datetime import datetime

ZOO_ORDER = ["resnet18-%d" % i for i in range(1, 13)] + [
    "yolo9000-%d" % i for i in (0, 2, 4, 5, 8, 9, 12, 13, 18, 19, 23)]
PEAK_S = 1.7


def measure_s(t, min_repeat, repeat):
    calib = 0.16 * min_repeat / 0.1 if t < min_repeat else 0.0
    return t + calib + (1 + repeat) * max(min_repeat, t)


def when(ts):
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def layers(pattern, a):
    out = {}
    for path in glob.glob(pattern):
        recs = [json.loads(line) for line in open(path) if line.strip()]
        name = os.path.basename(os.path.dirname(path))
        cand = [r["compile_seconds"] + (measure_s(r["seconds"], a.min_repeat_ms / 1e3, a.repeat)
                                        if r["status"] == "ok" else 0) for r in recs]
        per = sum(cand) / len(cand)
        stamped = (when(recs[-1]["timestamp"]) - when(recs[0]["timestamp"])) / (len(recs) - 1)
        best = min(r["seconds"] for r in recs if r["status"] == "ok")
        fixed = 2 * PEAK_S + a.top * a.top_rounds * measure_s(best, a.min_repeat_ms / 1e3, a.repeat)
        out[name] = dict(n=len(recs), compile=sum(r["compile_seconds"] for r in recs) / len(recs), per=per,
                         stamped=stamped, fixed=fixed, total=a.trials * per + fixed,
                         total_stamped=a.trials * stamped + fixed)
    return out


def makespan(times, nodes):
    free = [0.0] * nodes
    heapq.heapify(free)
    end = 0.0
    for t in times:  # in submission order: the next task takes the first free node
        start = heapq.heappop(free)
        heapq.heappush(free, start + t)
        end = max(end, start + t)
    return end


def hms(s):
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--logs", required=True, help="a glob of whole tuning logs, e.g. 'OUT/tune/*/log.jsonl'")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--nodes", default="1,8,64")
    ap.add_argument("--min-repeat-ms", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--top-rounds", type=int, default=3)
    a = ap.parse_args()
    ls = layers(a.logs, a)
    order = [n for n in ZOO_ORDER if n in ls] + sorted(set(ls) - set(ZOO_ORDER), key=lambda n: [
        int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)])
    print(f"| layer | records | compile s | s/candidate (compile + measure) | s/candidate (timestamps) | "
          f"{a.trials} trials + fixed |")
    print("|---|---|---|---|---|---|")
    for n in order:
        l = ls[n]
        print(f"| {n} | {l['n']} | {l['compile']:.2f} | {l['per']:.2f} | {l['stamped']:.2f} | {hms(l['total'])} |")
    for key, what in (("total", "compile + measure"), ("total_stamped", "timestamps")):
        times = [ls[n][key] for n in order]
        print(f"\n{what}: {len(order)} layers, {hms(sum(times))} of node time, longest layer {hms(max(times))}")
        print("| nodes | wall (array order) | lower bound max(sum/nodes, longest) |")
        print("|---|---|---|")
        for p in map(int, a.nodes.split(",")):
            print(f"| {p} | {hms(makespan(times, p))} | {hms(max(sum(times) / p, max(times)))} |")
    # 64 nodes and only 23 layers: the longest layer bounds the run unless its
    # trials are split over seeds (random search) and merged.
    for p in map(int, a.nodes.split(",")):
        if p < 2 * len(order) - 1:
            continue
        for k in (2, 3):
            chunks = []
            for n in order:
                l = ls[n]
                chunks += [math.ceil(a.trials / k) * l["per"] + l["fixed"]] * k
            print(f"\n{p} nodes with each layer's {a.trials} trials split over {k} seeds ({len(chunks)} tasks, "
                  f"then merged): {hms(makespan(sorted(chunks, reverse=True), p))}")


main()

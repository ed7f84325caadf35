#!/usr/bin/python3
"""How much a convtune/oneDNN ratio moves from one `convtune bench` process to
the next, estimated five ways from the same samples.

usage: bench/ratio_spread.py FILE.jsonl [FILE.jsonl ...]
  each FILE holds the --json lines of `convtune bench` runs of one kernel
  (one line per process), for example 8 runs of
    convtune bench --layer yolo9000-19 --threads 1 --json -q --repeat 11 --config "[...]"

Per run and then mean, standard deviation and minimum over the runs of:
  scaled-median  oneDNN's median time over convtune's, each sample scaled by the
                 clock probe timed beside it: what `bench` reports
  wall-median    the same without the probe's scaling (bench's ratio_wall)
  paired-scaled  the median over rounds of the two samples' ratio in one round
  paired-wall    the same on wall-clock samples
  min-wall       the fastest wall-clock samples' ratio
Wall-clock samples are recovered from the JSON: sample * peak / probe.
"""
import json
import statistics as st
import sys

NAMES = ["scaled-median", "wall-median", "paired-scaled", "paired-wall", "min-wall"]


def estimates(j):
    peak, c, d = j["peak_gflops"], j["convtune"], j["onednn"]
    cw = [s * peak / p for s, p in zip(c["samples"], c["probe_gflops"])]
    dw = [s * peak / p for s, p in zip(d["samples"], d["probe_gflops"])]
    return [st.median(d["samples"]) / st.median(c["samples"]),
            st.median(dw) / st.median(cw),
            st.median([a / b for a, b in zip(d["samples"], c["samples"])]),
            st.median([a / b for a, b in zip(dw, cw)]),
            min(dw) / min(cw)]


def main(paths):
    if not paths:
        sys.exit(__doc__)
    for path in paths:
        with open(path) as f:
            runs = [json.loads(line) for line in f if line.strip()]
        if not runs:
            sys.exit(f"ratio_spread: error: {path} holds no bench --json line; run convtune bench --json into it")
        print(f"{path}: {runs[0]['layer']} {runs[0]['config']}, {len(runs)} runs")
        rows = [estimates(j) for j in runs]
        print("  per run: " + " | ".join(" ".join(f"{x:.3f}" for x in r) for r in rows))
        for i, name in enumerate(NAMES):
            v = [r[i] for r in rows]
            sd = st.stdev(v) if len(v) > 1 else 0.0
            print(f"  {name:14s} mean {st.mean(v):.3f}  sd {sd:.3f}  min {min(v):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])

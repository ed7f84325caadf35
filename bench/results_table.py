#!/usr/bin/python3
"""bench/RESULTS.md: convtune against oneDNN, XNNPACK, LIBXSMM and im2col+BLAS per layer, network
and thread count, from committed runs under bench/results/.

usage: /usr/bin/python3 bench/results_table.py [RUN[:NETWORKS]]... [-o bench/RESULTS.md]

A RUN is a directory with
  run.json               what the run is, the code's commit, the commands that made it, where its
                         kernels come from ({"what", "code", "cwd", "commands": [...], "kernels"})
  bench/<layer>.json     bench/batch.py's outputs (one `convtune bench --json` object per layer),
  or bench.jsonl         `convtune bench --json` objects, one per line
  tune/<layer>/          the log.jsonl (and finalists.json) each bench measured the kernel of
NETWORKS (resnet18, yolo9000; comma-separated) takes only those networks' layers from the run.
Without RUN arguments: the runs in DEFAULT_RUNS. Each (network, thread count, layer) must come
from one run. The machine is read from the runs themselves: the bench objects (machine, CPUs,
measured peak, the libraries' implementations) and the tune records of the benched kernels (CPU
model, cores, ISA flags, kernel ISA, class table). Standard library only.
"""
import argparse
import glob
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import trim_logs  # noqa: E402  (the delivered record, as convtune bench and export pick it)

DEFAULT_RUNS = ["bench/results/zen5-2041daf-paired-200-p5",
                "bench/results/zen5-734884c-resnet18-t2-30-p3",
                "bench/results/zen5-510a50f-yolo9000-t2-30-p3"]
ZOO = {"resnet18": ["resnet18-%d" % i for i in range(1, 13)],
       "yolo9000": ["yolo9000-%d" % i for i in (0, 2, 4, 5, 8, 9, 12, 13, 18, 19, 23)]}
TITLE = {"resnet18": "ResNet-18", "yolo9000": "Yolo-9000"}
SLOW_PERCENT = 10  # a library this far below the peak on a layer is named under its table
BASELINES = [("xnnpack", "XNNPACK"), ("libxsmm", "LIBXSMM"), ("im2col_blas", "im2col+BLAS")]


def fail(msg):
    sys.exit(f"results_table: error: {msg}")


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def bench_objects(run):
    files = sorted(glob.glob(os.path.join(run, "bench", "*.json")))
    if files:
        return [read_json(p) for p in files]
    path = os.path.join(run, "bench.jsonl")
    if not os.path.exists(path):
        fail(f"{run}: neither bench/<layer>.json nor bench.jsonl")
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def delivered_record(run, b):
    """The tune record of the kernel the bench measured, from tune/<layer>/ (it must still deliver it)."""
    tdir = os.path.join(run, "tune", b["layer"])
    log = os.path.join(tdir, "log.jsonl")
    try:
        with open(log) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        fail(f"{log}: {e}")
    d, _ = trim_logs.delivered(recs, trim_logs.winner_of(tdir))
    if d is None or recs[d]["config"] != b["config"]:
        fail(f"{log} does not deliver the kernel its bench measured ({b['config']})")
    return recs[d]


def shape_of(text):
    f = {k: int(v) for k, v in (x.split("=") for x in text.split(","))}
    return f"{f['K']},{f['C']},{f['H']},{f['R']},{f['stride']}"


def row(run, b):
    rec = delivered_record(run, b)
    per = b.get("process_ratios") or [b["ratio_convtune_onednn"]]
    ct = b["convtune"]["seconds"]
    r = {"layer": b["layer"], "shape": shape_of(b["shape"]), "trials": b.get("trials"), "config": b["config"],
         "onednn": statistics.median(per) if len(per) > 1 else b["ratio_convtune_onednn"],
         "lo": min(per), "hi": max(per), "processes": b.get("processes", 1),
         "repeat": len(b["convtune"].get("samples", [])) // max(1, b.get("processes", 1)),
         "ct_pct": b["convtune"]["percent_peak"], "dn_pct": (b.get("onednn") or {}).get("percent_peak"),
         "pct": {k: (b.get(k) or {}).get("percent_peak") for k, _ in BASELINES},
         "date": b["date"], "cpus": b.get("cpus") or [b.get("cpu")], "peak": b["peak_gflops"],
         "bench_machine": b.get("machine", "?"), "missing": {}, "impl": {}}
    m = rec.get("machine") or {}
    r["machine"] = (m.get("cpu_model", "?"), m.get("cores", "?"), ",".join(m.get("isa_flags", [])), m.get("key", "?"))
    r["isa"], r["table"] = rec.get("isa", "?"), rec.get("table", "?")
    for key, _ in [("onednn", "oneDNN")] + BASELINES:
        e = b.get(key) or {}
        if "seconds" in e:
            r["impl"][key] = e.get("impl", "?")
            if key != "onednn":
                r[key] = e["seconds"] / ct
        else:
            r["missing"][key] = e.get("missing", "not in the bench output")
            r.setdefault(key, None)
    return r


def geomean(v):
    v = [x for x in v if x is not None and x > 0]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else None


def f2(x):
    return "-" if x is None else f"{x:.2f}"


def span(values):
    v = sorted(set(values))
    return v[0] if len(v) == 1 else f"{v[0]} to {v[-1]}"


def load(specs):
    runs, groups, seen = [], {}, {}
    for spec in specs:
        path, _, nets = spec.partition(":")
        run = path if os.path.isabs(path) else os.path.join(ROOT, path)
        meta = read_json(os.path.join(run, "run.json"))
        want = set(x for x in nets.split(",") if x) or None
        for b in bench_objects(run):
            net = b["layer"].rsplit("-", 1)[0]
            if want and net not in want:
                continue
            k = (net, b.get("threads", 1))
            if (k, b["layer"]) in seen:
                fail(f"{b['layer']} at {k[1]} threads is in {seen[(k, b['layer'])]} and {path}")
            seen[(k, b["layer"])] = path
            groups.setdefault(k, {"run": path, "meta": meta, "rows": []})
            if groups[k]["run"] != path:
                fail(f"{TITLE.get(net, net)} at {k[1]} threads comes from {groups[k]['run']} and {path}; one run each")
            groups[k]["rows"].append(row(run, b))
        runs.append(path)
    for g in groups.values():
        order = ZOO.get(g["rows"][0]["layer"].rsplit("-", 1)[0], [])
        g["rows"].sort(key=lambda r: order.index(r["layer"]) if r["layer"] in order else len(order))
    return runs, dict(sorted(groups.items()))


def section(net, threads, g):
    rows, meta = g["rows"], g["meta"]
    zoo = ZOO.get(net, [r["layer"] for r in rows])
    absent = [x for x in zoo if x not in {r["layer"] for r in rows}]
    dates = sorted(r["date"] for r in rows)
    cores = "1 core" if threads == 1 else f"{threads} cores"
    out = [f"## {TITLE.get(net, net)} on {cores}" + (f" ({len(rows)} of {len(zoo)} layers)" if absent else ""), "",
           f"- Run: `{g['run']}`: {meta.get('what', '?')}.",
           f"- Code: commit `{meta.get('code', '?')}`. Kernels: {meta.get('kernels', '?')}.",
           f"- Measured {dates[0][:10]} {dates[0][11:16]} to {dates[-1][11:16]} UTC on "
           f"{'CPUs' if threads > 1 else 'CPU'} {span(','.join(map(str, r['cpus'])) for r in rows)}, {span(r['processes'] for r in rows)} processes of "
           f"{span(r['repeat'] for r in rows)} repeats per library and layer; measured peak "
           f"{statistics.median(r['peak'] for r in rows):.1f} GFLOP/s ({threads} x one core's, median over layers).",
           "- Commands" + (f" (in `{meta['cwd']}`)" if meta.get("cwd", ".") != "." else "") + ":", "",
           "  ```sh"] + [f"  {c}" for c in meta.get("commands", [])] + ["  ```", ""]
    if absent:
        out += [f"Not in the run: {', '.join(absent)} (no bench of them at {threads} threads with this code; "
                "the geomeans are over the layers below only).", ""]
    missing = {}
    for r in rows:
        for k, why in r["missing"].items():
            missing.setdefault(k, set()).add(why)
    for k, whys in missing.items():
        n = sum(k in r["missing"] for r in rows)
        out += [f"{dict([('onednn', 'oneDNN')] + BASELINES)[k]} is missing on {n} layers: {'; '.join(sorted(whys))}.",
                ""]
    out += ["| layer | K,C,H,R,s | trials | convtune/oneDNN | processes' range | convtune/XNNPACK | convtune/LIBXSMM "
            "| convtune/im2col+BLAS | % of peak: convtune / oneDNN | kernel |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rng = f"{r['lo']:.2f}–{r['hi']:.2f}" if r["processes"] > 1 else "-"
        out.append(f"| {r['layer']} | {r['shape']} | {r['trials']} | {f2(r['onednn'])} | {rng} | "
                   + " | ".join(f2(r[k]) for k, _ in BASELINES)
                   + f" | {r['ct_pct']:.1f} / {'-' if r['dn_pct'] is None else format(r['dn_pct'], '.1f')}"
                   + f" | `{r['config']}` |")
    gm = {k: geomean(r[k] for r in rows) for k in ["onednn"] + [k for k, _ in BASELINES]}
    out += [f"| **geomean** | | | **{f2(gm['onednn'])}** | | " + " | ".join(f2(gm[k]) for k, _ in BASELINES)
            + " | | |", ""]
    slow = [f"{name} on {r['layer']} ({r['pct'][k]:.1f} %)" for r in rows for k, name in BASELINES
            if r["pct"][k] is not None and r["pct"][k] < SLOW_PERCENT]
    if slow:
        out += [f"Below {SLOW_PERCENT} % of peak (it weighs on its column's geomean): {', '.join(slow)}.", ""]
    return out, gm, len(rows), len(zoo)


def machine_lines(groups):
    rows = [r for g in groups.values() for r in g["rows"]]
    ms = sorted({r["machine"] for r in rows})
    out = []
    for model, cores, flags, key in ms:
        out.append(f"- CPU: `{model}` ({cores} cores; ISA flags {flags}; machine key `{key}`), as the tune records "
                   f"of the benched kernels name it; `{span(r['bench_machine'] for r in rows)}` in the bench output.")
    out.append(f"- convtune kernels: ISA `{span(r['isa'] for r in rows)}`, class table `{span(r['table'] for r in rows)}`.")
    for key, name in [("onednn", "oneDNN")] + BASELINES:
        impls = sorted({r["impl"][key] for r in rows if key in r["impl"]})
        if impls:
            out.append(f"- {name}: " + ", ".join(f"`{x}`" for x in impls) + ".")
    return out


def render(runs, groups):
    out = ["# convtune against oneDNN, XNNPACK, LIBXSMM and im2col+BLAS", "",
           "Made by `/usr/bin/python3 bench/results_table.py` from the runs it names below (bench/README.md: how "
           "to make new runs and this table again). Every figure is a ratio from one `convtune bench` of one layer: "
           "convtune/X is X's time over convtune's, above 1 where convtune is faster. convtune/oneDNN is the bench's "
           "headline, the median of its fresh processes' own paired ratios (their range beside it); the bench "
           "records no per-process ratio for the other libraries, so theirs are the ratios of the median times. "
           "All libraries ran in the same processes on the same cores, with as many threads as convtune. "
           "Geomeans are over the layers of each table.", "",
           "## Machine", ""] + machine_lines(groups) + [""]
    body, summary = [], []
    for (net, threads), g in groups.items():
        lines, gm, n, total = section(net, threads, g)
        body += lines
        summary.append(f"| {TITLE.get(net, net)} | {threads} | {n} of {total} | **{f2(gm['onednn'])}** | "
                       + " | ".join(f2(gm[k]) for k, _ in BASELINES) + f" | `{g['run']}` |")
    nets = sorted({n for n, _ in groups} | set(ZOO))
    absent = [f"{TITLE.get(n, n)} at {t} threads" for n in nets for t in sorted({t for _, t in groups})
              if (n, t) not in groups]
    out += ["## Geomeans", "",
            "| network | threads | layers | convtune/oneDNN | convtune/XNNPACK | convtune/LIBXSMM "
            "| convtune/im2col+BLAS | run |", "|---|---|---|---|---|---|---|---|"] + summary + [""]
    notes = []
    if absent:
        notes.append(f"No run: {', '.join(absent)}.")
    partial = [f"{TITLE.get(n, n)} at {t} threads" for (n, t), g in groups.items()
               if len(g["rows"]) < len(ZOO.get(n, g["rows"]))]
    if partial:
        notes.append(f"Partial: {', '.join(partial)} (its section lists the layers without a bench); its geomeans "
                     "are not a network's.")
    notes.append("PyTorch is not in these runs: `convtune bench` does not time it; `bench/pytorch_conv.py` does, "
                 "in a run of its own beside a bench/batch.py CSV, and none was made of these kernels.")
    out += [f"- {n}" for n in notes] + [""]
    return "\n".join(out + body).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", metavar="RUN[:NETWORKS]", help="default: " + " ".join(DEFAULT_RUNS))
    ap.add_argument("-o", "--out", default=os.path.join(HERE, "RESULTS.md"), help="default: bench/RESULTS.md")
    a = ap.parse_args()
    runs, groups = load(a.runs or DEFAULT_RUNS)
    if not groups:
        fail("the runs hold no bench of the selected networks")
    text = render(runs, groups)
    with open(a.out, "w") as f:
        f.write(text)
    print(a.out)


if __name__ == "__main__":
    main()

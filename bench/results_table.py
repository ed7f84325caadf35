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
or, for a whole model, library/<model>.json: one `convtune bench --library DIR --json` object
(the exported library against oneDNN and XNNPACK, every Conv node in graph order).
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
                "bench/results/zen5-510a50f-yolo9000-t2-30-p3",
                "bench/results/zen4-092264c-kinds-30",
                "bench/results/zen4-ade0da5-dilated-30",
                "bench/results/zen4-155a1c4-grouped-30",
                "bench/results/zen4-330fdd2-efficientnet_b0-t2",
                "bench/results/zen4-5d9749a-resnet50-t2",
                "bench/results/zen4-5d9749a-mobilenet_v2-t2"]
ZOO = {"resnet18": ["resnet18-%d" % i for i in range(1, 13)],
       "yolo9000": ["yolo9000-%d" % i for i in (0, 2, 4, 5, 8, 9, 12, 13, 18, 19, 23)]}
TITLE = {"resnet18": "ResNet-18", "yolo9000": "Yolo-9000",
         # bench/batch.py --onnx MODEL --kind K --name MODEL-K: one kind of a model's Conv shapes.
         "mobilenet_v2-dw": "MobileNet-v2, depthwise", "efficientnet_b0-dw": "EfficientNet-B0, depthwise",
         "resnext50-grouped": "ResNeXt-50 32x4d, grouped", "deeplabv3-dilated": "DeepLabv3-ResNet-50, dilated",
         "inception_v3-1xn": "Inception-v3, 1xN and Nx1"}
# What a section's figures need beside them.
NOTES = {"deeplabv3-dilated": "At dilation 12, 24 and 36 on a 28x28 input most taps of the 3x3 window fall on the "
                              "padding (at 36 all but the centre). convtune's border variants do no multiply-add "
                              "there; the ratios far above 1 on those layers come from that. The % of peak counts "
                              "the nominal FLOPs, padding taps included, so it passes 100."}
# Sections whose layers are bound by memory traffic: their table has GB/s beside the ratios.
MEMORY_BOUND = {"mobilenet_v2-dw", "efficientnet_b0-dw"}
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
        # bench/batch.py names a layer given by its shape (--shapes, --onnx) after the run, as its tune/<name>/,
        # while the bench object names it by the shape: the file's name is the layer's.
        out = []
        for p in files:
            b = read_json(p)
            b["layer"] = os.path.splitext(os.path.basename(p))[0]
            out.append(b)
        return out
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
    """'K,C,H,R,s' of a plain shape; per-axis strides and pads, dilation and groups after it."""
    f = {k: int(v) for k, v in (x.split("=") for x in text.split(","))}
    if "stride" in f and "pad" in f and f["R"] == f["S"] and set(f) <= {"N", "K", "C", "H", "W", "R", "S", "stride", "pad"}:
        return f"{f['K']},{f['C']},{f['H']},{f['R']},{f['stride']}"
    extra = [f"{k}={v}" for k, v in f.items() if k not in ("N", "K", "C", "H", "W", "R")]
    return f"{f['K']},{f['C']},{f['H']},{f['R']} " + " ".join(extra)


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
         "bench_machine": b.get("machine", "?"), "missing": {}, "impl": {},
         "gbs": {k: (b.get(k) or {}).get("gbs") for k in ("convtune", "onednn", "xnnpack", "triad")}}
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


def libraries(specs):
    """[(run path, run.json, library/<model>.json objects)] of the runs that hold whole-model benches."""
    out = []
    for spec in specs:
        path = spec.partition(":")[0]
        run = path if os.path.isabs(path) else os.path.join(ROOT, path)
        files = sorted(glob.glob(os.path.join(run, "library", "*.json")))
        if files:
            out.append((path, read_json(os.path.join(run, "run.json")), [read_json(f) for f in files]))
    return out


def library_section(libs):
    """Whole models: the exported library in one call per Conv node, in graph order, against the libraries."""
    out = ["## Whole models through an exported library", "",
           "`convtune bench --library`: the library `convtune export` wrote, linked as an application links it, "
           "every Conv node of the model in graph order (equal shapes as often as the model has them) as one timed "
           "sequence per implementation, in interleaved rounds; each layer also alone, and their sum. Ratios: the "
           "other's time over the library's; with several fresh processes (`--processes`), the median of each "
           "process's own ratio.", ""]
    for path, meta, objs in libs:
        out += [f"- Run: `{path}`: {meta.get('what', '?')}.",
                f"- Code: commit `{meta.get('code', '?')}`. Kernels: {meta.get('kernels', '?')}.",
                "- Commands" + (f" (in `{meta['cwd']}`)" if meta.get("cwd", ".") != "." else "") + ":", "",
                "  ```sh"] + [f"  {c}" for c in meta.get("commands", [])] + ["  ```", ""]
        out += ["| model | machine | threads | distinct shapes | convs | sequence: library/oneDNN | library/XNNPACK "
                "| processes: the sequence's range | sum of layers: library/oneDNN | layers below 1.0 against oneDNN (lowest) |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for j in objs:
            t = j["total"]

            def sum_ratio(key):
                a, b = (t.get("library") or {}).get("sum_of_layers_seconds"), (t.get(key) or {}).get(
                    "sum_of_layers_seconds")
                return b / a if a and b else None
            per = [(x["ratio_library_onednn"], x["layer"]) for x in j["layers"] if x.get("ratio_library_onednn")]
            below = sorted(p for p in per if p[0] < 1.0)
            low = f"{len(below)} ({below[0][1]} {below[0][0]:.2f})" if below else "0"
            q = j.get("process_ratios_library_onednn") or []
            spread = f"{j.get('processes', 1)} ({min(q):.2f}–{max(q):.2f})" if q else str(j.get("processes", 1))
            out.append(f"| {j['library']} | `{j.get('machine', '?')}` | {j['threads']} | {len(j['layers'])} | "
                       f"{len(j['sequence'])} | **{f2(j.get('ratio_library_onednn'))}** | "
                       f"{f2(j.get('ratio_library_xnnpack'))} | {spread} | {f2(sum_ratio('onednn'))} | {low} |")
        out.append("")
    return out


def load(specs):
    runs, groups, seen = [], {}, {}
    for spec in specs:
        path, _, nets = spec.partition(":")
        run = path if os.path.isabs(path) else os.path.join(ROOT, path)
        meta = read_json(os.path.join(run, "run.json"))
        want = set(x for x in nets.split(",") if x) or None
        if not os.path.isdir(os.path.join(run, "bench")) and not os.path.exists(os.path.join(run, "bench.jsonl")):
            runs.append(path)  # a run of whole-model benches only (library/)
            continue
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
    # The zoo networks first, then the model sections, each by name and threads.
    return runs, dict(sorted(groups.items(), key=lambda kv: (kv[0][0] not in ZOO, kv[0])))


def section(net, threads, g):
    rows, meta = g["rows"], g["meta"]
    zoo = ZOO.get(net, [r["layer"] for r in rows])
    absent = [x for x in zoo if x not in {r["layer"] for r in rows}]
    dates = sorted(r["date"] for r in rows)
    cores = "1 core" if threads == 1 else f"{threads} cores"
    out = [f"## {TITLE.get(net, net)} on {cores}" + (f" ({len(rows)} of {len(zoo)} layers)" if absent else ""), "",
           f"- Run: `{g['run']}`: {meta.get('what', '?')}.",
           f"- Code: commit `{meta.get('code', '?')}`. Kernels: {meta.get('kernels', '?')}.",
           f"- Machine: `{span(r['machine'][0] for r in rows)}`, ISA flags {span(r['machine'][2] for r in rows)}; "
           f"kernels of ISA `{span(r['isa'] for r in rows)}` from `{span(r['table'] for r in rows)}`.",
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
            missing.setdefault(k, set()).add(why.split("; it is left out for")[0])  # the reason, not the shape
    for k, whys in missing.items():
        n = sum(k in r["missing"] for r in rows)
        out += [f"{dict([('onednn', 'oneDNN')] + BASELINES)[k]} is missing on {n} layers: {'; '.join(sorted(whys))}.",
                ""]
    memory = net in MEMORY_BOUND
    if net in NOTES:
        out += [NOTES[net], ""]
    if memory:
        out += ["GB/s: the layer's tensors (input, weights, output once each) over each time; the STREAM triad's "
                "over arrays of the same size, timed in the same rounds: the bandwidth at this working set.", ""]
    gb_head, gb_rule = (" GB/s convtune / oneDNN / triad | convtune % of triad |", "---|---|") if memory else ("", "")
    out += ["| layer | K,C,H,R,s | trials | convtune/oneDNN | processes' range | convtune/XNNPACK | convtune/LIBXSMM "
            "| convtune/im2col+BLAS | % of peak: convtune / oneDNN |" + gb_head + " kernel |",
            "|---|---|---|---|---|---|---|---|---|" + gb_rule + "---|"]

    def gb(r):
        g = r["gbs"]
        if not memory:
            return ""
        cells = " / ".join("-" if g[k] is None else f"{g[k]:.1f}" for k in ("convtune", "onednn", "triad"))
        share = "-" if not (g["convtune"] and g["triad"]) else f"{100 * g['convtune'] / g['triad']:.0f}"
        return f" {cells} | {share} |"
    for r in rows:
        rng = f"{r['lo']:.2f}–{r['hi']:.2f}" if r["processes"] > 1 else "-"
        out.append(f"| {r['layer']} | {r['shape']} | {r['trials']} | {f2(r['onednn'])} | {rng} | "
                   + " | ".join(f2(r[k]) for k, _ in BASELINES)
                   + f" | {r['ct_pct']:.1f} / {'-' if r['dn_pct'] is None else format(r['dn_pct'], '.1f')} |"
                   + gb(r) + f" `{r['config']}` |")
    gm = {k: geomean(r[k] for r in rows) for k in ["onednn"] + [k for k, _ in BASELINES]}
    out += [f"| **geomean** | | | **{f2(gm['onednn'])}** | | " + " | ".join(f2(gm[k]) for k, _ in BASELINES)
            + " | |" + (" | |" if memory else "") + " |", ""]
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


def render(runs, groups, libs=()):
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
        summary.append(f"| {TITLE.get(net, net)} | {threads} | {span(r['isa'] for r in g['rows'])} | {n} of {total} | "
                       f"**{f2(gm['onednn'])}** | "
                       + " | ".join(f2(gm[k]) for k, _ in BASELINES) + f" | `{g['run']}` |")
    # The zoo networks are expected at every thread count the runs have; the model sections at their own.
    absent = [f"{TITLE.get(n, n)} at {t} threads" for n in sorted(ZOO)
              for t in sorted({t for m, t in groups if m in ZOO}) if (n, t) not in groups]
    out += ["## Geomeans", "",
            "| network | threads | ISA | layers | convtune/oneDNN | convtune/XNNPACK | convtune/LIBXSMM "
            "| convtune/im2col+BLAS | run |", "|---|---|---|---|---|---|---|---|---|"] + summary + [""]
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
    if libs:
        body += library_section(libs)
    return "\n".join(out + body).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", metavar="RUN[:NETWORKS]", help="default: " + " ".join(DEFAULT_RUNS))
    ap.add_argument("-o", "--out", default=os.path.join(HERE, "RESULTS.md"), help="default: bench/RESULTS.md")
    a = ap.parse_args()
    runs, groups = load(a.runs or DEFAULT_RUNS)
    if not groups:
        fail("the runs hold no bench of the selected networks")
    text = render(runs, groups, libraries(a.runs or DEFAULT_RUNS))
    with open(a.out, "w") as f:
        f.write(text)
    print(a.out)


if __name__ == "__main__":
    main()

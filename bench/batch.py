#!/usr/bin/python3
"""Tunes every layer of a network (the default search unless --tune-args names another, N trials), benches each
against oneDNN and im2col+OpenBLAS (convtune bench), and writes a CSV and a
Markdown table like 000 Fig. 9: per layer convtune best-of-20, best-of-N,
oneDNN and im2col+BLAS as % of peak and as time, FLOP-weighted averages and
the geometric mean of convtune/oneDNN; beside them each one's GB/s (the layer's
tensors over its time) and the STREAM triad's over arrays of the same size,
for layers bound by memory traffic (depthwise).

usage: bench/batch.py --network resnet18[,yolo9000] [--trials 100] [--resume]
       bench/batch.py --shapes "K=32,C=16,H=8,R=3;K=16,C=8,H=6,R=1" --name tiny
       bench/batch.py --onnx mobilenet_v2.onnx --kind depthwise --name mobilenet_v2-dw --trials 30
Outputs (under --out, default bench/results): tune/<layer>/log.jsonl,
bench/<layer>.json, <name>.csv, <name>.md. --resume continues the logs (a
complete one, with its trials and finalists, is not tuned again) and keeps
bench results whose log has not grown. --bench-only benches what the
logs already deliver (no trial, no finalist re-measure, so the kernels stay
the same), e.g. again with more --repeat rounds after moving bench/ aside.
(Runs of several seeds and strategies for Fig. 10: bench/convergence.py.)
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COLUMNS = ["network", "layer", "shape", "K", "C", "H", "W", "R", "S", "stride", "pad", "mflop", "real_frac", "trials",
           "failed", "best20_pct", "best20_ms", "bestN_log_pct", "bestN_log_ms", "convtune_pct", "convtune_ms",
           "onednn_pct", "onednn_ms", "onednn_impl", "blas_pct", "blas_ms", "blas_impl", "convtune_real_pct",
           "onednn_real_pct", "ratio_convtune_onednn", "ratio_wall", "convtune_wall_ms", "onednn_wall_ms",
           "xnnpack_pct", "xnnpack_ms", "xnnpack_impl", "libxsmm_pct", "libxsmm_ms", "libxsmm_impl", "peak_gflops",
           "cpu", "machine", "date", "config", "processes", "ratio_min", "ratio_max", "ratio_of_medians",
           "window", "groups", "mbytes", "convtune_gbs", "onednn_gbs", "xnnpack_gbs", "triad_gbs"]


fail = benchlib.make_fail("batch")


def run(cmd):
    return benchlib.run(cmd, "batch")


def best_of(recs, n):
    """(% peak, ms) of the best correct candidate among the first n, or (0, nan)."""
    ok = [r for r in recs[:n] if r["status"] == "ok"]
    if not ok:
        return 0.0, float("nan")
    b = max(ok, key=lambda r: r["percent_peak"])  # a resumed log's sessions may have run at other clocks
    return b["percent_peak"], b["seconds"] * 1e3


def layers_of(a):
    """[(network, layer name, convtune selector args)]"""
    if a.shapes:
        return [(a.name, f"{a.name}-{i}", ["--shape", s.strip()])
                for i, s in enumerate(x for x in a.shapes.split(";") if x.strip())]
    if a.onnx:
        # layers --list: "id TAB shape", the model's distinct Conv shapes, most FLOPs first.
        rows = [line.split("\t") for line in run([a.convtune, "layers", "--onnx", a.onnx, "--list"]).splitlines()]
        return [(a.name, f"{a.name}-{i}", ["--shape", shape])
                for i, (_, shape) in enumerate(r for r in rows if len(r) == 2 and of_kind(r[1], a.kind))]
    out = []
    for net in a.network.split(","):
        for line in run([a.convtune, "layers", "--network", net]).splitlines()[1:]:
            out.append((net, line.split()[0], ["--layer", line.split()[0]]))
    return out


def shape_fields(text):
    return {k: int(v) for k, v in (f.split("=") for f in text.split(","))}


KINDS = ("all", "depthwise", "grouped", "dilated", "1xn")


def of_kind(shape, kind):
    """Whether a shape string is of --kind: depthwise (groups = C), grouped (other groups > 1), dilated, or
    1xn (R != S)."""
    f = shape_fields(shape)
    groups, c = f.get("groups", 1), f["C"]
    r, s_ = f.get("R", 1), f.get("S", f.get("R", 1))
    dilated = max(f.get("dilation", 1), f.get("dilation_h", 1), f.get("dilation_w", 1)) > 1
    return {"all": True, "depthwise": groups > 1 and groups == c, "grouped": 1 < groups < c, "dilated": dilated,
            "1xn": r != s_}[kind]


def window(f):
    """'3x3 s2 p1' and, where they apply, per-axis strides and pads, dilation and groups, from shape_fields."""
    def axes(name):
        if name in f:
            return str(f[name])
        h, w = f.get(name + "_h"), f.get(name + "_w")
        if h is not None or w is not None:
            return f"{h},{w}"
        sides = [f.get(name + "_" + x) for x in "tlbr"]
        return ",".join(map(str, sides)) if any(x is not None for x in sides) else "?"
    text = f"{f['R']}x{f['S']} s{axes('stride')} p{axes('pad')}"
    if any(k.startswith("dilation") for k in f):
        text += f" d{axes('dilation')}"
    if f.get("groups", 1) > 1:
        text += f" g{f['groups']}"
    return text


def tune_dir(a, name):
    """Where a layer's log (tune/<layer>/log.jsonl) and kernel live under --out."""
    return os.path.join(a.out, "tune", name)


def row_for(a, net, name, sel, trials):
    tdir = tune_dir(a, name)
    timing = ["--min-repeat-ms", str(a.min_repeat_ms), "--repeat", str(a.repeat), "--threads", str(a.threads)] + a.cpu
    log = os.path.join(tdir, "log.jsonl")
    # A log that holds its trials and whose tune wrote its finalists is complete: tuning it again would
    # only re-measure the finalists (minutes per layer) and could change the kernel the bench measured.
    complete = a.resume and os.path.exists(os.path.join(tdir, "finalists.json")) and \
        len(benchlib.read_log(log)) >= trials
    if not a.bench_only and not complete:
        run([a.convtune, "tune"] + sel + ["--trials", str(trials), "--seed", str(a.seed), "--out", tdir, "--json", "-q",
                                           "--no-onednn"] + (["--resume"] if a.resume else []) + timing +
            [x.replace("{layer}", name) for x in a.tune_args.split()])
    recs = benchlib.read_log(log)
    cache = os.path.join(a.out, "bench", name + ".json")
    b = None
    if a.resume and os.path.exists(cache):
        with open(cache) as f:
            b = json.load(f)
        if b.get("trials") != len(recs) or b.get("processes", 1) != a.processes:
            b = None  # the log grew, or another number of processes: bench again
    if b is None:
        b = json.loads(run([a.convtune, "bench"] + sel + ["--out", tdir, "--json", "-q", "--processes", str(a.processes)]
                           + timing + a.bench_args.split()))
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache, "w") as f:
            json.dump(b, f, indent=1)
    r = dict(network=net, layer=name, shape=b["shape"], mflop=b["flops"] * 1e-6, real_frac=b["real_flops"] / b["flops"],
             trials=len(recs), failed=sum(x["status"] != "ok" for x in recs), peak_gflops=b["peak_gflops"],
             cpu=b["cpu"], machine=b["machine"], date=b["date"][:10], config=b["config"])
    fields = shape_fields(b["shape"])
    r.update({k: v for k, v in fields.items() if k != "N"})
    r["window"], r["groups"] = window(fields), fields.get("groups", 1)
    r.setdefault("stride", fields.get("stride_h"))
    r.setdefault("pad", fields.get("pad_h", fields.get("pad_t")))
    r["best20_pct"], r["best20_ms"] = best_of(recs, 20)
    r["bestN_log_pct"], r["bestN_log_ms"] = best_of(recs, len(recs))
    # Memory traffic: the layer's tensors once each (bench's "bytes") over each time; the STREAM triad over
    # arrays of the same size, timed in the same rounds, is the bandwidth at this working set.
    r["mbytes"] = b.get("bytes", float("nan")) * 1e-6
    for key in ("convtune", "onednn", "xnnpack", "triad"):
        r[key + "_gbs"] = (b.get(key) or {}).get("gbs", float("nan"))
    for key, col in (("convtune", "convtune"), ("onednn", "onednn"), ("im2col_blas", "blas"), ("xnnpack", "xnnpack"),
                     ("libxsmm", "libxsmm")):
        e = b.get(key) or {}
        r[col + "_pct"] = e.get("percent_peak", float("nan"))
        if col not in ("blas", "xnnpack", "libxsmm"):
            r[col + "_real_pct"] = e.get("real_percent_peak", float("nan"))
        r[col + "_ms"] = e.get("seconds", float("nan")) * 1e3
        if col != "convtune":
            r[col + "_impl"] = e.get("impl", "missing")
    r["ratio_convtune_onednn"] = b.get("ratio_convtune_onednn") or float("nan")
    # bench --processes P: the ratio of each fresh process, as a range beside the medians' ratio.
    r["processes"] = b.get("processes", 1)
    per = b.get("process_ratios") or [r["ratio_convtune_onednn"]]
    r["ratio_min"], r["ratio_max"] = min(per), max(per)
    if len(per) > 1:  # as bench's own headline; an older convtune's bench JSON held the medians' ratio
        r["ratio_convtune_onednn"] = statistics.median(per)
    # Beside the headline (of several processes, the median of their own ratios): the times' medians' ratio.
    r["ratio_of_medians"] = r["onednn_ms"] / r["convtune_ms"] if r["convtune_ms"] > 0 else float("nan")
    # The same ratio from wall-clock times, before the clock probe's scaling.
    walls = [(b.get(k) or {}).get("wall_seconds") for k in ("onednn", "convtune")]
    r["ratio_wall"] = walls[0] / walls[1] if all(walls) else float("nan")
    # Wall-clock ms too, for what is timed elsewhere by the wall clock alone (pytorch_conv.py --bench-csv).
    r["onednn_wall_ms"], r["convtune_wall_ms"] = (w * 1e3 if w else float("nan") for w in walls)
    return r


def fmt(x, spec=".1f"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def fmt_small(x):
    """Milliseconds or MFLOP: fixed for the usual sizes, 3 significant digits for tiny ones."""
    return fmt(x, ".3f" if x >= 0.1 else ".3g") if x == x and x < 10 else fmt(x, ".0f" if x >= 100 else ".1f")


def spread(r):
    """' (0.99-1.04)': the per-process ratios' range when bench ran several processes."""
    many = r.get("processes", 1) > 1 and not math.isnan(r["ratio_min"])
    return f" ({r['ratio_min']:.2f}–{r['ratio_max']:.2f})" if many else ""


def markdown(rows, trials):
    out = []
    for net in dict.fromkeys(r["network"] for r in rows):
        rs = [r for r in rows if r["network"] == net]
        peak = sorted(r["peak_gflops"] for r in rs)[len(rs) // 2]
        out += [f"### {net}", "",
                f"{rs[0]['machine']}, CPU {rs[0]['cpu']}, measured peak {peak:.1f} GFLOP/s (median over layers), "
                f"{rs[0]['date']}. Cells: % of peak / ms (nominal FLOP, padding taps counted); real-MAC %: only the "
                "multiply-adds not on zero padding, as % of peak. Times are at the measured peak's speed: each "
                "measurement is scaled by the speed of the peak loop timed beside it (the clock probe), so a % of peak "
                "is a share of the momentary peak. convtune best of 20 comes from the tuning log; best of N, "
                "oneDNN and im2col+BLAS were timed together by `convtune bench`"
                + (f", in {rs[0]['processes']} fresh processes per layer (times: the medians of theirs; convtune/oneDNN: "
                   "the median of the processes' own ratios, their range in brackets; medians' ratio: oneDNN's "
                   "median time over convtune's)." if rs[0].get("processes", 1) > 1 else ".")
                , "",
                f"| layer | K,C,H window | MFLOP | real MAC frac | trials | convtune best of 20 | convtune best of N "
                f"(N={trials}) | oneDNN | im2col+BLAS | XNNPACK | LIBXSMM | convtune real-MAC % | oneDNN real-MAC % | convtune/oneDNN "
                "| medians' ratio | wall-clock convtune/oneDNN | MB | GB/s convtune / oneDNN / XNNPACK / triad "
                "| convtune % of triad | oneDNN impl | BLAS core |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            out.append(f"| {r['layer']} | {r['K']},{r['C']},{r['H']} {r['window']} | "
                       f"{fmt_small(r['mflop'])} | {r['real_frac']:.3f} | {r['trials']} | "
                       + " | ".join(f"{fmt(r[c + '_pct'])} / {fmt_small(r[c + '_ms'])}"
                                    for c in ("best20", "convtune", "onednn", "blas", "xnnpack", "libxsmm"))
                       + f" | {fmt(r['convtune_real_pct'])} | {fmt(r['onednn_real_pct'])}"
                       + f" | {fmt(r['ratio_convtune_onednn'], '.2f')}{spread(r)} | {fmt(r['ratio_of_medians'], '.2f')}"
                       + f" | {fmt(r['ratio_wall'], '.2f')}"
                       + f" | {fmt_small(r['mbytes'])} | "
                       + " / ".join(fmt(r[c + "_gbs"]) for c in ("convtune", "onednn", "xnnpack", "triad"))
                       + f" | {fmt(100 * r['convtune_gbs'] / r['triad_gbs'], '.0f')}"
                       + f" | {r['onednn_impl']} | {r['blas_impl']} |")
        tot = sum(r["mflop"] for r in rs)

        def wavg(c):
            v = [(r["mflop"], r[c + "_pct"]) for r in rs if not math.isnan(r[c + "_pct"])]
            return sum(m * p for m, p in v) / sum(m for m, _ in v) if v else float("nan")

        def total_ms(c):
            return sum(r[c + "_ms"] for r in rs)

        def geomean(c):
            v = [r[c] for r in rs if not math.isnan(r[c])]
            return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")

        cells = " | ".join(f"**{fmt(wavg(c))}** / {fmt_small(total_ms(c))}"
                           for c in ("best20", "convtune", "onednn", "blas", "xnnpack", "libxsmm"))
        out += [f"| **FLOP-weighted average** / total ms | | {fmt_small(tot)} | | | {cells} | "
                f"**{fmt(wavg('convtune_real'))}** | **{fmt(wavg('onednn_real'))}** | "
                f"geomean **{fmt(geomean('ratio_convtune_onednn'), '.2f')}** | "
                f"geomean {fmt(geomean('ratio_of_medians'), '.2f')} | "
                f"geomean {fmt(geomean('ratio_wall'), '.2f')} | | | | | |", ""]
    return "\n".join(out) + "\n"


def add_layer_args(ap):
    """--network | --shapes | --onnx (+ --name, --kind): the layers layers_of() returns (scaling.py shares them)."""
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", help="zoo networks, comma-separated: resnet18,yolo9000")
    what.add_argument("--shapes", help="a custom network: shapes separated by ';'")
    what.add_argument("--onnx", help="an ONNX model: its distinct Conv shapes (convtune layers --onnx), most FLOPs first")
    ap.add_argument("--name", default="custom", help="network name for --shapes or --onnx (default: custom)")
    ap.add_argument("--kind", choices=KINDS, default="all",
                    help="with --onnx, only these Conv shapes: depthwise (groups = C), grouped (1 < groups < C), "
                         "dilated, 1xn (R != S)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_layer_args(ap)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--short", default="yolo9000-23", help="layers that get --short-trials (comma-separated)")
    ap.add_argument("--short-trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true", help="continue logs and keep up-to-date bench results")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--convtune", default=os.path.join(ROOT, "build", "convtune"))
    ap.add_argument("--cpu", type=int, help="core to measure on (default: convtune's, the last one)")
    ap.add_argument("--threads", type=int, default=1,
                    help="cores for convtune and the libraries (default 1: paper 000's single-core comparison)")
    ap.add_argument("--min-repeat-ms", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--processes", type=int, default=1,
                    help="fresh processes per bench, each with its own buffers (convtune bench --processes)")
    ap.add_argument("--tune-args", default="",
                    help="extra arguments for convtune tune; {layer} becomes the layer's name, e.g. "
                         "--start-from OLD/tune/{layer} to refine an earlier batch's kernels")
    ap.add_argument("--bench-args", default="", help="extra arguments for convtune bench")
    ap.add_argument("--bench-only", action="store_true",
                    help="no tuning: bench the kernels the logs deliver (with --resume, keep bench results)")
    a = ap.parse_args()
    if not os.access(a.convtune, os.X_OK):
        fail(f"no convtune binary at {a.convtune}; build it (scripts/build.sh) or pass --convtune")
    a.cpu = ["--cpu", str(a.cpu)] if a.cpu is not None else []
    short = set(x for x in a.short.split(",") if x)
    selection = layers_of(a)
    for net, name, sel in selection if a.bench_only else []:  # before any output: all or nothing
        log = os.path.join(tune_dir(a, name), "log.jsonl")
        if not os.path.exists(log):
            fail(f"--bench-only: {name} has no log at {log}; tune it first (drop --bench-only)")
    rows = []
    for net, name, sel in selection:
        trials = a.short_trials if name in short else a.trials
        print(f"batch: {name}: " + ("bench" if a.bench_only else f"tune ({trials} trials) and bench"), file=sys.stderr)
        rows.append(row_for(a, net, name, sel, trials))
        r = rows[-1]
        print(f"batch: {name}: convtune {fmt(r['convtune_pct'])}%  oneDNN {fmt(r['onednn_pct'])}%  "
              f"im2col+BLAS {fmt(r['blas_pct'])}% of peak", file=sys.stderr)
    stem = os.path.join(a.out, a.name if a.shapes or a.onnx else a.network.replace(",", "-"))
    os.makedirs(a.out, exist_ok=True)
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")  # per-axis fields are in "shape"
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    with open(stem + ".md", "w") as f:
        f.write(markdown(rows, max(r["trials"] for r in rows) if a.bench_only else a.trials))
    print(stem + ".csv")
    print(stem + ".md")


if __name__ == "__main__":
    main()

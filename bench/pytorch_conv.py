#!/usr/bin/python3
"""Times PyTorch's conv2d on the layers convtune benches, under convtune's
timing protocol, so PyTorch (what most users would compare with) sits next to
convtune, oneDNN and im2col+BLAS.

usage: bench/pytorch_conv.py [--network resnet18 | --layer L | --onnx FILE | --shape S [--shape S ...]]
           [--threads 1] [--cpu C] [--peak GFLOPS] [--bench-csv bench/results/zen5-2041daf-paired-200-p5/yolo9000-resnet18.csv]
           [--out bench/results/pytorch]
The layers are what `convtune layers <selection> --list` prints (default
--network resnet18). Per layer: NHWC (channels_last) float32 input drawn
uniformly from [-1, 1], weights as torch stores them (KCRS), no bias, under
torch.no_grad(), torch.set_num_threads(--threads), the process pinned to the
CPUs convtune measures on (--cpu, default the last CPU this process may use,
and the --threads - 1 nearest below it, then above). Timing as convtune's
(microkernels/timing.c): one warm-up call, a call count calibrated to last
--min-repeat-ms, one measurement discarded, the median of --repeat; each call
goes through Python, as a user's would. PyTorch's output is checked once
against a float64 conv2d with convtune's tolerance (1e-5 + 2e-6*C*R*S).
Writes <name>-pytorch.csv and .md under --out; with --bench-csv (a
bench/batch.py CSV) also convtune/PyTorch and oneDNN/PyTorch per layer (> 1:
faster than PyTorch) and their geomeans, from the CSV's wall-clock times: PyTorch
has no clock probe beside it, so all three are compared as the wall clock saw them.
Needs Debian's python3-torch: run with /usr/bin/python3.
"""
import argparse
import csv
import importlib.util
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch  # noqa: E402  (fmt, fmt_small, HERE, ROOT)
import benchlib  # noqa: E402

NAME = "pytorch_conv.py"
fail = benchlib.make_fail(NAME)
COLUMNS = ["layer", "shape", "N", "K", "C", "H", "W", "R", "S", "stride", "pad", "Ho", "Wo", "mflop", "pytorch_ms",
           "pytorch_gflops", "pytorch_pct", "backend", "peak_gflops", "threads", "cpus", "max_error", "tolerance",
           "calls_per_sample", "torch", "machine", "date"]


def need_torch():
    """The one-line error naming the interpreter and the package (exit 2) unless torch can be imported; checked
    without importing it, which comes after pinning (threads torch starts inherit the CPU set)."""
    if importlib.util.find_spec("torch") is None:
        print(f"{NAME}: error: torch is not importable by {sys.executable}; run with /usr/bin/python3 and "
              "install Debian's python3-torch (sudo apt-get install python3-torch)", file=sys.stderr)
        sys.exit(2)


def parse_shape(text):
    """{"N": 1, "K": 64, ...} from convtune's Shape::to_string ("N=1,K=64,...,stride=1,pad=1")."""
    s = {k: int(v) for k, v in (f.split("=") for f in text.split(","))}
    s["Ho"] = (s["H"] + 2 * s["pad"] - s["R"]) // s["stride"] + 1
    s["Wo"] = (s["W"] + 2 * s["pad"] - s["S"]) // s["stride"] + 1
    return s


def flops(s):
    """Nominal FLOPs, as convtune counts them: 2*N*K*C*R*S*Ho*Wo (padding taps included)."""
    return 2.0 * s["N"] * s["K"] * s["C"] * s["R"] * s["S"] * s["Ho"] * s["Wo"]


def layers(a):
    """[(layer id, shape text)] as `convtune layers <selection> --list` prints them."""
    sel = (["--network", a.network] if a.network else []) + (["--layer", a.layer] if a.layer else []) \
        + (["--onnx", a.onnx] if a.onnx else []) + [x for s in a.shape or [] for x in ("--shape", s)]
    out = benchlib.run([a.convtune, "layers"] + (sel or ["--network", "resnet18"]) + ["--list"], NAME)
    return [tuple(line.split("\t", 1)) for line in out.splitlines() if line.strip()]


def measuring_cpus(cpu, threads):
    """convtune's measuring_cpus (src/core/machine.cpp): `cpu` (default: the last CPU this process may use)
    and the nearest allowed CPUs below it, then above it."""
    allowed = sorted(os.sched_getaffinity(0))
    if cpu is None:
        cpu = allowed[-1]
    if cpu not in allowed:
        fail(f"cannot pin to CPU {cpu}: this process may use CPUs {','.join(map(str, allowed))}; "
             "use --cpu with one of them")
    v = [c for c in reversed(allowed) if c <= cpu][:threads]
    v += [c for c in allowed if c > cpu][:threads - len(v)]
    if len(v) < threads:
        fail(f"--threads {threads} needs {threads} CPUs, but this process may use only {len(v)}; "
             f"give --threads {len(v)} or fewer")
    return sorted(v)


def time_calls(call, min_ms, repeat, discard=1):
    """(median seconds per call, calls per sample): microkernels/timing.c's ct_time_calls."""
    target = min_ms * 1e-3
    t0 = time.perf_counter_ns()
    call()  # warm-up: first touch, caches, PyTorch's primitive cache
    one = (time.perf_counter_ns() - t0) * 1e-9
    n = 1
    if one < target:
        n = max(1, int(target / max(one, 1e-9) * 0.5))
        while True:
            t0 = time.perf_counter_ns()
            for _ in range(n):
                call()
            s = (time.perf_counter_ns() - t0) * 1e-9
            if s >= target:
                break
            n = max(n + 1, int(n * target / max(s, 1e-9) * 1.1))
    samples = []
    for rep in range(discard + max(1, repeat)):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            call()
        if rep >= discard:
            samples.append((time.perf_counter_ns() - t0) * 1e-9 / n)
    samples.sort()
    m = len(samples)
    return (samples[m // 2] if m % 2 else 0.5 * (samples[m // 2 - 1] + samples[m // 2])), n


def tolerance(s):
    """convtune's (src/execution/runner.cpp): float accumulation error grows with the reduction length."""
    return 1e-5 + 2e-6 * s["C"] * s["R"] * s["S"]


def check(layer, out, ref, tol):
    """The largest |out - ref|; the script's error when it exceeds tol."""
    err = (out.double() - ref).abs()
    worst = float(err.max())
    if not worst <= tol:  # NaN fails too
        n, k, h, w = (int(i) for i in divmod_index(int(err.argmax()), ref.shape))
        fail(f"{layer}: PyTorch's conv2d disagrees with the float64 reference at output (n={n},h={h},w={w},k={k}): "
             f"{float(out[n, k, h, w]):.6g} instead of {float(ref[n, k, h, w]):.6g} (tolerance {tol:.3g}); "
             "check the python3-torch installation")
    return worst


def divmod_index(flat, shape):
    """(n, k, h, w) of a flat index into a contiguous NKHW tensor."""
    idx = []
    for d in reversed(shape):
        flat, r = divmod(flat, d)
        idx.append(r)
    return reversed(idx)


def backend(torch, x, w, s):
    """The implementation conv2d dispatches to (Mkldnn, Slow2d, ...): torch's private selector, so "unknown"
    where it is missing. PyTorch 1.13 sends e.g. a 1x1 stride-1 conv at batch 1 on one thread to Slow2d."""
    try:
        b = torch._C._select_conv_backend(x, w, None, [s["stride"]] * 2, [s["pad"]] * 2, [1, 1], False, [0, 0], 1)
        return str(b).rsplit(".", 1)[-1]
    except (AttributeError, RuntimeError, TypeError):
        return "unknown"


def bench_layer(torch, a, layer, text, cpus, peak):
    s = parse_shape(text)
    g = torch.Generator().manual_seed(20221101)
    x = (torch.rand(s["N"], s["C"], s["H"], s["W"], generator=g) * 2 - 1).contiguous(memory_format=torch.channels_last)
    w = torch.rand(s["K"], s["C"], s["R"], s["S"], generator=g) * 2 - 1
    conv = torch.nn.functional.conv2d
    with torch.no_grad():
        out = conv(x, w, None, s["stride"], s["pad"])
        ref = conv(x.double().contiguous(), w.double(), None, s["stride"], s["pad"])
        tol = tolerance(s)
        err = check(layer, out, ref, tol)
        del ref
        sec, calls = time_calls(lambda: conv(x, w, None, s["stride"], s["pad"]), a.min_repeat_ms, a.repeat)
    gf = flops(s) / sec * 1e-9
    r = dict(layer=layer, shape=text, mflop=flops(s) * 1e-6, pytorch_ms=sec * 1e3, pytorch_gflops=gf,
             pytorch_pct=100 * gf / peak if peak else float("nan"), backend=backend(torch, x, w, s), peak_gflops=peak or float("nan"),
             threads=a.threads, cpus=",".join(map(str, cpus)), max_error=err, tolerance=tol,
             calls_per_sample=calls, torch=torch.__version__, machine=benchlib.cpu_model(),
             date=time.strftime("%Y-%m-%d", time.gmtime()))
    r.update(s)
    return r


def read_bench_csv(path, todo):
    """{layer: row} of a bench/batch.py CSV, read before any timing so that a wrong one fails first."""
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            if not {"layer", "shape", "convtune_wall_ms", "onednn_wall_ms"} <= set(rd.fieldnames or []):
                fail(f"--bench-csv '{path}' lacks the columns layer, shape, convtune_wall_ms, onednn_wall_ms; give a "
                     "CSV bench/batch.py wrote (an older one: run batch.py again with --bench-only --resume)")
            theirs = {r["layer"]: r for r in rd}
    except OSError as e:
        fail(f"cannot read --bench-csv '{path}': {e.strerror}; give a CSV bench/batch.py wrote")
    for layer, text in todo:
        if layer in theirs and parse_shape(theirs[layer]["shape"]) != parse_shape(text):
            fail(f"--bench-csv '{path}': layer {layer} is {theirs[layer]['shape']} there but {text} here; "
                 "give the CSV of the same layers")
    if not any(layer in theirs for layer, _ in todo):
        fail(f"--bench-csv '{path}' holds none of these layers; give the CSV of the same layers")
    return theirs


def join(rows, theirs):
    """Per layer of rows also in theirs (read_bench_csv): convtune/PyTorch and oneDNN/PyTorch (PyTorch's time over
    theirs: > 1 means faster than PyTorch)."""
    for r in rows:
        b = theirs.get(r["layer"])
        r["convtune_ms"] = r["onednn_ms"] = float("nan")
        if b is None:
            continue
        for col in ("convtune_ms", "onednn_ms"):
            try:
                r[col] = float(b[col.replace("_ms", "_wall_ms")])
            except ValueError:
                pass
    for r in rows:
        r["ratio_convtune_pytorch"] = r["pytorch_ms"] / r["convtune_ms"]
        r["ratio_onednn_pytorch"] = r["pytorch_ms"] / r["onednn_ms"]
    return sum(r["layer"] in theirs for r in rows)


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def markdown(rows, name, joined, bench_csv):
    f, fs = batch.fmt, batch.fmt_small
    r0 = rows[0]
    out = [f"### {name}: PyTorch conv2d", "",
           f"{r0['machine']}, PyTorch {r0['torch']}, {r0['threads']} thread{'s' if r0['threads'] > 1 else ''} on "
           f"CPU{'s' if r0['threads'] > 1 else ''} {r0['cpus']}, {r0['date']}. NHWC (channels_last) float32 input, "
           "KCRS weights, no bias, torch.no_grad(); convtune's timing protocol (median, ms per call through Python); "
           "GFLOP/s of nominal FLOP (padding taps counted)"
           + (f"; % of peak of {r0['peak_gflops']:.1f} GFLOP/s" if r0["peak_gflops"] == r0["peak_gflops"] else "")
           + (f". convtune and oneDNN wall-clock times from {os.path.basename(bench_csv)}; convtune/PyTorch and "
              "oneDNN/PyTorch are PyTorch's time over theirs (> 1: faster than PyTorch)." if joined else "."), ""]
    head = ["layer", "shape", "MFLOP", "PyTorch ms", "GFLOP/s", "% of peak", "backend"]
    if joined:
        head += ["convtune ms", "oneDNN ms", "convtune/PyTorch", "oneDNN/PyTorch"]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["layer"], r["shape"], fs(r["mflop"]), fs(r["pytorch_ms"]), f(r["pytorch_gflops"]),
                 f(r["pytorch_pct"]), r["backend"]]
        if joined:
            cells += [fs(r["convtune_ms"]), fs(r["onednn_ms"]), f(r["ratio_convtune_pytorch"], ".2f"),
                      f(r["ratio_onednn_pytorch"], ".2f")]
        out.append("| " + " | ".join(cells) + " |")
    tot_ms = sum(r["pytorch_ms"] for r in rows)
    tot_gf = sum(r["mflop"] for r in rows) / tot_ms  # MFLOP/ms = GFLOP/s
    cells = ["**total**", "", fs(sum(r["mflop"] for r in rows)), fs(tot_ms), f(tot_gf),
             f(100 * tot_gf / r0["peak_gflops"]) if r0["peak_gflops"] == r0["peak_gflops"] else "-", ""]
    if joined:
        cells += ["", "", f"geomean **{f(geomean(r['ratio_convtune_pytorch'] for r in rows), '.2f')}**",
                  f"geomean **{f(geomean(r['ratio_onednn_pytorch'] for r in rows), '.2f')}**"]
    out += ["| " + " | ".join(cells) + " |", ""]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--network", help="a zoo network (default: resnet18)")
    what.add_argument("--layer", help="a zoo layer")
    what.add_argument("--onnx", help="an ONNX model's Conv shapes")
    what.add_argument("--shape", action="append", help="a shape (repeatable), as convtune takes it")
    ap.add_argument("--name", help="stem of the outputs (default: the network, layer or model; 'custom' for --shape)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads and CPUs pinned (default 1)")
    ap.add_argument("--cpu", type=int, help="core to measure on (default: convtune's, the last one)")
    ap.add_argument("--peak", type=float, help="one core's peak GFLOP/s (as convtune bench measures it); "
                                               "%% of peak is of --threads x it")
    ap.add_argument("--min-repeat-ms", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bench-csv", help="a bench/batch.py CSV of the same layers: ratios per layer and geomeans")
    ap.add_argument("--out", default=os.path.join(batch.HERE, "results", "pytorch"))
    ap.add_argument("--convtune", default=os.path.join(batch.ROOT, "build", "convtune"))
    a = ap.parse_args()
    if a.threads < 1 or a.repeat < 1 or a.min_repeat_ms <= 0 or (a.peak is not None and a.peak <= 0):
        fail("--threads, --repeat, --min-repeat-ms and --peak must be positive")
    if not os.access(a.convtune, os.X_OK):
        fail(f"no convtune binary at {a.convtune}; build it (scripts/build.sh) or pass --convtune")
    need_torch()
    todo = layers(a)
    theirs = read_bench_csv(a.bench_csv, todo) if a.bench_csv else None
    cpus = measuring_cpus(a.cpu, a.threads)
    os.sched_setaffinity(0, cpus)  # before torch starts its threads: they inherit the set
    import torch
    torch.set_num_threads(a.threads)
    peak = a.peak * a.threads if a.peak else None
    rows = []
    for layer, text in todo:
        rows.append(bench_layer(torch, a, layer, text, cpus, peak))
        r = rows[-1]
        print(f"{NAME}: {layer}: {batch.fmt_small(r['pytorch_ms'])} ms, {batch.fmt(r['pytorch_gflops'])} GFLOP/s",
              file=sys.stderr)
    joined = join(rows, theirs) if theirs else 0
    for r in rows if joined else []:
        print(f"{NAME}: {r['layer']}: convtune/PyTorch {batch.fmt(r['ratio_convtune_pytorch'], '.2f')}, "
              f"oneDNN/PyTorch {batch.fmt(r['ratio_onednn_pytorch'], '.2f')}", file=sys.stderr)
    name = a.name or a.network or a.layer or (os.path.splitext(os.path.basename(a.onnx))[0] if a.onnx else None) \
        or ("custom" if a.shape else "resnet18")
    stem = os.path.join(a.out, name + "-pytorch")
    os.makedirs(a.out, exist_ok=True)
    cols = COLUMNS + (["convtune_ms", "onednn_ms", "ratio_convtune_pytorch", "ratio_onednn_pytorch"] if joined else [])
    with open(stem + ".csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items() if k in cols})
    with open(stem + ".md", "w") as fh:
        fh.write(markdown(rows, name, joined, a.bench_csv))
    if joined:
        print(f"{NAME}: geomean convtune/PyTorch {batch.fmt(geomean(r['ratio_convtune_pytorch'] for r in rows), '.2f')}"
              f", oneDNN/PyTorch {batch.fmt(geomean(r['ratio_onednn_pytorch'] for r in rows), '.2f')}", file=sys.stderr)
    print(stem + ".csv")
    print(stem + ".md")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Fig. 6 of paper 000 from a class table: % of peak over (size_k, size_h) for
the c = r = s = w = 1 slice, selected microkernels outlined.

usage: bench/heatmap.py [TABLE.json] [-o OUT.png]
(default table: configs/tables/avx512.json; default output: bench/results/heatmap-<isa>.png)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

fail = benchlib.make_fail("heatmap")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", nargs="?", default=os.path.join(here, "..", "configs", "tables", "avx512.json"))
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    try:
        with open(a.table) as f:
            t = json.load(f)
        kernels = t["microkernels"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"cannot read class table {a.table}: {e}; run 'convtune profile' first")
    cell = {}
    for m in kernels:
        s = m["sizes"]
        if s["c"] == s["r"] == s["s"] == s["w"] == 1:
            cell[(s["k"], s["h"])] = (m["percent_peak"], m["selected"])
    if not cell:
        fail("the table has no microkernel with c = r = s = w = 1")
    kmax = max(k for k, _ in cell)
    hmax = max(h for _, h in cell)
    grid = [[float("nan")] * kmax for _ in range(hmax)]
    for (k, h), (p, _) in cell.items():
        grid[h - 1][k - 1] = p
    fig, ax = plt.subplots(figsize=(7, 7))
    im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0, vmax=100,
                   extent=(0.5, kmax + 0.5, 0.5, hmax + 0.5), aspect="auto")
    for (k, h), (p, sel) in cell.items():
        ax.text(k, h, f"{p:.0f}", ha="center", va="center", fontsize=7,
                color="white" if p < 60 else "black")
        if sel:
            ax.add_patch(Rectangle((k - 0.5, h - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=1.5))
    ax.set_xlabel("size_k (vectors of %s)" % t.get("isa", "?"))
    ax.set_ylabel("size_h")
    ax.set_xticks(range(1, kmax + 1))
    ax.set_yticks(range(1, hmax + 1))
    fig.colorbar(im, ax=ax, label="% of measured peak")
    mach = t.get("machine", {}).get("cpu_model", "?")
    ax.set_title(f"Microkernels c=r=s=w=1, {t.get('isa')} (red: selected >= {100 * t.get('threshold', 0.8):.0f}%)\n"
                 f"{mach}, peak {t.get('peak_gflops', 0):.1f} GFLOP/s, {t.get('created', '')[:10]}", fontsize=10)
    out = a.out or os.path.join(here, "results", f"heatmap-{t.get('isa', 'isa')}.png")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()

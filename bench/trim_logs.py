#!/usr/bin/python3
"""Cuts tuning logs down to the records that reproduce the delivered kernels.

For each tune directory (DIR/log.jsonl, with or without DIR/finalists.json), or
every tune/<layer>/ under a run directory, log.jsonl keeps two records at most,
as verbatim lines in their order: the one `convtune bench` and `convtune export`
deliver (finalists.json's winner, else the fastest correct record: convtune's
delivered_kernel, include/convtune/tune/delivered.h) and the fastest correct record. finalists.json
stays as it is. Generated kernels (*.c, *.h) are removed: `convtune export`
regenerates them from the log. A log that mixes shapes, thread counts or
epilogues is left alone (bench and export deliver nothing from it).

usage: bench/trim_logs.py [--dry-run] DIR...
       bench/trim_logs.py bench/results/zen5-2041daf-paired-200-p5
"""
import argparse
import glob
import json
import os
import sys


def speed(r):
    """records.cpp relative_speed: GFLOP/s as a share of the record's own peak."""
    peak = r.get("peak_gflops") or 0
    return r["gflops"] / peak if peak > 0 else r["gflops"]


def key(r):
    return r.get("shape"), r.get("threads", 1), r.get("epilogue", "none")


def winner_of(tdir):
    try:
        with open(os.path.join(tdir, "finalists.json")) as f:
            w = json.load(f).get("winner")
        return w if isinstance(w, str) and w else None
    except (OSError, ValueError):
        return None


def delivered(recs, winner):
    """(index of the delivered record, index of the fastest correct one), or (None, None)."""
    best = None
    for i, r in enumerate(recs):
        if r.get("status") == "ok" and (best is None or speed(r) > speed(recs[best])):
            best = i
    if best is None:
        return None, None
    if winner:
        for i, r in enumerate(recs):
            if r.get("status") == "ok" and r.get("config") == winner:
                return i, best
    return best, best


def trim(tdir, dry_run):
    log = os.path.join(tdir, "log.jsonl")
    lines, recs = [], []
    with open(log) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                recs.append(json.loads(line))
            except ValueError:
                continue  # a torn last line from a killed run
            lines.append(line if line.endswith("\n") else line + "\n")
    if len({key(r) for r in recs}) > 1:
        print(f"trim_logs: {log}: records of several shapes, thread counts or epilogues; left alone", file=sys.stderr)
        return
    d, best = delivered(recs, winner_of(tdir))
    if d is None:
        print(f"trim_logs: {log}: no correct record; left alone", file=sys.stderr)
        return
    keep = sorted({d, best})
    before = os.path.getsize(log)
    generated = [p for p in glob.glob(os.path.join(tdir, "*")) if p.endswith((".c", ".h"))]
    print(f"{log}: {len(recs)} -> {len(keep)} records, {before} -> {sum(len(lines[i]) for i in keep)} bytes; "
          f"delivered {recs[d]['config']}" + (f"; {len(generated)} generated files removed" if generated else ""))
    if dry_run:
        return
    with open(log + ".tmp", "w") as f:
        f.writelines(lines[i] for i in keep)
    os.replace(log + ".tmp", log)
    for p in generated:
        os.remove(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="a tune directory or a run directory with tune/<layer>/")
    ap.add_argument("--dry-run", action="store_true", help="say what would be kept, change nothing")
    a = ap.parse_args()
    for d in a.dirs:
        tdirs = [d] if os.path.exists(os.path.join(d, "log.jsonl")) else \
            sorted(os.path.dirname(p) for p in glob.glob(os.path.join(d, "tune", "*", "log.jsonl")))
        if not tdirs:
            sys.exit(f"trim_logs: error: no log.jsonl in {d} or {d}/tune/*/")
        for t in tdirs:
            trim(t, a.dry_run)


if __name__ == "__main__":
    main()

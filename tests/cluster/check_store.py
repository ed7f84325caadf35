#!/usr/bin/python3
"""Checks a merged store against the run logs it came from (the cluster tests):
every record of every run log is in the store, under
<store>/<machine key>/<isa>-t<threads>/<layer>/log.jsonl, once, with the
machine of this host; prints the record count.
usage: check_store.py RUNS_DIR STORE_DIR EXPECTED_RECORDS MACHINE_KEY
"""
import glob
import json
import os
import sys


def fail(what):
    sys.exit(f"check_store: FAILED: {what}")


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    runs, store, expected, key = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    run_logs = sorted(glob.glob(os.path.join(runs, "**", "log.jsonl"), recursive=True))
    ran = [r for p in run_logs for r in records(p)]
    if len(ran) != expected:
        fail(f"the runs hold {len(ran)} records in {len(run_logs)} logs, not {expected}")
    stored = {}
    for p in glob.glob(os.path.join(store, "**", "log.jsonl"), recursive=True):
        rel = os.path.relpath(os.path.dirname(p), store)
        for r in records(p):
            want = f"{r['machine']['key']}/{r['isa']}-t{r.get('threads', 1)}/{r['layer']}"
            if rel != want:
                fail(f"a record of {want} is in {rel}")
            stored.setdefault(json.dumps(r, sort_keys=True), 0)
            stored[json.dumps(r, sort_keys=True)] += 1
    if any(n > 1 for n in stored.values()):
        fail("a record is in the store twice")
    for r in ran:
        if r.get("machine", {}).get("key") != key:
            fail(f"a record names machine {r.get('machine')}, not this host's {key}")
        if json.dumps(r, sort_keys=True) not in stored:
            fail(f"record {r['layer']} trial {r['trial']} ({r['config']}) is not in the store")
    if len(stored) != len(ran):
        fail(f"the store holds {len(stored)} records, the runs {len(ran)}")
    meta = json.load(open(os.path.join(store, "store.json")))
    if sum(g["records"] for g in meta["logs"]) != len(ran):
        fail("store.json counts other records")
    print(len(stored))


main()

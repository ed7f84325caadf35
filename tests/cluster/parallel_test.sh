#!/usr/bin/env bash
# ctest: tuning with GNU parallel on local slots pinned to different cores.
# bench/cluster/parallel-tune.sh over three of ResNet-18's smallest layers
# (jobs 4, 7, 10: resnet18-5, -8, -11), 3 trials each, 2 slots each pinned to
# a CPU of its own with taskset; checks that both CPUs measured, that every
# job succeeded, and that the merged store holds every record.
# usage: tests/cluster/parallel_test.sh CONVTUNE_BINARY   (exit 77 = skipped)
set -euo pipefail
convtune=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "parallel_test: skipped: $*"; exit 77; }
fail() { echo "parallel_test: FAILED: $*" >&2; exit 1; }
command -v parallel >/dev/null || skip "GNU parallel is missing; install parallel (scripts/install-deps.sh)"
command -v taskset >/dev/null || skip "taskset is missing; install util-linux"
command -v /usr/bin/python3 >/dev/null || skip "/usr/bin/python3 is missing"
[ "$(nproc)" -ge 2 ] || skip "this process may use only $(nproc) CPU; two slots need two"
t0=$SECONDS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/convtune-parallel-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

out=$tmp/out
CONVTUNE="$convtune" SLOTS=2 JOBS="4 7 10" RUN=r1 "$root/bench/cluster/parallel-tune.sh" "$out" --network resnet18 \
  -- --trials 3 --min-repeat-ms 1 --repeat 1 --top 0 --no-onednn >"$tmp/output" 2>&1 ||
  { cat "$tmp/output"; fail "parallel-tune.sh failed"; }
cat "$tmp/output"
# Slot 1 ran on the first CPU this process may use, slot 2 on the second.
read -r first second <<<"$(/usr/bin/python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')"
for c in "$first" "$second"; do
  grep -q "GFLOP/s on CPU $c\$" "$tmp/output" || fail "no job measured on CPU $c"
done
[ "$(grep -c "GFLOP/s on CPU" "$tmp/output")" -eq 3 ] || fail "not 3 tunes"
[ "$(awk 'NR > 1 && $7 == 0' "$out/runs/r1/joblog" | wc -l)" -eq 3 ] || fail "not every job exited 0: $(cat "$out/runs/r1/joblog")"
grep -q "^merged 3 logs (9 records" "$tmp/output" || fail "the merge did not say 3 logs and 9 records"
key=$("$convtune" merge "$out/runs" --out "$out/store" --json |
  /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); assert not any(l["written"] for l in j["logs"]), "merging again changed the store"; print(j["this_machine"])') ||
  fail "merging again was not idempotent"
n=$(/usr/bin/python3 "$root/tests/cluster/check_store.py" "$out/runs" "$out/store" 9 "$key") || fail "the store is not what the runs hold"
echo "parallel_test: passed: $n records of 3 jobs on 2 pinned slots (CPUs $first and $second) merged; $((SECONDS - t0)) s"

#!/usr/bin/env bash
# Runs one libFuzzer target as a ctest test: the committed seed corpus plus
# RUNS generated inputs, each bounded by a per-input timeout (a hang fails),
# the whole run by MAX_SECONDS. Passes only when all RUNS inputs ran with no
# crash, hang, leak or sanitizer report. New inputs go to a scratch directory,
# never into the committed corpus; a failing input is saved in ARTIFACTS.
# usage: run_fuzzer.sh FUZZER CORPUS_DIR ARTIFACTS_DIR RUNS MAX_SECONDS
set -euo pipefail
fuzzer=$1 corpus=$2 artifacts=$3 runs=$4 max_seconds=$5
name=$(basename "$fuzzer")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/$name-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"
log=$scratch/log
status=0
"$fuzzer" -runs="$runs" -max_total_time="$max_seconds" -timeout=10 -rss_limit_mb=2048 -max_len=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$scratch" "$corpus" >"$log" 2>&1 || status=$?
done_line=$(grep -E '^Done [0-9]+ runs in' "$log" || true)
ran=$(sed -E 's/^Done ([0-9]+) runs.*/\1/' <<<"$done_line")
if [ "$status" -ne 0 ] || [ -z "$ran" ] || [ "$ran" -lt "$runs" ]; then
  tail -n 60 "$log"
  if [ -n "$ran" ]; then
    echo "$name: FAILED: only $ran of $runs inputs ran in ${max_seconds}s"
  else
    echo "$name: FAILED (exit $status): the failing input is in $artifacts (see above); a reproducer for the fix goes to $corpus"
  fi
  exit 1
fi
echo "$name: $ran inputs ($done_line), no crash, hang, leak or sanitizer report"

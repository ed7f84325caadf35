#!/usr/bin/env bash
# Tunes every layer of a selection with GNU parallel, one job per layer
# (`convtune tune ... --job-index I`, each writing its own log under
# OUT/runs/RUN/<layer>/), then merges OUT/runs into the store OUT/store.
#
# usage: bench/cluster/parallel-tune.sh OUT SELECTION... [-- TUNE OPTIONS...]
#   bench/cluster/parallel-tune.sh results --network resnet18 -- --trials 100
#   HOSTS=hosts.txt bench/cluster/parallel-tune.sh /shared/convtune --network yolo9000 -- --trials 100
# Environment:
#   CONVTUNE  the convtune binary (default: convtune on PATH; on every host with HOSTS)
#   SLOTS     local jobs at once (default: the CPUs this process may use, at most
#             the jobs); slot s runs pinned (taskset) to the s-th of those CPUs,
#             so its compiles and its measurements stay on one core of its own
#   HOSTS     a GNU parallel --sshloginfile (one ssh login per line): one job at a
#             time per host over ssh instead; OUT and this script must be at the
#             same path on every host (a shared filesystem)
#   JOBS      job indices to run (default all: 0 to N-1, as `convtune layers ... --list`)
#   RUN       this run's directory under OUT/runs (default: a UTC timestamp);
#             the same RUN with -- --resume continues it
# The merge runs whether or not every job succeeded (the store only grows);
# the exit status is parallel's (the number of failed jobs, 0 when all passed).
set -euo pipefail
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
convtune=${CONVTUNE:-convtune}

# One job (what parallel runs): --one SLOT INDEX RUNDIR TUNE ARGS...
if [ "${1:-}" = --one ]; then
  slot=$2 index=$3 dir=$4
  shift 4
  if [ -n "${PIN_CPUS:-}" ]; then
    read -r -a cpus <<<"$PIN_CPUS"
    exec taskset -c "${cpus[$(((slot - 1) % ${#cpus[@]}))]}" "$convtune" tune "$@" --job-index "$index" --out "$dir"
  fi
  exec "$convtune" tune "$@" --job-index "$index" --out "$dir"
fi

usage() { sed -n '6,8p' "$0" | sed 's/^# //' >&2; exit 2; }
. "$(dirname "$0")/args.sh"
split_args "$@"

n=$("$convtune" layers "${sel[@]}" --list | wc -l)
run=${RUN:-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out/runs/$run"
out=$(cd "$out" && pwd)
jobs=${JOBS:-$(seq -s ' ' 0 $((n - 1)))}

# The CPUs this process may use ("0-3,6" -> "0 1 2 3 6").
allowed_cpus() {
  local list r
  list=$(taskset -cp $$ | sed 's/.*: *//')
  for r in ${list//,/ }; do
    if [[ $r == *-* ]]; then seq -s ' ' "${r%-*}" "${r#*-}"; else echo "$r"; fi
  done | tr '\n' ' '
}

status=0
if [ -n "${HOSTS:-}" ]; then
  # shellcheck disable=SC2086
  parallel --sshloginfile "$HOSTS" -j1 --env CONVTUNE --joblog "$out/runs/$run/joblog" --line-buffer --tagstring '{}' \
    -q "$self" --one '{%}' '{}' "$out/runs/$run" "${sel[@]}" "${opts[@]}" ::: $jobs || status=$?
else
  PIN_CPUS=$(allowed_cpus)
  read -r -a cpus <<<"$PIN_CPUS"
  slots=${SLOTS:-${#cpus[@]}}
  export PIN_CPUS CONVTUNE="$convtune"
  # shellcheck disable=SC2086
  parallel -j "$slots" --joblog "$out/runs/$run/joblog" --line-buffer --tagstring '{}' \
    -q "$self" --one '{%}' '{}' "$out/runs/$run" "${sel[@]}" "${opts[@]}" ::: $jobs || status=$?
fi
"$convtune" merge "$out/runs" --out "$out/store"
exit "$status"

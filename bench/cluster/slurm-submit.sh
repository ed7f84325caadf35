#!/usr/bin/env bash
# Tunes every layer of a selection on a Slurm cluster: a job array with one
# task per layer (`convtune tune ... --job-index $SLURM_ARRAY_TASK_ID`, each
# writing its own log under OUT/runs/RUN/<layer>/, no task waits for another),
# then `convtune merge OUT/runs --out OUT/store` as a job that starts once the
# array has finished (sbatch --dependency=afterok:<array job>).
#
# usage: bench/cluster/slurm-submit.sh OUT SELECTION... [-- TUNE OPTIONS...]
#   bench/cluster/slurm-submit.sh /shared/convtune --network resnet18 -- --trials 100 --search droplet
#   bench/cluster/slurm-submit.sh /shared/convtune --network yolo9000 -- --trials 100
# SELECTION is what `convtune layers ... --list` takes (--network NAME, ...).
# OUT must be a directory every node sees. Environment:
#   CONVTUNE       the convtune binary on the nodes (default: convtune on PATH)
#   CPUS_PER_TASK  CPUs per layer (default 2: one measures, the other compiles);
#                  tune measures on one core (--threads 1) unless the options say --threads
#   ARRAY          array indices (default every job: 0-(N-1)); "0-22%8": at most 8 at once
#   RUN            this run's directory under OUT/runs (default: the array job id);
#                  the same RUN with -- --resume continues a run whose tasks were killed
#   DEPENDENCY     afterok (default: merge when every task succeeded) or afterany
#   SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_ACCOUNT, ...: sbatch's own
# Prints "array job ID (tasks ARRAY of N layers), merge job ID -> OUT/store".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '8,10p' "$0" | sed 's/^# //' >&2; exit 2; }
. "$(dirname "$0")/args.sh"
split_args "$@"
convtune=${CONVTUNE:-convtune}

n=$("$convtune" layers "${sel[@]}" --list | wc -l)
mkdir -p "$out/runs" "$out/slurm"
out=$(cd "$out" && pwd)  # the jobs run in other directories, on other nodes
array=${ARRAY:-0-$((n - 1))}

jid=$(sbatch --parsable --job-name=convtune-tune --array="$array" --cpus-per-task="${CPUS_PER_TASK:-2}" \
  --output="$out/slurm/%A_%a.out" --export=ALL,CONVTUNE="$convtune",CONVTUNE_RUN="${RUN:-}" \
  "$here/tune-array.sbatch" "$out/runs" "${sel[@]}" "${opts[@]}")
jid=${jid%%;*}  # "id;cluster" on a multi-cluster setup
mid=$(sbatch --parsable --job-name=convtune-merge --dependency="${DEPENDENCY:-afterok}:$jid" --cpus-per-task=1 \
  --output="$out/slurm/%j-merge.out" --export=ALL,CONVTUNE="$convtune" \
  "$here/merge.sbatch" "$out/runs" "$out/store")
mid=${mid%%;*}
echo "array job $jid (tasks $array of $n layers), merge job $mid -> $out/store"

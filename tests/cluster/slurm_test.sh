#!/usr/bin/env bash
# ctest: tuning on a real (single-node) Slurm cluster. Starts munged,
# slurmctld and slurmd on this host as root, everything (munge key, state,
# spool, logs, slurm.conf with this host's name, CPUs and memory) in a temp
# dir and on ports of their own; submits bench/cluster/slurm-submit.sh over
# three of ResNet-18's smallest layers (array tasks 4, 7, 10: resnet18-5, -8,
# -11), 3 trials each, with the dependent merge; waits (with a timeout); checks
# that the merged store holds every record; shuts everything down (trap).
# usage: tests/cluster/slurm_test.sh CONVTUNE_BINARY   (exit 77 = skipped)
set -euo pipefail
convtune=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "slurm_test: skipped: $*"; exit 77; }
fail() { echo "slurm_test: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "starting slurmctld and slurmd needs root (run ctest as root)"
for b in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
  command -v "$b" >/dev/null || skip "$b is missing; install slurm-wlm and munge (scripts/install-deps.sh)"
done
command -v /usr/bin/python3 >/dev/null || skip "/usr/bin/python3 is missing"
t0=$SECONDS

tmp=$(mktemp -d "${TMPDIR:-/tmp}/convtune-slurm-XXXXXX")
chmod 755 "$tmp"
# The pid of a daemon this test started, from its pid file ("" when none).
# A daemon removes its file as it exits, maybe between the test and the
# read: then "" too, not a failed cat that fails the passed test in cleanup.
pid_of() { cat "$tmp/$1.pid" 2>/dev/null || true; }
cleanup() {
  local f p
  for f in slurmd slurmctld munged; do
    p=$(pid_of "$f")
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
  done
  for f in slurmd slurmctld munged; do  # until they are gone: nothing may outlive the test
    p=$(pid_of "$f")
    for _ in $(seq 50); do
      if [ -z "$p" ] || ! kill -0 "$p" 2>/dev/null; then break; fi
      sleep 0.1
    done
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
daemon_logs() { tail -n 20 "$tmp"/*.log >&2 || true; }

# munge: a key of its own, its socket in the temp dir.
mkdir -m 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" 2>/dev/null || skip "mungekey cannot create a key"
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/munge.seed" ||
  skip "munged does not start: $(tail -n 1 "$tmp/munged.log" 2>/dev/null)"

# Two free ports next to each other.
port=0
for _ in $(seq 50); do
  p=$((20000 + RANDOM % 30000))
  ss -ltnH "( sport = :$p or sport = :$((p + 1)) )" 2>/dev/null | grep -q . || { port=$p; break; }
done
[ "$port" -gt 0 ] || skip "no two free TCP ports found"

host=$(hostname -s)
node=$(slurmd -C 2>/dev/null | head -n 1)  # "NodeName=host CPUs=2 ... RealMemory=24105"
[[ $node == NodeName=* ]] || skip "slurmd -C does not describe this host"
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=convtunetest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
$node
PartitionName=convtune Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -c -f "$SLURM_CONF" || { daemon_logs; skip "slurmctld does not start (see its log above)"; }
slurmd -f "$SLURM_CONF" || { daemon_logs; skip "slurmd does not start (see its log above)"; }
state=""
for _ in $(seq 300); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -n 1)
  [ "$state" = idle ] && break
  sleep 0.1
done
[ "$state" = idle ] || { daemon_logs; skip "the node is '$state', not idle, 30 s after slurmd started"; }
t_up=$((SECONDS - t0))

out=$tmp/out
mkdir -p "$out"
submitted=$(CONVTUNE="$convtune" ARRAY=4,7,10 CPUS_PER_TASK=1 "$root/bench/cluster/slurm-submit.sh" "$out" \
  --network resnet18 -- --trials 3 --min-repeat-ms 1 --repeat 1 --top 0) || fail "slurm-submit.sh failed"
echo "$submitted"
[[ $submitted =~ ^array\ job\ ([0-9]+)\ .*merge\ job\ ([0-9]+) ]] || fail "slurm-submit.sh said: $submitted"
jid=${BASH_REMATCH[1]} mid=${BASH_REMATCH[2]}
for _ in $(seq 1800); do  # at most 180 s
  [ -z "$(squeue -h -j "$jid,$mid" -o %i 2>/dev/null)" ] && break
  sleep 0.1
done
[ -z "$(squeue -h -j "$jid,$mid" -o %i 2>/dev/null)" ] || { squeue; daemon_logs; fail "the jobs did not finish in 180 s"; }
t_jobs=$((SECONDS - t0 - t_up))

for f in "$out"/slurm/*.out; do echo "--- $(basename "$f")"; cat "$f"; done
for t in 4 7 10; do [ -s "$out/slurm/${jid}_$t.out" ] || fail "array task $t left no output"; done
[ -s "$out/slurm/$mid-merge.out" ] || fail "the merge job did not run"
grep -q "^merged 3 logs (9 records" "$out/slurm/$mid-merge.out" || fail "the merge job said: $(cat "$out/slurm/$mid-merge.out")"
for l in resnet18-5 resnet18-8 resnet18-11; do
  [ -s "$out/runs/$jid/$l/log.jsonl" ] || fail "no log for $l in $out/runs/$jid"
done
key=$("$convtune" merge "$out/runs" --out "$out/store" --json |
  /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); assert not any(l["written"] for l in j["logs"]), "merging again changed the store"; print(j["this_machine"])') ||
  fail "merging again was not idempotent"
n=$(/usr/bin/python3 "$root/tests/cluster/check_store.py" "$out/runs" "$out/store" 9 "$key") || fail "the store is not what the runs hold"
echo "slurm_test: passed: $n records of 3 array tasks merged into the store by the dependent job;" \
  "$((SECONDS - t0)) s in all (cluster up in $t_up s, jobs $t_jobs s)"

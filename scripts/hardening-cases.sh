#!/usr/bin/env bash
# Replays every fault case of the hardening issue (issue 10) against a built
# convtune and prints, per case, the exit code and what it said on stderr, so
# the behaviour can be read (and re-checked on another machine) in one go.
# The assertions live in the GoogleTest suite; this only shows.
#   usage: scripts/hardening-cases.sh [CONVTUNE_BINARY]   (default build/convtune)
set -u
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/convtune}")
[ -x "$bin" ] || { echo "convtune: error: no binary at $bin; run scripts/build.sh first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/convtune-cases-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
small='K=16,C=8,H=8,R=3'
fast=(--min-repeat-ms 1 --repeat 1 --no-onednn -q)

show() {  # show TITLE -- command...: exit code and the first stderr lines
  local title=$1; shift; shift
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  printf '\n### %s\n$ %s\nexit %d\n' "$title" "${*/#$bin/convtune}" "$rc"
  sed -n '1,3p' "$work/err" | sed 's/^/  stderr: /'
  [ "$(wc -l <"$work/err")" -gt 3 ] && echo "  stderr: ... ($(wc -l <"$work/err") lines)"
  return 0
}
lines_ok() {  # every line of a log parses as JSON with a status
  /usr/bin/python3 - "$1" <<'EOF'
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line); assert "status" in r, i; n += 1
trials = [json.loads(l)["trial"] for l in open(sys.argv[1])]
print(f"  log: {n} valid records, trials unique: {len(set(trials)) == len(trials)}")
EOF
}

echo "# convtune hardening cases ($(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs))"

show "unknown --search: the error comes first, before any table warning" -- "$bin" tune --layer yolo9000-12 --search annealing
show "bad option values: --timeout 0" -- "$bin" tune --shape "$small" --timeout 0
show "bad option values: --timeout -5" -- "$bin" tune --shape "$small" --timeout -5
show "bad option values: --min-repeat-ms nan" -- "$bin" tune --shape "$small" --min-repeat-ms nan
show "bad option values: --check-points -1" -- "$bin" tune --shape "$small" --check-points -1
show "huge shape (was std::bad_alloc, SIGABRT)" -- "$bin" tune --shape K=64,C=64,H=20000,R=3
show "huge padding (was a hang in build_space)" -- timeout 20 "$bin" tune --shape K=64,C=64,H=14,R=3,pad=1000000
show "groups" -- "$bin" tune --shape K=64,C=64,H=14,R=3,groups=2
show "dilation" -- "$bin" tune --shape K=64,C=64,H=14,R=3,dilation=2
show "no microkernel can tile the shape (AVX2 table, 17x17 output)" -- "$bin" tune --arch avx2 --shape K=20,C=8,H=17,R=1

# The log: a torn last line, invalid records, a configuration that does not fit.
"$bin" tune --shape "$small" --trials 4 --out torn "${fast[@]}" >/dev/null 2>&1
head -c -25 torn/log.jsonl >torn/cut && mv torn/cut torn/log.jsonl
show "resume after a torn last line (kill during a write)" -- "$bin" tune --shape "$small" --trials 6 --out torn --resume "${fast[@]}"
lines_ok torn/log.jsonl
for bad in '"format_version":99' '"gflops":"fast"' 'status'; do
  mkdir -p "inv-$bad" && head -n 2 torn/log.jsonl >"inv-$bad/log.jsonl"
  tail -n 1 torn/log.jsonl | /usr/bin/python3 -c "
import json, sys; r = json.loads(sys.stdin.read()); bad = sys.argv[1]
if bad == 'status': del r['status']
else: k, v = bad.split(':', 1); r[k.strip('\"')] = json.loads(v)
print(json.dumps(r))" "$bad" >>"inv-$bad/log.jsonl"
  show "complete but invalid last record: $bad" -- "$bin" tune --shape "$small" --trials 6 --out "inv-$bad" --resume "${fast[@]}"
done
mkdir -p cfg && head -n 1 torn/log.jsonl | sed -E 's/"config":"[^"]*"/"config":"[T(60,c), T(8,h), T(8,w), U(3,s), U(3,r), U(1,k), V(k)]"/' >cfg/log.jsonl
show "a configuration in the log that does not fit the shape (T(60,c) for C=8)" -- "$bin" tune --shape "$small" --trials 3 --out cfg --resume "${fast[@]}"

# Outputs.
mkdir -p unw && mkdir -p "unw/N1_K16_C8_H8_W8_R3_S3_st1_p1.c"
show "best kernel file not writable (a directory in its place)" -- "$bin" tune --shape "$small" --trials 2 --out unw "${fast[@]}"
show "--out under a file (was std::terminate on filesystem_error)" -- "$bin" tune --shape "$small" --trials 2 --out /dev/null/x "${fast[@]}"
show "--log on a full device (was unbounded memory growth)" -- "$bin" tune --shape "$small" --trials 2 --log /dev/full "${fast[@]}"
if mkdir -p tiny && mount -t tmpfs -o size=12k tmpfs tiny 2>/dev/null; then
  show "a full disk (12 KiB tmpfs; was 'Inappropriate ioctl for device')" -- "$bin" tune --shape "$small" --trials 40 --out tiny "${fast[@]}"
  umount tiny
else
  printf '\n### a full disk\n(skipped: cannot mount a small tmpfs here without root)\n'
fi

# Two tuners on one log.
"$bin" tune --shape "$small" --trials 30 --out twice --min-repeat-ms 50 --repeat 3 --no-onednn -q >/dev/null 2>&1 &
first=$!
for _ in $(seq 300); do [ "$(cat twice/log.jsonl 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.2; done
show "a second tuner on the same --out" -- "$bin" tune --shape "$small" --trials 30 --out twice --resume "${fast[@]}"
kill -9 "$first" 2>/dev/null; wait "$first" 2>/dev/null
echo "  first tuner killed with SIGKILL; leftover work dirs: $(ls -d "${TMPDIR:-/tmp}"/convtune-tune-* 2>/dev/null | wc -l)"
lines_ok twice/log.jsonl
show "resume after kill -9 (the lock went with the holder)" -- "$bin" tune --shape "$small" --trials 8 --out twice --resume "${fast[@]}"
lines_ok twice/log.jsonl
echo "  leftover work dirs after the next run: $(ls -d "${TMPDIR:-/tmp}"/convtune-tune-* 2>/dev/null | wc -l)"

# A profile killed with SIGKILL mid-measurement, then resumed.
prof=(profile --quick --arch avx2 --out prof/t.json --min-repeat-ms 1 --repeat 1)
mkdir -p prof
"$bin" "${prof[@]}" -q >/dev/null 2>&1 &  # a simple command, so $! is convtune itself
p=$!
for _ in $(seq 300); do [ "$(cat prof/t.json.journal.jsonl 2>/dev/null | wc -l)" -ge 10 ] && break; sleep 0.1; done
kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null
printf '\n### profile killed with SIGKILL\n  journal: %s lines kept\n' "$(wc -l <prof/t.json.journal.jsonl)"
show "profile again without --resume" -- "$bin" "${prof[@]}" -q
show "profile --resume measures only the rest" -- "$bin" "${prof[@]}" --resume
echo "  table: $(/usr/bin/python3 -c "import json; t=json.load(open('prof/t.json')); n=[m['name'] for m in t['microkernels']]; print(len(n), 'microkernels,', len(set(n)), 'distinct, resumed:', t.get('resumed'))")"

# The compiler.
show "CC=true (a compiler that makes nothing)" -- env CC=true "$bin" tune --shape "$small" --trials 2 --out cctrue "${fast[@]}"
# Killed only while compiling candidates: the start-up check of the compiler passes.
printf '#!/bin/sh\ncase "$*" in *cand*) kill -9 $$;; esac\nexec cc "$@"\n' >killcc && chmod +x killcc
show "a compiler killed by a signal" -- env CC="$work/killcc" "$bin" tune --shape "$small" --trials 2 --out cckill "${fast[@]}"
[ -f cckill/log.jsonl ] && /usr/bin/python3 -c "
import json,sys
for l in open('cckill/log.jsonl'): r=json.loads(l); print('  record:', r['status'], '-', r['detail'][:120])"

# JSON output.
"$bin" tune --shape "$small" --trials 2 --out js1 --json "${fast[@]}" >js.out 2>/dev/null
printf '\n### --json prints JSON Lines\n'; /usr/bin/python3 -c "
import json; ls=open('js.out').read().splitlines(); [json.loads(l) for l in ls]; print(f'  {len(ls)} line(s), each one JSON object')"
"$bin" tune --shape K=64,C=64,H=20000,R=3 --json >js.err 2>/dev/null
echo "  on an error, stdout: $(cat js.err)"

# Caches for csa.
"$bin" tune --shape "$small" --search csa --trials 1 --out csa --json "${fast[@]}" >/dev/null 2>&1
printf '\n### caches seen by csa\n'
/usr/bin/python3 -c "
import json
r = json.loads(open('csa/log.jsonl').readline()); c = r['search_info']['csa']; print('  source:', c['caches'], '; L1d', c['l1d_bytes'], 'L2', c['l2_bytes'], 'L3', c['l3_bytes'], 'bytes')"

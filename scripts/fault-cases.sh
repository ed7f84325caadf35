#!/usr/bin/env bash
# Replays the fault cases of issue 60 (ONNX, export, merge and JSON errors)
# against a built convtune and prints, per case, the command, its exit code
# and what it said (stderr, and stdout for --json), as hardening-cases.sh
# does for issue 10. The assertions live in the GoogleTest suite; this only
# shows. Cases that tune use a tiny shape and --trials 2 (a few seconds each).
#   usage: scripts/fault-cases.sh [CONVTUNE_BINARY]   (default build/convtune)
set -u
cd "$(dirname "$0")/.."
src=$(pwd)
bin=$(realpath "${1:-build/convtune}")
[ -x "$bin" ] || { echo "convtune: error: no binary at $bin; run scripts/build.sh first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/convtune-faults-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
data=$src/tests/data
small='K=16,C=8,H=8,R=3'
fast=(--trials 2 --threads 1 --min-repeat-ms 1 --repeat 1 --no-onednn -q)

show() {  # show TITLE -- command...: exit code, stderr and (for --json) stdout
  local title=$1; shift; shift
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  printf '\n### %s\n$ %s\nexit %d\n' "$title" "${*/#$bin/convtune}" "$rc"
  grep -v '^convtune: tuning\|^convtune: compiling' "$work/err" | sed -n '1,8p' | sed 's/^/  stderr: /'
  case " $* " in
    *" --json "*|*" layers "*) sed -n '1,12p' "$work/out" | sed 's/^/  stdout: /' ;;
    *) grep '^note:\|^exported' "$work/out" | sed 's/^/  stdout: /' ;;
  esac
  return 0
}
files() { (cd "$1" && find . -type f | sort | sed 's/^/  file: /'); }

echo "# convtune issue 60 fault cases ($(date -u +%Y-%m-%dT%H:%MZ))"

# 1. ONNX attributes of the wrong length (dilations=[] with SAME_LOWER crashed).
show "ONNX: repeated attributes of the wrong length (was a segfault)" -- "$bin" layers --onnx "$data/bad_attrs.onnx"
show "ONNX: 1-D and 3-D Conv skipped, not the whole model" -- "$bin" layers --onnx "$data/conv1d3d.onnx"
show "ONNX: Conv after a custom-domain op skipped, not the whole model" -- "$bin" layers --onnx "$data/custom_op.onnx"

# 2. Bytes that are not UTF-8, and a full-width letter.
show "--layer of a byte that is not UTF-8, --json (was type_error.316, SIGABRT)" -- \
  "$bin" tune --json --layer "$(printf 'r\377')"
show "a full-width letter in --config, --json (was a cut character, SIGABRT)" -- \
  "$bin" bench --json --layer resnet18-12 --config '[Ｔ(2,w), V(k)]'
show "the same in text" -- "$bin" bench --layer resnet18-12 --config '[Ｔ(2,w), V(k)]'

# 3 and 5. A killed first merge, a second one meanwhile, leftovers.
"$bin" tune --shape "$small" --out runs/a "${fast[@]}" >/dev/null 2>&1
mkdir -p store && echo '{"pid": 999999999}' >store/store.json.lock
echo '999999999 1 pid:[0]' >store/.convtune-store-creating
mkdir -p store/x && echo partial >store/x/log.jsonl.tmp-AbC123
show "merge after a killed first merge (was refused for good)" -- "$bin" merge runs --out store
files store
/usr/bin/python3 - "$work/busy" <<'PY' &
import fcntl, json, os, sys, time
os.makedirs(sys.argv[1], exist_ok=True)
f = open(sys.argv[1] + "/store.json.lock", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
f.write(json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "since": "now"}) + "\n"); f.flush()
time.sleep(5)
PY
holder=$!
sleep 1
show "a second merge while the first creates the store" -- "$bin" merge runs --out busy
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
log=$(find store -name log.jsonl | head -1)
touch "$log.tmp-QwE456" "$log.lock"
show "merge again after a kill left log.jsonl.tmp-* and .lock" -- "$bin" merge runs --out store
files store
: >store/store.json
show "an empty store.json" -- "$bin" merge runs --out store

# 4. export: one directory, old or new; no empty --out after a failure.
layer=$("$bin" layers --shape "$small" --list | cut -f1)
mkdir -p logs && cp -r runs/a "logs/$layer"
show "export" -- "$bin" export --shape "$small" --logs logs --name tiny --out lib
touch lib/tiny.h.tmp-AbC123 && mkdir -p .lib.tmp-ZzZ999
echo "999999999 1 $(readlink /proc/self/ns/pid)" >.lib.tmp-ZzZ999/.convtune-owner
show "export again over stale temporary files of killed exports" -- "$bin" export --shape "$small" --logs logs --name tiny --out lib
files lib; ls -a | grep -c '^\.lib\.tmp-' | sed 's/^/  staging dirs left beside lib: /'
show "export --skip-untuned with nothing tuned" -- "$bin" export --layer resnet18-12 --skip-untuned --logs none --out newlib
[ -e newlib ] && echo "  newlib exists" || echo "  newlib: not created"
echo '[1, 2]' >"logs/$layer/finalists.json"
show "export with an array finalists.json" -- "$bin" export --shape "$small" --logs logs --name tiny --out lib

# Weak messages.
"$bin" tune --onnx "$data/one_conv.onnx" --out onnxo "${fast[@]}" >/dev/null 2>&1
show "tune --onnx of a one-Conv model, then export --onnx --logs" -- "$bin" export --onnx "$data/one_conv.onnx" --threads 1 --logs onnxo --out onnxlib
echo x >afile
show "tune --out FILE" -- "$bin" tune --shape "$small" --out afile
show "bench --library --epilogue" -- "$bin" bench --library lib --epilogue bias
show "bench --config ''" -- "$bin" bench --layer resnet18-12 --config ''
show "bench --config with P(2,w) on one CPU" -- taskset -c 0 "$bin" bench --shape "$small" --config '[P(2,h), T(3,r), T(2,h), T(2,c), U(3,s), U(4,c), U(8,w), U(2,h), V(k)]' --min-repeat-ms 1 --repeat 1 -q
"$bin" tune --json --shape "$small" --out sigint "${fast[@]}" >"$work/sig.out" 2>"$work/sig.err" &
pid=$!; sleep 0.3; kill -INT $pid; wait $pid; rc=$?
printf '\n### SIGINT in the first second of tune --json\n$ convtune tune --json ... & kill -INT\nexit %d\n' $rc
sed 's/^/  stderr: /' "$work/sig.err" | head -3; sed 's/^/  stdout: /' "$work/sig.out" | head -3
ls sigint 2>/dev/null | grep -c '\.lock$' | sed 's/^/  .lock files left: /'
"$bin" profile --quick --arch avx2 --out t.json -q >/dev/null 2>&1 &
pid=$!; sleep 0.3; kill -INT $pid; wait $pid; rc=$?
printf '\n### SIGINT in the first second of profile\n$ convtune profile --quick ... & kill -INT\nexit %d\n' $rc
ls t.json* 2>/dev/null | sed 's/^/  left: /'
if grep -q avx512f /proc/cpuinfo; then
  "$bin" profile --quick --arch avx512 --out p.json -q >/dev/null 2>&1 &
  pid=$!; sleep 8; kill -9 $pid; wait $pid 2>/dev/null
  show "profile --quick --resume --arch avx2 on an avx512 journal" -- "$bin" profile --quick --resume --arch avx2 --out p.json -q
fi

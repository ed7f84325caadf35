#!/usr/bin/env bash
# The test command (README), under 10 minutes on 2 cores from a fresh clone:
#   scripts/test.sh             installs what is missing, builds ./build
#                               (Release) and runs every test but the long
#                               tier: the unit tier, the generated-kernel
#                               cases of every ISA this CPU runs (kernel: the
#                               generated C checked against the reference by
#                               the driver; AVX2 code runs on an AVX-512 CPU
#                               too), the end-to-end tests (e2e) and the
#                               scripts (the ctest labels are CMakeLists.txt's:
#                               unit, kernel, e2e, script, long, fuzz).
#   scripts/test.sh --extended  what the default leaves out, after it: the
#                               long tier on ./build, then ./build-asan (ASan +
#                               UBSan, clang) for the C++ of ours: the unit
#                               tier, the e2e tests and the parser fuzzers; on
#                               an AVX-512 host with CONVTUNE_MAX_CPU_ISA=avx2,
#                               the host as an AVX2-only CPU, which is also a
#                               CPU other than the shipped tables' (README
#                               "ISAs"). CI runs both (.ci/run).
# Every run goes to the end; the script fails if any run failed and ends with
# ctest's count line summed over the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d "${TMPDIR:-/tmp}/convtune-test-XXXXXX")
trap 'rm -rf "$logs"' EXIT
step() { printf '\n=== %s\n' "$*"; }
took() { printf '=== %s: %ds\n' "$1" "$(( SECONDS - $2 ))"; }

case "${1:-}" in
  "") tier=default ;;
  --extended) tier=extended ;;
  *) echo "convtune: error: unknown option '$1'; use scripts/test.sh [--extended]" >&2; exit 2 ;;
esac

t=$SECONDS; scripts/install-deps.sh; took "install-deps" "$t"
t=$SECONDS; step "build (Release)"; scripts/build.sh; took "build (Release)" "$t"
if [ "$tier" = extended ]; then
  t=$SECONDS; step "build (ASan + UBSan, fuzzers)"; scripts/build.sh asan; took "build (ASan + UBSan)" "$t"
fi

failed=0
# run NAME BUILD_DIR EXCLUDE [ENV=VALUE ...]: ctest in BUILD_DIR without the
# tests matching EXCLUDE ("" for none) and with the labels of the array
# `labels` (ctest -L/-LE arguments), skips with their reasons.
run() {
  local name=$1 dir=$2 exclude=$3 t=$SECONDS; shift 3
  step "suite: $name"
  # OPENBLAS_NUM_THREADS=1: OpenBLAS starts its thread pool when it loads, in
  # every process that links the baselines (each test and each convtune a test
  # runs): about a third of a sanitized process's start. bench sets the BLAS
  # baseline's threads itself (openblas_set_num_threads), which grows the pool.
  env OPENBLAS_NUM_THREADS=1 "$@" ctest --test-dir "$dir" --output-on-failure -j2 --timeout 900 ${exclude:+-E "$exclude"} \
    "${labels[@]}" 2>&1 \
    | tee "$logs/$name" || failed=1
  scripts/skip-reasons.sh "$dir/Testing/Temporary/LastTest.log"
  took "suite: $name" "$t"
}
# finish WHAT: one count line for CI, in ctest's words, over the runs so far; exits.
finish() {
  local total=0 bad=0 f line
  for f in "$logs"/*; do
    line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$f" | tail -n 1 || true)
    if [ -z "$line" ]; then failed=1; echo "convtune: $(basename "$f"): ctest printed no summary" >&2; continue; fi
    bad=$(( bad + $(sed -E 's/.* ([0-9]+) tests failed out of.*/\1/' <<<"$line") ))
    total=$(( total + $(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line") ))
  done
  [ "$bad" -eq 0 ] || failed=1
  echo
  echo "all runs ($1):"
  echo "$(( total ? 100 * (total - bad) / total : 0 ))% tests passed, $bad tests failed out of $total"
  exit "$failed"
}
if [ "$tier" = default ]; then
  labels=(-LE long); run host build ""
  finish "all tests but the long tier (scripts/test.sh --extended runs it)"
fi
labels=(-L long); run host-long build ""
# Left out of the sanitized run (the host run above ran them):
#  - the kernel matrices: each case's time is the C compiler's and the
#    generated code's, neither of them sanitized; kept under the sanitizers
#    are the kernel tests that exercise C++ of their own (ConvCodegenText's
#    generated text, the wrong-result checks, thread pinning, UkernelFlags'
#    assembly) and through them tests/kernel_harness.cpp;
#  - what is not C++ of ours under test: the shell scripts of the cluster
#    tests and the batch script (they drive the commands the C++ tests drive),
#    and NEON under qemu (generated C and an emulator);
#  - long end-to-end runs whose time goes to the C compiler and the kernels,
#    not to our C++, and that a lighter test of the same file keeps under the
#    sanitizers: those that pin --arch avx2 (the host run was already an
#    AVX2-only CPU for them), and repetitions that no ISA changes (resume and
#    seeds, a strategy's exhaustion, bench's processes and thread list).
asan_kernel=(
  '^Shapes/Conv' '^Matrix/ConvBorders' '^Loops/ConvParallel' '^Isas/(ConvEpilogues|ConvFlat|ConvStream|ConvWino|UkernelCodegen)\.'
  '^Isas/(ConvShapeMatrix|ConvGrouped|ConvDepthwise|UkernelDepthwise)\.' '^Emulated/'
  '^ConvWinoThreads\.' 'ConvNeon' 'NeonUkernels'
)
asan_long=(
  'ProfileResume\.KilledAnywhere' 'Log\.(KillNine|TornLastLine)' 'CliTuneNetwork\.TheTableWarning'
  'Finalists\.(TheDuelDropsAHanging|ResumedFinalists|AWinnerWrongAtOne|TopOneMeasures|DuelRoundsZero|WhenEveryFinalist)'
  'Tune\.(ResumeRepeatsNothing|SameSeedSameCandidates)' 'NeverProposeTwiceAndStopWhenExhausted'
  'Bench\.(FreshProcesses|ThreadListPrints|TuneEndsWith)' 'LibraryBench\.ExportedLibrary' 'NeonCli\.Emulated'
)
asan_skip="^(cluster_|batch_script|pytorch_conv_script)|$(IFS='|'; echo "${asan_kernel[*]}|${asan_long[*]}")"
labels=()
if grep -qw avx2 /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo; then
  run asan-avx2-only build-asan "$asan_skip" CONVTUNE_MAX_CPU_ISA=avx2 ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1
else
  step "note: this CPU has no AVX-512, so the host run above already was the AVX2-only case"
  run asan build-asan "$asan_skip" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
fi

finish "the long tier (host); asan + fuzzers, as an AVX2-only CPU where the host has AVX-512"

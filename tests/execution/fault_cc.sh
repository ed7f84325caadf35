#!/bin/sh
# A C compiler for tests (a test double, so convtune carries no fault hook):
# runs $FAULT_CC_REAL (default cc) with the same arguments, except for the
# generated files named in $FAULT_CC_FAULTS, e.g. "cand00001:crash,cand00003:wrong",
# whose convolution fails on purpose:
#   compile_error  the compilation fails
#   crash          the convolution traps (__builtin_trap)
#   hang           the convolution never returns
#   wrong          the convolution runs, then spoils output[0]
#   wrong_one      the convolution runs, then spoils output[1] only (missed by a
#                  sampled check that does not pick element 1)
#   killed         the compiler dies by SIGKILL
#   full           the compiler fails as on a full disk
# The convolution is renamed ct_conv_real and a wrapper takes its place: the
# driver's entry point (a candidate built with -D<name>=ct_conv_entry,
# microkernels/driver.c), or else the function named like the file (bench's
# <function>.c).
real=${FAULT_CC_REAL:-cc}
src=
for a in "$@"; do
  case "$a" in *.c) src=$a ;; esac
done
base=$(basename "${src:-none}" .c)
fault=
for item in $(echo "${FAULT_CC_FAULTS:-}" | tr ',' ' '); do
  [ "${item%%:*}" = "$base" ] && fault=${item#*:}
done
[ -z "$fault" ] && exec $real "$@"
case $fault in
  compile_error) echo "$src:1:1: error: fault_cc.sh: an injected compile error" >&2; exit 1 ;;
  killed) kill -KILL $$ ;;
  full) echo "$src: fatal error: error writing to $base.s: No space left on device" >&2; exit 1 ;;
  crash) body='__builtin_trap();' ;;
  hang) body='for (volatile int spin = 1; spin;) {}' ;;
  wrong) body='ct_conv_real(i, w, o); o[0] += 1.0f;' ;;
  wrong_one) body='ct_conv_real(i, w, o); o[1] += 1.0f;' ;;
  *) echo "fault_cc.sh: unknown fault '$fault'" >&2; exit 2 ;;
esac
entry=$base
rename=-D$base=ct_conv_real
for a in "$@"; do
  case "$a" in -D*=ct_conv_entry) entry=ct_conv_entry rename= ;; esac
done
wrapper=$(dirname "$src")/$base.fault.c
printf '%s\n' "#undef $entry" 'void ct_conv_real(const float *, const float *, float *);' \
  "void $entry(const float *i, const float *w, float *o) { (void)i; (void)w; (void)o; $body }" >"$wrapper"
n=$#
for a in "$@"; do
  case "$a" in -D*=ct_conv_entry) a="${a%=ct_conv_entry}=ct_conv_real" ;; esac
  set -- "$@" "$a"
done
shift $n
exec $real $rename "$@" "$wrapper"

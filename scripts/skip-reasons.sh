#!/usr/bin/env bash
# Prints each skipped test of a ctest run with its reason, read from ctest's
# full log: GoogleTest's GTEST_SKIP() message, or a script's last output line
# (exit 77). usage: scripts/skip-reasons.sh BUILD/Testing/Temporary/LastTest.log
set -uo pipefail
[ -f "$1" ] || exit 0
awk '
  /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; reason = ""; last = ""; out = 0; gskip = 0; skipped = 0; next }
  /^Output:$/ { out = 1; next }
  /^<end of output>$/ { out = 0; next }
  out && /: Skipped$/ { gskip = 1; next }
  out && gskip && /^\[  SKIPPED \]/ { gskip = 0; next }
  out && gskip { reason = reason (reason == "" ? "" : " ") $0; next }
  out && /[^ -]/ { last = $0; next }
  # the verdict lines ctest writes, not a test name that happens to say Skipped
  !out && (/^Skip (regular expression found|return code)/ || /^Test Skipped/ || /^Test not run/) { skipped = 1 }
  / end time: / { if (skipped) printf "skipped %s: %s\n", name, (reason != "" ? reason : last); skipped = 0 }
' "$1"

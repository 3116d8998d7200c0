#!/bin/bash
# Stage "check": the test boots of boots/ in turn, then one summary line
# for all of them.
#   main         the guest kernel, loop as a module: compat, params,
#                partitioned, robust (stress and races cut to about two
#                minutes each; longer in check-debug, at length in the
#                races boot)
#   builtin      loop built in, partitioned mode from the command line
#   stock        the line's stock loop.ko for every compat-mode load: the
#                compat group and the step-by-step mode comparisons
#   bench-quick  the benchmark in quick mode (scripts/bench.sh): proves
#                bench/ and the report generator work, judges no figure
# LINE=6.12: main-6.12, builtin-6.12 and stock-6.12 (the benchmark stays
# on the default line).  TESTS=... runs only those, in the main boot.
# Ends with "N passed, N failed, N skipped"; non-zero exit on any failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# Another line (LINE=6.12): its main, builtin and stock boots; the
# benchmark stays on the default line.
BOOTS=(main builtin stock bench-quick)
[ -z "$LSUF" ] || BOOTS=("main$LSUF" "builtin$LSUF" "stock$LSUF")
[ -z "${TESTS:-}" ] || BOOTS=("main$LSUF")
one_off_unset
[ -f "$BUILD/stock$LSUF/loop.ko" ] || die "no stock loop.ko of $LINE: run 'make stock-module${LSUF:+ LINE=$LINE}'"
run_boots "${BOOTS[@]}"

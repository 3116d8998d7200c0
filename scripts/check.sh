#!/bin/bash
# Stage "check": the test boots of boots/ in turn, then one summary line
# for all of them.
#   main         the guest kernel, loop as a module: compat, params,
#                partitioned, robust (stress and races cut to about two
#                minutes each; their full length runs in check-debug)
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
results_of() { read_boot "$1" && echo "$BUILD/${BOOTCONF[results]}"; }
for b in "${BOOTS[@]}"; do rm -rf "$(results_of "$b")"; done
[ -f "$BUILD/stock$LSUF/loop.ko" ] || die "no stock loop.ko of $LINE: run 'make stock-module${LSUF:+ LINE=$LINE}'"
rc=0
for b in "${BOOTS[@]}"; do
	read_boot "$b"
	if [ "${BOOTCONF[run]}" = bench ]; then
		# The disk and the report: scripts/bench.sh.
		BOOT=$b "$ROOT/scripts/bench.sh" || rc=1
	else
		# shellcheck disable=SC2086
		BOOT=$b "$ROOT/scripts/boot.sh" ${TESTS:-} || rc=1
	fi
done

p=0 f=0 s=0
for b in "${BOOTS[@]}"; do
	read -r a c d < <(read_summary "$(results_of "$b")/summary")
	p=$((p + a)) f=$((f + c)) s=$((s + d))
done
((f == 0 && rc == 0)) || { ((f == 0)) && f=1; }
[ -n "${PARTLOOP_START:-}" ] && log "total since make started: $(($(date +%s) - PARTLOOP_START))s"
echo "$p passed, $f failed, $s skipped"
((f == 0))

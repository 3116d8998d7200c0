#!/bin/bash
# Stage "check-debug": the whole test suite plus tests/robust (stress, fuzz,
# truncation, detach while mounted, the partition-state races) on the debug
# kernel (kernel/debug.config: KASAN, KFENCE, DEBUG_LIST, DEBUG_OBJECTS,
# DEBUG_KOBJECT_RELEASE, lockdep).  Every report of those checkers is a
# splat and fails the run.
# Ends with "N passed, N failed, N skipped"; non-zero exit on any failure.
#
# The boots: boots/debug.conf (compat, params, partitioned) and
# boots/debug-robust.conf (robust), each within its own timeout; LINE=6.12
# their -6.12 twins.
# env: TESTS (groups or cases, run in the debug boot alone), any setting of
#      tests/settings (RACE_CYCLES=2000, ...), BOOT_TIMEOUT
set -uo pipefail
. "$(dirname "$0")/lib.sh"

BOOTS=("debug$LSUF" "debug-robust$LSUF")
[ -z "${TESTS:-}" ] || BOOTS=("debug$LSUF")
one_off_unset
[ -f "$BUILD/kernel$LSUF-debug.release" ] || die "no debug kernel of $LINE: run 'make kernel-debug${LSUF:+ LINE=$LINE}'"
log "debug kernel $(cat "$BUILD/kernel$LSUF-debug.release")"
run_boots "${BOOTS[@]}"

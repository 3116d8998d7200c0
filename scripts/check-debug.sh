#!/bin/bash
# Stage "check-debug": the whole test suite plus tests/robust (stress, fuzz,
# truncation, detach while mounted) on the debug kernel (kernel/debug.config:
# KASAN, KFENCE, DEBUG_LIST, DEBUG_OBJECTS, DEBUG_KOBJECT_RELEASE, lockdep).
# Every report of those checkers is a splat and fails the run.
# Ends with "N passed, N failed, N skipped"; non-zero exit on any failure.
#
# The boot: boots/debug.conf (kfence.sample_interval=10, CASE_TIMEOUT 2400,
# the cases' own lengths).
# env: TESTS (groups or cases, default the boot's), any setting of
#      tests/settings (RACE_CYCLES=2000, ...), BOOT_TIMEOUT
set -euo pipefail
. "$(dirname "$0")/lib.sh"

one_off_unset
[ -f "$BUILD/kernel$LSUF-debug.release" ] || die "no debug kernel of $LINE: run 'make kernel-debug${LSUF:+ LINE=$LINE}'"
log "debug kernel $(cat "$BUILD/kernel$LSUF-debug.release")"
# shellcheck disable=SC2086
BOOT=debug$LSUF "$ROOT/scripts/boot.sh" ${TESTS:-}

#!/bin/bash
# Stage "check-debug": the whole test suite plus tests/robust (stress, fuzz,
# truncation, detach while mounted) on the debug kernel (kernel/debug.config:
# KASAN, KFENCE, DEBUG_LIST, DEBUG_OBJECTS, DEBUG_KOBJECT_RELEASE, lockdep).
# Every report of those checkers is a splat and fails the run.
# Ends with "N passed, N failed, N skipped"; non-zero exit on any failure.
#
# env: TESTS (groups or cases, default all four groups), STRESS_SECONDS,
#      RACE_CYCLES, RACE_UDEV_CYCLES,
#      FUZZ_SEED, FUZZ_TABLES, FUZZ_COMPARE (see tests/robust), CASE_TIMEOUT,
#      BOOT_TIMEOUT
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$BUILD/bzImage-debug" ] || die "no debug kernel: run 'make kernel-debug'"
# A case may take longer than the default 600 s under KASAN and TCG
# (partitioned/018: 600 s).  robust/ runs with its own defaults unless
# STRESS_SECONDS or FUZZ_* are set.
export CASE_TIMEOUT=${CASE_TIMEOUT:-2400}
log "debug kernel $(cat "$BUILD/kernel-debug.release")"
# kfence.sample_interval=10: ten times the default sampling of allocations.
# shellcheck disable=SC2086
KERNEL=$BUILD/bzImage-debug RESULTS_DIR=$BUILD/results/debug BOOT_TIMEOUT=${BOOT_TIMEOUT:-7200} \
	EXTRA_CMDLINE="kfence.sample_interval=10" \
	"$ROOT/scripts/boot.sh" ${TESTS:-compat params partitioned robust}

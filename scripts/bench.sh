#!/bin/bash
# Stage "bench": make the data disk, boot boots/bench.conf (or
# bench-quick.conf) in which the guest runs bench/run-fio.sh (fio over the
# raw partition and loop partitions, patched and stock driver, attach/scan
# timing), then write the report with bench/report.py.
#
# env: BENCH_QUICK=1   the quick boot: a few seconds per job, proves the
#                      scripts and the report generator (make check), the
#                      figures mean nothing
#      BENCH_RUNTIME, BENCH_RAMP, BENCH_REPS, BENCH_ENGINES, BENCH_JOBS,
#      BENCH_CYCLE_SECONDS: override the boot's settings (tests/settings)
#      BENCH_DIR       results and report (default: the boot's results,
#                      build/bench or build/results/bench-quick)
# Ends with "N passed, N failed" (the benchmark ran and the report was
# written, or not); never judges a figure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# BENCH_QUICK picks the boot; the boot says the rest (its settings, the
# disk's sizes).
boot=bench
[ "${BENCH_QUICK:-0}" = 0 ] || boot=bench-quick
unset BENCH_QUICK
read_boot "$boot"
read -r P1_MIB P5_MIB <<<"${BOOTCONF[bench_mib]}"
[[ ${P1_MIB:-} =~ ^[0-9]+$ && ${P5_MIB:-} =~ ^[0-9]+$ ]] || die "boots/$boot.conf: bench_mib must be two sizes in MiB"
OUT=${BENCH_DIR:-$BUILD/${BOOTCONF[results]}}
[ -f "$BUILD/stock/loop.ko" ] || die "no stock loop.ko: run 'make stock-module'"
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! command -v gnuplot >/dev/null; then
	die "python3 or gnuplot missing: run 'make deps'"
fi

# The data disk: GPT, p1 for the ext4 that holds disk.img, p2..p4 of 1 MiB
# (so that the measured region is partition 5, as on a disk with a few
# partitions), p5 the measured region.
mkdir -p "$BUILD/disks" "$OUT"
DISK=$BUILD/disks/bench.img
rm -f "$DISK"
truncate -s $(((1 + P1_MIB + 3 + P5_MIB + 1) * 1024 * 1024)) "$DISK"
{
	echo "label: gpt"
	echo "start=2048, size=$((P1_MIB * 2048)), type=linux, name=benchfs"
	for p in 2 3 4; do echo "size=2048, type=linux, name=spacer$p"; done
	echo "size=$((P5_MIB * 2048)), type=linux, name=measured"
} | sfdisk -q "$DISK" >/dev/null || die "sfdisk could not partition $DISK"

rc=0
BOOT=$boot RESULTS_DIR=$OUT "$ROOT/scripts/boot.sh" || rc=1
rm -f "$DISK"

stage report
{
	echo "host cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
	echo "host kernel: $(uname -r)"
	echo "qemu: $(qemu-system-x86_64 --version | head -1), accel=tcg (no KVM)"
	echo "bench disk: raw sparse file on the host's $(stat -f -c %T "$BUILD") file system, virtio-blk, cache=none, aio=threads"
} >"$OUT/host.txt"
if ((rc == 0)); then
	if "$PY" "$ROOT/bench/report.py" "$OUT"; then
		log "report: ${OUT#"$ROOT"/}/report.md"
	else
		echo "FAILED: bench/report.py could not write the report from ${OUT#"$ROOT"/}" >&2
		rc=1
	fi
fi
stage_end "$rc"
if ((rc)); then
	echo "0 passed, 1 failed, 0 skipped" | tee "$OUT/summary"
	exit 1
fi
echo "1 passed, 0 failed, 0 skipped" | tee "$OUT/summary"

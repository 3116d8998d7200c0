#!/bin/bash
# Stage "bench": make the data disk, boot boots/bench.conf (or
# bench-quick.conf) in which the guest runs bench/run (bench/run-fio.sh:
# fio over the raw partition and loop partitions, patched and stock
# driver; bench/run-attach.sh: attach/scan timing), then the boot it names
# as its cost boot (bench-cost.conf, bench-quick-cost.conf: one vCPU
# under -icount, bench/run-cost.sh: CPU time per I/O), then write the
# report with scripts/bench-report.py.
#
# env: BENCH_QUICK=1   the quick boot: a few seconds per job, proves the
#                      scripts and the report generator (make check), the
#                      figures mean nothing
#      BENCH_RUNTIME, BENCH_RAMP, BENCH_REPS, BENCH_ENGINES, BENCH_JOBS,
#      BENCH_CYCLE_SECONDS, BENCH_COST_*: override the boots' settings
#                      (tests/settings)
#      BENCH_DIR       results and report (default: the boot's results,
#                      build/bench or build/results/bench-quick)
# Ends with "N passed, N failed, N skipped": the parts of bench/run in the
# guest, then the report; never judges a figure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/lib/shared.sh
. "$ROOT/tests/lib/shared.sh"

# The boot: BOOT when a list of boots names it (check.sh), else
# BENCH_QUICK picks it (make bench); the boot says the rest (its settings,
# the disk's sizes).
[ -z "$LSUF" ] || die "make bench runs on the default line, ${LINES[0]} (LINE=$LINE given)"
boot=${BOOT:-bench}
[ -n "${BOOT:-}" ] || [ "${BENCH_QUICK:-0}" = 0 ] || boot=bench-quick
unset BENCH_QUICK BOOT
read_boot "$boot"
cost=${BOOTCONF[cost]}
[ -n "$cost" ] || die "boots/$boot.conf names no cost boot (cost = ...): the report needs the cost measure"
read -r P1_MIB P5_MIB <<<"${BOOTCONF[bench_mib]}"
[[ ${P1_MIB:-} =~ ^[0-9]+$ && ${P5_MIB:-} =~ ^[0-9]+$ ]] || die "boots/$boot.conf: bench_mib must be two sizes in MiB"
OUT=${BENCH_DIR:-$BUILD/${BOOTCONF[results]}}
# The stock loop.ko the guest takes for each boot's kernel (bzImage-X:
# build/stock-X, bench/lib.sh), unless STOCK_KO names another.
for b in "$boot" "$cost"; do
	read_boot "$b"
	k=${BOOTCONF[kernel]#bzImage}
	[ -n "${STOCK_KO:-}" ] || [ -f "$BUILD/stock$k/loop.ko" ] || die "no build/stock$k/loop.ko for boot $b: run 'make stock-module$k'"
done
read_boot "$boot"
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! command -v gnuplot >/dev/null; then
	die "python3 or gnuplot missing: run 'make deps'"
fi

# The data disk: the bench layout (tests/lib/shared.sh), partition 5
# measured.
mkdir -p "$BUILD/disks" "$OUT"
DISK=$BUILD/disks/bench.img
rm -f "$DISK"
truncate -s $(((1 + P1_MIB + 3 + P5_MIB + 1) * 1024 * 1024)) "$DISK"
bench_layout "$P1_MIB" "$P5_MIB" | sfdisk -q "$DISK" >/dev/null || die "sfdisk could not partition $DISK"

# The boot's cost measure (its "cost" boot, one vCPU under -icount, on a
# null_blk disk of the guest's own) follows, its results in OUT/cost.
rc=0
BOOT=$boot RESULTS_DIR=$OUT "$ROOT/scripts/boot.sh" || rc=1
crc=0
if ((rc == 0)); then
	BOOT=$cost RESULTS_DIR=$OUT/cost "$ROOT/scripts/boot.sh" || crc=1
fi
rm -f "$DISK"

stage report
{
	echo "host cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
	echo "host kernel: $(uname -r)"
	echo "qemu: $(qemu-system-x86_64 --version | head -1), accel=tcg (no KVM)"
	echo "bench disk: raw sparse file on the host's $(stat -f -c %T "$BUILD") file system, virtio-blk, cache=none, aio=threads"
} >"$OUT/host.txt"
# The totals: the two boots' (bench/run's parts and the host's checks),
# the cost boot as one skipped case when the first failed, and the report
# as one more case, skipped when a boot failed.
read -r p f s < <(read_summary "$OUT/summary")
((rc == 0 || f > 0)) || f=1
if ((rc == 0)); then
	read -r cp cf cs < <(read_summary "$OUT/cost/summary")
	((crc == 0 || cf > 0)) || cf=1
	p=$((p + cp)) f=$((f + cf)) s=$((s + cs)) rc=$crc
else
	log "no cost boot: the first boot failed"
	s=$((s + 1))
fi
if ((rc == 0)); then
	if "$PY" "$ROOT/scripts/bench-report.py" "$OUT"; then
		log "report: ${OUT#"$ROOT"/}/report.md"
		p=$((p + 1))
	else
		echo "FAILED: scripts/bench-report.py could not write the report from ${OUT#"$ROOT"/}" >&2
		f=$((f + 1)) rc=1
	fi
else
	log "no report: the boot failed"
	s=$((s + 1))
fi
stage_end "$rc"
echo "$p passed, $f failed, $s skipped" | tee "$OUT/summary"
((rc == 0))

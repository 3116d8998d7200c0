#!/bin/bash
# bench/run-cost.sh: the guest CPU time each I/O costs, raw and through
# loop devices, inside the cost boot (boots/bench-cost.conf: one vCPU,
# QEMU -icount shift=0,sleep=on), run by bench/run.
#
# usage: run-cost.sh OUTDIR
# settings (tests/settings): BENCH_COST_IOS (I/Os in a window of a 4 KiB
#        job; 1 MiB jobs do a quarter; whole batches of the job's queue
#        depth in either case), BENCH_COST_WINDOWS, BENCH_COST_MIB,
#        BENCH_COST_REPS, BENCH_COST_JOBS, BENCH_COST_VARIANTS, STOCK_KO,
#        BENCH_QUICK; TOOLS (the helpers, set by tests/boot-entry)
#
# The measure.  Under -icount shift=0 the guest's clock advances exactly
# 1 ns per instruction the vCPU executes; with sleep=on it follows the
# host's clock only while the vCPU is halted.  The kernel (NO_HZ_IDLE)
# accounts the halted time in tick_sched's idle_sleeptime and
# iowait_sleeptime to the nanosecond, so
#     busy = delta "now" - delta idle_sleeptime - delta iowait_sleeptime
# read from /proc/timer_list is the number of instructions the guest ran:
# no sampling, and no dependence on the host's load or the disk's latency.
# build/tools/iocost (tools/iocost.c) does the I/O of a job of bench/jobs
# (its rw, bs and iodepth; O_DIRECT, io_submit/io_getevents as fio's
# libaio engine) in batches of the queue depth, waiting for each batch,
# and reads the busy time itself around each of BENCH_COST_WINDOWS windows
# of N I/Os after 2N (64 at least) to warm up.  The guest's disk
# completes each request as it is issued, and iocost runs as SCHED_IDLE,
# so that a worker that io_submit woke runs as soon as the submitter
# leaves the kernel and the submitter again when the worker is done: on
# one vCPU a batch then takes the same path every time, and nothing in a
# window waits for the host.  A tick (HZ=250: every 4 million
# instructions) costs as much as a few I/Os and falls into some windows
# and not others, so the windows are many (41) and short (24 I/Os of
# 4 KiB, a batch at queue depth 32), and the figure is the lower quartile
# of the cost per I/O of the windows without a tick (iocost reads the
# jiffies too); a window of 1 MiB I/Os always holds a few ticks, as many
# as its length gives, and there it is the lower quartile of all windows.
# What was tried first, and why it is not so (stock-dio against itself,
# 5 repetitions, spread of the whole cost per I/O): fio around a whole
# run (its start-up, some 600 million instructions, varied by more than
# the I/O measured); a virtio disk, without and then with a sleep after
# each batch (completions came from QEMU's threads: 0.7-18.9 %); null_blk
# with the sleep (the sleep, its timer and the idle loop were some 90
# thousand of the 125 thousand instructions of a 4 KiB read at queue
# depth 1, and the noisiest part: up to 1.55 %); no sleep, iocost of the
# default policy (whether the loop worker preempted the submitter at once
# followed the tasks' virtual run times: 9.3 % at queue depth 32); as
# SCHED_IDLE with 11 and then 41 windows of 40 I/Os, the median of all
# (it fell on windows with a tick in some repetitions and not in others:
# up to 8 %, and with 41 the loop layer's cost still moved by up to a
# fifth, as the raw partition's did); the difference of two windows of N
# and 2N (one window that a daemon's work fell into spoilt it, the median
# of many does not).  Everything the guest runs in a window counts: the
# system calls, the block layer, loop and its worker, the disk's driver,
# interrupts.
# The disk is no virtio disk but a memory-backed null_blk device that
# completes each request as it is issued (irqmode=0), takes requests as
# large as a virtio disk does (max_sectors=2560), partitioned as
# scripts/bench.sh partitions the bench disk (BENCH_COST_MIB): a virtio
# disk's completions come from QEMU's threads, and how many interrupts a
# batch of 32 took depended on the host's timing.  And iocost's buffers
# lie in huge pages: in pages of 4 KiB, the physical layout of a 1 MiB
# buffer, and with it its bio's segments, differed from run to run.
#
# Writes OUTDIR/cost.csv:
#     VARIANT,JOB,REP,IOS,WINDOWS,Q1_NS,MIN_NS,MAX_NS,WAITED,BATCHES,CLEAN
# and OUTDIR/cost-meta.txt, OUTDIR/cost-devices.txt.
# Order: for each repetition, every variant in turn, each with every job.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "${1:?usage: run-cost.sh OUTDIR}")
# shellcheck source=tests/settings
. "$HERE/../tests/settings"
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
IOS=$BENCH_COST_IOS WINDOWS=$BENCH_COST_WINDOWS REPS=$BENCH_COST_REPS JOBS=$BENCH_COST_JOBS
IOCOST=${TOOLS:-$HERE/../build/tools}/iocost
[ -x "$IOCOST" ] || die "no $IOCOST: run 'make tools' on the host"
read -r -a VARIANTS <<<"$BENCH_COST_VARIANTS"
{ [[ $IOS =~ ^[0-9]+$ ]] && ((IOS >= 4)); } || die "BENCH_COST_IOS=$IOS: give at least 4 I/Os"
{ [[ $WINDOWS =~ ^[0-9]+$ ]] && ((WINDOWS >= 1)); } || die "BENCH_COST_WINDOWS=$WINDOWS: give at least 1"

# The measure holds on one CPU only: with two, one CPU's busy time is not
# the work done, and the idle time of the other is not read.
(($(nproc) == 1)) || die "the cost measure needs one vCPU, the guest has $(nproc): boot boots/bench-cost.conf"
grep -q '\.idle_sleeptime' /proc/timer_list \
	|| die "/proc/timer_list has no idle_sleeptime: the guest kernel lacks CONFIG_NO_HZ_IDLE (kernel/guest.config)"

# job_args JOB: iocost's "read|write rand|seq BLOCK_SIZE QUEUE_DEPTH" from
# bench/jobs/JOB.fio's rw, bs and iodepth.
job_args() {
	[ -f "$HERE/jobs/$1.fio" ] || die "no job file bench/jobs/$1.fio"
	awk -F= '/^rw=/ { rw = $2 } /^bs=/ { bs = $2 } /^iodepth=/ { qd = $2 }
	END {
		dir = rw ~ /write/ ? "write" : "read"; pat = rw ~ /^rand/ ? "rand" : "seq"
		n = bs + 0; u = tolower(substr(bs, length(bs)))
		if (u == "k") n *= 1024; else if (u == "m") n *= 1048576
		if (rw == "" || n <= 0 || qd == "") exit 1
		print dir, pat, n, qd
	}' "$HERE/jobs/$1.fio" || die "bench/jobs/$1.fio lacks rw=, bs= or iodepth="
}

# window_ios BLOCK_SIZE QUEUE_DEPTH N: the I/Os of a window: N for a job of
# 4 KiB I/Os, N/4 for one of 1 MiB, rounded up to whole batches.
window_ios() {
	local n=$3
	(($1 < 1048576)) || n=$((n / 4))
	echo $(((n + $2 - 1) / $2 * $2))
}

# run_job DEV JOB N DIR PATTERN BLOCK_SIZE QUEUE_DEPTH: "Q1_NS MIN_NS
# MAX_NS WAITED CLEAN" of iocost doing JOB (its job_args) on DEV in windows of N
# I/Os (window_ios).
run_job() {
	local out
	out=$("$IOCOST" "$1" "${@:4}" "$3" "$WINDOWS" 2>&1) \
		|| die "iocost $2 on $1 failed: $out"
	[[ $out =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]] || die "iocost $2 on $1 printed '$out', expected five numbers"
	echo "$out"
}

# Each job's iocost arguments, read once.
declare -A JOB_ARGS
for job in $JOBS; do
	JOB_ARGS[$job]=$(job_args "$job") || exit 1
done

# make_nullb P1_MIB P5_MIB: a null_blk disk, memory-backed, that completes
# requests as they are issued, partitioned as the bench disk (bench_layout
# in tests/lib/shared.sh).  Prints its node.
make_nullb() {
	local dev=/dev/nullb0
	[ ! -e /sys/module/null_blk ] || modprobe -r null_blk || die "null_blk is loaded and cannot be unloaded"
	modprobe null_blk nr_devices=1 queue_mode=2 irqmode=0 memory_backed=1 gb=1 bs=512 submit_queues=1 max_sectors=2560 \
		|| die "modprobe null_blk failed (CONFIG_BLK_DEV_NULL_BLK=m in kernel/guest.config?)"
	settle
	[ -b "$dev" ] || die "null_blk made no $dev"
	bench_layout "$1" "$2" | sfdisk -q "$dev" >/dev/null || die "sfdisk could not partition $dev"
	settle
	echo "$dev"
}

read -r p1_mib p5_mib <<<"$BENCH_COST_MIB"
{ [[ ${p1_mib:-} =~ ^[0-9]+$ && ${p5_mib:-} =~ ^[0-9]+$ ]] && ((p1_mib >= p5_mib + p5_mib / 8 + 24 && p1_mib + p5_mib < 1000)); } \
	|| die "BENCH_COST_MIB='$BENCH_COST_MIB': give p1 and p5 in MiB, p1 at least p5 + p5/8 + 24 (the ext4 holding disk.img: its inode tables and journal, mke2fs's 'small' type below 512 MiB) and both below 1000 in all"
# A sequential job must not wrap at the end of partition 5: a buffered
# variant would then read what it read before from the page cache, and
# the windows after the wrap would cost a copy only (iocost warms up with
# 2 N I/Os, 64 at least, then does WINDOWS windows of N).
for job in $JOBS; do
	read -r -a args <<<"${JOB_ARGS[$job]}"
	[ "${args[1]}" = seq ] || continue
	n=$(window_ios "${args[2]}" "${args[3]}" "$IOS")
	need=$((((2 * n > 64 ? 2 * n : 64) + WINDOWS * n) * args[2]))
	((need <= p5_mib * 1048576)) || die "$job reads $(((need + 1048575) / 1048576)) MiB one after the other, p5 has $p5_mib (BENCH_COST_MIB='$BENCH_COST_MIB'): give p5 that much"
done
# iocost's buffers, a block per I/O of a batch, in huge pages: as many as
# the largest batch fills (8 MiB for 1 MiB at queue depth 8).
[ "$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo 2>/dev/null)" = 2048 ] \
	|| die "no huge pages of 2 MiB in /proc/meminfo (CONFIG_HUGETLBFS in kernel/guest.config?)"
huge=1
for job in $JOBS; do
	read -r -a args <<<"${JOB_ARGS[$job]}"
	h=$(((args[2] * args[3] + 2097151) / 2097152))
	((h <= huge)) || huge=$h
done
echo "$huge" >/proc/sys/vm/nr_hugepages
[ "$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)" -ge "$huge" ] \
	|| die "$huge huge pages wanted for iocost's buffers, $(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo) free after setting vm.nr_hugepages"
nullb=$(make_nullb "$p1_mib" "$p5_mib")
prepare_disk "$nullb"
{
	guest_meta
	echo "ios: $IOS"
	echo "windows: $WINDOWS"
	echo "reps: $REPS"
	echo "quick: $BENCH_QUICK"
	echo "jobs: $JOBS"
	echo "variants: ${VARIANTS[*]}"
	echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
} >"$OUT/cost-meta.txt"
say "cost per I/O: ${#VARIANTS[@]} variants x $(wc -w <<<"$JOBS") jobs x $REPS repetition(s), $WINDOWS windows of N=$IOS I/Os (1 MiB jobs: N/4; whole batches)"

CSV=$OUT/cost.csv
: >"$CSV"
: >"$OUT/cost-devices.txt"
total=$((REPS * $(wc -w <<<"$JOBS") * ${#VARIANTS[@]}))
k=0
# Each variant is set up once per repetition and measured with every job.
for rep in $(seq "$REPS"); do
	for v in "${VARIANTS[@]}"; do
		setup "$v"
		((rep > 1)) || echo "$v $(describe "$NODE") module=${MODULE:-none}" >>"$OUT/cost-devices.txt"
		# Once per set-up: a busy guest runs at some 50 million
		# instructions a second here, and these take seconds.  Nothing
		# of udev's (probing the partitions just made) in the windows.
		drop_caches
		settle
		for job in $JOBS; do
			read -r -a args <<<"${JOB_ARGS[$job]}"
			n=$(window_ios "${args[2]}" "${args[3]}" "$IOS")
			# Buffered: what the previous job read or wrote must not
			# be found in the page cache (iocost's offsets repeat).
			[ "$v" != part-buf ] || drop_caches
			k=$((k + 1))
			t0=$(date +%s)
			line=$(run_job "$NODE" "$job" "$n" "${args[@]}") || exit 1
			read -r med lo hi waited clean <<<"$line"
			batches=$((n * WINDOWS / args[3]))
			echo "$v,$job,$rep,$n,$WINDOWS,$med,$lo,$hi,$waited,$batches,$clean" >>"$CSV"
			say "cost $k/$total: rep $rep $job on $v: $med ns per I/O [$lo-$hi], $clean of $WINDOWS windows without a tick, waited for $waited of $batches batches ($(($(date +%s) - t0))s)"
		done
	done
done
detach_all
say "cost done"

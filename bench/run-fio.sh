#!/bin/bash
# bench/run-fio.sh: fio over one disk region, raw and through loop devices,
# inside the guest that scripts/bench.sh boots (run by bench/run).  Writes fio's JSON and the
# setup it measured under OUTDIR for scripts/bench-report.py.
#
# usage: run-fio.sh OUTDIR
# settings (tests/settings; boots/bench.conf and bench-quick.conf set
#        them): BENCH_RUNTIME, BENCH_RAMP (seconds per fio job),
#        BENCH_REPS, BENCH_ENGINES, BENCH_JOBS (names from bench/jobs,
#        empty: all), STOCK_KO, BENCH_QUICK=1 (the quick boot: recorded
#        so that the report says the figures mean nothing)
#
# The disk with serial "bench" carries a GPT: p1 ext4 (made here) holding
# disk.img, p5 the measured region.  Variants, all on a region of the same
# size, partition 5 of the device each time:
#   raw        /dev/vdX5, the disk's own partition
#   part-dio   patched driver, partitioned mode (max_part=8, major 240),
#              loop over the whole disk, --direct-io=on, blockdev --rereadpt
#   part-buf   the same with buffered I/O to the disk (--direct-io=off)
#   compat-dio patched driver, compat mode (no max_part), losetup -P
#   stock-dio  the stock 6.1 driver, losetup -P (partition on extended dev_t)
#   file-dio   patched partitioned mode over disk.img, a file on ext4 on p1
#              with its own GPT (the everyday "losetup -P disk.img")
# Order: for each repetition, for each workload, every variant in turn with
# both engines, so that drift of a noisy machine hits all variants alike.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "${1:?usage: run-fio.sh OUTDIR}")	# absolute: fio runs in bench/jobs
# shellcheck source=tests/settings
. "$HERE/../tests/settings"
QUICK=$BENCH_QUICK
[ "$QUICK" = 0 ] && QUICK=
RUNTIME=$BENCH_RUNTIME RAMP=$BENCH_RAMP REPS=$BENCH_REPS ENGINES=$BENCH_ENGINES
JOBS=${BENCH_JOBS:-$(find "$HERE/jobs" -name '*.fio' -printf '%f\n' | sed 's/\.fio$//' | sort | xargs)}
VARIANTS=(raw part-dio part-buf compat-dio stock-dio file-dio)
FS=/mnt/benchfs

# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

[ -e /dev/disk/by-id/virtio-bench ] || die "no disk with serial 'bench' (boot with scripts/bench.sh)"
DISK=$(readlink -f /dev/disk/by-id/virtio-bench)
for j in $JOBS; do
	[ -f "$HERE/jobs/$j.fio" ] || die "no job file bench/jobs/$j.fio"
done
mkdir -p "$OUT/fio"

# setup VARIANT: NODE becomes the block device of partition 5 through VARIANT.
setup() {
	local dev
	case $1 in
	raw)
		NODE=${DISK}5
		return ;;
	part-dio | part-buf | file-dio)
		use_module patched max_part=8
		detach_all
		local back=$DISK dio=on
		[ "$1" = file-dio ] && back=$FS/disk.img
		[ "$1" = part-buf ] && dio=off
		dev=$(attach --direct-io=$dio "$back")
		blockdev --rereadpt "$dev" || die "blockdev --rereadpt $dev failed"
		;;
	compat-dio | stock-dio)
		if [ "$1" = stock-dio ]; then use_module stock; else use_module patched; fi
		detach_all
		dev=$(attach --direct-io=on -P "$DISK")
		;;
	esac
	settle
	wait_node "${dev}p5"
	NODE=${dev}p5
}

# describe NODE: how it looks to a user, for the report.
describe() {
	local name=${1#/dev/} dio=- sub=-
	local base=${name%p5}
	[ -e "/sys/block/$base/loop/dio" ] && dio=$(cat "/sys/block/$base/loop/dio")
	# Absent from the stock driver: "-".
	[ -e "/sys/block/$base/loop/direct_submit" ] && sub=$(cat "/sys/block/$base/loop/direct_submit")
	printf '%s %s size=%s dio=%s direct_submit=%s\n' "$1" "$(cat "/sys/class/block/$name/dev")" \
		"$(blockdev --getsize64 "$1")" "$dio" "$sub"
}

# --- preparation -------------------------------------------------------------

say "disk $DISK ($(blockdev --getsize64 "$DISK") bytes); jobs: $JOBS; engines: $ENGINES; variants: ${VARIANTS[*]}"
say "runtime ${RUNTIME}s + ramp ${RAMP}s per job, $REPS repetition(s)${QUICK:+ (quick mode: figures mean nothing)}"
if [ ! -b "${DISK}5" ] || [ ! -b "${DISK}1" ]; then
	die "$DISK lacks partitions 1 and 5 (made by scripts/bench.sh)"
fi

# The measured region is written once so that no variant reads holes of the
# host's sparse file while another reads data.
say "filling ${DISK}5 and making the ext4 file system on ${DISK}1"
dd if=/dev/zero of="${DISK}5" bs=1M count=$(($(blockdev --getsize64 "${DISK}5") / 1048576)) oflag=direct status=none \
	|| die "filling ${DISK}5 failed"
mkfs.ext4 -q -F -L benchfs "${DISK}1" || die "mkfs.ext4 ${DISK}1 failed"
mkdir -p "$FS"
mount "${DISK}1" "$FS"
trap 'losetup -D; umount "$FS" 2>/dev/null || true' EXIT
# disk.img: the same partition layout as the disk (p5 of the same size), its
# blocks written so that ext4 has no unwritten extents to short-cut reads.
p5_sectors=$(($(blockdev --getsize64 "${DISK}5") / 512))
img_mib=$(((2048 + 4 * 2048 + p5_sectors + 2048) / 2048 + 1))
dd if=/dev/zero of="$FS/disk.img" bs=1M count="$img_mib" conv=fsync status=none || die "writing $FS/disk.img failed"
{
	echo "label: gpt"
	for p in 1 2 3 4; do echo "start=$((2048 * p)), size=2048, type=linux"; done
	echo "start=$((2048 * 5)), size=$p5_sectors, type=linux"
} | sfdisk -q --no-reread --no-tell-kernel "$FS/disk.img" >/dev/null || die "sfdisk on disk.img failed"
sync

{
	echo "kernel: $(uname -r) ($(uname -v))"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "guest cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPU"
	echo "guest memory: $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
	echo "disk: $DISK, virtio-blk, I/O scheduler $(sed -E 's/.*\[(.*)\].*/\1/' "/sys/block/${DISK#/dev/}/queue/scheduler")"
	echo "fio: $(fio --version)"
	echo "util-linux: $(losetup --version)"
	echo "patched loop.ko: $(modinfo -n loop) sha256 $(sha256sum "$(modinfo -n loop)" | cut -c1-16)"
	echo "stock loop.ko: $STOCK_KO sha256 $(sha256sum "$STOCK_KO" | cut -c1-16)"
	echo "runtime: $RUNTIME"
	echo "ramp: $RAMP"
	echo "reps: $REPS"
	echo "quick: ${QUICK:-0}"
	echo "jobs: $JOBS"
	echo "engines: $ENGINES"
	echo "variants: ${VARIANTS[*]}"
} >"$OUT/meta.txt"

# --- fio -------------------------------------------------------------------

n_jobs=$(wc -w <<<"$JOBS")
n_eng=$(wc -w <<<"$ENGINES")
total=$((REPS * n_jobs * ${#VARIANTS[@]} * n_eng))
n=0
: >"$OUT/devices.txt"
for rep in $(seq "$REPS"); do
	for job in $JOBS; do
		for v in "${VARIANTS[@]}"; do
			setup "$v"
			dev=$NODE
			if ((rep == 1)) && [ "$job" = "${JOBS%% *}" ]; then
				echo "$v $(describe "$dev") module=${MODULE:-none}" >>"$OUT/devices.txt"
			fi
			for eng in $ENGINES; do
				n=$((n + 1))
				sync
				echo 3 >/proc/sys/vm/drop_caches
				t0=$(date +%s)
				json=$OUT/fio/$v.$job.$eng.$rep.json
				# From bench/jobs, where fio finds global.inc.
				(cd "$HERE/jobs" && DEV=$dev ENGINE=$eng RUNTIME=$RUNTIME RAMP=$RAMP \
					fio --output-format=json --output="$json" "$job.fio") \
					|| die "fio $job ($eng) on $dev ($v) failed: $(tail -n 5 "$json" 2>/dev/null)"
				say "fio $n/$total: rep $rep $job $eng on $v ($dev) $(($(date +%s) - t0))s"
			done
		done
	done
done
detach_all
say "fio done"

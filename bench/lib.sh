# shellcheck shell=bash
# Helpers of the guest-side benchmark scripts (bench/run-*.sh).  Sourced.

# shellcheck source=tests/lib/shared.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/shared.sh"

START=${START:-$(date +%s)}
export START

say() { printf 'bench: [%4ss] %s\n' "$(($(date +%s) - START))" "$*"; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }
settle() { udevadm settle --timeout=60; }

# The stock driver: STOCK_KO if given, else the build/stock*/loop.ko on the
# share built for the running kernel (as tests/boot-entry finds its
# modules: by release).
if [ -z "$STOCK_KO" ]; then
	for _ko in /mnt/project/build/stock*/loop.ko; do
		[ "$(modinfo -F vermagic "$_ko" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] && STOCK_KO=$_ko && break
	done
	[ -n "$STOCK_KO" ] || die "no stock loop.ko for $(uname -r) in /mnt/project/build/stock*/: run 'make stock-module' (make bench: 'make stock-module-bench') on the host"
fi
[ -f "$STOCK_KO" ] || die "stock loop.ko not found at $STOCK_KO"

MODULE=	# what is loaded: "patched:PARAMS" or "stock:"

detach_all() {
	settle
	losetup -D
	settle
	[ -z "$(losetup -n -O NAME)" ] || die "loop devices still attached: $(losetup -n -O NAME | xargs)"
}

# use_module patched [PARAM...] | stock: (re)load the loop driver unless it
# is already loaded that way (loop_reload in tests/lib/shared.sh).
use_module() {
	local want="$1:${*:2}" err
	[ "$want" = "$MODULE" ] && return 0
	[ -d /sys/module/loop ] && detach_all
	if [ "$1" = stock ]; then
		err=$(loop_reload "$STOCK_KO" 2>&1) || die "$err"
	else
		err=$(loop_reload - "${@:2}" 2>&1) || die "$err"
	fi
	[ -z "$err" ] || echo "$err" >&2
	MODULE=$want
}

# attach [LOSETUP-OPTION...] FILE: prints the new loop device (as attach in
# tests/lib/common.sh).
attach() {
	local dev
	dev=$(losetup -f --show "$@") || die "losetup -f $* failed"
	settle
	echo "$dev"
}

# wait_node NODE: partition nodes appear once udev has run.
wait_node() {
	local tries=50
	while ((tries--)); do
		[ -b "$1" ] && return 0
		sleep 0.1
	done
	die "$1 did not appear"
}

# --- the measured disk and the variants (run-fio.sh, run-cost.sh) --------
#
# The disk with serial "bench" carries a GPT: p1 ext4 (made by
# prepare_disk) holding disk.img, p5 the measured region.  Every variant is
# a region of the same size, partition 5 of a device:
#   raw             /dev/vdX5, the disk's own partition
#   part-dio        patched driver, partitioned mode (max_part=8, major
#                   240), loop over the whole disk, --direct-io=on,
#                   blockdev --rereadpt
#   part-buf        the same with buffered I/O to the disk (--direct-io=off)
#   compat-dio      patched driver, compat mode (no max_part), losetup -P
#   stock-dio       the stock 6.1 driver, losetup -P (partition on
#                   extended dev_t)
#   stock-dio-again the same as stock-dio, measured again in the same
#                   rotation: the pair is the same code twice (noise floor)
#   file-dio        patched partitioned mode over disk.img, a file on ext4
#                   on p1 with its own GPT (the everyday "losetup -P
#                   disk.img")
#   compat-file-dio patched compat mode over disk.img, losetup -P
#   stock-file-dio  the stock driver over disk.img, losetup -P
FS=/mnt/benchfs
DISK=
NODE=	# partition 5 of the variant set up last (setup)

# part DISK N: the node of partition N of DISK (vda5, nullb0p5).
part() {
	if [[ $1 == *[0-9] ]]; then echo "${1}p$2"; else echo "$1$2"; fi
}

# prepare_disk [DISK]: DISK (default: the virtio disk with serial "bench",
# partitioned by scripts/bench.sh) becomes the bench disk; partition 5 is
# written once (so that no variant reads holes of the host's sparse file
# while another reads data), p1 gets an ext4 mounted on FS with disk.img
# on it: the disk's layout with a p5 of the same size, its blocks written
# so that ext4 has no unwritten extents to short-cut reads.
# shellcheck disable=SC2120  # the disk is optional
prepare_disk() {
	if (($#)); then
		DISK=$1
	else
		[ -e /dev/disk/by-id/virtio-bench ] || die "no disk with serial 'bench' (boot with scripts/bench.sh)"
		DISK=$(readlink -f /dev/disk/by-id/virtio-bench)
	fi
	local p1 p5
	p1=$(part "$DISK" 1) p5=$(part "$DISK" 5)
	if [ ! -b "$p5" ] || [ ! -b "$p1" ]; then
		die "$DISK lacks partitions 1 and 5 (made by scripts/bench.sh, or run-cost.sh's make_nullb)"
	fi
	say "filling $p5 and making the ext4 file system on $p1"
	dd if=/dev/zero of="$p5" bs=1M count=$(($(blockdev --getsize64 "$p5") / 1048576)) oflag=direct status=none \
		|| die "filling $p5 failed"
	# Inode tables and journal written now: ext4lazyinit writing them in
	# the background would run into the measurements.
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -L benchfs "$p1" || die "mkfs.ext4 $p1 failed"
	mkdir -p "$FS"
	mount "$p1" "$FS"
	trap 'losetup -D; umount "$FS" 2>/dev/null || true' EXIT
	local p5_sectors img_mib
	p5_sectors=$(($(blockdev --getsize64 "$p5") / 512))
	img_mib=$(((2048 + 4 * 2048 + p5_sectors + 2048) / 2048 + 1))
	dd if=/dev/zero of="$FS/disk.img" bs=1M count="$img_mib" conv=fsync status=none || die "writing $FS/disk.img failed"
	{
		echo "label: gpt"
		for p in 1 2 3 4; do echo "start=$((2048 * p)), size=2048, type=linux"; done
		echo "start=$((2048 * 5)), size=$p5_sectors, type=linux"
	} | sfdisk -q --no-reread --no-tell-kernel "$FS/disk.img" >/dev/null || die "sfdisk on disk.img failed"
	sync
}

# setup VARIANT: NODE becomes the block device of partition 5 through
# VARIANT (prepare_disk first).
setup() {
	local dev back=$DISK
	[[ $1 == *file* ]] && back=$FS/disk.img
	case $1 in
	raw)
		NODE=$(part "$DISK" 5)
		return ;;
	part-dio | part-buf | file-dio)
		use_module patched max_part=8
		detach_all
		local dio=on
		[ "$1" = part-buf ] && dio=off
		dev=$(attach --direct-io=$dio "$back")
		blockdev --rereadpt "$dev" || die "blockdev --rereadpt $dev failed"
		;;
	compat-dio | compat-file-dio | stock-dio | stock-dio-again | stock-file-dio)
		if [[ $1 == stock-* ]]; then use_module stock; else use_module patched; fi
		detach_all
		dev=$(attach --direct-io=on -P "$back")
		;;
	*) die "no variant '$1'" ;;
	esac
	settle
	wait_node "${dev}p5"
	# shellcheck disable=SC2034  # read by the scripts that source this file
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

# drop_caches: write back and drop the page cache, so that no run finds
# what the one before it read or wrote.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# disk_driver DISK: what drives it, as a user would name it.
disk_driver() {
	case ${1#/dev/} in
	vd*) echo virtio-blk ;;
	nullb*) echo "null_blk ($(for p in queue_mode irqmode memory_backed max_sectors; do
		printf '%s=%s ' "$p" "$(cat "/sys/module/null_blk/parameters/$p")"; done | sed 's/ $//'))" ;;
	*) echo "?" ;;
	esac
}

# guest_meta: the guest's side of the setup, "key: value" lines.
guest_meta() {
	echo "kernel: $(uname -r) ($(uname -v))"
	# /proc/lockdep exists when the kernel has lockdep (PROVE_LOCKING).
	echo "lockdep: $([ -e /proc/lockdep ] && echo on || echo off)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "guest cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPU"
	echo "guest memory: $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
	echo "disk: $DISK, $(disk_driver "$DISK"), I/O scheduler $(sed -E 's/.*\[(.*)\].*/\1/' "/sys/block/${DISK#/dev/}/queue/scheduler")"
	echo "fio: $(fio --version)"
	echo "util-linux: $(losetup --version)"
	echo "patched loop.ko: $(modinfo -n loop) sha256 $(sha256sum "$(modinfo -n loop)" | cut -c1-16)"
	echo "stock loop.ko: $STOCK_KO sha256 $(sha256sum "$STOCK_KO" | cut -c1-16)"
}

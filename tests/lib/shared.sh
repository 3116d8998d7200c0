# shellcheck shell=bash
# Helpers the test cases (through common.sh) and the benchmark (bench/lib.sh)
# share, guest side; scripts/bench.sh takes bench_layout on the host too.
# Sourced, and nothing but functions.  They neither exit nor set traps: on failure
# they say what failed on stderr and return 1, and the caller decides (a
# case fails, the benchmark stops).

# gpt_image IMG N [SECTORS]: a new GPT image with N partitions of SECTORS
# (default 64) sectors each, back to back from sector 2048.  Partition p
# starts at 2048 + (p - 1) * SECTORS; more than 128 partitions get a table
# that long.
gpt_image() {
	local img=$1 n=$2 sz=${3:-64} p
	rm -f "$img"
	truncate -s $(((2048 + n * sz + 2048) * 512)) "$img" || return 1
	{
		echo "label: gpt"
		((n > 128)) && echo "table-length: $n"
		echo "first-lba: 2048"
		for p in $(seq "$n"); do
			echo "start=$((2048 + (p - 1) * sz)), size=$sz, type=linux"
		done
	} | sfdisk -q --no-reread --no-tell-kernel "$img" >/dev/null ||
		{ echo "sfdisk could not write a GPT with $n partitions to $img" >&2; return 1; }
}

# bench_layout P1_MIB P5_MIB: the bench disk's partition table, as sfdisk
# input: GPT, p1 (the ext4 that holds the file-backed variants' disk.img),
# p2..p4 of 1 MiB (so that the measured region is partition 5, as on a
# disk with a few partitions), p5 the measured region.  The host's bench
# disk (scripts/bench.sh) and the cost boot's null_blk disk
# (bench/run-cost.sh) both take it; the disk needs 1 + P1 + 3 + P5 + 1 MiB.
bench_layout() {
	local p
	echo "label: gpt"
	echo "start=2048, size=$(($1 * 2048)), type=linux, name=benchfs"
	for p in 2 3 4; do echo "size=2048, type=linux, name=spacer$p"; done
	echo "size=$(($2 * 2048)), type=linux, name=measured"
}

# loop_reload KO [PARAM=VALUE...]: detach every loop device, unload the loop
# driver (retried for 10 s while udev still holds a device) and load it
# again: the module file KO with insmod, or with KO "-" loop.ko with
# modprobe, with the PARAMs either way.
loop_reload() {
	local ko=$1
	shift
	losetup -D 2>/dev/null || true
	udevadm settle --timeout=60 || { echo "udev's queue did not settle in 60 s" >&2; return 1; }
	for _ in $(seq 50); do
		[[ -d /sys/module/loop ]] || break
		modprobe -r loop 2>/dev/null && break
		sleep 0.2
	done
	[[ ! -d /sys/module/loop ]] ||
		{ echo "cannot unload the loop module: $(lsmod | grep -w ^loop)" >&2; return 1; }
	if [[ $ko != - ]]; then
		insmod "$ko" "$@" || { echo "insmod $ko $* failed" >&2; return 1; }
	else
		modprobe loop "$@" || { echo "modprobe loop $* failed" >&2; return 1; }
	fi
	udevadm settle --timeout=60 || { echo "udev's queue did not settle in 60 s after loading loop" >&2; return 1; }
}

# shellcheck shell=bash
# Helpers for test cases.  A case sources this file first:
#   . ../lib/common.sh
# Failures go to stderr and name what was expected and what was seen.
set -euo pipefail

# The settings (STRESS_SECONDS, RACE_CYCLES, ...): the boot's, or their
# defaults.
# shellcheck source=tests/settings
. "$(dirname "${BASH_SOURCE[0]}")/../settings"
SCRATCH=${SCRATCH:-/var/tmp/partloop-scratch}
mkdir -p "$SCRATCH"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*" >&2; exit 77; }
note() { echo "# $*" >&2; }
# progress TEXT: a line on the TAP stream while the case runs (tests/run
# gives cases file descriptor 3 for it; without it, stderr).
progress() { if { true >&3; } 2>/dev/null; then echo "# $*" >&3; else echo "# $*" >&2; fi; }
# report TEXT: a line for the TAP output after the case's result (counts).
report() { echo "$*" >>"${CASE_INFO:-/dev/null}"; echo "# $*" >&2; }

# expect_eq WHAT EXPECTED SEEN
expect_eq() {
	[[ $2 == "$3" ]] || fail "$1: expected '$2', seen '$3'"
}

# Run the cleanup steps registered with on_exit in reverse order, then
# detach every loop device: each case owns the loop driver while it runs.
# (The runner fails a case after which a device is still attached.)
_cleanups=()
on_exit() { _cleanups=("$*" "${_cleanups[@]}"); }
_run_cleanups() {
	local c
	for c in "${_cleanups[@]}"; do eval "$c" || true; done
	losetup -D 2>/dev/null || true
	udevadm settle --timeout=60 || true
}
trap _run_cleanups EXIT

settle() { udevadm settle --timeout=60; }

# by_id NAME: the block device /dev/disk/by-id/NAME points at (the virtio
# disks of scripts/boot.sh are virtio-SERIAL).  Missing, it fails the case
# in a boot of boots/ (which declares its disks) and skips it in a guest
# booted by hand.  (readlink -f alone prints a path for a missing link too.)
by_id() {
	local l=/dev/disk/by-id/$1
	if [[ ! -L $l || ! -b $l ]]; then
		[[ -n ${PARTLOOP_BOOT:-} ]] || skip "no disk /dev/disk/by-id/$1 in this guest (scripts/boot.sh attaches it)"
		fail "no block device /dev/disk/by-id/$1 (boots/$PARTLOOP_BOOT.conf has disks '${PARTLOOP_DISKS:-}')"
	fi
	readlink -f "$l"
}

# udev_stop / udev_start: stop systemd-udevd (and its sockets) for work
# that would flood it with uevents; devtmpfs still makes the nodes and the
# kernel still sends its uevents.  udev_stop makes sure it comes back.
_udev_units=(systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-udevd.service)
udev_stop() {
	on_exit "systemctl start ${_udev_units[*]}"
	systemctl stop "${_udev_units[@]}"
}
udev_start() { systemctl start "${_udev_units[@]}"; }

# loop_module [PARAM=VALUE...]: reload the loop driver with these
# parameters (no parameter: the module's defaults).  With LOOP_KO set (the
# stock boot of scripts/check.sh: the line's unpatched loop.ko built against
# this kernel), a load without parameters, which is compat mode, loads
# that module instead, so that compat cases and the mode comparisons
# measure the real stock driver.
# shellcheck disable=SC2120
loop_module() {
	local err
	[[ -e /sys/module/loop/initstate || ! -e /sys/module/loop ]] \
		|| skip "loop is built into this kernel; this case reloads the module"
	if [[ -n ${LOOP_KO:-} ]] && (($# == 0)); then
		err=$(loop_reload "$LOOP_KO" 2>&1) || fail "$err"
		[[ -z $err ]] || echo "$err" >&2
		# The stock driver has no "major" parameter; the patched one has.
		[[ ! -e /sys/module/loop/parameters/major ]] ||
			fail "insmod $LOOP_KO loaded a driver with a 'major' parameter: not the stock one"
	else
		err=$(loop_reload - "$@" 2>&1) || fail "$err"
		[[ -z $err ]] || echo "$err" >&2
	fi
}

# dev_of NAME: "major:minor" as sysfs shows it for block device NAME.
dev_of() { local v; read -r v <"/sys/class/block/$1/dev" && echo "$v"; }

# node_of PATH: "major:minor" of a device node, decimal, as stat sees it.
node_of() {
	local kind maj min
	kind=$(stat -c '%F' "$1") || return 1
	[[ $kind == "block special file" ]] || { echo "not-a-block-device($kind)"; return 0; }
	read -r maj min < <(stat -c '%t %T' "$1")
	echo "$((16#$maj)):$((16#$min))"
}

# partitions_of DISK: partition names under /sys/block/DISK, sorted by number.
partitions_of() { part_table "$1" | cut -d' ' -f1; }

# part_table DISK: "NAME MAJ:MIN START SIZE" of every partition of DISK as
# sysfs shows it, sorted by partition number (bash builtins only: forks
# are slow under TCG).
part_table() {
	local d p dev start size
	for d in /sys/block/"$1"/"$1"p*; do
		[[ -e $d/partition ]] || continue
		read -r p <"$d/partition"; read -r dev <"$d/dev"
		read -r start <"$d/start"; read -r size <"$d/size"
		echo "$p ${d##*/} $dev $start $size"
	done | sort -n | cut -d' ' -f2-
}

# node_table DISK: "NAME MAJ:MIN" of every /dev/DISKp* node, same order.
node_table() {
	local n t maj min
	compgen -G "/dev/${1}p*" >/dev/null || return 0
	stat -c '%n %t %T %F' /dev/"$1"p* | while read -r n maj min t; do
		if [[ $t == "block special file" ]]; then
			echo "${n#/dev/} $((16#$maj)):$((16#$min))"
		else
			echo "${n#/dev/} not-a-block-device"
		fi
	done | sort -V
}

# kmsg_mark: remember the end of the kernel log; kmsg_since prints what
# came after (the whole log without a mark), without the timestamps and
# the blanks that follow them.  The mark is the last line itself, with its
# timestamp, not a line count: once the ring buffer is full (the debug
# kernel after an hour of scans), old lines drop out as new ones come
# and a count would point past the new lines.  A mark that dropped out
# too gives the whole log, so a check sees too much, never too little.
# shellcheck source=splat.sh
. "$(dirname "${BASH_SOURCE[0]}")/splat.sh"
# shellcheck source=shared.sh
. "$(dirname "${BASH_SOURCE[0]}")/shared.sh"
kmsg_mark() { _kmsg_mark=$(dmesg | tail -n 1); }
kmsg_since() { dmesg | log_after "${_kmsg_mark:-}" | sed 's/^\[[^]]*\] *//'; }

# loop_warnings: the "loop:" lines since kmsg_mark other than the load message.
loop_warnings() { kmsg_since | grep '^loop: ' | grep -v '^loop: module loaded' || true; }

# blk_major NAME: the block major /proc/devices lists for driver NAME.
blk_major() { sed -n '/^Block devices:/,$p' /proc/devices | awk -v n="$1" '$2 == n { print $1 }'; }

# words: standard input as one line of words separated by single blanks.
words() { tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }

# attach ARGS...: losetup --show -f ARGS; prints the device.
attach() {
	local dev
	dev=$(losetup --show -f "$@") || fail "losetup -f $* failed"
	settle
	echo "$dev"
}

# make_gpt IMG N [SECTORS]: gpt_image (shared.sh) for a case: N partitions
# of SECTORS (default 64) sectors each, partition p at 2048 + (p - 1) *
# SECTORS; the case fails if it cannot be made, and IMG goes at its end.
make_gpt() {
	local err
	on_exit "rm -f $1"
	err=$(gpt_image "$@" 2>&1) || fail "$err"
	[[ -z $err ]] || echo "$err" >&2
}

# count_parts NAME: partitions of NAME in /sys/block, /dev and /proc/partitions.
count_parts() {
	echo "$(find /sys/block/"$1"/ -maxdepth 1 -name "${1}p*" | wc -l)" \
		"$(find /dev -maxdepth 1 -name "${1}p*" | wc -l)" \
		"$(grep -c " ${1}p[0-9]*$" /proc/partitions || true)"
}

# expect_no_parts NAME WHEN: no partition of NAME anywhere.
expect_no_parts() {
	expect_eq "partitions of $1 $2 (in /sys/block, /dev, /proc/partitions)" "0 0 0" "$(count_parts "$1")"
}

# KLINE: the kernel line the guest runs, "6.1" or "6.12" (the project's
# kernels and Debian's alike).  A case that expects something else on one
# line says why where it tests KLINE.
[[ $(uname -r) =~ ^([0-9]+\.[0-9]+)\. ]] || fail "uname -r '$(uname -r)': no kernel line in it"
KLINE=${BASH_REMATCH[1]}

# expect_blk_partscan WHAT NAME EXPECTED: /sys/block/NAME/partscan, the
# block layer's "may the kernel read the table" (6.12 on; 6.1 has no such
# file, which is checked too).
expect_blk_partscan() {
	local f=/sys/block/$2/partscan
	if [[ $KLINE == 6.1 ]]; then
		[[ ! -e $f ]] || fail "$1: $f exists; 6.1 has no such attribute"
		return 0
	fi
	expect_eq "$1: $f" "$3" "$(cat "$f" 2>&1)"
}

# queue NAME ATTR: /sys/block/NAME/queue/ATTR (discard_max_bytes, ...).
queue() { cat "/sys/block/$1/queue/$2"; }
# notsupp: "operation not supported" lines for loop devices since kmsg_mark.
notsupp() { kmsg_since | grep -c 'operation not supported error, dev loop' || true; }

# param NAME: the loop module parameter as /sys/module shows it.
param() { cat "/sys/module/loop/parameters/$1"; }

TOOLS=${TOOLS:-/mnt/project/build/tools}

# The state in dpkg of the DKMS package under test ($DKMS_DEB, tests/settings).
pkg_status() { dpkg-query -W -f='${db:Status-Status}' partloop-dkms 2>/dev/null || echo not-installed; }

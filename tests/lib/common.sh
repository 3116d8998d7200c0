# shellcheck shell=bash
# Helpers for test cases.  A case sources this file first:
#   . ../lib/common.sh
# Failures go to stderr and name what was expected and what was seen.
set -euo pipefail

SCRATCH=${SCRATCH:-/var/tmp/partloop-scratch}
mkdir -p "$SCRATCH"

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*" >&2; exit 77; }
note() { echo "# $*" >&2; }

# expect_eq WHAT EXPECTED SEEN
expect_eq() {
	[[ $2 == "$3" ]] || fail "$1: expected '$2', seen '$3'"
}

# Run the cleanup steps registered with on_exit in reverse order.
_cleanups=()
on_exit() { _cleanups=("$*" "${_cleanups[@]}"); }
_run_cleanups() {
	local c
	for c in "${_cleanups[@]}"; do eval "$c" || true; done
}
trap _run_cleanups EXIT

settle() { udevadm settle --timeout=60; }

# loop_module [PARAM=VALUE...]: reload the loop driver with these
# parameters (no parameter: the module's defaults).
# shellcheck disable=SC2120
loop_module() {
	losetup -D 2>/dev/null || true
	settle

	for _ in $(seq 50); do
		[[ -d /sys/module/loop ]] || break
		modprobe -r loop 2>/dev/null && break
		sleep 0.2
	done
	[[ ! -d /sys/module/loop ]] || fail "cannot unload the loop module: $(lsmod | grep -w ^loop)"
	modprobe loop "$@" || fail "modprobe loop $* failed"
	settle
}

# dev_of NAME: "major:minor" as sysfs shows it for block device NAME.
dev_of() { cat "/sys/class/block/$1/dev"; }

# node_of PATH: "major:minor" of a device node, decimal, as stat sees it.
node_of() {
	local kind maj min
	kind=$(stat -c '%F' "$1") || return 1
	[[ $kind == "block special file" ]] || { echo "not-a-block-device($kind)"; return 0; }
	read -r maj min < <(stat -c '%t %T' "$1")
	echo "$((16#$maj)):$((16#$min))"
}

# partitions_of DISK: partition names under /sys/block/DISK, sorted by number.
partitions_of() {
	local d
	for d in /sys/block/"$1"/"$1"p*; do
		[[ -e $d/partition ]] && echo "$(cat "$d/partition") ${d##*/}"
	done | sort -n | cut -d' ' -f2
}

# kmsg_mark: remember the end of the kernel log; kmsg_since prints what came after.
kmsg_mark() { _kmsg_mark=$(dmesg | wc -l); }
kmsg_since() { dmesg | tail -n +"$((_kmsg_mark + 1))"; }

# attach ARGS...: losetup ARGS --show -f, registering the detach.
attach() {
	local dev
	dev=$(losetup --show -f "$@") || fail "losetup -f $* failed"
	on_exit "losetup -d $dev 2>/dev/null"
	settle
	echo "$dev"
}

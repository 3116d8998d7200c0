# shellcheck shell=bash
# Helpers of the guest-side benchmark scripts (bench/run-*.sh).  Sourced.

START=${START:-$(date +%s)}
export START

say() { printf 'bench: [%4ss] %s\n' "$(($(date +%s) - START))" "$*"; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }
settle() { udevadm settle --timeout=60; }

[ -f "$STOCK_KO" ] || die "stock loop.ko not found at $STOCK_KO: run 'make stock-module' on the host"

MODULE=	# what is loaded: "patched:PARAMS" or "stock:"

detach_all() {
	settle
	losetup -D
	settle
	[ -z "$(losetup -n -O NAME)" ] || die "loop devices still attached: $(losetup -n -O NAME | xargs)"
}

# use_module patched [PARAM...] | stock: (re)load the loop driver unless it
# is already loaded that way.
use_module() {
	local want="$1:${*:2}" tries=5
	[ "$want" = "$MODULE" ] && return 0
	[ -d /sys/module/loop ] && detach_all
	while [ -d /sys/module/loop ] && ((tries--)); do
		rmmod loop 2>/dev/null || sleep 1
	done
	[ ! -d /sys/module/loop ] || die "cannot unload loop (still in use?)"
	if [ "$1" = stock ]; then
		insmod "$STOCK_KO" || die "insmod $STOCK_KO failed"
	else
		modprobe loop "${@:2}" || die "modprobe loop ${*:2} failed"
	fi
	settle
	MODULE=$want
}

# attach FILE [LOSETUP-OPTION...]: prints the new loop device.
attach() {
	local dev
	dev=$(losetup -f --show "${@:2}" "$1") || die "losetup -f ${*:2} $1 failed"
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

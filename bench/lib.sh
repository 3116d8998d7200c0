# shellcheck shell=bash
# Helpers of the guest-side benchmark scripts (bench/run-*.sh).  Sourced.

# shellcheck source=tests/lib/shared.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/shared.sh"

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

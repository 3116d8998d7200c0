# shellcheck shell=bash
# Common helpers for the host-side build scripts.  Sourced, not executed.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SRC=$BUILD/linux		# pristine linux-source-6.1 + patches/series
KBUILD=$BUILD/kbuild		# O= output folder of the guest kernel
export ROOT BUILD SRC KBUILD
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/partloop/ccache}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# stage NAME: announce a stage; the EXIT trap reports its elapsed time.
stage() {
	STAGE_NAME=$1
	STAGE_START=$(date +%s)
	log "==> stage $STAGE_NAME"
	trap 'stage_end $?' EXIT
}

# stage_end RC: report the stage's end now (used before a final summary line).
stage_end() {
	trap - EXIT
	local result="done"
	(($1)) && result=FAILED
	log "<== stage $STAGE_NAME $result in $(($(date +%s) - STAGE_START))s"
}

# external_module DIR [MAKE-ARG...]: build the loop.c in DIR (with its
# Kbuild) as an out-of-tree module against the guest kernel in $KBUILD; the
# output goes to DIR/build.log, and on failure to stderr too.
external_module() {
	local dir=$1
	shift
	make -s -C "$SRC" O="$KBUILD" M="$dir" CC="ccache gcc" LOCALVERSION= "$@" modules \
		>"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; return 1; }
}

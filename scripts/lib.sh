# shellcheck shell=bash
# Common helpers for the host-side build scripts.  Sourced, not executed.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build		# fixed: mkosi.conf and the guest's paths name it
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

# kmake TREE OUT [MAKE-ARG...]: make in the kernel tree TREE with objects
# in OUT, through ccache, -j$JOBS (default: every core).  LOCALVERSION=
# (set, empty) keeps setlocalversion from appending "+" for the git
# repository that holds the pristine tree.
kmake() {
	local tree=$1 out=$2
	shift 2
	make -C "$tree" O="$out" CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION= -j"${JOBS:-$(nproc)}" "$@"
}

# series_patches: the patches patches/series names, in order, one per line
# (quilt's format: "#" comments and blank lines skipped, options after the
# name ignored).
series_patches() { awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$ROOT/patches/series"; }

# external_module DIR [MAKE-ARG...]: build the loop.c in DIR (with its
# Kbuild) as an out-of-tree module against the guest kernel in $KBUILD; the
# output goes to DIR/build.log, and on failure to stderr too.
external_module() {
	local dir=$1
	shift
	kmake "$SRC" "$KBUILD" -s M="$dir" "$@" modules \
		>"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; return 1; }
}

# read_boot NAME: the boot declared in boots/NAME.conf ("key = value"
# lines, # comments).  Lowercase keys describe the boot and go to the
# associative array BOOTCONF (kernel, image: paths under $BUILD; cmdline;
# disks: of scratch, dos83, bench; tests: groups or cases; run: tests or
# bench; timeout: seconds; results: folder under $BUILD; bench_mib: sizes
# of the bench disk's file system and measured partitions).  UPPERCASE keys
# are guest settings and go to BOOT_SET; each must be one that
# tests/settings declares.
declare -A BOOTCONF=() BOOT_SET=()
read_boot() {
	local f=$ROOT/boots/$1.conf line key val
	[ -f "$f" ] || die "no boot '$1'; boots/ declares: $(cd "$ROOT/boots" && printf '%s ' *.conf | sed 's/\.conf//g')"
	BOOTCONF=([name]=$1 [kernel]="" [image]="" [cmdline]="" [disks]="" [tests]="" [run]=tests [timeout]=1800 [results]=results/$1 [bench_mib]="")
	BOOT_SET=()
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		[[ $line =~ ^[[:space:]]*$ ]] && continue
		[[ $line =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=[[:space:]]*(.*[^[:space:]])?[[:space:]]*$ ]] ||
			die "boots/$1.conf: not a 'key = value' line: $line"
		key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]:-}
		case $key in
		kernel | image | cmdline | disks | tests | run | timeout | results | bench_mib) BOOTCONF[$key]=$val ;;
		[A-Z]*)
			grep -qx "$key" < <(settings_names) ||
				die "boots/$1.conf: $key is no setting tests/settings declares"
			BOOT_SET[$key]=$val
			;;
		*) die "boots/$1.conf: unknown key '$key' (kernel image cmdline disks tests run timeout results, or a setting)" ;;
		esac
	done <"$f"
	[[ ${BOOTCONF[run]} == tests || ${BOOTCONF[run]} == bench ]] || die "boots/$1.conf: run = tests or bench, not '${BOOTCONF[run]}'"
	[[ ${BOOTCONF[timeout]} =~ ^[0-9]+$ ]] || die "boots/$1.conf: timeout '${BOOTCONF[timeout]}' is not a number of seconds"
}

# settings_names: the settings tests/settings declares, one per line.
settings_names() { sed -n 's/^export \([A-Z][A-Z0-9_]*\)=.*/\1/p' "$ROOT/tests/settings"; }

# write_settings FILE: the boot's settings for the guest, each NAME=VALUE
# shell-quoted: a non-empty value from the host's environment wins over
# the boot's, which wins over the default in tests/settings (not repeated
# here).  Also PARTLOOP_BOOT, PARTLOOP_CMDLINE (the words the boot adds to
# the kernel command line, which cases check against the kernel's) and
# PARTLOOP_DISKS.
write_settings() {
	local n
	{
		echo "# boot ${BOOTCONF[name]} (boots/${BOOTCONF[name]}.conf), written by scripts/boot.sh"
		printf 'PARTLOOP_BOOT=%q\nPARTLOOP_CMDLINE=%q\nPARTLOOP_DISKS=%q\n' \
			"${BOOTCONF[name]}" "${BOOTCONF[cmdline]}" "${BOOTCONF[disks]}"
		for n in $(settings_names); do
			if [ -n "${!n:-}" ]; then
				printf '%s=%q\t# from the environment\n' "$n" "${!n}"
			elif [ -n "${BOOT_SET[$n]+set}" ]; then
				printf '%s=%q\n' "$n" "${BOOT_SET[$n]}"
			fi
		done
	} >"$1"
}

# one_off_unset: a script that runs boots of boots/ forgets the variables
# meant for one hand-run boot, which would reach every boot of its list.
one_off_unset() { unset KERNEL IMAGE RESULTS_DIR EXTRA_CMDLINE BENCH_DIR; }

# read_summary FILE: "PASSED FAILED SKIPPED" from the last totals line
# ("N passed, N failed[, N skipped]") in FILE; "0 1 0" if it has none.
read_summary() {
	local l
	l=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$1" 2>/dev/null | tail -n 1)
	[ -n "$l" ] || { echo "0 1 0"; return; }
	sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/; s/ $/ 0/' <<<"$l"
}

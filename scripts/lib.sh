# shellcheck shell=bash
# Common helpers for the host-side build scripts.  Sourced, not executed.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build		# fixed: mkosi.conf and the guest's paths name it
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/partloop/ccache}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The kernel line a stage works on: LINE, one of LINES, default the first.
# Each line has its series in patches/LINE/ and its source in Debian's
# linux-source-LINE.  The default line's build folders keep their plain
# names; another line's carry "-LINE" (LSUF): build/linux-6.12,
# build/kbuild-6.12, build/bzImage-6.12, build/modroot-6.12, ...
LINES=(6.1 6.12)
LINE=${LINE:-${LINES[0]}}
case " ${LINES[*]} " in
*" $LINE "*) ;;
*) die "LINE=$LINE: no such kernel line; patches/ has ${LINES[*]}" ;;
esac
LSUF=
[ "$LINE" = "${LINES[0]}" ] || LSUF=-$LINE
PATCHES=$ROOT/patches/$LINE	# the line's series (quilt)
TARBALL=/usr/src/linux-source-$LINE.tar.xz
SRC=$BUILD/linux$LSUF		# pristine linux-source-LINE + its series
KBUILD=$BUILD/kbuild$LSUF	# O= output folder of the line's guest kernel
export ROOT BUILD LINE LSUF PATCHES TARBALL SRC KBUILD

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

# series_patches: the patches the line's series file names, in order, one
# per line (quilt's format: "#" comments and blank lines skipped, options
# after the name ignored).
series_patches() { awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$PATCHES/series"; }

# external_module TREE OUT DIR [MAKE-ARG...]: build the module whose Kbuild
# is in DIR as an out-of-tree module against the guest kernel of the kernel
# tree TREE built in OUT (a line's $SRC and $KBUILD, for instance), or with
# OUT empty against the prepared headers in TREE (Debian's); the output
# goes to DIR/build.log, and on failure to stderr too.
external_module() {
	local tree=$1 out=$2 dir=$3
	shift 3
	if [ -n "$out" ]; then
		kmake "$tree" "$out" -s M="$dir" "$@" modules
	else
		# Prepared headers (Debian's): their own compiler, no ccache, so
		# that kbuild does not warn that the compiler differs.
		make -C "$tree" -s -j"${JOBS:-$(nproc)}" M="$dir" "$@" modules
	fi >"$dir/build.log" 2>&1 || { cat "$dir/build.log" >&2; return 1; }
}

# read_boot NAME: the boot declared in boots/NAME.conf ("key = value"
# lines, # comments).  Lowercase keys describe the boot and go to the
# associative array BOOTCONF (kernel, image: paths under $BUILD; cmdline;
# disks: of scratch, dos83, bench; tests: groups or cases; run: tests or
# bench; timeout: seconds; results: folder under $BUILD; bench_mib: sizes
# of the bench disk's file system and measured partitions; smp: vCPUs,
# default 2; icount: QEMU's -icount argument, none by default; cost: the
# boot that measures cost per I/O after this one, for scripts/bench.sh).
# UPPERCASE keys
# are guest settings and go to BOOT_SET; each must be one that
# tests/settings declares.  "base = OTHER" takes every key of
# boots/OTHER.conf where it stands, so that a boot of another kernel line
# says only what differs; results is never inherited (results/NAME).
declare -A BOOTCONF=() BOOT_SET=()
read_boot() {
	BOOTCONF=([name]=$1 [kernel]="" [image]="" [cmdline]="" [disks]="" [tests]="" [run]=tests [timeout]=1800 [results]="" [bench_mib]="" [smp]=2 [icount]="" [cost]="")
	BOOT_SET=()
	_read_boot_file "$1" "$1"
	[ -n "${BOOTCONF[results]}" ] || BOOTCONF[results]=results/$1
	[[ ${BOOTCONF[run]} == tests || ${BOOTCONF[run]} == bench ]] || die "boots/$1.conf: run = tests or bench, not '${BOOTCONF[run]}'"
	[[ ${BOOTCONF[timeout]} =~ ^[0-9]+$ ]] || die "boots/$1.conf: timeout '${BOOTCONF[timeout]}' is not a number of seconds"
	[[ ${BOOTCONF[smp]} =~ ^[1-4]$ ]] || die "boots/$1.conf: smp '${BOOTCONF[smp]}' is not 1 to 4 vCPUs (the kernel has NR_CPUS=4)"
}

# _read_boot_file NAME CHAIN: the keys of boots/NAME.conf into BOOTCONF and
# BOOT_SET; CHAIN names the files being read, against a base loop.
_read_boot_file() {
	local f=$ROOT/boots/$1.conf line key val
	[ -f "$f" ] || die "no boot '$1'; boots/ declares: $(cd "$ROOT/boots" && printf '%s ' *.conf | sed 's/\.conf//g')"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		[[ $line =~ ^[[:space:]]*$ ]] && continue
		[[ $line =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*=[[:space:]]*(.*[^[:space:]])?[[:space:]]*$ ]] ||
			die "boots/$1.conf: not a 'key = value' line: $line"
		key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]:-}
		case $key in
		base)
			[[ " $2 " != *" $val "* ]] || die "boots/$1.conf: base = $val makes a loop ($2 $val)"
			local keep=${BOOTCONF[results]}
			_read_boot_file "$val" "$2 $val"
			BOOTCONF[results]=$keep
			;;
		kernel | image | cmdline | disks | tests | run | timeout | results | bench_mib | smp | icount | cost) BOOTCONF[$key]=$val ;;
		[A-Z]*)
			grep -qx "$key" < <(settings_names) ||
				die "boots/$1.conf: $key is no setting tests/settings declares"
			BOOT_SET[$key]=$val
			;;
		*) die "boots/$1.conf: unknown key '$key' (base kernel image cmdline disks tests run timeout results bench_mib smp icount cost, or a setting)" ;;
		esac
	done <"$f"
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

# results_of BOOT: the boot's results folder.
results_of() { read_boot "$1" && echo "$BUILD/${BOOTCONF[results]}"; }

# run_boots BOOT...: a check's list of boots (make check, make
# check-debug): each boot's old results go, each runs in turn (a benchmark
# boot through scripts/bench.sh, which makes its disk and report; the
# others with TESTS, if given), then one totals line for all of them,
# "N passed, N failed, N skipped".  A boot without a totals line counts
# one failure (read_summary), and so does a boot that failed with none in
# its totals; non-zero status on any failure.
run_boots() {
	local b a c d p=0 f=0 s=0
	local -A boot_rc=()
	for b in "$@"; do rm -rf "$(results_of "$b")"; done
	for b in "$@"; do
		read_boot "$b"
		boot_rc[$b]=0
		if [ "${BOOTCONF[run]}" = bench ]; then
			BOOT=$b "$ROOT/scripts/bench.sh" || boot_rc[$b]=1
		else
			# shellcheck disable=SC2086
			BOOT=$b "$ROOT/scripts/boot.sh" ${TESTS:-} || boot_rc[$b]=1
		fi
	done
	for b in "$@"; do
		read -r a c d < <(read_summary "$(results_of "$b")/summary")
		((c > 0 || boot_rc[$b] == 0)) || c=1
		p=$((p + a)) f=$((f + c)) s=$((s + d))
	done
	[ -n "${PARTLOOP_START:-}" ] && log "total since make started: $(($(date +%s) - PARTLOOP_START))s"
	echo "$p passed, $f failed, $s skipped"
	((f == 0))
}

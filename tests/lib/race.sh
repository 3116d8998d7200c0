# shellcheck shell=bash
# partrace_run LABEL CYCLES UDEV PARTRACE-ARGS...: run tools/partrace on
# loop0 (unbound) with two scratch images and note it if any invariant
# broke (see tools/partrace.c for what is checked after every step); the
# case calls race_verdict at the end, so every run's counts are reported.
# UDEV is "udev" to keep systemd-udevd running, which probes every
# partition and holds them open, or "no-udev" to stop it for the run, so
# that a cycle costs the kernel's work and the readers' opens only and
# many more cycles fit (devtmpfs still makes the nodes, the kernel still
# sends its uevents).  Progress goes to the TAP stream, the counts after
# the case's result.
partrace_run() {
	local label=$1 cycles=$2 udev=$3 out rc start uevents=-u
	shift 3
	# -c (racing ioctls) rescans within a cycle: no uevent count there.
	[[ " $* " == *" -c "* ]] && uevents=
	out=$SCRATCH/partrace.${label// /-}
	start=$(date +%s)
	[[ -b /dev/loop0 ]] || fail "no /dev/loop0 after loading the driver"
	! losetup /dev/loop0 >/dev/null 2>&1 || fail "loop0 is bound before the $label run"
	if [[ $udev == no-udev ]]; then
		settle_patiently "before the $label run"
		udev_stop
	fi
	rc=0
	"$TOOLS/partrace" -n "$cycles" -r "$RACE_READERS" ${uevents:+"$uevents"} "$@" /dev/loop0 \
		"$SCRATCH/race-a.img" "$SCRATCH/race-b.img" \
		> >(tee "$out" | while IFS= read -r l; do [[ $l == '# '* ]] && progress "$label ($udev): ${l#\# }"; done) \
		2> >(tee "$out.err" >&2) || rc=$?
	[[ $udev == no-udev ]] && udev_start
	settle_patiently "$label ($udev)"
	report "$label ($udev): $(grep '^partrace: cycles=' "$out" || echo 'no counts') ($(($(date +%s) - start))s)"
	report "$label ($udev): $(grep '^partrace: broken:' "$out" || echo 'no counts')"
	((rc == 0)) || race_broken+=("$label ($udev): partrace exit $rc")
	expect_no_parts loop0 "after the $label run"
}

# settle_patiently WHAT: wait for udev's queue to drain after a run with
# udev, as long as it keeps answering.  A run with udev leaves it a
# backlog of probes of partitions that are long gone (on the debug
# kernel, more than settle's minute); the wait shows on the TAP stream
# and fails only if udevd stops answering its control socket or the
# queue is not empty after RACE_SETTLE seconds (tests/settings).
settle_patiently() {
	local waited=0 limit=$RACE_SETTLE
	until udevadm settle --timeout=30; do
		waited=$((waited + 30))
		udevadm control --ping --timeout=30 ||
			fail "$1: systemd-udevd did not answer a ping after ${waited} s of a non-empty queue"
		((waited < limit)) ||
			fail "$1: udev's queue still not empty after ${waited} s (RACE_SETTLE=$limit)"
		progress "$1: udev's queue not empty after ${waited} s, waiting"
	done
	((waited == 0)) || report "$1: udev's queue drained after more than ${waited} s"
}

# race_verdict: fail the case if a partrace_run found a broken invariant.
race_broken=()
race_verdict() {
	((${#race_broken[@]} == 0)) ||
		fail "partition state broke under concurrency in: ${race_broken[*]} (first failures of each above)"
}

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
		settle
		udev_stop
	fi
	rc=0
	"$TOOLS/partrace" -n "$cycles" -r "${RACE_READERS:-3}" ${uevents:+"$uevents"} "$@" /dev/loop0 \
		"$SCRATCH/race-a.img" "$SCRATCH/race-b.img" \
		> >(tee "$out" | while IFS= read -r l; do [[ $l == '# '* ]] && progress "$label ($udev): ${l#\# }"; done) \
		2> >(tee "$out.err" >&2) || rc=$?
	[[ $udev == no-udev ]] && udev_start
	settle
	report "$label ($udev): $(grep '^partrace: cycles=' "$out" || echo 'no counts') ($(($(date +%s) - start))s)"
	report "$label ($udev): $(grep '^partrace: broken:' "$out" || echo 'no counts')"
	((rc == 0)) || race_broken+=("$label ($udev): partrace exit $rc")
	expect_no_parts loop0 "after the $label run"
}

# race_verdict: fail the case if a partrace_run found a broken invariant.
race_broken=()
race_verdict() {
	((${#race_broken[@]} == 0)) ||
		fail "partition state broke under concurrency in: ${race_broken[*]} (first failures of each above)"
}

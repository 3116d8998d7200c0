#!/bin/bash
# Stage "boot": boot one of the boots declared in boots/ (BOOT, default
# main) headless under QEMU TCG, let it run tests/ (or the benchmark), and
# judge the result from the host: the guest's TAP, whether it finished in
# time, and its whole kernel log.  Ends with one line "N passed, N failed,
# N skipped".
#
# usage: [BOOT=NAME] boot.sh [GROUP | GROUP/CASE]...   (default: the boot's tests)
# env:   BOOT           a file boots/NAME.conf: kernel, image, command line,
#                       disks, tests, timeout, results folder, settings
#        any setting of tests/settings (STRESS_SECONDS, RACE_CYCLES, ...):
#                       overrides the boot's value and the default
#        for a one-off boot: KERNEL, IMAGE (paths), EXTRA_CMDLINE,
#                       BOOT_TIMEOUT (seconds), RESULTS_DIR (a folder this
#                       script made before, or an empty or new one)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read_boot "${BOOT:-main}"
stage "boot ${BOOTCONF[name]}"
. "$ROOT/tests/lib/splat.sh"

TIMEOUT=${BOOT_TIMEOUT:-${BOOTCONF[timeout]}}
RES=${RESULTS_DIR:-$BUILD/${BOOTCONF[results]}}
IMAGE=${IMAGE:-$BUILD/${BOOTCONF[image]}}
KERNEL=${KERNEL:-$BUILD/${BOOTCONF[kernel]}}
DISKS=$BUILD/disks
[ -f "$IMAGE" ] || die "no guest image $IMAGE: run 'make image' (or 'make image-dkms', LINE=6.12 for dkms-6.12, for the dkms boots)"
[ -f "$KERNEL" ] || die "no kernel $KERNEL: run 'make kernel' (kernel-builtin, kernel-debug, kernel-bench for those boots; with LINE=6.12 for a -6.12 boot)"
(($# == 0)) || BOOTCONF[tests]="$*"

# Disks, made anew for every boot and found in the guest by serial
# (/dev/disk/by-id/virtio-SERIAL): "dos83" carries the seed's DOS label with
# p1, p2 extended and logical p5..p83; "scratch" is empty; "bench" is made
# by scripts/bench.sh.
mkdir -p "$DISKS"
# The guest runs build/tools; a helper older than its source would test
# something else than tools/ says.
# (Without the flags of a calling make: -B there would make -q say
# "stale" here.)
trc=0
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -q -C "$ROOT/tools" OUT="$BUILD/tools" all || trc=$?
case $trc in
0) ;;
1) die "build/tools is missing or older than tools/: run 'make tools' (or scripts/tools.sh)" ;;
*) die "make -q in tools/ failed (status $trc, see above)" ;;
esac
drives=()
for d in ${BOOTCONF[disks]}; do
	case $d in
	scratch) rm -f "$DISKS/scratch.img"; truncate -s 1G "$DISKS/scratch.img" ;;
	dos83) rm -f "$DISKS/dos83.img"; "$BUILD/tools/mkdosebr" -p 16 -l 2 -L 64 -n 79 "$DISKS/dos83.img" >/dev/null ;;
	bench) [ -f "$DISKS/bench.img" ] || die "no $DISKS/bench.img: the bench boots run from scripts/bench.sh" ;;
	*) die "boots/${BOOTCONF[name]}.conf: unknown disk '$d' (scratch, dos83, bench)" ;;
	esac
	drives+=(-drive "if=none,id=$d,file=$DISKS/$d.img,format=raw,cache=none,aio=threads"
		-device "virtio-blk-pci,drive=$d,serial=$d")
done

# The results folder is emptied only if it is the project's own: marked by
# an earlier boot, or a boot's folder under build/results/ or build/bench.
# RESULTS_DIR=$HOME or build/linux empties nothing.
RES=$(realpath -m "$RES")
mkdir -p "$RES"
b=$(realpath -m "$BUILD")
if [[ -e $RES/.partloop-results || $RES == "$b"/results/?* || $RES == "$b/bench" ]]; then
	find "$RES" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
elif [ -n "$(ls -A "$RES")" ]; then
	die "$RES is not empty and not a results folder of this project: give RESULTS_DIR a new or empty folder"
fi
touch "$RES/.partloop-results"
write_settings "$RES/settings"
sel=all
[ -n "${BOOTCONF[tests]}" ] && sel=$(tr -s ' ' ',' <<<"${BOOTCONF[tests]}")
cmdline="root=/dev/vda1 rw console=ttyS0 panic=-1 loglevel=4 log_buf_len=4M"
cmdline+=" systemd.mask=serial-getty@ttyS0.service systemd.mask=getty@tty1.service"
cmdline+=" systemd.mask=apt-daily.timer systemd.mask=apt-daily-upgrade.timer"
cmdline+=" systemd.mask=e2scrub_all.timer systemd.mask=fstrim.timer"
cmdline+=" systemd.mask=systemd-networkd.service systemd.mask=systemd-resolved.service"
if [ "${BOOTCONF[run]}" = bench ]; then
	cmdline+=" partloop.bench=1"
else
	cmdline+=" partloop.test=$sel"
fi
cmdline+=" ${BOOTCONF[cmdline]} ${EXTRA_CMDLINE:-}"

qemu=(qemu-system-x86_64 -machine "q35,accel=tcg" -cpu max -smp "${BOOTCONF[smp]}" -m 2G
	-nographic -nodefaults -no-reboot -serial stdio
	-object "rng-random,filename=/dev/urandom,id=rng0" -device "virtio-rng-pci,rng=rng0"
	-kernel "$KERNEL" -initrd "${IMAGE%.raw}.initrd" -append "$cmdline"
	-drive "if=none,id=root,file=$IMAGE,format=raw,snapshot=on"
	-device "virtio-blk-pci,drive=root"
	-virtfs "local,path=$ROOT,mount_tag=project,security_model=none,readonly=on"
	-virtfs "local,path=$RES,mount_tag=results,security_model=none")
[ -z "${BOOTCONF[icount]}" ] || qemu+=(-icount "${BOOTCONF[icount]}")
qemu+=("${drives[@]}")
printf '%q ' "${qemu[@]}" > "$RES/qemu.cmd"; echo >> "$RES/qemu.cmd"

log "booting ${KERNEL#"$ROOT"/} under TCG (timeout ${TIMEOUT}s, console: ${RES#"$ROOT"/}/console.log)"
set +e
timeout -k 10 "$TIMEOUT" "${qemu[@]}" </dev/null 2>"$RES/qemu.stderr" \
	| tee "$RES/console.log" \
	| sed -u -E 's/^\[ *[0-9.]+\] partloop-tests\[[0-9]+\]: //' \
	| grep --line-buffered -aE '^(ok|not ok|#|[0-9]+ passed|bench:)' \
	| while IFS= read -r l; do printf '[%s] guest: %s\n' "$(date +%H:%M:%S)" "$l"; done >&2
qrc=${PIPESTATUS[0]}
set -e

# expected_cases [GROUP | GROUP/CASE]...: how many cases tests/run must
# report for that selection (default: every group), counted from the files
# here, run bit or not, as tests/run counts them.
expected_cases() {
	local sel=("$@") a g f n=0
	if ((${#sel[@]} == 0)); then
		for g in "$ROOT"/tests/*/; do
			g=$(basename "$g")
			[ "$g" = lib ] || sel+=("$g")
		done
	fi
	for a in "${sel[@]}"; do
		if [ -d "$ROOT/tests/$a" ]; then
			for f in "$ROOT/tests/$a"/[0-9][0-9][0-9]-*; do
				[[ -f $f && $f != *.out ]] && n=$((n + 1))
			done
		else
			n=$((n + 1))
		fi
	done
	echo "$n"
}

# Host-side checks, counted with the guest's own results.
host_fail=()
if ((qrc == 124 || qrc == 137)); then
	host_fail+=("guest did not finish within ${TIMEOUT}s (hung?); last console lines:")
	host_fail+=("$(tail -n 15 "$RES/console.log" | sed 's/^/    /')")
elif ((qrc != 0)); then
	host_fail+=("qemu exited with status $qrc: $(tail -n 5 "$RES/qemu.stderr")")
fi
if [ ! -f "$RES/status" ] && ((${#host_fail[@]} == 0)); then
	host_fail+=("guest powered off without writing results (test service did not run?); see $RES/console.log")
fi
splats=$( { cat "$RES/dmesg.txt" 2>/dev/null; cat "$RES/console.log"; } | splat_lines | sort -u)
if [ -n "$splats" ]; then
	host_fail+=("kernel splat in the guest's log (saved in ${RES#"$ROOT"/}/dmesg.txt):")
	host_fail+=("$(head -n 10 <<<"$splats" | sed 's/^/    /')")
fi

summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$RES/tests.tap" 2>/dev/null | tail -1 || true)
p=0 f=0 s=0
[ -z "$summary" ] || read -r p f s < <(read_summary "$RES/tests.tap")
# A green boot ran what it was asked to, and something in it passed: a
# guest that reported fewer cases than were selected, or a boot whose
# every case skipped (a kernel or command line other than the cases
# expect), proves nothing.
if [ ! -e "$RES/entry" ] && ((${#host_fail[@]} == 0)); then
	host_fail+=("the guest did not run tests/boot-entry: its partloop-tests predates it; run 'make image' (or image-dkms)")
fi
if [ "${BOOTCONF[run]}" = tests ] && [ -n "$summary" ]; then
	# shellcheck disable=SC2086
	want=$(expected_cases ${BOOTCONF[tests]})
	ran=$(grep -acE '^(ok|not ok) [0-9]+ ' "$RES/tests.tap" || true)
	((ran == want)) || host_fail+=("the selection has $want case(s), the guest reported $ran")
	((p + f > 0)) || host_fail+=("no case passed: $s of $ran skipped, the reasons are in ${RES#"$ROOT"/}/tests.tap")
fi
grep -a '^not ok' "$RES/tests.tap" 2>/dev/null | sed 's/^/FAILED: /' >&2 || true
if ((${#host_fail[@]})); then
	printf 'FAILED: %s\n' "${host_fail[@]}" >&2
	f=$((f + 1))
fi
if [ -z "$summary" ] && ((f == 0)); then
	echo "FAILED: the guest wrote no summary line" >&2
	f=1
fi
log "results in ${RES#"$ROOT"/}/ (tests.tap, cases/, dmesg.txt, console.log)"
stage_end $((f == 0 ? 0 : 1))
echo "$p passed, $f failed, $s skipped" | tee "$RES/summary"
((f == 0))

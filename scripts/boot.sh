#!/bin/bash
# Stage "boot": boot the guest headless under QEMU TCG with the project's
# kernel and two extra virtio disks, run tests/ inside it, and judge the
# result from the host: the guest's TAP, whether it finished in time, and
# its whole kernel log.  Ends with one line "N passed, N failed, N skipped".
#
# usage: boot.sh [GROUP | GROUP/CASE]...    (default: all)
# env:   BOOT_TIMEOUT (seconds, default 1800), RESULTS_DIR (build/results/boot),
#        STRESS_SECONDS, FUZZ_*, CASE_TIMEOUT (passed to the guest's cases in
#        results/test.env, see tests/robust), LOOP_KO (guest path of a
#        loop.ko that compat-mode loads use, see tests/lib/common.sh),
#        KERNEL (build/bzImage),
#        IMAGE (build/image/debian~bookworm/partloop.raw; its .initrd is
#        used too), EXTRA_CMDLINE, NO_DOS83,
#        BENCH_DISK: a disk image attached with serial "bench"; the guest then
#        runs bench/run-fio.sh instead of tests/ (see scripts/bench.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage boot
. "$ROOT/tests/lib/splat.sh"

TIMEOUT=${BOOT_TIMEOUT:-1800}
RES=${RESULTS_DIR:-$BUILD/results/boot}
IMAGE=${IMAGE:-$BUILD/image/debian~bookworm/partloop.raw}
DISKS=$BUILD/disks
[ -f "$IMAGE" ] || die "no guest image: run 'make image'"
KERNEL=${KERNEL:-$BUILD/bzImage}
[ -f "$KERNEL" ] || die "no kernel $KERNEL: run 'make kernel'"

# Disks, made anew for every boot and found in the guest by serial
# (/dev/disk/by-id/virtio-SERIAL): "dos83" carries the seed's DOS label with
# p1, p2 extended and logical p5..p83; "scratch" is empty.
mkdir -p "$DISKS"
make -s -C "$ROOT/tools" OUT="$BUILD/tools" check >&2 || die "tools/ failed to build or to pass its test"
rm -f "$DISKS/dos83.img" "$DISKS/scratch.img"
[ -n "${NO_DOS83:-}" ] || "$BUILD/tools/mkdosebr" -p 16 -l 2 -L 64 -n 79 "$DISKS/dos83.img" >/dev/null
truncate -s 1G "$DISKS/scratch.img"

# The results folder is emptied, except for bench.env (see scripts/bench.sh).
mkdir -p "$RES"
find "$RES" -mindepth 1 -maxdepth 1 ! -name bench.env -exec rm -rf {} +
# Settings the cases read (tests/robust), passed on when set.
for v in STRESS_SECONDS FUZZ_SEED FUZZ_TABLES FUZZ_COMPARE RACE_CYCLES RACE_UDEV_CYCLES RACE_READERS RACE_SETTLE CASE_TIMEOUT LOOP_KO; do
	[ -z "${!v:-}" ] || printf '%s=%q\n' "$v" "${!v}"
done >"$RES/test.env"
sel=all
(($#)) && sel=$(IFS=,; echo "$*")
cmdline="root=/dev/vda1 rw console=ttyS0 panic=-1 loglevel=4 log_buf_len=4M"
cmdline+=" systemd.mask=serial-getty@ttyS0.service systemd.mask=getty@tty1.service"
cmdline+=" systemd.mask=apt-daily.timer systemd.mask=apt-daily-upgrade.timer"
cmdline+=" systemd.mask=e2scrub_all.timer systemd.mask=fstrim.timer"
cmdline+=" systemd.mask=systemd-networkd.service systemd.mask=systemd-resolved.service"
if [ -n "${BENCH_DISK:-}" ]; then
	cmdline+=" partloop.bench=1 ${EXTRA_CMDLINE:-}"
else
	cmdline+=" partloop.test=$sel ${EXTRA_CMDLINE:-}"
fi

qemu=(qemu-system-x86_64 -machine "q35,accel=tcg" -cpu max -smp 2 -m 2G
	-nographic -nodefaults -no-reboot -serial stdio
	-object "rng-random,filename=/dev/urandom,id=rng0" -device "virtio-rng-pci,rng=rng0"
	-kernel "$KERNEL" -initrd "${IMAGE%.raw}.initrd" -append "$cmdline"
	-drive "if=none,id=root,file=$IMAGE,format=raw,snapshot=on"
	-device "virtio-blk-pci,drive=root"
	-drive "if=none,id=scratch,file=$DISKS/scratch.img,format=raw,cache=none,aio=threads"
	-device "virtio-blk-pci,drive=scratch,serial=scratch"
	-virtfs "local,path=$ROOT,mount_tag=project,security_model=none,readonly=on"
	-virtfs "local,path=$RES,mount_tag=results,security_model=none")
# The 83-partition disk costs udev time at every boot; NO_DOS83=1 leaves it
# out for boots whose tests do not use it.
if [ -z "${NO_DOS83:-}" ]; then
	qemu+=(-drive "if=none,id=dos83,file=$DISKS/dos83.img,format=raw,cache=none,aio=threads"
		-device "virtio-blk-pci,drive=dos83,serial=dos83")
fi
if [ -n "${BENCH_DISK:-}" ]; then
	qemu+=(-drive "if=none,id=bench,file=$BENCH_DISK,format=raw,cache=none,aio=threads"
		-device "virtio-blk-pci,drive=bench,serial=bench")
fi
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
read -r p f s <<<"$(sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/' <<<"${summary:-0 passed, 0 failed}")"
s=${s:-0}
# A green boot ran what it was asked to, and something in it passed: a
# guest that reported fewer cases than were selected, or a boot whose
# every case skipped (a kernel or command line other than the cases
# expect), proves nothing.
if [ -z "${BENCH_DISK:-}" ] && [ -n "$summary" ]; then
	want=$(expected_cases "$@")
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

# shellcheck shell=bash
# The stress run shared by tests/robust/002 (compat) and 003 (partitioned):
#   stress_run MODE    MODE is compat (the stock numbering, losetup -P) or
#                      partitioned (max_part=16, scans by --rereadpt or -P)
# Seven workers run at once for STRESS_SECONDS (default 120):
#   attach0, attach1  losetup -f with and without -P on four GPT images,
#                     --rereadpt, read p1, losetup -d
#   rescan            one device: --rereadpt, partx -d, partx -a, read every
#                     partition
#   reader            open and read any loop partition that exists
#   capacity          grow the backing file, LOOP_SET_CAPACITY (losetup -c),
#                     check the new size; shrink back every eighth time
#   control           /dev/loop-control add and remove loop100..loop103
#   mount             mount ext4 on a partition, write a data file, sync,
#                     unmount, mount again, check its sha256
# Races between them may make single operations fail (EBUSY, ENXIO, a node
# gone): those are counted, not failures.  Failures: a worker that never
# succeeded, a data file that reads back wrong, a mount that fails on the
# worker's own device, anything left attached or any partition left in
# /sys/block, /proc/partitions or /dev, the next attach not on the expected
# device numbers, an image that changed although only read (and any
# kernel splat, which the runner checks).
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

STRESS_SECONDS=${STRESS_SECONDS:-120}

# _count WORKER ok|err OP; _try WORKER OP COMMAND...: run it, count the outcome.
_count() { echo "$2" >>"$SDIR/$1.$3"; }
_try() {
	local w=$1 op=$2
	shift 2
	if "$@" >/dev/null 2>&1; then _count "$w" ok "$op"; else _count "$w" err "$op"; return 1; fi
}
_fatal() { echo "$*" >>"$SDIR/fatal"; }

_w_attach() {
	local me=$1 i=0 dev img flag
	while (($(date +%s) < END)); do
		img=$SDIR/img$((i % 4)).img
		flag=; ((i % 2)) && flag=-P
		i=$((i + 1))
		# shellcheck disable=SC2086
		if ! dev=$(losetup --show -f $flag "$img" 2>/dev/null); then
			_count "$me" err attach; continue
		fi
		_count "$me" ok attach
		if [[ $MODE == partitioned && -z $flag ]]; then
			_try "$me" rereadpt blockdev --rereadpt "$dev" || true
		fi
		_try "$me" read dd if="${dev}p1" of=/dev/null bs=4k count=4 status=none || true
		_try "$me" detach losetup -d "$dev" || true
	done
}

_w_rescan() {
	local dev=$1 p
	while (($(date +%s) < END)); do
		_try rescan rereadpt blockdev --rereadpt "$dev" || true
		_try rescan partx-d partx -d "$dev" || true
		_try rescan partx-a partx -a "$dev" || true
		for p in "$dev"p*; do
			[[ -b $p ]] || continue
			_try rescan read dd if="$p" of=/dev/null bs=4k count=4 status=none || true
		done
	done
}

_w_reader() {
	local p
	while (($(date +%s) < END)); do
		for p in /dev/loop*p*; do
			[[ -b $p ]] || continue
			_try reader read dd if="$p" of=/dev/null bs=4k count=2 status=none || true
		done
		sleep 0.1
	done
}

_w_capacity() {
	local dev=$1 img=$2 i=0 want got
	while (($(date +%s) < END)); do
		i=$((i + 1))
		if ((i % 8)); then
			truncate -s +1M "$img"
		else
			truncate -s 16M "$img"
		fi
		want=$(stat -c %s "$img")
		if ! losetup -c "$dev" 2>/dev/null; then
			_count capacity err set-capacity; continue
		fi
		got=$(blockdev --getsize64 "$dev")
		if [[ $got == "$want" ]]; then
			_count capacity ok set-capacity
		else
			_fatal "capacity: $dev is $got bytes after losetup -c, its file $want"
		fi
	done
}

_w_control() {
	local i=0 n
	while (($(date +%s) < END)); do
		n=$((100 + i % 4))
		i=$((i + 1))
		_try control add "$TOOLS/loopctl" add "$n" || true
		_try control remove "$TOOLS/loopctl" remove "$n" || true
	done
}

_w_mount() {
	local dev=$1 mnt=$SDIR/mnt i=0 sum
	mkdir -p "$mnt"
	while (($(date +%s) < END)); do
		i=$((i + 1))
		mount "${dev}p1" "$mnt" || { _fatal "mount: mount ${dev}p1 failed (round $i)"; return; }
		rm -f "$mnt"/data.*
		cp "$SDIR/data.bin" "$mnt/data.$i" && sync
		umount "$mnt" || { _fatal "mount: umount failed (round $i)"; return; }
		mount -o ro "${dev}p1" "$mnt" || { _fatal "mount: mount -o ro ${dev}p1 failed (round $i)"; return; }
		sum=$(sha256sum <"$mnt/data.$i" | cut -d' ' -f1)
		umount "$mnt" || { _fatal "mount: umount failed (round $i)"; return; }
		[[ $sum == "$DATA_SUM" ]] || { _fatal "mount: data.$i reads back as $sum, written $DATA_SUM"; return; }
		_count mount ok round
		echo "$i" >"$SDIR/last-round"
	done
}

# _totals WORKER: "ok/err" per operation, e.g. "attach 31/0 detach 31/0"
_totals() {
	local f op ok err out=
	for f in "$SDIR/$1".*; do
		[[ -f $f ]] || continue
		op=${f##*.}
		ok=$(grep -c '^ok$' "$f" || true)
		err=$(grep -c '^err$' "$f" || true)
		out+="$op $ok/$err "
	done
	echo "${out% }"
}

stress_run() {
	MODE=$1
	local p0 dev_r dev_c dev_m pid pids=() w sums_before sums_after mnt dev n
	SDIR=$SCRATCH/stress
	rm -rf "$SDIR"; mkdir -p "$SDIR"
	on_exit "umount -q $SDIR/mnt 2>/dev/null; for n in 100 101 102 103; do $TOOLS/loopctl remove \$n >/dev/null 2>&1; done; rm -rf $SDIR"

	case $MODE in
	compat) loop_module; p0=-P ;;
	partitioned) loop_module max_part=16; p0= ;;
	*) fail "stress_run: unknown mode $MODE" ;;
	esac

	make_gpt "$SDIR/img0.img" 6 2048
	for n in 1 2 3 4; do cp "$SDIR/img0.img" "$SDIR/img$n.img"; done
	make_gpt "$SDIR/fs.img" 1 65536
	truncate -s 16M "$SDIR/cap.img"
	head -c 4M /dev/urandom >"$SDIR/data.bin"
	DATA_SUM=$(sha256sum <"$SDIR/data.bin" | cut -d' ' -f1)
	sums_before=$(cd "$SDIR" && sha256sum img0.img img1.img img2.img img3.img)

	# The workers' own devices: rescan (img4), capacity, mount (fs.img).
	dev_r=$(attach -P "$SDIR/img4.img")
	dev_c=$(attach "$SDIR/cap.img")
	dev_m=$(attach -P "$SDIR/fs.img")
	mkfs.ext4 -q -F "${dev_m}p1" >/dev/null || fail "mkfs.ext4 ${dev_m}p1 failed"

	END=$(($(date +%s) + STRESS_SECONDS))
	_w_attach attach0 & pids+=($!)
	_w_attach attach1 & pids+=($!)
	_w_rescan "$dev_r" & pids+=($!)
	_w_reader & pids+=($!)
	_w_capacity "$dev_c" "$SDIR/cap.img" & pids+=($!)
	_w_control & pids+=($!)
	_w_mount "$dev_m" & pids+=($!)
	progress "$MODE: ${#pids[@]} workers for ${STRESS_SECONDS}s"
	for pid in "${pids[@]}"; do
		wait "$pid" || _fatal "a worker exited with status $? (pid $pid)"
	done

	for w in attach0 attach1 rescan reader capacity control mount; do
		report "$MODE $w: $(_totals "$w") (operation ok/failed)"
		grep -qx ok "$SDIR/$w".* 2>/dev/null || _fatal "worker $w never succeeded"
	done
	report "$MODE: ${#pids[@]} workers, ${STRESS_SECONDS}s"
	[[ ! -s $SDIR/fatal ]] || fail "$MODE: $(head -5 "$SDIR/fatal" | tr '\n' ';')"

	# Afterwards: nothing attached, no partition anywhere.
	for n in 100 101 102 103; do "$TOOLS/loopctl" remove "$n" >/dev/null 2>&1 || true; done
	mnt=$SDIR/mnt
	losetup -d "$dev_r" "$dev_c"
	settle
	expect_eq "devices still attached after the workers (other than the mount worker's)" "$dev_m" \
		"$(losetup -n -O NAME -l | words)"
	losetup -d "$dev_m"
	settle
	expect_eq "devices attached" "" "$(losetup -n -O NAME -l | words)"
	expect_eq "loop partitions in /sys/block" "" "$(compgen -G '/sys/block/loop*/loop*p*' | words)"
	expect_eq "loop partitions in /proc/partitions" "" "$(awk '$4 ~ /^loop[0-9]+p/ { print $4 }' /proc/partitions | words)"
	expect_eq "loop partitions in /dev" "" "$(compgen -G '/dev/loop*p*' | words)"

	# Images that were only read are unchanged.
	sums_after=$(cd "$SDIR" && sha256sum img0.img img1.img img2.img img3.img)
	expect_eq "sha256 of the images the attach workers read" "$sums_before" "$sums_after"

	# The next attach gets the first device and its usual numbers.
	dev=$(attach $p0 "$SDIR/img0.img")
	[[ $MODE == partitioned ]] && { blockdev --rereadpt "$dev"; settle; }
	expect_eq "next attach" /dev/loop0 "$dev"
	if [[ $MODE == partitioned ]]; then
		expect_eq "loop0, loop0p1, loop0p6" "240:0 240:1 240:6" "$(dev_of loop0) $(dev_of loop0p1) $(dev_of loop0p6)"
	else
		expect_eq "loop0" "7:0" "$(dev_of loop0)"
		expect_eq "loop0p1's major (extended dev_t)" 259 "$(dev_of loop0p1 | cut -d: -f1)"
	fi
	expect_eq "partitions of loop0" 6 "$(partitions_of loop0 | wc -l)"
	losetup -d "$dev"

	# The data file written last reads back right after a fresh attach.
	dev=$(attach -P "$SDIR/fs.img")
	mkdir -p "$mnt"
	mount -o ro "${dev}p1" "$mnt" || fail "mount ${dev}p1 after the run failed"
	n=$(cat "$SDIR/last-round")
	expect_eq "sha256 of data.$n on ${dev}p1 after the run" "$DATA_SUM" "$(sha256sum <"$mnt/data.$n" | cut -d' ' -f1)"
	umount "$mnt"
	losetup -d "$dev"
	settle
	expect_no_parts "${dev#/dev/}" "after the last detach"
}

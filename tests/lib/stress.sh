# shellcheck shell=bash
# The stress run shared by tests/robust/002 (compat) and 003 (partitioned):
#   stress_run MODE    MODE is compat (the stock numbering, losetup -P) or
#                      partitioned (max_part=16, scans by --rereadpt or -P)
# Eight workers run at once for STRESS_SECONDS (tests/settings):
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
#   numbers           every loop device and partition in /sys/block, while
#                     the others run: its number and dev_t (240:N*16+K and
#                     240:N*16 partitioned, 259:x and 7:N compat)
# Races between them make some operations fail by design, and only with
# the errors _allowed() lists, each with the worker that explains it (EBUSY
# while something holds a partition or the device, ENOENT/ENXIO for a
# partition gone between the glob and the open, EIO for a read that raced
# with a detach, EEXIST for a loop-control add of a device udev still
# holds): those are counted.  Failures: any other error of any operation
# (an attach, BLKRRPART, a partition read, LOOP_SET_CAPACITY or a detach
# that fails where nothing explains it), a worker that never succeeded, a
# wrong number, a data file that reads back wrong, a mount that fails on
# the worker's own device, anything left attached or any partition left in
# /sys/block, /proc/partitions or /dev, the next attach not on the
# expected device numbers, an image that changed although only read (and
# any kernel splat, which the runner checks).
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Each worker counts its operations in $SDIR/WORKER.OP, one "ok" or
# "err" line per run, and keeps what a failed run printed on stderr in
# $SDIR/msg/WORKER.OP, one line per message line.
#   _ok WORKER OP; _err WORKER OP MESSAGE...; _try WORKER OP COMMAND...
_ok() { echo ok >>"$SDIR/$1.$2"; }
_err() {
	local w=$1 op=$2 line n=0
	shift 2
	echo err >>"$SDIR/$w.$op"
	while IFS= read -r line; do
		# partx's closing "error deleting partitions 1-6" only sums up
		# the "deleting partition #1 failed: <error>" lines before it
		[[ $line =~ :\ error\ (deleting|adding)\ partition && $n -gt 0 ]] && continue
		[[ -n $line ]] || continue
		echo "$line" >>"$SDIR/msg/$w.$op"
		n=$((n + 1))
	done <<<"$*"
	((n)) || echo "failed without an error message" >>"$SDIR/msg/$w.$op"
}
_try() {
	local w=$1 op=$2 out
	shift 2
	if out=$("$@" 2>&1 >/dev/null); then
		_ok "$w" "$op"
	else
		_err "$w" "$op" "$out"
		return 1
	fi
}
_fatal() { echo "$*" >>"$SDIR/fatal"; }

# _allowed WORKER.OP: the errors that the other workers explain, an ERE
# matched against the end of each message line (": <strerror>" as dd,
# blockdev, partx -v and loopctl print it); an operation not listed must
# never fail.
_allowed() {
	case $1 in
	# The reader, or udev's blkid after an attach or rescan, has one of
	# the device's partitions (or the device) open.
	rescan.rereadpt | rescan.partx-d | rescan.partx-a) echo ': Device or resource busy$' ;;
	# The partition went (the rescan or attach workers' rescans or
	# detaches) between the glob and the open; or its detach is under
	# way, and an open that raced with it fails its I/O: patch 0002
	# documents that window (an opener between lo_open() and the
	# bd_openers increment), robust/007 and 008 measure it exactly.
	reader.read) echo ': (No such file or directory|No such device or address|Input/output error)$' ;;
	# Compat mode only: closing losetup -P's read-write descriptor makes
	# udev's inotify watch reread the table, and p1 is gone for a moment.
	# Partitioned mode sets nowatch (61-loop-partitioned-nowatch.rules).
	attach?.read) [[ $MODE == compat ]] && echo ': (No such file or directory|No such device or address)$' ;;
	# udev still has the new loop10N open (blkid, the watch), so the
	# remove fails and the next add finds it there.
	control.add) echo ': EEXIST \(File exists\)$' ;;
	control.remove) echo ': EBUSY \(Device or resource busy\)$' ;;
	esac
}

# _unexpected WORKER: its error messages that _allowed() does not explain,
# as fatal.
_unexpected() {
	local f op allow
	for f in "$SDIR/msg/$1".*; do
		[[ -f $f ]] || continue
		op=${f##*.}
		allow=$(_allowed "$1.$op")
		{ grep -Ev "${allow:-^\$}" "$f" || true; } | sort | uniq -c | awk 'NR <= 3' |
			sed "s/^ *\([0-9]*\) /$1 $op: \1 unexpected failure(s): /" >>"$SDIR/fatal"
	done
}

_w_attach() {
	local me=$1 i=0 dev img flag
	while (($(date +%s) < END)); do
		img=$SDIR/img$((i % 4)).img
		flag=; ((i % 2)) && flag=-P
		i=$((i + 1))
		# shellcheck disable=SC2086
		if ! dev=$(losetup --show -f $flag "$img" 2>"$SDIR/stderr.$me"); then
			_err "$me" attach "$(cat "$SDIR/stderr.$me")"; continue
		fi
		_ok "$me" attach
		if [[ $MODE == partitioned && -z $flag ]]; then
			_try "$me" rereadpt blockdev --rereadpt "$dev" || true
		fi
		# p1 exists once the table is read: -P, or --rereadpt above
		# (compat mode without -P has no partitions, by design).
		if [[ $MODE == partitioned || -n $flag ]]; then
			_try "$me" read dd if="${dev}p1" of=/dev/null bs=4k count=4 status=none || true
		fi
		_try "$me" detach losetup -d "$dev" || true
	done
}

_w_rescan() {
	local dev=$1 p
	while (($(date +%s) < END)); do
		_try rescan rereadpt blockdev --rereadpt "$dev" || true
		# -v: the per-partition lines name the error, see _err()
		_try rescan partx-d partx -v -d "$dev" || true
		_try rescan partx-a partx -v -a "$dev" || true
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
		if ! _try capacity set-capacity losetup -c "$dev"; then
			continue
		fi
		got=$(blockdev --getsize64 "$dev")
		if [[ $got != "$want" ]]; then
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
		_ok mount round
		echo "$i" >"$SDIR/last-round"
	done
}

_w_numbers() {
	local d n k p dev want
	while (($(date +%s) < END)); do
		for d in /sys/block/loop*/loop*p*; do
			n=${d#/sys/block/loop}
			n=${n%%/*}
			k=${d##*p}
			# gone in between: the next round sees the next state
			{ read -r p <"$d/partition" && read -r dev <"$d/dev"; } 2>/dev/null || continue
			# partitioned: 240:N*16+K (the images have 6, never the 16
			# that would take 259:x); compat: always 259:x
			if [[ $MODE == partitioned ]]; then
				want=240:$((n * 16 + k))
			else
				want='259:*'
			fi
			# shellcheck disable=SC2053 # $want is a pattern in compat mode
			if [[ $p == "$k" && $dev == $want ]]; then
				_ok numbers partition
			else
				_err numbers partition "${d##*/}: partition $p, dev $dev; expected partition $k, dev $want"
			fi
		done
		for d in /sys/block/loop[0-9]*; do
			n=${d#/sys/block/loop}
			{ read -r dev <"$d/dev"; } 2>/dev/null || continue
			if [[ $MODE == partitioned ]]; then
				want=240:$((n * 16))
			else
				want=7:$n
			fi
			if [[ $dev == "$want" ]]; then
				_ok numbers disk
			else
				_err numbers disk "loop$n: dev $dev; expected $want"
			fi
		done
		sleep 0.2
	done
}

# _totals WORKER: "ok/err" per operation, e.g. "attach 31/0 detach 31/0"
_totals() {
	local f op ok err out=
	for f in "$SDIR/$1".*; do
		[[ -f $f ]] || continue
		op=${f##*.}
		ok=$(grep -c '^ok$' "$f" || true)
		err=$(grep -c '^err' "$f" || true)
		out+="$op $ok/$err "
	done
	echo "${out% }"
}

stress_run() {
	MODE=$1
	local p0 dev_r dev_c dev_m pid pids=() w sums_before sums_after mnt dev n
	SDIR=$SCRATCH/stress
	rm -rf "$SDIR"; mkdir -p "$SDIR/msg"
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
	_w_numbers & pids+=($!)
	progress "$MODE: ${#pids[@]} workers for ${STRESS_SECONDS}s"
	for pid in "${pids[@]}"; do
		wait "$pid" || _fatal "a worker exited with status $? (pid $pid)"
	done

	for w in attach0 attach1 rescan reader capacity control mount numbers; do
		report "$MODE $w: $(_totals "$w") (operation ok/failed)"
		grep -qx ok "$SDIR/$w".* 2>/dev/null || _fatal "worker $w never succeeded"
		_unexpected "$w"
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

#!/bin/bash
# bench/run-attach.sh: how long attaching and scanning a loop device takes
# with 127 and 255 partitions, and how many attach/detach cycles a second
# the driver does: patched partitioned mode against the stock driver.
# Inside the guest, run by bench/run after bench/run-fio.sh.
#
# usage: run-attach.sh OUTDIR
# settings (tests/settings): BENCH_REPS, BENCH_CYCLE_SECONDS
#
# Writes OUTDIR/attach.csv:  scan,VARIANT,PARTS,REP,SECONDS_TO_SCAN,SECONDS_TO_NODES
#                            cycles,VARIANT,PARTS,CYCLES,SECONDS
#   part   patched driver, max_part=128 (127 partitions) or 256 (255):
#          losetup, then blockdev --rereadpt (two commands)
#   part-P the same driver and mode, losetup -P (one command, as stock)
#   stock  stock 6.1 driver without max_part: losetup -P
# SECONDS_TO_SCAN ends when the last command returns; SECONDS_TO_NODES when
# udev has made every partition node.  A cycle is losetup -f + losetup -d
# (with -P or --rereadpt on a 7-partition image when PARTS is 7).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: run-attach.sh OUTDIR}
# shellcheck source=tests/settings
. "$HERE/../tests/settings"
REPS=$BENCH_REPS CYCLE_SECONDS=$BENCH_CYCLE_SECONDS
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
TMP=/var/tmp/bench-attach
mkdir -p "$TMP"
CSV=$OUT/attach.csv
: >"$CSV"

now() { date +%s.%N; }
sub() { echo "$1 $2" | awk '{ printf "%.3f", $1 - $2 }'; }

# load VARIANT PARTS
load() {
	if [ "$1" = stock ]; then
		use_module stock
	else
		use_module patched max_part=$(($2 + 1))
	fi
}

# connect VARIANT IMG: attach IMG and have its partitions scanned.
connect() {
	local dev
	if [ "$1" != part ]; then
		dev=$(losetup -f --show -P "$2") || die "losetup -P $2 failed"
	else
		dev=$(losetup -f --show "$2") || die "losetup $2 failed"
		blockdev --rereadpt "$dev" || die "blockdev --rereadpt $dev failed"
	fi
	echo "$dev"
}

for parts in 127 255 7; do
	gpt_image "$TMP/gpt$parts.img" "$parts" || die "cannot make $TMP/gpt$parts.img"
done

for rep in $(seq "$REPS"); do
	for parts in 127 255; do
		for v in part part-P stock; do
			load "$v" "$parts"
			detach_all
			t0=$(now)
			dev=$(connect "$v" "$TMP/gpt$parts.img")
			t1=$(now)
			settle
			t2=$(now)
			name=${dev#/dev/}
			got=$(find /dev -maxdepth 1 -name "${name}p*" | wc -l)
			((got == parts)) || die "$v: $dev has $got partition nodes after the scan, expected $parts"
			echo "scan,$v,$parts,$rep,$(sub "$t1" "$t0"),$(sub "$t2" "$t0")" >>"$CSV"
			say "attach+scan rep $rep, $parts partitions, $v: $(sub "$t1" "$t0")s, nodes after $(sub "$t2" "$t0")s"
			losetup -d "$dev"
			settle
		done
	done
done

for parts in 0 7; do
	for v in part part-P stock; do
		load "$v" 7
		detach_all
		n=0
		t0=$(now)
		end=$(($(date +%s) + CYCLE_SECONDS))
		while (($(date +%s) < end)); do
			if ((parts)); then
				dev=$(connect "$v" "$TMP/gpt7.img")
			else
				dev=$(losetup -f --show "$TMP/gpt7.img") || die "losetup failed"
			fi
			losetup -d "$dev" || die "losetup -d $dev failed"
			n=$((n + 1))
		done
		t1=$(now)
		echo "cycles,$v,$parts,$n,$(sub "$t1" "$t0")" >>"$CSV"
		say "attach/detach cycles, $v, $parts partitions: $n in $(sub "$t1" "$t0")s"
		settle
		detach_all
	done
done
rm -rf "$TMP"

#!/bin/bash
# Host-side test of mkdosebr: libblkid (partx) must read back p1, p2 and
# p5..p83 with the starts and sizes the layout promises, and no overlap.
set -euo pipefail
tool=$1
img=$(mktemp --suffix=.img)
trap 'rm -f "$img"' EXIT
"$tool" -p 16 -l 2 -L 64 -n 79 "$img" >/dev/null

fails=0
check() { # what expected seen
	if [[ $2 != "$3" ]]; then
		echo "FAIL: $1: expected '$2', seen '$3'" >&2
		fails=$((fails + 1))
	fi
}
nrs=$(partx -g -o NR --show "$img" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
check "partition numbers" "1 2 $(seq -s ' ' 5 83)" "$nrs"

declare -A start size
while read -r nr s n; do start[$nr]=$s; size[$nr]=$n; done < <(partx -g -o NR,START,SECTORS --show "$img")
check "p1 start" 2048 "${start[1]}"
check "p1 size" $((16 * 2048)) "${size[1]}"
check "p2 (extended) start" $((2048 + 16 * 2048)) "${start[2]}"
# Logical p(5+i) starts 1 MiB after its EBR; EBRs are 3 MiB apart.
for i in $(seq 0 78); do
	p=$((5 + i))
	check "p$p start" $((start[2] + i * 3 * 2048 + 2048)) "${start[$p]}"
	want=$((2 * 2048)); ((p == 83)) && want=$((64 * 2048))
	check "p$p size" "$want" "${size[$p]}"
done
# No logical partition reaches into the next one's EBR.
for p in $(seq 5 82); do
	((start[$p] + size[$p] < start[$((p + 1))])) || { echo "FAIL: p$p overlaps p$((p + 1))'s EBR" >&2; fails=$((fails + 1)); }
done
check "extended partition end" $((start[83] + size[83])) $((start[2] + size[2]))
((fails == 0)) && echo "mkdosebr: 81 partitions read back as laid out"
exit $((fails > 0))

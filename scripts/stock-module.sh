#!/bin/bash
# Stage "stock-module": build the stock loop driver of the line
# (drivers/block/loop.c as linux-source-LINE ships it, before its series)
# as an out-of-tree module against the line's guest kernel, so that one
# guest boot can compare the patched driver with the one it replaces.
# Output: build/stock/loop.ko (LINE=6.12: build/stock-6.12/loop.ko).
# usage: stock-module.sh [bench]
#   bench: against the benchmark's kernel (kernel.sh bench) instead,
#          build/stock-bench/loop.ko
set -euo pipefail
. "$(dirname "$0")/lib.sh"
VARIANT=${1:-}
case $VARIANT in
'' | bench) ;;
*) die "unknown kernel variant '$VARIANT' (bench or none)" ;;
esac
stage "stock-module $LINE${VARIANT:+ ($VARIANT)}"

OUT=$BUILD/stock$LSUF${VARIANT:+-$VARIANT}
KBUILD=$KBUILD${VARIANT:+-$VARIANT}
[ -f "$KBUILD/Module.symvers" ] || die "no built guest kernel in $KBUILD: run 'make kernel${VARIANT:+-$VARIANT}${LSUF:+ LINE=$LINE}'"
git -C "$SRC" rev-parse -q --verify pristine >/dev/null || die "$SRC has no 'pristine' tag: run 'make tree${LSUF:+ LINE=$LINE}'"

mkdir -p "$OUT.new"
git -C "$SRC" show pristine:drivers/block/loop.c >"$OUT.new/loop.c"
# Not dkms/Kbuild, which picks loop_<VERSION>_<PATCHLEVEL>.c: one loop.c.
echo 'obj-m := loop.o' >"$OUT.new/Kbuild"
# Rebuild only when the sources changed (the kernel's own make would also
# skip it, but a fresh copy has new timestamps).
if [ -f "$OUT/loop.ko" ] && cmp -s "$OUT.new/loop.c" "$OUT/loop.c" \
	&& [ "$OUT/loop.ko" -nt "$KBUILD/Module.symvers" ]; then
	rm -rf "$OUT.new"
	log "stock loop.ko up to date"
	exit 0
fi
rm -rf "$OUT"
mv "$OUT.new" "$OUT"
external_module "$SRC" "$KBUILD" "$OUT" || die "building the stock loop.ko failed (log: $OUT/build.log)"
log "stock loop.ko for $(modinfo -F vermagic "$OUT/loop.ko"| cut -d' ' -f1): sha256 $(sha256sum "$OUT/loop.ko" | cut -c1-16)"

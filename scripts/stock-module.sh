#!/bin/bash
# Stage "stock-module": build the stock 6.1 loop driver (drivers/block/loop.c
# as linux-source-6.1 ships it, before patches/series) as an out-of-tree
# module against the guest kernel, so that one guest boot can compare the
# patched driver with the one it replaces.  Output: build/stock/loop.ko.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage stock-module

OUT=$BUILD/stock
[ -f "$KBUILD/Module.symvers" ] || die "no built guest kernel in $KBUILD: run 'make kernel'"
git -C "$SRC" rev-parse -q --verify pristine >/dev/null || die "$SRC has no 'pristine' tag: run 'make tree'"

mkdir -p "$OUT.new"
git -C "$SRC" show pristine:drivers/block/loop.c >"$OUT.new/loop.c"
cp "$ROOT/dkms/Kbuild" "$OUT.new/Kbuild"
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
external_module "$OUT" || die "building the stock loop.ko failed (log: $OUT/build.log)"
log "stock loop.ko for $(modinfo -F vermagic "$OUT/loop.ko"| cut -d' ' -f1): sha256 $(sha256sum "$OUT/loop.ko" | cut -c1-16)"

#!/bin/bash
# Stage "check-dkms": boot Debian's own kernel (image-dkms/, loop as a
# module) and run tests/ groups dkms (the package refuses kernels it cannot
# serve, then dpkg -i builds loop.ko with DKMS inside the guest), compat and
# partitioned (unchanged, against the DKMS-built module) and dkms-remove
# (dpkg --purge restores the kernel's loop.ko).  Prints which loop.ko was
# loaded, then "N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

one_off_unset
read_boot dkms
IMG=$BUILD/${BOOTCONF[image]}
DIR=$(dirname "$IMG")
RES=$BUILD/${BOOTCONF[results]}
[ -f "$IMG" ] || die "no DKMS guest image: run 'make image-dkms'"
[ -f "$BUILD/partloop-dkms.deb" ] || die "no package: run 'make deb'"
log "Debian kernel $(cat "$DIR/kernel.release"), package $(cat "$BUILD/deb/version")"

rc=0
BOOT=dkms "$ROOT/scripts/boot.sh" || rc=1
read -r p f s < <(read_summary "$RES/summary")
rec=$RES/cases/dkms.003-install-replaces-loop.stdout
if [ -s "$rec" ]; then
	log "what the DKMS boot loaded:"
	sed 's/^/    /' "$rec" >&2
else
	echo "FAILED: the install case recorded no loaded loop.ko ($rec)" >&2
	((rc)) || f=$((f + 1))
	rc=1
fi
echo "$p passed, $f failed, $s skipped" | tee "$RES/summary"
((rc == 0 && f == 0))

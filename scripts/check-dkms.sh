#!/bin/bash
# Stage "check-dkms": boot Debian's own kernel (image-dkms/, loop as a
# module) and run tests/ groups dkms (the package refuses kernels it cannot
# serve, then dpkg -i builds loop.ko with DKMS inside the guest), compat and
# partitioned (unchanged, against the DKMS-built module) and dkms-remove
# (dpkg --purge restores the kernel's loop.ko).  Prints which loop.ko was
# loaded, then "N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DIR=$BUILD/image-dkms/debian~bookworm
RES=$BUILD/results/dkms
[ -f "$DIR/partloop.raw" ] || die "no DKMS guest image: run 'make image-dkms'"
[ -f "$BUILD/partloop-dkms.deb" ] || die "no package: run 'make deb'"
log "Debian kernel $(cat "$DIR/kernel.release"), package $(cat "$BUILD/deb/version")"

rc=0
# The DKMS build (gcc under TCG) and Debian's modular kernel make this boot
# slower than the main one.
KERNEL=$DIR/partloop.vmlinuz IMAGE=$DIR/partloop.raw RESULTS_DIR=$RES \
	BOOT_TIMEOUT=${BOOT_TIMEOUT:-2400} "$ROOT/scripts/boot.sh" dkms compat partitioned dkms-remove || rc=1
read -r p _ f _ s _ < <(tr -d ',' <"$RES/summary" 2>/dev/null || echo "0 passed 1 failed 0 skipped")
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

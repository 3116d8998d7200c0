#!/bin/bash
# Stage "check-dkms": boot Debian's own kernels (image-dkms/, loop as a
# module) of both lines in turn, boots dkms (6.1, linux-image-amd64) and
# dkms-6.12 (linux-image-6.12-amd64), and in each run tests/ groups dkms
# (the package refuses kernels it cannot serve, then dpkg -i builds loop.ko
# with DKMS inside the guest), compat and partitioned (unchanged, against
# the DKMS-built module) and dkms-remove (dpkg --purge restores the
# kernel's loop.ko).  Prints which loop.ko each boot loaded, then one line
# "N passed, N failed, N skipped" for both.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BOOTS=(dkms dkms-6.12)
declare -A MAKE_IMAGE=([dkms]="make image-dkms LINE=6.1" [dkms-6.12]="make image-dkms LINE=6.12")
one_off_unset
[ -f "$BUILD/partloop-dkms.deb" ] || die "no package: run 'make deb'"
for b in "${BOOTS[@]}"; do
	read_boot "$b"
	[ -f "$BUILD/${BOOTCONF[image]}" ] || die "no DKMS guest image for boot $b ($BUILD/${BOOTCONF[image]}): run '${MAKE_IMAGE[$b]}'"
	rm -rf "${BUILD:?}/${BOOTCONF[results]}"
done

declare -A BRC=()	# each boot's exit status
for b in "${BOOTS[@]}"; do
	read_boot "$b"
	log "boot $b: Debian kernel $(cat "$(dirname "$BUILD/${BOOTCONF[image]}")/kernel.release"), package $(cat "$BUILD/deb/version")"
	BRC[$b]=0
	BOOT=$b "$ROOT/scripts/boot.sh" || BRC[$b]=1
done

# Each boot's summary, with a failure more for a boot that passed but
# recorded no loaded loop.ko (a failed boot counts its failure already),
# then the sum.
p=0 f=0 s=0
for b in "${BOOTS[@]}"; do
	read_boot "$b"
	res=$BUILD/${BOOTCONF[results]}
	read -r bp bf bs < <(read_summary "$res/summary")
	rec=$res/cases/dkms.003-install-replaces-loop.stdout
	if [ -s "$rec" ]; then
		log "what the $b boot loaded:"
		sed 's/^/    /' "$rec" >&2
	else
		echo "FAILED: the $b boot's install case recorded no loaded loop.ko (${rec#"$ROOT"/})" >&2
		if [ "${BRC[$b]}" = 0 ] && ((bf == 0)); then
			bf=1
			echo "$bp passed, $bf failed, $bs skipped" >"$res/summary"
		fi
	fi
	if [ "${BRC[$b]}" != 0 ] && ((bf == 0)); then bf=1; fi
	log "boot $b: $bp passed, $bf failed, $bs skipped"
	p=$((p + bp)) f=$((f + bf)) s=$((s + bs))
done
if [ -n "${PARTLOOP_START:-}" ]; then log "total since make started: $(($(date +%s) - PARTLOOP_START))s"; fi
echo "$p passed, $f failed, $s skipped"
((f == 0))

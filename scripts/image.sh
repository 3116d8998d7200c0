#!/bin/bash
# Stage "image": build the Debian bookworm guest with mkosi 14 from
# mkosi.conf and mkosi.extra/, with the project's kernel modules inside
# (mkosi.finalize).  Skipped when nothing that goes into it changed.
#
# usage: image.sh [dkms]
#   dkms: the guest of image-dkms/ instead, which runs Debian's own kernel
#         of LINE (for make check-dkms): 6.1 (linux-image-amd64) in
#         build/image-dkms, another line with image-dkms/line-LINE.conf on
#         top of image-dkms/mkosi.conf (6.12: linux-image-6.12-amd64, from
#         bookworm-security) in build/image-dkms-LINE
#   The main image ignores LINE: it carries the default line's kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
VARIANT=${1:-}
stage "image${VARIANT:+ ($VARIANT${LSUF:+ $LINE})}"

MKOSI_CACHE=${MKOSI_CACHE:-$HOME/.cache/partloop/mkosi}
command -v mkosi >/dev/null || die "mkosi missing: run 'make deps'"
MKOSI_ARGS=()	# what mkosi reads after CONF_DIR/mkosi.conf
CONF_FILES=()	# the configuration files of the image and its cache
if [ "$VARIANT" = dkms ]; then
	CONF_DIR=$ROOT/image-dkms
	OUT_DIR=$BUILD/image-dkms$LSUF
	if [ -n "$LSUF" ]; then
		# mkosi 14 reads an "@FILE" argument as one more configuration
		# file, after mkosi.conf: its Packages drop ("!name") the 6.1
		# kernel and add the line's, its OutputDirectory is OUT_DIR.
		line_conf=$CONF_DIR/line-$LINE.conf
		[ -f "$line_conf" ] || die "no ${line_conf#"$ROOT"/}: the DKMS guest has no $LINE kernel (lines ${LINES[*]})"
		MKOSI_ARGS+=("@$line_conf")
		CONF_FILES+=("$line_conf")
	fi
else
	CONF_DIR=$ROOT
	OUT_DIR=$BUILD/image
	[ -f "$BUILD/kernel.release" ] || die "no kernel built yet: run 'make kernel'"
fi
IMAGE_DIR=$OUT_DIR/debian~bookworm	# mkosi 14 adds <distribution>~<release>
STAMP=$OUT_DIR/.stamp			# what the image was built from
CONF_STAMP=$OUT_DIR/.conf-stamp		# the mkosi.conf of the incremental cache

# mkosi's mkfs.ext4 reads this: ext4 with metadata_csum_seed, so that the
# UUID refresh of an incremental build cannot fail (see the file).
export MKE2FS_CONFIG=$ROOT/scripts/mke2fs.conf

# What the image is made of: its configuration, the test service and, for
# the main image, the kernel build.  The incremental cache depends on
# mkosi.conf and on how its file system is made.
conf_sum=$(cat "$CONF_DIR/mkosi.conf" "${CONF_FILES[@]}" "$MKE2FS_CONFIG" | sha256sum | cut -d' ' -f1)
want=$( {
	echo "$conf_sum"
	cat "$CONF_DIR/mkosi.finalize"
	[ ! -f "$CONF_DIR/mkosi.postinst" ] || cat "$CONF_DIR/mkosi.postinst"
	if [ "$VARIANT" = dkms ]; then
		# The two files of mkosi.extra/ that its mkosi.finalize copies.
		(cd "$ROOT/mkosi.extra" && stat -c '%n %a' etc/systemd/system/partloop-tests.service usr/local/sbin/partloop-tests \
			&& cat etc/systemd/system/partloop-tests.service usr/local/sbin/partloop-tests)
	else
		(cd "$ROOT/mkosi.extra" && find . -printf '%p %l %m\n' | sort && find . -type f -print0 | sort -z | xargs -0 cat)
		cat "$ROOT/dkms/61-loop-partitioned-nowatch.rules"
		cat "$BUILD/kernel.release" "$BUILD/bzImage"
		(cd "$BUILD/modroot" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	fi
} | sha256sum | cut -d' ' -f1)
if [ -f "$IMAGE_DIR/partloop.raw" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
	log "image up to date: $IMAGE_DIR/partloop.raw"
	exit 0
fi

force=-f
if [ "$(cat "$CONF_STAMP" 2>/dev/null)" != "$conf_sum" ]; then
	force=-ff	# the incremental cache is never invalidated by mkosi 14
	log "mkosi.conf changed (or first build): rebuilding from scratch"
fi
mkdir -p "$OUT_DIR" "$MKOSI_CACHE"
rm -f "$STAMP"

# This host has no systemd as init: /run is not a tmpfs and nspawn cannot
# clean /run/systemd/nspawn/propagate.  Give mkosi a private tmpfs there.
mkdir -p /run/systemd
LOG=$OUT_DIR.log
log "mkosi build (log: ${LOG#"$ROOT"/})"
if ! (cd "$CONF_DIR" && unshare --mount --propagation private bash -c \
	'mount -t tmpfs tmpfs /run/systemd && exec mkosi "$@"' mkosi \
	--cache="$MKOSI_CACHE" "$force" "${MKOSI_ARGS[@]}" build) >"$LOG" 2>&1; then
	tail -30 "$LOG" >&2
	die "mkosi build failed, see $LOG"
fi
[ -f "$IMAGE_DIR/partloop.raw" ] || die "mkosi did not produce $IMAGE_DIR/partloop.raw (see $LOG)"
# The next incremental build refreshes this file system's UUID: make sure
# mkosi made it with the seed (a mkosi that stops passing MKE2FS_CONFIG on
# would bring the random failure back).
start=$(partx -g -n 1 -o START "$IMAGE_DIR/partloop.raw" | tr -d ' ') \
	|| die "cannot read the partition table of $IMAGE_DIR/partloop.raw"
features=$(dumpe2fs -h "$IMAGE_DIR/partloop.raw?offset=$((start * 512))" 2>/dev/null | sed -n 's/^Filesystem features: *//p')
case " $features " in
*" metadata_csum_seed "*) ;;
*) die "the image's root file system lacks metadata_csum_seed (features: ${features:-unreadable}); mkosi did not use $MKE2FS_CONFIG" ;;
esac
echo "$conf_sum" > "$CONF_STAMP"
echo "$want" > "$STAMP"
log "image: $IMAGE_DIR/partloop.raw ($(du -h "$IMAGE_DIR/partloop.raw" | cut -f1) used)"

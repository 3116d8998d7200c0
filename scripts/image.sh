#!/bin/bash
# Stage "image": build the Debian bookworm guest with mkosi 14 from
# mkosi.conf and mkosi.extra/, with the project's kernel modules inside
# (mkosi.finalize).  Skipped when nothing that goes into it changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage image

IMAGE_DIR=$BUILD/image/debian~bookworm	# mkosi 14 adds <distribution>~<release>
STAMP=$BUILD/image/.stamp		# what the image was built from
CONF_STAMP=$BUILD/image/.conf-stamp	# the mkosi.conf of the incremental cache
MKOSI_CACHE=${MKOSI_CACHE:-$HOME/.cache/partloop/mkosi}
[ -f "$BUILD/kernel.release" ] || die "no kernel built yet: run 'make kernel'"
command -v mkosi >/dev/null || die "mkosi missing: run 'make deps'"

# What the image is made of: its configuration and the kernel build.
conf_sum=$(sha256sum <"$ROOT/mkosi.conf" | cut -d' ' -f1)
want=$( {
	echo "$conf_sum"
	cat "$ROOT/mkosi.finalize" "$BUILD/kernel.release" "$BUILD/bzImage"
	(cd "$ROOT/mkosi.extra" && find . -printf '%p %l %m\n' | sort && find . -type f -print0 | sort -z | xargs -0 cat)
	(cd "$BUILD/modroot" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
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
mkdir -p "$BUILD/image" "$MKOSI_CACHE"
rm -f "$STAMP"

# This host has no systemd as init: /run is not a tmpfs and nspawn cannot
# clean /run/systemd/nspawn/propagate.  Give mkosi a private tmpfs there.
mkdir -p /run/systemd
log "mkosi build (log: build/mkosi.log)"
if ! (cd "$ROOT" && unshare --mount --propagation private bash -c \
	'mount -t tmpfs tmpfs /run/systemd && exec mkosi "$@"' mkosi \
	--cache="$MKOSI_CACHE" "$force" build) >"$BUILD/mkosi.log" 2>&1; then
	tail -30 "$BUILD/mkosi.log" >&2
	die "mkosi build failed, see $BUILD/mkosi.log"
fi
[ -f "$IMAGE_DIR/partloop.raw" ] || die "mkosi did not produce $IMAGE_DIR/partloop.raw (see $BUILD/mkosi.log)"
echo "$conf_sum" > "$CONF_STAMP"
echo "$want" > "$STAMP"
log "image: $IMAGE_DIR/partloop.raw ($(du -h "$IMAGE_DIR/partloop.raw" | cut -f1) used)"

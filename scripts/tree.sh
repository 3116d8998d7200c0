#!/bin/bash
# Stage "tree": unpack linux-source-LINE (LINE: 6.1 by default, or 6.12)
# into build/linux (build/linux-6.12) and apply patches/LINE/series with
# quilt.  The unpacked tree is committed once into a
# private git repository so that it can be brought back to exactly
# "pristine" whenever the series changes; files the old series touched get
# a fresh mtime from the reset, so Kbuild recompiles them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage "tree $LINE"

[ -r "$TARBALL" ] || die "$TARBALL missing: run 'make deps' (package linux-source-$LINE)"

if [ ! -e "$SRC/.git/refs/tags/pristine" ]; then
	log "unpacking $TARBALL into $SRC (about a minute)"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xaf "$TARBALL" -C "$SRC.tmp" --strip-components=1
	log "recording the pristine tree in git"
	git -C "$SRC.tmp" init -q
	git -C "$SRC.tmp" -c core.autocrlf=false add -A -f .
	git -C "$SRC.tmp" -c user.name=partloop -c user.email=partloop@localhost \
		commit -q -m "pristine $(dpkg-query -W -f='${Version}' "linux-source-$LINE")"
	git -C "$SRC.tmp" tag pristine
	mv "$SRC.tmp" "$SRC"
fi

# The stamp is the content of the series and of every patch it names.
want=$(cd "$PATCHES" && { cat series; series_patches | xargs -r cat; } | sha256sum | cut -d' ' -f1)
have=$(cat "$SRC/.series-applied" 2>/dev/null || true)
if [ "$want" = "$have" ]; then
	log "tree already is pristine + current series"
	exit 0
fi

log "resetting $SRC to pristine"
rm -f "$SRC/.series-applied"
git -C "$SRC" reset -q --hard pristine
git -C "$SRC" clean -q -fdx

export QUILT_PATCHES=$PATCHES QUILT_PC=.pc
n=$(series_patches | wc -l)
log "applying $n patches from patches/$LINE/series"
i=0
for p in $(series_patches); do
	i=$((i + 1))
	if ! (cd "$SRC" && quilt push -q "$p" >"$BUILD/quilt$LSUF.log" 2>&1); then
		cat "$BUILD/quilt$LSUF.log" >&2
		die "patch $i/$n '$p' does not apply; the tree is left half-applied and will be reset on the next run"
	fi
	log "  applied $i/$n $p"
done
echo "$want" > "$SRC/.series-applied"

#!/bin/bash
# Stage "deb": the DKMS package of the patched loop driver.  The driver
# source is drivers/block/loop.c of the tree after patches/series (never a
# copy kept in the repository); dkms/ holds dkms.conf, the Kbuild file and
# the package's maintainer scripts.  Output: build/partloop-dkms_VERSION_all.deb
# (and build/partloop-dkms.deb pointing at it).
#
# The version is the kernel source's, the number of patches and a hash of
# the series, e.g. 6.1.192+partloop8.1a2b3c4d.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage deb

[ -f "$SRC/.series-applied" ] || die "$SRC is not a complete tree: run 'make tree'"
[ -f "$KBUILD/Module.symvers" ] || die "no built guest kernel in $KBUILD: run 'make kernel'"
command -v dpkg-deb >/dev/null || die "dpkg-deb missing (package dpkg)"

kver=$(make -s -C "$SRC" kernelversion)
npatch=$(series_patches | wc -l)
shash=$(cut -c1-8 "$SRC/.series-applied")
VERSION="$kver+partloop$npatch.$shash"
NAME=partloop
PKG=$BUILD/deb/root
DEB=$BUILD/partloop-dkms_${VERSION}_all.deb
RULE=$ROOT/dkms/61-loop-partitioned-nowatch.rules	# also in the test image (mkosi.finalize)

rm -rf "$BUILD/deb"
usrc=$PKG/usr/src/$NAME-$VERSION
mkdir -p "$usrc" "$PKG/DEBIAN" "$PKG/lib/udev/rules.d" "$PKG/usr/share/doc/partloop-dkms" \
	"$PKG/usr/share/dkms/modules_to_force_install"
cp "$SRC/drivers/block/loop.c" "$ROOT/dkms/Kbuild" "$usrc/"
sed "s/@VERSION@/$VERSION/" "$ROOT/dkms/dkms.conf.in" >"$usrc/dkms.conf"
cp "$RULE" "$PKG/lib/udev/rules.d/"
# Neither loop.ko carries a MODULE_VERSION, so DKMS's version check would
# call them the same and keep the kernel's: skip that check for partloop.
echo "${NAME}_version-override" >"$PKG/usr/share/dkms/modules_to_force_install/$NAME"
cp "$ROOT/dkms/debian/copyright" "$PKG/usr/share/doc/partloop-dkms/"
sed -e "s/@VERSION@/$VERSION/" -e "s/@SOURCE@/$kver/" -e "s/@PATCHES@/$npatch/" -e "s/@SERIES@/$shash/" \
	"$ROOT/dkms/debian/control.in" >"$PKG/DEBIAN/control"
for s in preinst postinst prerm; do
	sed "s/@VERSION@/$VERSION/" "$ROOT/dkms/debian/$s" >"$PKG/DEBIAN/$s"
	chmod 0755 "$PKG/DEBIAN/$s"
done
echo "Installed-Size: $(du -sk --exclude=DEBIAN "$PKG" | cut -f1)" >>"$PKG/DEBIAN/control"

# The package's source must build as an external module; try it against
# the guest kernel (the same 6.1 tree) before shipping it.
mkdir -p "$BUILD/deb/check"
cp "$usrc/loop.c" "$usrc/Kbuild" "$BUILD/deb/check/"
external_module "$BUILD/deb/check" W=1 || die "the DKMS source does not build as an external module"
if grep -q 'warning:' "$BUILD/deb/check/build.log"; then
	cat "$BUILD/deb/check/build.log" >&2
	die "the DKMS source builds with warnings (W=1)"
fi

rm -f "$BUILD"/partloop-dkms_*_all.deb
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null
ln -sfn "$(basename "$DEB")" "$BUILD/partloop-dkms.deb"
echo "$VERSION" >"$BUILD/deb/version"
log "package: ${DEB#"$ROOT"/} ($(du -h "$DEB" | cut -f1))"
dpkg-deb --contents "$DEB" | awk '{ print "    " $NF }' >&2

#!/bin/bash
# Stage "deb": the DKMS package of the patched loop driver, one package for
# both kernel lines Debian 12 ships (LINES: 6.1, linux-image-amd64, and
# 6.12, linux-image-6.12-amd64).  It carries drivers/block/loop.c of each
# line's tree after its series (never a copy kept in the repository) as
# loop_6_1.c and loop_6_12.c; dkms/Kbuild builds the one of the kernel's
# VERSION.PATCHLEVEL as loop.ko.  dkms/ holds dkms.conf, the Kbuild file and
# the package's maintainer scripts.  Output:
# build/partloop-dkms_VERSION_all.deb (and build/partloop-dkms.deb pointing
# at it).
#
# The version names each line's kernel source, then the number of patches
# of each series and a hash of both series, e.g.
# 6.1.192+6.12.118+partloop15.14.1a2b3c4d.  Every line's tree must be
# complete (make tree LINE=...), and the source must build as an external
# module, W=1 without a warning, against Debian's own headers of each line
# (what linux-headers-amd64 and linux-headers-6.12-amd64 point at), which
# is what DKMS builds against on a Debian 12 machine and needs no kernel
# build here.  The header packages are downloaded and unpacked under
# build/debian-headers, not installed: the 6.12 ones depend on the 6.12
# kernel image, which has no business on this machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage deb

command -v dpkg-deb >/dev/null || die "dpkg-deb missing (package dpkg)"

# hdrs_of LINE: the folder of Debian's headers for LINE's kernel, through
# the meta package that follows the line (linux-headers-amd64 is 6.1):
# its flavour package, the common one and linux-kbuild, downloaded with
# apt and unpacked (dpkg -x) into build/debian-headers/root; the
# flavour's Makefile names the common folder by its absolute path.
declare -A HDR_META=([6.1]=linux-headers-amd64 [6.12]=linux-headers-6.12-amd64)
hdrs_of() {
	local meta=${HDR_META[$1]} top=$BUILD/debian-headers pkg p deps
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" { print $2; exit }')
	[ -n "$pkg" ] || die "apt knows no $meta (Debian's headers of $1): run 'apt-get update'"
	deps=$(apt-cache depends "$pkg" | awk '$1 ~ /Depends:$/ && $2 ~ /^linux-(headers-.*-common|kbuild-)/ { print $2 }')
	mkdir -p "$top/debs" "$top/root"
	for p in "$pkg" $deps; do
		if ! compgen -G "$top/debs/${p}_*.deb" >/dev/null; then
			(cd "$top/debs" && apt-get download -q "$p" >"$top/apt-$p.log" 2>&1) ||
				{ cat "$top/apt-$p.log" >&2; die "apt-get download $p failed"; }
			dpkg -x "$top/debs/${p}"_*.deb "$top/root"
		fi
	done
	sed -i "s|^include /usr/src/|include $top/root/usr/src/|" "$top/root/usr/src/$pkg/Makefile"
	[ -d "$top/root/usr/src/$pkg/include/config" ] || die "no prepared headers in $top/root/usr/src/$pkg (from $pkg)"
	echo "$top/root/usr/src/$pkg"
}

# Per line l (this script works on every line, whatever LINE says): its
# tree (build/linux for the default line, build/linux-l for another) and
# Debian's headers, its kernel version, patch count, series stamp and the
# name of its driver in the package.
declare -A TREE=() KB=() KVER=() NPATCH=() SHASH=() CFILE=()
# shellcheck disable=SC2034 # NPATCH and SHASH are read through joined's nameref
for l in "${LINES[@]}"; do
	suf=
	[ "$l" = "${LINES[0]}" ] || suf=-$l
	TREE[$l]=$BUILD/linux$suf
	KB[$l]=$(hdrs_of "$l")
	tree=${TREE[$l]#"$ROOT"/}
	[ -f "${TREE[$l]}/.series-applied" ] || die "$tree is not a complete $l tree (no .series-applied): run 'make tree LINE=$l' (the package carries the driver of every line: ${LINES[*]})"
	[ -f "${TREE[$l]}/.pc/applied-patches" ] || die "$tree has no quilt record .pc/applied-patches: run 'make tree LINE=$l'"
	KVER[$l]=$(make -s -C "${TREE[$l]}" kernelversion)
	[[ ${KVER[$l]} == "$l".* ]] || die "$tree holds Linux ${KVER[$l]}, not a $l kernel"
	NPATCH[$l]=$(grep -c . "${TREE[$l]}/.pc/applied-patches")
	SHASH[$l]=$(cut -c1-8 "${TREE[$l]}/.series-applied")
	CFILE[$l]=loop_${l//./_}.c	# dkms/Kbuild: loop_$(VERSION)_$(PATCHLEVEL).c
done

# joined MAP SEP: the lines' values of the array MAP in the order of LINES,
# SEP between them ("6.1.192+6.12.118", "15 and 14").
joined() {
	local -n map=$1
	local sep=$2 l out=
	for l in "${LINES[@]}"; do out+=${out:+$sep}${map[$l]}; done
	echo "$out"
}
shash=$(for l in "${LINES[@]}"; do cat "${TREE[$l]}/.series-applied"; done | sha256sum | cut -c1-8)
VERSION="$(joined KVER +)+partloop$(joined NPATCH .).$shash"
NAME=partloop
PKG=$BUILD/deb/root
DEB=$BUILD/partloop-dkms_${VERSION}_all.deb
RULE=$ROOT/dkms/61-loop-partitioned-nowatch.rules	# also in the test image (mkosi.finalize)

rm -rf "$BUILD/deb"
usrc=$PKG/usr/src/$NAME-$VERSION
mkdir -p "$usrc" "$PKG/DEBIAN" "$PKG/lib/udev/rules.d" "$PKG/usr/share/doc/partloop-dkms" \
	"$PKG/usr/share/dkms/modules_to_force_install"
for l in "${LINES[@]}"; do
	cp "${TREE[$l]}/drivers/block/loop.c" "$usrc/${CFILE[$l]}"
done
cp "$ROOT/dkms/Kbuild" "$usrc/"
sed "s/@VERSION@/$VERSION/" "$ROOT/dkms/dkms.conf.in" >"$usrc/dkms.conf"
cp "$RULE" "$PKG/lib/udev/rules.d/"
# Neither loop.ko carries a MODULE_VERSION, so DKMS's version check would
# call them the same and keep the kernel's: skip that check for partloop.
echo "${NAME}_version-override" >"$PKG/usr/share/dkms/modules_to_force_install/$NAME"
cp "$ROOT/dkms/debian/copyright" "$PKG/usr/share/doc/partloop-dkms/"
# The control file's version has the epoch 1: (dkms/debian/control.in): the
# two-line versions (6.1.192+6.12.118+...) sort below the 6.1-only ones
# (6.1.192+partloop15...) that came before, and an upgrade must not be a
# downgrade to dpkg.
sed -e "s/@VERSION@/$VERSION/" -e "s/@SOURCE@/$(joined KVER ' and ')/" \
	-e "s/@PATCHES@/$(joined NPATCH ' and ')/" -e "s/@SERIES@/$(joined SHASH ' and ')/" \
	"$ROOT/dkms/debian/control.in" >"$PKG/DEBIAN/control"
for s in preinst postinst prerm; do
	sed "s/@VERSION@/$VERSION/" "$ROOT/dkms/debian/$s" >"$PKG/DEBIAN/$s"
	chmod 0755 "$PKG/DEBIAN/$s"
done
echo "Installed-Size: $(du -sk --exclude=DEBIAN "$PKG" | cut -f1)" >>"$PKG/DEBIAN/control"

# The package's source must build as an external module for every line:
# try it, as shipped (every loop_*.c and the Kbuild that picks one), against
# Debian's headers of each line before shipping it, W=1 without a warning,
# and check that Kbuild compiled that line's file.
for l in "${LINES[@]}"; do
	chk=$BUILD/deb/check-$l
	mkdir -p "$chk"
	cp "$usrc"/loop_*.c "$usrc/Kbuild" "$chk/"
	external_module "${KB[$l]}" "" "$chk" W=1 \
		|| die "the DKMS source does not build as an external module for $l (log: ${chk#"$ROOT"/}/build.log)"
	if grep -q 'warning:' "$chk/build.log"; then
		cat "$chk/build.log" >&2
		die "the DKMS source builds with warnings for $l (W=1)"
	fi
	objs=$(cd "$chk" && echo loop_*.o)
	[ "$objs" = "${CFILE[$l]%.c}.o" ] || die "Kbuild built '$objs' for $l, not ${CFILE[$l]%.c}.o"
	[ -f "$chk/loop.ko" ] || die "the $l build made no loop.ko (log: ${chk#"$ROOT"/}/build.log)"
	vermagic=$(modinfo -F vermagic "$chk/loop.ko")
	krel=${KB[$l]##*/linux-headers-}	# the release Debian builds it for
	[[ $vermagic == "$krel "* ]] || die "the $l build's loop.ko has vermagic '$vermagic', not $krel"
	log "builds for $l: ${CFILE[$l]} -> loop.ko against ${KB[$l]} (vermagic ${vermagic%% *}), W=1 clean"
done

rm -f "$BUILD"/partloop-dkms_*_all.deb
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null
ln -sfn "$(basename "$DEB")" "$BUILD/partloop-dkms.deb"
echo "$VERSION" >"$BUILD/deb/version"
log "package: ${DEB#"$ROOT"/} ($(du -h "$DEB" | cut -f1))"
dpkg-deb --contents "$DEB" | awk '{ print "    " $NF }' >&2

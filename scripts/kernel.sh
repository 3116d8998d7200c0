#!/bin/bash
# Stage "kernel": configure (tinyconfig + kernel/guest.config) and build the
# guest kernel and its modules out of tree in build/kbuild, with ccache.
# Usage: kernel.sh [make targets...]   (default: bzImage modules)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage kernel

FRAGMENT=${KERNEL_FRAGMENT:-$ROOT/kernel/guest.config}
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/partloop/ccache}
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2024-01-01}
export KBUILD_BUILD_USER=partloop KBUILD_BUILD_HOST=partloop
[ -f "$SRC/.series-applied" ] || die "$SRC is not a complete tree: run 'make tree'"
command -v ccache >/dev/null || die "ccache missing: run 'make deps'"

# LOCALVERSION= (set, empty) keeps setlocalversion from appending "+" for
# the git repository that holds the pristine tree.
kmake() { make -C "$SRC" O="$KBUILD" CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION= -j"$JOBS" "$@"; }
mkdir -p "$KBUILD"

# Generate the configuration in a scratch folder and only install it when
# it differs, so that an unchanged config does not trigger a rebuild.
GEN=$BUILD/kconfig-gen
rm -rf "$GEN"; mkdir -p "$GEN"
make -s -C "$SRC" O="$GEN" tinyconfig >"$GEN.log" 2>&1 || { cat "$GEN.log"; die "make tinyconfig failed"; }
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$GEN" "$GEN/.config" "$FRAGMENT" >>"$GEN.log" 2>&1 \
	|| { cat "$GEN.log"; die "merge_config.sh failed"; }
make -s -C "$SRC" O="$GEN" olddefconfig >>"$GEN.log" 2>&1 || { cat "$GEN.log"; die "make olddefconfig failed"; }

# merge_config.sh silently drops options whose dependencies are missing:
# every line of the fragment must be in the final configuration.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) want="# ${line%=n} is not set" ;;
	CONFIG_*) want=$line ;;
	'# CONFIG_'*' is not set') want=$line ;;
	*) continue ;;
	esac
	if ! grep -qxF -- "$want" "$GEN/.config"; then
		have=$(grep -E "(^|# )${line%%=*}[= ]" "$GEN/.config" || echo "(absent)")
		printf 'error: %s: wanted "%s", got "%s"\n' "${FRAGMENT#"$ROOT"/}" "$want" "$have" >&2
		missing=$((missing + 1))
	fi
done < "$FRAGMENT"
((missing == 0)) || die "$missing option(s) of the fragment did not survive olddefconfig (missing dependencies?)"

if cmp -s "$GEN/.config" "$KBUILD/.config"; then
	log "configuration unchanged"
else
	log "installing new configuration"
	cp "$GEN/.config" "$KBUILD/.config"
fi
rm -rf "$GEN" "$GEN.log"

targets=("$@")
((${#targets[@]})) || targets=(bzImage modules)
log "make ${targets[*]} (-j$JOBS, log: build/kernel.log)"
if ! kmake "${targets[@]}" >"$BUILD/kernel.log" 2>&1; then
	grep -E -B2 -A5 'error:|Error [0-9]' "$BUILD/kernel.log" | tail -40 >&2
	die "kernel build failed, see $BUILD/kernel.log"
fi
grep -E 'warning:' "$BUILD/kernel.log" >&2 || true

# Install the modules into a staging root that the image stage copies.
rm -rf "$BUILD/modroot"
kmake -s INSTALL_MOD_PATH="$BUILD/modroot" INSTALL_MOD_STRIP=1 modules_install >>"$BUILD/kernel.log" 2>&1 \
	|| die "modules_install failed, see $BUILD/kernel.log"
krel=$(cat "$KBUILD/include/config/kernel.release")
rm -f "$BUILD/modroot/lib/modules/$krel/build" "$BUILD/modroot/lib/modules/$krel/source"
cp "$KBUILD/arch/x86/boot/bzImage" "$BUILD/bzImage"
echo "$krel" > "$BUILD/kernel.release"
log "kernel $krel: $(du -h "$BUILD/bzImage" | cut -f1) bzImage, modules: $(cd "$BUILD/modroot" && find . -name '*.ko' | wc -l)"

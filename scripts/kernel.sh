#!/bin/bash
# Stage "kernel": configure (tinyconfig + kernel/guest.config) and build the
# guest kernel and its modules out of tree in build/kbuild, with ccache.
# LINE=6.12: the same from build/linux-6.12 into build/kbuild-6.12, every
# output named with "-6.12" (bzImage-6.12, modroot-6.12, ...), with
# kernel/line-6.12.config on top if it exists, and for a variant
# kernel/line-6.12-VARIANT.config if that exists.
#
# usage: kernel.sh [builtin | debug | bench | config]
#   config:  only the guest kernel's configuration, build/kbuild/.config
#            (what make check-series needs), no build
#   builtin: the second kernel, with kernel/builtin.config merged on top
#            (loop built in), in build/kbuild-builtin -> build/bzImage-builtin
#   debug:   the third, with kernel/debug.config (KASAN, KFENCE, DEBUG_LIST,
#            ...), in build/kbuild-debug -> build/bzImage-debug, modules in
#            build/modroot-debug (the guest takes them from the 9p share)
#   bench:   the fourth, with kernel/bench.config (no lockdep), for make
#            bench: build/kbuild-bench -> build/bzImage-bench, modules in
#            build/modroot-bench (from the 9p share too)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VARIANT=${1:-}
CONFIG_ONLY=0
if [ "$VARIANT" = config ]; then
	CONFIG_ONLY=1
	VARIANT=
fi
FRAGMENTS=("$ROOT/kernel/guest.config")
[ ! -f "$ROOT/kernel/line-$LINE.config" ] || FRAGMENTS+=("$ROOT/kernel/line-$LINE.config")
case $VARIANT in
'') ;;
builtin | debug | bench)
	FRAGMENTS+=("$ROOT/kernel/$VARIANT.config")
	[ ! -f "$ROOT/kernel/line-$LINE-$VARIANT.config" ] || FRAGMENTS+=("$ROOT/kernel/line-$LINE-$VARIANT.config")
	KBUILD=$KBUILD-$VARIANT
	;;
*) die "unknown kernel variant '$VARIANT' (builtin, debug, bench or config)" ;;
esac
SUFFIX=$LSUF${VARIANT:+-$VARIANT}
stage "kernel $LINE${VARIANT:+ ($VARIANT)}$( ((CONFIG_ONLY)) && echo ' (configuration)')"
JOBS=${JOBS:-$(nproc)}
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2024-01-01}
export KBUILD_BUILD_USER=partloop KBUILD_BUILD_HOST=partloop
[ -f "$SRC/.series-applied" ] || die "$SRC is not a complete tree: run 'make tree${LSUF:+ LINE=$LINE}'"
command -v ccache >/dev/null || die "ccache missing: run 'make deps'"

mkdir -p "$KBUILD"

generate_config() {
	# Generate the configuration in a scratch folder and only install it when
	# it differs, so that an unchanged config does not trigger a rebuild.
	local GEN=$KBUILD.kconfig-gen missing=0 line want have
	rm -rf "$GEN"; mkdir -p "$GEN"
	make -s -C "$SRC" O="$GEN" tinyconfig >"$GEN.log" 2>&1 || { cat "$GEN.log"; die "make tinyconfig failed"; }
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$GEN" "$GEN/.config" "${FRAGMENTS[@]}" >>"$GEN.log" 2>&1 \
		|| { cat "$GEN.log"; die "merge_config.sh failed"; }
	make -s -C "$SRC" O="$GEN" olddefconfig >>"$GEN.log" 2>&1 || { cat "$GEN.log"; die "make olddefconfig failed"; }

	# merge_config.sh silently drops options whose dependencies are missing:
	# every line of the fragments (the last one wins for an option given
	# twice) must be in the final configuration.
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) want="# ${line%=n} is not set" ;;
		CONFIG_*) want=$line ;;
		'# CONFIG_'*' is not set') want=$line ;;
		*) continue ;;
		esac
		if ! grep -qxF -- "$want" "$GEN/.config"; then
			have=$(grep -E "(^|# )${line%%=*}[= ]" "$GEN/.config" || echo "(absent)")
			printf 'error: kernel/*.config: wanted "%s", got "%s"\n' "$want" "$have" >&2
			missing=$((missing + 1))
		fi
	done < <(cat "${FRAGMENTS[@]}" | sed -nE 's/^(# )?(CONFIG_[A-Z0-9_]+)[= ].*/\2 &/p' \
		| awk '{ last[$1] = NR; line[NR] = $0 } END { for (k in last) print line[last[k]] }' \
		| cut -d' ' -f2-)
	((missing == 0)) || die "$missing option(s) of the fragment did not survive olddefconfig (missing dependencies?)"

	if cmp -s "$GEN/.config" "$KBUILD/.config"; then
		log "configuration unchanged"
	else
		log "installing new configuration"
		cp "$GEN/.config" "$KBUILD/.config"
	fi
	rm -rf "$GEN" "$GEN.log"
}

# The configuration depends only on the fragments, the tree (pristine +
# series) and the compiler: regenerate it (about 15 s) only when one of
# them changed.
config_sum=$( { cat "${FRAGMENTS[@]}" "$SRC/.series-applied"; gcc --version; } | sha256sum | cut -d' ' -f1)
if [ -f "$KBUILD/.config" ] && [ "$(cat "$KBUILD/.config-stamp" 2>/dev/null)" = "$config_sum" ]; then
	log "configuration up to date"
else
	rm -f "$KBUILD/.config-stamp"
	generate_config
	echo "$config_sum" > "$KBUILD/.config-stamp"
fi
((CONFIG_ONLY == 0)) || exit 0

LOG=$BUILD/kernel$SUFFIX.log
targets=(bzImage)
[ "$VARIANT" = builtin ] || targets+=(modules)
log "make ${targets[*]} (-j$JOBS, log: ${LOG#"$ROOT"/})"
if ! kmake "$SRC" "$KBUILD" "${targets[@]}" >"$LOG" 2>&1; then
	grep -E -B2 -A5 'error:|Error [0-9]' "$LOG" | tail -40 >&2
	die "kernel build failed, see $LOG"
fi
grep -E 'warning:' "$LOG" >&2 || true
if [ "$VARIANT" = builtin ]; then
	cp "$KBUILD/arch/x86/boot/bzImage" "$BUILD/bzImage$SUFFIX"
	log "kernel $(cat "$KBUILD/include/config/kernel.release") (loop built in): build/bzImage$SUFFIX"
	exit 0
fi

# Install the modules into a staging root that the image stage copies (the
# debug and bench kernels' and another line's are read by the guest from
# the 9p share instead: tests/boot-entry).
MODROOT=$BUILD/modroot$SUFFIX
rm -rf "$MODROOT"
kmake "$SRC" "$KBUILD" -s INSTALL_MOD_PATH="$MODROOT" INSTALL_MOD_STRIP=1 modules_install >>"$LOG" 2>&1 \
	|| die "modules_install failed, see $LOG"
krel=$(cat "$KBUILD/include/config/kernel.release")
rm -f "$MODROOT/lib/modules/$krel/build" "$MODROOT/lib/modules/$krel/source"
cp "$KBUILD/arch/x86/boot/bzImage" "$BUILD/bzImage$SUFFIX"
echo "$krel" > "$BUILD/kernel$SUFFIX.release"
log "kernel $krel: $(du -h "$BUILD/bzImage$SUFFIX" | cut -f1) bzImage$SUFFIX, modules: $(cd "$MODROOT" && find . -name '*.ko' | wc -l)"

#!/bin/bash
# Stage "check-series": the review checks of the patch series of LINE
# (patches/6.1 by default; LINE=6.12 for patches/6.12).
#  - scripts/checkpatch.pl --strict on every patch, no error, warning or check;
#  - every prefix of the series builds drivers/block/loop.ko and the object
#    of every other C file the series touches (block/partitions/efi.o), with
#    W=1 and no warning in those files (bisectable, no new W=1 warnings).
#    Without a vmlinux in this folder modpost cannot resolve symbols
#    (KBUILD_MODPOST_WARN=1: 6.12's modpost fails on them otherwise); make
#    check links and boots the kernel with the whole series.
# Uses a scratch git worktree of the pristine tree and its own O= folder,
# configured like the line's guest kernel, so build/linux is not touched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage "check-series $LINE"

[ -f "$KBUILD/.config" ] || die "no guest kernel configuration: run 'make kernel-config${LSUF:+ LINE=$LINE}' first"
WT=$BUILD/bisect$LSUF
OUT=$BUILD/kbuild-bisect$LSUF
mapfile -t patches < <(series_patches)
n=${#patches[@]}
bad=0
# The C files the series changes; loop.c is built as the module, the others
# as objects.
mapfile -t cfiles < <(cd "$PATCHES" && sed -n 's|^diff --git a/\([^ ]*\.c\) .*|\1|p' "${patches[@]}" | sort -u)
targets=(drivers/block/loop.ko)
for f in "${cfiles[@]}"; do
	[ "$f" = drivers/block/loop.c ] || targets+=("${f%.c}.o")
done
warn_re="($(printf '%s|' "${cfiles[@]##*/}" | sed 's/|$//; s/\./\\./g')):[0-9]+:[0-9]+: warning"

log "checkpatch --strict on $n patches"
# Two reports are not counted, and only these:
#  - UNKNOWN_COMMIT_ID: checkpatch looks the IDs of "Fixes:" and "commit"
#    references up in the kernel's git history, which this machine does not
#    have (the tree is an unpacked tarball), so it reports every one.  Their
#    form is checked below instead.
#  - CAMELCASE for the driver's own lo_state values Lo_unbound, Lo_bound,
#    Lo_rundown and Lo_deleting (an enum in loop.c since long before this
#    series): checkpatch seeds known names from headers and #defines only.
#    Any other CamelCase name still fails.
allowed='CHECK:CAMELCASE: Avoid CamelCase: <Lo_(unbound|bound|rundown|deleting)>$'
for p in "${patches[@]}"; do
	# Run from build/: in a folder with a .git, checkpatch takes a tracked
	# file name for a git object and checks the wrong thing.
	(cd "$BUILD" && "$SRC/scripts/checkpatch.pl" --strict --quiet --terse --no-tree \
		--show-types --ignore UNKNOWN_COMMIT_ID "$PATCHES/$p") \
		> "$BUILD/checkpatch$LSUF.raw" 2> "$BUILD/checkpatch$LSUF.err" || true
	grep -q '^total: ' "$BUILD/checkpatch$LSUF.raw" \
		|| die "checkpatch did not run on $p: $(tail -3 "$BUILD/checkpatch$LSUF.err")"
	grep -vE "$allowed" "$BUILD/checkpatch$LSUF.raw" | grep -v '^total: ' > "$BUILD/checkpatch$LSUF.log" || true
	# Every Fixes: tag names 12 or more hex digits and the subject.
	grep -E '^Fixes:' "$PATCHES/$p" | grep -vE '^Fixes: [0-9a-f]{12,40} \(".+"\)$' \
		| sed 's/^/malformed tag: /' >> "$BUILD/checkpatch$LSUF.log" || true
	if [ -s "$BUILD/checkpatch$LSUF.log" ]; then
		sed 's/^/    /' "$BUILD/checkpatch$LSUF.log" >&2
		log "  checkpatch: $p: NOT clean"
		bad=$((bad + 1))
	else
		log "  checkpatch: $p: clean"
	fi
done

rm -rf "$WT"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$WT" pristine
mkdir -p "$OUT"
cp "$KBUILD/.config" "$OUT/.config"
log "preparing the bisect build folder (log: build/bisect$LSUF.log)"
kmake "$WT" "$OUT" olddefconfig modules_prepare > "$BUILD/bisect$LSUF.log" 2>&1 || die "modules_prepare failed, see $BUILD/bisect$LSUF.log"

for i in $(seq 0 "$n"); do
	if ((i > 0)); then
		(cd "$WT" && QUILT_PATCHES="$PATCHES" quilt push -q "${patches[i - 1]}" >/dev/null) \
			|| die "prefix $i: ${patches[i - 1]} does not apply"
	fi
	name=$([ "$i" = 0 ] && echo "pristine" || echo "${patches[i - 1]}")
	for f in "${cfiles[@]}"; do touch "$WT/$f"; done
	if ! kmake "$WT" "$OUT" W=1 KBUILD_MODPOST_WARN=1 "${targets[@]}" > "$BUILD/bisect$LSUF.log" 2>&1; then
		tail -20 "$BUILD/bisect$LSUF.log" >&2
		log "  prefix $i/$n ($name): BUILD FAILED"
		bad=$((bad + 1))
		continue
	fi
	warnings=$(grep -E "$warn_re" "$BUILD/bisect$LSUF.log" || true)
	if [ -n "$warnings" ]; then
		printf '    %s\n' "$warnings" >&2
		log "  prefix $i/$n ($name): builds, with W=1 warnings in ${cfiles[*]##*/}"
		bad=$((bad + 1))
	else
		log "  prefix $i/$n ($name): builds, no W=1 warning in ${cfiles[*]##*/}"
	fi
done
git -C "$SRC" worktree remove --force "$WT"
((bad == 0)) || die "$bad problem(s) in the series"
log "series $LINE: $n patches, checkpatch clean, every prefix builds W=1-clean"

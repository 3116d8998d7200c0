#!/bin/bash
# Developer helper: write the commits of the development branch (a git
# worktree of the line's pristine tree: build/dev on branch "series" for
# 6.1, build/dev-6.12 for LINE=6.12) into patches/LINE/ as git
# format-patch files and regenerate its series file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DEV=${DEV:-$BUILD/dev$LSUF}
[ -d "$DEV/.git" ] || [ -f "$DEV/.git" ] || die "$DEV is not a git worktree; create it with: git -C $SRC worktree add -b series $DEV pristine"
rm -f "$PATCHES"/*.patch
git -C "$DEV" format-patch -q --no-signature --zero-commit -o "$PATCHES" pristine..HEAD
{
	echo "# Partitioned loop devices for linux-source-$LINE (quilt series, apply with -p1)."
	(cd "$PATCHES" && printf '%s\n' ./*.patch | sed 's|^\./||')
} > "$PATCHES/series"
log "exported $(grep -c '\.patch$' "$PATCHES/series") patches to patches/$LINE/"

#!/bin/bash
# Developer helper: write the commits of the development branch (a git
# worktree of the pristine tree, build/dev on branch "series") into
# patches/ as git format-patch files and regenerate patches/series.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
DEV=${DEV:-$BUILD/dev}
[ -d "$DEV/.git" ] || [ -f "$DEV/.git" ] || die "$DEV is not a git worktree; create it with: git -C $SRC worktree add -b series $DEV pristine"
rm -f "$ROOT"/patches/*.patch
git -C "$DEV" format-patch -q --no-signature --zero-commit -o "$ROOT/patches" pristine..HEAD
{
	echo "# Partitioned loop devices for linux-source-6.1 (quilt series, apply with -p1)."
	(cd "$ROOT/patches" && printf '%s\n' ./*.patch | sed 's|^\./||')
} > "$ROOT/patches/series"
log "exported $(grep -c '\.patch$' "$ROOT/patches/series") patches to patches/"

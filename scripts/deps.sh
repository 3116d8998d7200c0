#!/bin/bash
# Stage "deps": install the host packages the pipeline needs (apt).
# Quick and silent when everything is there already.
# usage: deps.sh PACKAGE...
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage deps

mkdir -p "$BUILD"
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	log "all ${#} host packages present"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run 'make deps' as root"
log "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >"$BUILD/apt.log" 2>&1 || { mkdir -p "$BUILD"; tail "$BUILD/apt.log" >&2; die "apt-get update failed"; }
apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$BUILD/apt.log" 2>&1 \
	|| { tail -20 "$BUILD/apt.log" >&2; die "apt-get install failed, see $BUILD/apt.log"; }

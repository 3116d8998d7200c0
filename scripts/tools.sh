#!/bin/bash
# Stage "tools": build the C helpers of tools/ (loopctl, mkdosebr, fuzzpt,
# mkgpt, partrace) into build/tools and run their own test.  They are
# built on the host and run in the guest through the 9p share (the same
# Debian release, the same glibc); make rebuilds only what changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage tools
make -s -C "$ROOT/tools" OUT="$BUILD/tools" check >&2 || die "tools/ failed to build or to pass its test (see above)"
log "tools: $(cd "$BUILD/tools" && printf '%s ' *)"

# shellcheck shell=bash
# What counts as a kernel splat, shared by the guest runner and the host.
# splat_lines: read a kernel log on stdin, print the lines that are splats.
SPLAT_RE='BUG:|WARNING:|Oops|general protection fault|kernel BUG at|Kernel panic|KASAN|UBSAN|KFENCE|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|turning off the locking correctness validator|DEBUG_LOCKS_WARN_ON|list_add corruption|list_del corruption|ODEBUG:'
splat_lines() { grep -aE "$SPLAT_RE" || true; }

# shellcheck shell=bash
# What counts as a kernel splat, shared by the guest runner and the host.
# splat_lines: read a kernel log on stdin, print the lines that are splats.
# Besides the reports with a fixed prefix: CPU exceptions (divide error,
# invalid opcode, stack segment), RCU stalls, SLUB's "BUG <cache> (Not
# tainted): ..." (no colon after BUG), and reports that print only a stack
# (dump_stack(): a duplicate sysfs name, a failed kobject_add, a page
# allocation failure): "Call Trace:" and the end-of-trace marker catch any
# of those whose first line is not listed.
SPLAT_RE='BUG:|BUG [^ ]+ \((Not tainted|Tainted:)|WARNING:|Oops|general protection fault|kernel BUG at|Kernel panic|KASAN|UBSAN|KFENCE|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|turning off the locking correctness validator|DEBUG_LOCKS_WARN_ON|list_add corruption|list_del corruption|ODEBUG:|divide error|invalid opcode|stack segment|rcu: INFO:|detected stalls on CPUs|sysfs: cannot create duplicate filename|kobject_add_internal failed|page allocation failure|Call Trace:|---\[ end trace'
splat_lines() { grep -aE "$SPLAT_RE" || true; }

# log_after MARK: the kernel log on stdin from after the last line that
# ends with MARK (all of it if no line does: once the ring buffer is full,
# old lines drop out, so a mark can be gone; too much, never too little).
# A line count would point past new lines in a full buffer.
log_after() {
	awk -v m="$1" '{ l[NR] = $0 }
		m != "" && length($0) >= length(m) && substr($0, length($0) - length(m) + 1) == m { s = NR }
		END { for (i = s + 1; i <= NR; i++) print l[i] }'
}

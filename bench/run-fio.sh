#!/bin/bash
# bench/run-fio.sh: fio over one disk region, raw and through loop devices,
# inside the guest that scripts/bench.sh boots (run by bench/run).  Writes fio's JSON and the
# setup it measured under OUTDIR for scripts/bench-report.py.
#
# usage: run-fio.sh OUTDIR
# settings (tests/settings; boots/bench.conf and bench-quick.conf set
#        them): BENCH_RUNTIME, BENCH_RAMP (seconds per fio job),
#        BENCH_REPS, BENCH_ENGINES, BENCH_JOBS (names from bench/jobs,
#        empty: all), STOCK_KO, BENCH_QUICK=1 (the quick boot: recorded
#        so that the report says the figures mean nothing)
#
# The variants: bench/lib.sh (setup).
# Order: for each repetition, for each workload, every variant in turn with
# both engines, so that drift of a noisy machine hits all variants alike.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(realpath -m "${1:?usage: run-fio.sh OUTDIR}")	# absolute: fio runs in bench/jobs
# shellcheck source=tests/settings
. "$HERE/../tests/settings"
QUICK=$BENCH_QUICK
[ "$QUICK" = 0 ] && QUICK=
RUNTIME=$BENCH_RUNTIME RAMP=$BENCH_RAMP REPS=$BENCH_REPS ENGINES=$BENCH_ENGINES
JOBS=${BENCH_JOBS:-$(find "$HERE/jobs" -name '*.fio' -printf '%f\n' | sed 's/\.fio$//' | sort | xargs)}
VARIANTS=(raw part-dio part-buf compat-dio stock-dio file-dio stock-file-dio)

# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

for j in $JOBS; do
	[ -f "$HERE/jobs/$j.fio" ] || die "no job file bench/jobs/$j.fio"
done
mkdir -p "$OUT/fio"

# --- preparation -------------------------------------------------------------

prepare_disk
say "disk $DISK ($(blockdev --getsize64 "$DISK") bytes); jobs: $JOBS; engines: $ENGINES; variants: ${VARIANTS[*]}"
say "runtime ${RUNTIME}s + ramp ${RAMP}s per job, $REPS repetition(s)${QUICK:+ (quick mode: figures mean nothing)}"

{
	guest_meta
	echo "runtime: $RUNTIME"
	echo "ramp: $RAMP"
	echo "reps: $REPS"
	echo "quick: ${QUICK:-0}"
	echo "jobs: $JOBS"
	echo "engines: $ENGINES"
	echo "variants: ${VARIANTS[*]}"
} >"$OUT/meta.txt"

# --- fio -------------------------------------------------------------------

n_jobs=$(wc -w <<<"$JOBS")
n_eng=$(wc -w <<<"$ENGINES")
total=$((REPS * n_jobs * ${#VARIANTS[@]} * n_eng))
n=0
: >"$OUT/devices.txt"
for rep in $(seq "$REPS"); do
	for job in $JOBS; do
		for v in "${VARIANTS[@]}"; do
			setup "$v"
			dev=$NODE
			if ((rep == 1)) && [ "$job" = "${JOBS%% *}" ]; then
				echo "$v $(describe "$dev") module=${MODULE:-none}" >>"$OUT/devices.txt"
			fi
			for eng in $ENGINES; do
				n=$((n + 1))
				drop_caches
				t0=$(date +%s)
				json=$OUT/fio/$v.$job.$eng.$rep.json
				# From bench/jobs, where fio finds global.inc.
				(cd "$HERE/jobs" && DEV=$dev ENGINE=$eng RUNTIME=$RUNTIME RAMP=$RAMP \
					fio --output-format=json --output="$json" "$job.fio") \
					|| die "fio $job ($eng) on $dev ($v) failed: $(tail -n 5 "$json" 2>/dev/null)"
				say "fio $n/$total: rep $rep $job $eng on $v ($dev) $(($(date +%s) - t0))s"
			done
		done
	done
done
detach_all
say "fio done"

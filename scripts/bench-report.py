#!/usr/bin/python3
"""Turn the raw results of the benchmark's guest side (bench/run: run-fio.sh,
run-attach.sh) into a Markdown report with PNG charts (gnuplot).  Runs on
the host, called by scripts/bench.sh.

usage: bench-report.py DIR

DIR is what scripts/bench.sh left: DIR/bench/{meta.txt,devices.txt,
attach.csv,fio/*.json} from the guest, DIR/cost/bench/{cost-meta.txt,
cost-devices.txt,cost.csv} and DIR/cost/qemu.cmd from the cost boot
(bench/run-cost.sh), DIR/host.txt from the host.
Writes DIR/report.md, DIR/loop-vs-raw.png, DIR/patched-vs-stock.png and the
gnuplot inputs next to them.

Every ratio is taken within one repetition (the runs of a repetition follow
each other within a few minutes), then the median and the range over the
repetitions are reported.  The report never judges a figure: the targets
are printed next to the measured ratios.  It fails (exit 1) only when
results are missing or malformed, so that a broken benchmark cannot pass
for a finished one.
"""

import json
import os
import re
import shlex
import statistics
import subprocess
import sys

VARIANTS = {
    "raw": "raw disk partition",
    "part-dio": "patched, partitioned mode (major 240), --direct-io=on",
    "part-buf": "patched, partitioned mode (major 240), buffered",
    "compat-dio": "patched, compat mode (losetup -P), --direct-io=on",
    "stock-dio": "stock 6.1 driver (losetup -P), --direct-io=on",
    "file-dio": "patched, partitioned mode, over a file on ext4, --direct-io=on",
    "stock-file-dio": "stock 6.1 driver (losetup -P), over the same file, --direct-io=on",
    "compat-file-dio": "patched, compat mode (losetup -P), over the same file, --direct-io=on",
    "stock-dio-again": "stock-dio once more in the same rotation: the same code twice",
}
LOOP_VARIANTS = ["part-dio", "part-buf", "compat-dio", "stock-dio", "file-dio", "stock-file-dio"]
# The targets of issue 16: direct I/O over a disk at 0.95 of the raw
# partition, the loop layer's cost per I/O at most half the stock
# driver's, buffered sequential reads at half the raw disk's speed, and no
# change where no new path applies (file-backed, compat over a file).
RAW_TARGET = 0.95
COST_CUT_TARGET = 0.5
BUF_TARGET = 0.5
SAME_TARGET = 0.01


class Missing(Exception):
    pass


def read_kv(path):
    out = {}
    with open(path) as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                out[k.strip()] = v.strip()
    return out


def fio_result(path):
    """(metric, unit, p50 latency us, p99 latency us) of one fio JSON file."""
    try:
        with open(path) as f:
            text = f.read()
        # fio may print notes before the JSON object.
        data = json.loads(text[text.index("{"):])
        job = data["jobs"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise Missing(f"{path}: no fio result ({e})")
    if job.get("error"):
        raise Missing(f"{path}: fio reported error {job['error']}")
    opts = job.get("job options", {})
    side = "write" if "write" in opts.get("rw", "") else "read"
    r = job[side]
    if r["io_bytes"] <= 0:
        raise Missing(f"{path}: fio did no {side} I/O")
    pct = r.get("clat_ns", {}).get("percentile", {})
    p50 = pct.get("50.000000", 0) / 1000
    p99 = pct.get("99.000000", 0) / 1000
    if opts.get("bs", "").upper().startswith("1M"):
        return r["bw_bytes"] / 2**20, "MiB/s", p50, p99
    return r["iops"], "IOPS", p50, p99


def fmt_ratio(vals):
    if not vals:
        return "n/a"
    med = statistics.median(vals)
    if len(vals) == 1:
        return f"{med:.3f}"
    return f"{med:.3f} [{min(vals):.2f}–{max(vals):.2f}]"


def fmt_abs(vals):
    if not vals:
        return "n/a"
    med = statistics.median(vals)
    s = f"{med:,.0f}" if med >= 100 else f"{med:.1f}"
    if len(vals) > 1:
        s += f" [{min(vals):,.0f}–{max(vals):,.0f}]"
    return s


def table(lines, head, body):
    """A Markdown table: a header row and rows of cells."""
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    lines.extend("| " + " | ".join(r) + " |" for r in body)
    lines.append("")


# loop/direct_submit each variant must show (bench/lib.sh's describe).
DIRECT_SUBMIT = {"part-dio": "1", "compat-dio": "1", "part-buf": "0",
                 "file-dio": "0", "compat-file-dio": "0", "stock-dio": "-",
                 "stock-dio-again": "-", "stock-file-dio": "-"}


def device_field(desc, key):
    """The value of KEY=VALUE in a devices.txt description, or None."""
    for w in desc.split():
        if w.startswith(key + "="):
            return w[len(key) + 1:]
    return None


def check_devices(devices, variants):
    """Each variant is what its name says: partitioned mode on major 240,
    direct I/O on for -dio, off for -buf (a silent fall-back to buffered
    I/O must not pass as direct), and
    partition 5 of the raw partition's size (a wrong table must not pass)."""
    problems = []
    for v in ("part-dio", "part-buf", "file-dio"):
        if v in devices and " 240:" not in f" {devices[v]}":
            problems.append(f"devices.txt: {v} is not on major 240: {devices[v]}")
    raw_size = device_field(devices.get("raw", ""), "size")
    for v in variants:
        if v not in devices or v == "raw":
            continue
        size = device_field(devices[v], "size")
        if size != raw_size:
            problems.append(f"devices.txt: {v} has size={size}, the raw partition size={raw_size}")
        want = "1" if "-dio" in v else "0" if v.endswith("-buf") else None
        if want is not None and device_field(devices[v], "dio") != want:
            problems.append(f"devices.txt: {v} has dio={device_field(devices[v], 'dio')}, expected dio={want}")
        # The path the patched driver takes: direct submission for direct
        # I/O over the disk, the worker otherwise; the stock driver has no
        # such attribute.  (Descriptions from before the attribute lack it.)
        sub = device_field(devices[v], "direct_submit")
        want = DIRECT_SUBMIT.get(v)
        if sub is not None and want is not None and sub != want:
            problems.append(f"devices.txt: {v} has direct_submit={sub}, expected direct_submit={want}")
    return problems


class Results:
    """Everything the guest and the host left in DIR, as read by load()."""

    def __init__(self, top):
        self.top = top
        self.raw_dir = os.path.join(top, "bench")
        self.problems = []          # files missing or malformed, found while loading
        self.meta, self.host = {}, {}
        self.jobs, self.engines, self.variants = [], [], []
        self.reps, self.quick = 0, False
        self.results = {}           # (variant, job, engine) -> [value per repetition]
        self.unit = {}              # job -> "IOPS" or "MiB/s"
        self.lat = {}               # (variant, job, engine) -> [(p50, p99) per repetition]
        self.devices = {}           # variant -> its devices.txt description
        self.scans = {}             # (variant, partitions) -> [(to scan, to nodes)]
        self.cycles = {}            # (variant, partitions) -> attach/detach cycles per second
        self.cost_dir = os.path.join(top, "cost", "bench")
        self.cost_meta = {}
        self.cost_jobs, self.cost_variants, self.cost_reps = [], [], 0
        self.cost = {}              # (variant, job) -> [ns per I/O per repetition]
        self.cost_devices = {}      # variant -> its cost-devices.txt description
        self.cost_qemu = ""         # the cost boot's QEMU command line
        self.waited = {}            # (variant, job) -> batches the submitter slept for
        self.batches = {}           # (variant, job) -> batches in the windows
        self.clean = {}             # (variant, job) -> windows without a tick
        self.windows = {}           # (variant, job) -> windows
        self.measured_ios = {}      # (variant, job) -> I/Os in the windows

    @property
    def rows(self):
        return [(j, e) for j in self.jobs for e in self.engines]

    def ratios(self, a, b, j, e):
        """Per-repetition ratios of variant a to variant b, [] if either lacks one."""
        va, vb = self.results.get((a, j, e), []), self.results.get((b, j, e), [])
        if len(va) != self.reps or len(vb) != self.reps:
            return []
        return [x / y for x, y in zip(va, vb) if y > 0]

    def cost_ratios(self, a, b, j):
        """Per-repetition ratios of the cost per I/O of variant a to b."""
        va, vb = self.cost.get((a, j), []), self.cost.get((b, j), [])
        if len(va) != self.cost_reps or len(vb) != self.cost_reps or min(vb, default=0) <= 0:
            return []
        return [x / y for x, y in zip(va, vb)]

    def layer(self, v, j):
        """Per-repetition cost of the loop layer: variant v minus raw, ns per I/O."""
        va, vr = self.cost.get((v, j), []), self.cost.get(("raw", j), [])
        return [x - y for x, y in zip(va, vr)]

    def layer_ratios(self, a, b, j):
        """Per-repetition ratios of the loop layer's cost of a to b's; [] when
        b's is not above raw's in every repetition (no cost to compare)."""
        la, lb = self.layer(a, j), self.layer(b, j)
        if len(la) != self.cost_reps or len(lb) != self.cost_reps or min(lb, default=0) <= 0:
            return []
        return [x / y for x, y in zip(la, lb)]


def read_devices(path, into, problems):
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if w:
                    into[w[0]] = line.split(None, 1)[1].strip()
    except OSError as e:
        problems.append(f"{os.path.basename(path)}: {e}")


def load_cost(res):
    """DIR/cost: the cost boot's cost-meta.txt, cost-devices.txt, cost.csv
    (VARIANT,JOB,REP,IOS,WINDOWS,Q1_NS,MIN_NS,MAX_NS,WAITED,BATCHES,CLEAN)
    and
    qemu.cmd."""
    try:
        res.cost_meta = read_kv(os.path.join(res.cost_dir, "cost-meta.txt"))
    except OSError as e:
        res.problems.append(f"cost-meta.txt: {e}: the cost boot did not get as far as its setup")
        return
    m = res.cost_meta
    try:
        res.cost_jobs, res.cost_variants = m["jobs"].split(), m["variants"].split()
        res.cost_reps = int(m["reps"])
    except (KeyError, ValueError) as e:
        res.problems.append(f"cost-meta.txt: no valid {e} line")
        return
    if not res.cost_jobs or not res.cost_variants or res.cost_reps < 1:
        res.problems.append("cost-meta.txt: no job, no variant or no repetition was measured")
    read_devices(os.path.join(res.cost_dir, "cost-devices.txt"), res.cost_devices, res.problems)
    try:
        with open(os.path.join(res.top, "cost", "qemu.cmd")) as f:
            res.cost_qemu = f.read().strip()
    except OSError as e:
        res.problems.append(f"cost/qemu.cmd: {e}")
    per = {}
    try:
        with open(os.path.join(res.cost_dir, "cost.csv")) as f:
            for line in f:
                w = line.strip().split(",")
                try:
                    v, j, rep, n, win = w[0], w[1], int(w[2]), int(w[3]), int(w[4])
                    med, lo, hi, waited = float(w[5]), float(w[6]), float(w[7]), int(w[8])
                    batches, clean = int(w[9]), int(w[10])
                except (IndexError, ValueError):
                    res.problems.append(f"cost.csv: malformed line {line.strip()!r}")
                    continue
                if not 0 < lo <= med <= hi:
                    res.problems.append(f"cost.csv: {v} {j} rep {rep}: cost per I/O {med} [{lo}-{hi}] ns")
                    continue
                res.waited[(v, j)] = res.waited.get((v, j), 0) + waited
                res.batches[(v, j)] = res.batches.get((v, j), 0) + batches
                res.clean[(v, j)] = res.clean.get((v, j), 0) + clean
                res.windows[(v, j)] = res.windows.get((v, j), 0) + win
                res.measured_ios[(v, j)] = res.measured_ios.get((v, j), 0) + n * win
                per[(v, j, rep)] = med
    except OSError as e:
        res.problems.append(f"cost.csv: {e}")
    for v in res.cost_variants:
        for j in res.cost_jobs:
            vals = [per[(v, j, r)] for r in range(1, res.cost_reps + 1) if (v, j, r) in per]
            if len(vals) != res.cost_reps:
                res.problems.append(f"cost.csv: {v} {j} has {len(vals)} of {res.cost_reps} repetitions")
            res.cost[(v, j)] = vals


def load(top):
    """Read DIR/bench (meta.txt, fio/*.json, devices.txt, attach.csv) and
    DIR/host.txt.  Exits if meta.txt is missing: without it nothing else
    can be read."""
    res = Results(top)
    try:
        res.meta = read_kv(os.path.join(res.raw_dir, "meta.txt"))
    except OSError as e:
        sys.exit(f"bench-report.py: {e}: the guest did not get as far as its setup")
    host_txt = os.path.join(top, "host.txt")
    res.host = read_kv(host_txt) if os.path.exists(host_txt) else {}
    meta = res.meta
    res.jobs = meta["jobs"].split()
    res.engines = meta["engines"].split()
    res.variants = meta["variants"].split()
    res.reps = int(meta["reps"])
    res.quick = meta.get("quick", "0") not in ("", "0")

    for v in res.variants:
        for j in res.jobs:
            for e in res.engines:
                vals = []
                for r in range(1, res.reps + 1):
                    try:
                        val, u, p50, p99 = fio_result(os.path.join(res.raw_dir, "fio", f"{v}.{j}.{e}.{r}.json"))
                    except Missing as m:
                        res.problems.append(str(m))
                        continue
                    vals.append(val)
                    res.unit[j] = u
                    res.lat.setdefault((v, j, e), []).append((p50, p99))
                res.results[(v, j, e)] = vals

    read_devices(os.path.join(res.raw_dir, "devices.txt"), res.devices, res.problems)
    load_cost(res)

    try:
        with open(os.path.join(res.raw_dir, "attach.csv")) as f:
            for line in f:
                w = line.strip().split(",")
                if w[0] == "scan":
                    res.scans.setdefault((w[1], int(w[2])), []).append((float(w[4]), float(w[5])))
                elif w[0] == "cycles":
                    res.cycles[(w[1], int(w[2]))] = int(w[3]) / float(w[4])
    except OSError as e:
        res.problems.append(f"attach.csv: {e}")
    return res


def qemu_args(cmd):
    """The -smp and -icount arguments of a QEMU command line (qemu.cmd,
    shell-quoted by scripts/boot.sh), as "-smp 1" strings."""
    w = shlex.split(cmd)
    return [f"{a} {w[i + 1]}" for i, a in enumerate(w[:-1]) if a in ("-smp", "-icount")]


def check(res):
    """What keeps the report from being written: the problems load() met,
    devices that are not what their variant's name says, timings missing."""
    problems = list(res.problems)
    devices = res.devices
    for v in res.variants:
        if v not in devices:
            problems.append(f"devices.txt: no device recorded for {v}")
    problems += check_devices(devices, res.variants)
    for v in res.cost_variants:
        if v not in res.cost_devices:
            problems.append(f"cost-devices.txt: no device recorded for {v}")
    problems += [p.replace("devices.txt", "cost-devices.txt")
                 for p in check_devices(res.cost_devices, res.cost_variants)]
    for v in ("raw", "part-dio", "part-buf", "compat-dio", "stock-dio", "stock-dio-again", "file-dio",
              "compat-file-dio", "stock-file-dio"):
        if v not in res.cost_variants:
            problems.append(f"cost-meta.txt: variant {v} was not measured (the report compares it)")
    if not any(j.startswith("seqread") for j in res.cost_jobs):
        problems.append("cost-meta.txt: no seqread job was measured (the buffered target needs one)")
    # The measure holds on one vCPU whose clock counts instructions.
    qa = qemu_args(res.cost_qemu)
    if res.cost_qemu and not ("-smp 1" in qa and "-icount shift=0,sleep=on" in qa):
        problems.append(f"cost/qemu.cmd: the cost boot ran with {' '.join(qa) or 'neither -smp nor -icount'}, "
                        "not -smp 1 -icount shift=0,sleep=on")
    for v in ("part", "part-P", "stock"):
        for n in (127, 255):
            if len(res.scans.get((v, n), [])) == 0:
                problems.append(f"attach.csv: no scan timing for {v} with {n} partitions")
        for n in (0, 7):
            if (v, n) not in res.cycles:
                problems.append(f"attach.csv: no attach/detach cycles for {v} with {n} partitions")
    return problems


def chart(res, name, title, series):
    """DIR/NAME.png: one bar group per workload and engine, one bar per
    (label, a, b) of series: the median ratio a / b, error bars min-max."""
    top, rows = res.top, res.rows
    dat = os.path.join(top, name + ".dat")
    with open(dat, "w") as f:
        f.write("# workload " + " ".join(f"{s}_med {s}_min {s}_max" for s, _, _ in series) + "\n")
        for j, e in rows:
            cols = []
            for _, a, b in series:
                rr = res.ratios(a, b, j, e)
                cols += [statistics.median(rr), min(rr), max(rr)]
            f.write(f'"{j}\\n{e}" ' + " ".join(f"{c:.4f}" for c in cols) + "\n")
    plots = []
    for i, (label, _, _) in enumerate(series):
        c = 2 + 3 * i
        using = f"{c}:{c + 1}:{c + 2}" + (":xtic(1)" if i == 0 else "")
        plots.append(f"'{dat}' using {using} title '{label}'")
    gp = os.path.join(top, name + ".gp")
    with open(gp, "w") as f:
        f.write(f"""set terminal pngcairo size {max(900, 150 * len(rows))},520 font ',10'
set output '{os.path.join(top, name + '.png')}'
set termoption noenhanced
set title '{title}'
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set yrange [0:*]
set ylabel 'ratio (median, bar: min-max over repetitions)'
set grid ytics
set key outside top center horizontal
set xtics nomirror
set bmargin 4
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1
plot {', '.join(plots)}
""")
    subprocess.run(["gnuplot", gp], check=True)


def charts(res):
    chart(res, "loop-vs-raw", "Loop partition / raw disk partition (same region, fio direct=1)",
          [(v, v, "raw") for v in LOOP_VARIANTS])
    chart(res, "patched-vs-stock", "Patched driver / stock 6.1 driver (loop partition, --direct-io=on)",
          [("partitioned / stock", "part-dio", "stock-dio"),
           ("compat / stock", "compat-dio", "stock-dio"),
           ("file: partitioned / stock", "file-dio", "stock-file-dio")])


def verdict(rr, ok, quick):
    """"met" when ok(median of rr) holds, else "missed (median)"."""
    if quick:
        return "none (quick mode)"
    if not rr:
        return "n/a"
    m = statistics.median(rr)
    return "met" if ok(m) else f"missed ({m:.3f})"


def wall_cut(res, j, e):
    """Per repetition: the time per I/O the loop layer adds, patched
    partitioned mode over stock, by the wall clock (1/rate - 1/raw rate);
    [] when the stock driver was not slower than the raw disk (no cost to
    cut by this measure)."""
    out = []
    for p, s, r in zip(res.results.get(("part-dio", j, e), []), res.results.get(("stock-dio", j, e), []),
                       res.results.get(("raw", j, e), [])):
        if min(p, s, r) <= 0 or 1 / s - 1 / r <= 0:
            return []
        out.append((1 / p - 1 / r) / (1 / s - 1 / r))
    return out


def targets(res):
    """The rows of the targets table: target, measure, workload, measured, verdict."""
    q, rows, cj = res.quick, [], res.cost_jobs
    inv = lambda rr: [1 / x for x in rr if x > 0]
    t = f"part-dio / raw ≥ {RAW_TARGET}"
    for j, e in res.rows:
        rr = res.ratios("part-dio", "raw", j, e)
        rows.append([t, "wall clock", f"{j} {e}", fmt_ratio(rr), verdict(rr, lambda m: m >= RAW_TARGET, q)])
    for j in cj:
        rr = inv(res.cost_ratios("part-dio", "raw", j))
        rows.append([t, "cost (raw / part-dio)", j, fmt_ratio(rr), verdict(rr, lambda m: m >= RAW_TARGET, q)])
    t = f"loop layer's cost, part-dio / stock-dio ≤ {COST_CUT_TARGET}"
    for j, e in res.rows:
        rr = wall_cut(res, j, e)
        v = verdict(rr, lambda m: m <= COST_CUT_TARGET, q) if rr else "n/a: the stock driver is not slower than raw"
        rows.append([t, "wall clock (time per I/O added)", f"{j} {e}", fmt_ratio(rr), v])
    for j in cj:
        rr = res.layer_ratios("part-dio", "stock-dio", j)
        rows.append([t, "cost (ns per I/O added)", j, fmt_ratio(rr), verdict(rr, lambda m: m <= COST_CUT_TARGET, q)])
    t = f"part-buf / raw ≥ {BUF_TARGET} (1 MiB sequential read)"
    for j, e in res.rows:
        if j.startswith("seqread"):
            rr = res.ratios("part-buf", "raw", j, e)
            rows.append([t, "wall clock", f"{j} {e}", fmt_ratio(rr), verdict(rr, lambda m: m >= BUF_TARGET, q)])
    for j in cj:
        if j.startswith("seqread"):
            rr = inv(res.cost_ratios("part-buf", "raw", j))
            rows.append([t, "cost (raw / part-buf)", j, fmt_ratio(rr), verdict(rr, lambda m: m >= BUF_TARGET, q)])
    for a, what in (("file-dio", "partitioned"), ("compat-file-dio", "compat")):
        t = f"{what} over a file = stock within {100 * SAME_TARGET:.0f} % ({a} / stock-file-dio)"
        if a in res.variants:
            for j, e in res.rows:
                rr = res.ratios(a, "stock-file-dio", j, e)
                rows.append([t, "wall clock", f"{j} {e}", fmt_ratio(rr), verdict(rr, lambda m: abs(m - 1) <= SAME_TARGET, q)])
        else:
            rows.append([t, "wall clock", "all", "not measured", "n/a: the wall-clock runs leave this variant out"])
        for j in cj:
            rr = res.cost_ratios(a, "stock-file-dio", j)
            rows.append([t, "cost", j, fmt_ratio(rr), verdict(rr, lambda m: abs(m - 1) <= SAME_TARGET, q)])
    return rows


def render_cost(res, L):
    """The cost section: ns per I/O, the loop layer's share, the noise floor."""
    cm, cj, cv, reps = res.cost_meta, res.cost_jobs, res.cost_variants, res.cost_reps
    L.append("## Cost per I/O (guest CPU time, exact)\n")
    L.append("A second boot, with one vCPU and QEMU's `-icount shift=0,sleep=on`: "
             "while the vCPU runs, the guest's clock advances 1 ns per instruction it executes; "
             "while it is halted, with the host's clock.  The kernel (`NO_HZ_IDLE`) counts the "
             "halted time to the nanosecond (`idle_sleeptime`, `iowait_sleeptime` in "
             "`/proc/timer_list`), so busy time = elapsed - idle - iowait is the number of "
             "instructions the guest ran, whatever the host's load.  Its disk is a memory-backed "
             "`null_blk` device in the guest (`max_sectors=2560`, as virtio), partitioned as the bench disk, that completes each "
             "request as it is issued (`irqmode=0`): a virtio disk's completions come from QEMU's "
             "threads, and how many interrupts a batch took depended on the host's timing.  "
             "The I/O buffers lie in huge pages, so that a 1 MiB buffer's physical layout, and "
             "with it its bio's segments, is the same in every run.  "
             "`tools/iocost` does each job's I/O (its `rw`, `bs` and `iodepth` from bench/jobs; "
             "`O_DIRECT`, `io_submit`/`io_getevents` as fio's libaio engine) in batches of the "
             "queue depth, waits for each batch, "
             "and reads the busy time and the jiffies around each of a number of short windows "
             "of N I/Os after 2 N (64 at least) to warm up.  "
             "iocost runs as "
             "`SCHED_IDLE`: a worker that `io_submit` woke runs as soon as the submitter leaves "
             "the kernel, and the submitter again when the worker is done.  On one vCPU a batch "
             "then takes the same path every time, and nothing waits for the host.  A tick "
             "(HZ=250: every 4 million instructions) costs as much as a few I/Os and falls into "
             "some windows only, so the figure is the lower quartile of the cost per I/O of the "
             "windows without a tick (windows into which a timer's or a daemon's work fell do "
             "not move it unless they are three in four); windows of 1 MiB I/Os are longer than "
             "a tick, each holds as many as its length gives, and there all windows count.  "
             "Tried first, and noisier on identical code: a sleep after "
             "each batch (the idle loop and its timer were some 90 thousand of the 125 thousand "
             "instructions of a 4 KiB read at queue depth 1: up to 1.55 %), no sleep with iocost "
             "of the default policy (whether the worker preempted the submitter at once followed "
             "the tasks' virtual run times: 9.3 % at queue depth 32), and the median of all "
             "windows (it fell on windows with a tick in some repetitions only: up to 8 %), and on "
             "the kernel without lockdep, where an I/O costs a third as much, the median of the "
             "windows without a tick (other work touched half of a repetition's windows: up to "
             "5.9 % with windows of 8 I/Os, 3.3 % with 24).  The cost "
             "counts everything the guest ran: the system calls, the block layer, "
             "loop and its worker, null_blk.  "
             + {"on": "The guest kernel has lockdep (`PROVE_LOCKING`), which makes every lock "
                      "dearer, in the raw path as in the loop path: the quick boot's test kernel; "
                      "`make bench` measures on the benchmark's kernel without it.\n",
                "off": "The guest kernel has no lockdep (`kernel/bench.config`): what is counted "
                       "is the I/O path, not the bookkeeping of its locks.\n"}.get(
                    cm.get("lockdep"), "Whether the guest kernel has lockdep is not recorded.\n"))
    L.append(f"- {cm.get('windows', '?')} windows of N = {cm.get('ios', '?')} I/Os for the 4 KiB "
             f"jobs, N/4 for the 1 MiB jobs, rounded up to whole batches of the queue depth; {reps} "
             "repetition(s), each variant in turn per repetition, set up once and measured with "
             "every job")
    L.append(f"- QEMU: `{' '.join(qemu_args(res.cost_qemu))}`; guest clocksource: {cm.get('clocksource', '?')}")
    L.append(f"- disk: {cm.get('disk', '?')}")
    L.append(f"- I/Os measured: {sum(res.measured_ios.values()):,}; windows without a tick, of all: "
             + ", ".join(f"{j} {sum(res.clean.get((v, j), 0) for v in cv):,} of "
                         f"{sum(res.windows.get((v, j), 0) for v in cv):,}" for j in cj))
    L.append("- devices measured (partition 5 every time):")
    for v in cv:
        L.append(f"  - `{v}`: {VARIANTS.get(v, v)}: `{res.cost_devices.get(v, '?')}`")
    L.append("")
    L.append("Nanoseconds (instructions) per I/O, each repetition's lower quartile of its "
             "windows; median [min–max] over the repetitions:\n")
    table(L, ["variant"] + cj, [[v] + [fmt_abs(res.cost.get((v, j), [])) for j in cj] for v in cv])
    L.append("Batches not complete when the submitter came back from `io_submit`, of the "
             "batches measured (all repetitions): a worker slept before it completed them, or a "
             "tick gave the submitter the CPU back first (a worker that runs for longer than its "
             "slice), and the submitter slept in `io_getevents`.\n")
    table(L, ["variant"] + cj, [[v] + [f"{res.waited.get((v, j), 0):,} / {res.batches.get((v, j), 0):,}"
                                       for j in cj] for v in cv])
    layer_vars = [v for v in cv if v not in ("raw", "stock-dio-again")]
    L.append("The loop layer's cost: the variant's cost per I/O minus the raw partition's, "
             "per repetition, median [min–max] in ns; then patched / stock.\n")
    body = [[v] + [fmt_abs(res.layer(v, j)) for j in cj] for v in layer_vars]
    for a, b in (("part-dio", "stock-dio"), ("compat-dio", "stock-dio"),
                 ("file-dio", "stock-file-dio"), ("compat-file-dio", "stock-file-dio")):
        body.append([f"**{a} / {b}** (loop layer)"] +
                    [fmt_ratio(res.layer_ratios(a, b, j)) for j in cj])
    table(L, ["variant"] + cj, body)
    L.append("### Noise floor\n")
    L.append("`stock-dio-again / stock-dio`: the stock driver measured twice in each repetition's "
             "rotation, the same code on the same device.  Per repetition, the ratio of the whole "
             "cost per I/O and of the loop layer's cost; spread = max - min of the ratio over the "
             "repetitions, off 1 = the largest distance of a repetition's ratio from 1 (an "
             "offset that every repetition shares shows there, not in the spread).\n")
    body = []
    for j in cj:
        rr = res.cost_ratios("stock-dio-again", "stock-dio", j)
        lr = res.layer_ratios("stock-dio-again", "stock-dio", j)
        spread = lambda xs: f"{100 * (max(xs) - min(xs)):.2f} %" if len(xs) > 1 else "n/a"
        off = lambda xs: f"{100 * max(abs(x - 1) for x in xs):.2f} %" if xs else "n/a"
        body.append([j, fmt_ratio(rr), spread(rr), off(rr), fmt_ratio(lr), spread(lr), off(lr)])
    table(L, ["workload", "per I/O: again / first", "spread", "off 1", "loop layer: again / first",
              "spread", "off 1"], body)


def render(res):
    """The report, as Markdown text."""
    meta, host, devices, rows = res.meta, res.host, res.devices, res.rows
    jobs, engines, variants, reps, quick = res.jobs, res.engines, res.variants, res.reps, res.quick
    ratios, scans, cycles = res.ratios, res.scans, res.cycles
    results, unit, lat = res.results, res.unit, res.lat
    L = []
    # The kernel line (6.1, 6.12) is the release's first two numbers.
    m = re.match(r"(\d+\.\d+)\.", meta.get("kernel", ""))
    line = m.group(1) if m else "?"
    L.append(f"# Partitioned loop devices: fio against the raw disk, kernel line {line}\n")
    if quick:
        L.append("> **Quick mode** (`BENCH_QUICK=1`): one short repetition to prove the scripts "
                 "and this generator. The figures below mean nothing.\n")
    L.append("Absolute figures under QEMU TCG (no KVM, every instruction emulated) say nothing "
             "about real hardware; the report leads with ratios of runs made side by side in one "
             "boot, interleaved per repetition. Ratios are median [min–max] over "
             f"{reps} repetition(s).\n")
    L.append("## Setup\n")
    L.append(f"- kernel line: {line} (the series of patches/{line}/)")
    for k in ("kernel", "lockdep", "guest cpu", "guest memory", "disk", "fio", "util-linux", "patched loop.ko", "stock loop.ko"):
        L.append(f"- {k}: {meta.get(k, '?')}")
    for k in ("host cpu", "host kernel", "qemu", "bench disk"):
        L.append(f"- {k}: {host.get(k, '?')}")
    L.append(f"- fio jobs: {', '.join(jobs)} (bench/jobs/*.fio), engines {', '.join(engines)}, "
             f"{meta['runtime']} s per job after {meta['ramp']} s ramp, page cache dropped before each")
    L.append("- devices measured (partition 5 every time):")
    for v in variants:
        L.append(f"  - `{v}`: {VARIANTS.get(v, v)}: `{devices[v]}`")
    L.append("")

    L.append("## Targets\n")
    L.append("Each target by both measures: the wall clock (fio's IOPS or MiB/s, smp 2) and the "
             "cost measure (guest CPU time per I/O, one vCPU under `-icount`; see \"Cost per "
             "I/O\" below).  A target is met when the median over the repetitions is.\n")
    table(L, ["target", "measure", "workload", "measured", "verdict"], targets(res))
    L.append("## Loop partition / raw partition\n")
    L.append("![loop vs raw](loop-vs-raw.png)\n")
    table(L, ["workload", "engine"] + LOOP_VARIANTS,
          [[j, e] + [fmt_ratio(ratios(v, "raw", j, e)) for v in LOOP_VARIANTS] for j, e in rows])
    L.append("## Patched / stock driver\n")
    L.append("The patched driver submits the reads and writes of `part-dio` and `compat-dio` to "
             "the disk from `->queue_rq()` (`direct_submit=1` under Setup), where the stock "
             "driver hands them to its worker thread: both columns measure that (compat mode "
             "differs from the stock driver in nothing else on this path).  Over a file "
             "(`file-dio / stock-file-dio`) the patched driver keeps the stock path.  The wall "
             "clock is no cost measure under TCG: at queue depth 32 the stock worker runs on the "
             "second vCPU, so the stock path has two CPUs where direct submission has one.  The "
             "cost measure below has both the finer figure and the noise floor.\n")
    L.append("![patched vs stock](patched-vs-stock.png)\n")
    table(L, ["workload", "engine", "partitioned (part-dio) / stock-dio", "compat (compat-dio) / stock-dio",
              "over a file (file-dio) / stock-file-dio"],
          [[j, e, fmt_ratio(ratios("part-dio", "stock-dio", j, e)), fmt_ratio(ratios("compat-dio", "stock-dio", j, e)),
            fmt_ratio(ratios("file-dio", "stock-file-dio", j, e))]
           for j, e in rows])

    render_cost(res, L)

    L.append("## Attach and scan\n")
    L.append("Seconds from `losetup` until the partition table is read and until udev has made "
             "every partition node; median [min–max].  `part`: patched partitioned mode, `losetup` "
             "then `blockdev --rereadpt` (two commands); `part-P`: the same mode with `losetup -P`; "
             "`stock`: the stock driver with `losetup -P`.  Compare `part-P` with `stock`: the extra "
             "process `part` starts is part of its figure.\n")
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    rng = lambda xs, i: f"{med(xs, i):.2f} [{min(x[i] for x in xs):.2f}–{max(x[i] for x in xs):.2f}]"
    body = []
    for n in (127, 255):
        p, pp, s = scans[("part", n)], scans[("part-P", n)], scans[("stock", n)]
        body.append([str(n), rng(p, 0), rng(p, 1), rng(pp, 0), rng(pp, 1), rng(s, 0), rng(s, 1),
                     f"{med(pp, 0) / med(s, 0):.3f} / {med(pp, 1) / med(s, 1):.3f}"])
    table(L, ["partitions", "part: scan", "nodes", "part-P: scan", "nodes", "stock: scan", "nodes",
              "part-P / stock (scan / nodes)"], body)
    body = []
    for n, label in ((0, "no partition scan"), (7, "with a scan of 7 partitions")):
        p, pp, s = cycles[("part", n)], cycles[("part-P", n)], cycles[("stock", n)]
        body.append([label, f"{p:.2f}", f"{pp:.2f}", f"{s:.2f}", f"{pp / s:.3f}"])
    table(L, ["attach/detach cycles per second", "part", "part-P", "stock", "part-P / stock"], body)

    L.append("## Absolute figures (TCG: for orientation only)\n")
    L.append("Median [min–max]; 4k jobs in IOPS, 1M jobs in MiB/s; QD1 completion latency p50/p99 in µs.\n")
    body = []
    for j, e in rows:
        cells = [f"{j} ({unit[j]})", e]
        for v in variants:
            c = fmt_abs(results[(v, j, e)])
            if "qd1" in j:
                ls = lat[(v, j, e)]
                c += f" ({statistics.median(x[0] for x in ls):.0f}/{statistics.median(x[1] for x in ls):.0f} µs)"
            cells.append(c)
        body.append(cells)
    table(L, ["workload", "engine"] + variants, body)
    L.append("Raw results: `bench/fio/VARIANT.JOB.ENGINE.REP.json`, `bench/attach.csv`, "
             "`bench/meta.txt`, `bench/devices.txt`.\n")
    return "\n".join(L)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    top = sys.argv[1]
    res = load(top)
    problems = check(res)
    if problems:
        print("bench-report.py: incomplete results:", file=sys.stderr)
        for p in problems[:20]:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    charts(res)
    with open(os.path.join(top, "report.md"), "w") as f:
        f.write(render(res))
    print(f"bench-report.py: {len(res.variants)} variants x {len(res.jobs)} jobs x {len(res.engines)} "
          f"engines x {res.reps} repetition(s) -> {os.path.join(top, 'report.md')}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Turn the raw results of the benchmark's guest side (bench/run: run-fio.sh,
run-attach.sh) into a Markdown report with PNG charts (gnuplot).  Runs on
the host, called by scripts/bench.sh.

usage: bench-report.py DIR

DIR is what scripts/bench.sh left: DIR/bench/{meta.txt,devices.txt,
attach.csv,fio/*.json} from the guest and DIR/host.txt from the host.
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
}
LOOP_VARIANTS = ["part-dio", "part-buf", "compat-dio", "stock-dio", "file-dio"]
RAW_TARGET = {"randread-4k-qd32": 0.95, "seqread-1m": 0.95}
STOCK_TARGET = 0.98


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


# loop/direct_submit each variant must show (bench/run-fio.sh's describe).
DIRECT_SUBMIT = {"part-dio": "1", "compat-dio": "1", "part-buf": "0",
                 "file-dio": "0", "stock-dio": "-"}


def device_field(desc, key):
    """The value of KEY=VALUE in a devices.txt description, or None."""
    for w in desc.split():
        if w.startswith(key + "="):
            return w[len(key) + 1:]
    return None


def check_devices(devices, variants):
    """Each variant is what its name says: direct I/O on for -dio, off for
    -buf (a silent fall-back to buffered I/O must not pass as direct), and
    partition 5 of the raw partition's size (a wrong table must not pass)."""
    problems = []
    raw_size = device_field(devices.get("raw", ""), "size")
    for v in variants:
        if v not in devices or v == "raw":
            continue
        size = device_field(devices[v], "size")
        if size != raw_size:
            problems.append(f"devices.txt: {v} has size={size}, the raw partition size={raw_size}")
        want = {"-dio": "1", "-buf": "0"}.get(v[-4:])
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

    @property
    def rows(self):
        return [(j, e) for j in self.jobs for e in self.engines]

    def ratios(self, a, b, j, e):
        """Per-repetition ratios of variant a to variant b, [] if either lacks one."""
        va, vb = self.results.get((a, j, e), []), self.results.get((b, j, e), [])
        if len(va) != self.reps or len(vb) != self.reps:
            return []
        return [x / y for x, y in zip(va, vb) if y > 0]


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

    try:
        with open(os.path.join(res.raw_dir, "devices.txt")) as f:
            for line in f:
                w = line.split()
                if w:
                    res.devices[w[0]] = line.split(None, 1)[1].strip()
    except OSError as e:
        res.problems.append(f"devices.txt: {e}")

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


def check(res):
    """What keeps the report from being written: the problems load() met,
    devices that are not what their variant's name says, timings missing."""
    problems = list(res.problems)
    devices = res.devices
    for v in res.variants:
        if v not in devices:
            problems.append(f"devices.txt: no device recorded for {v}")
    for v, want in (("part-dio", "240:"), ("file-dio", "240:")):
        if v in devices and f" {want}" not in f" {devices[v]}":
            problems.append(f"devices.txt: {v} is not on major 240: {devices[v]}")
    problems += check_devices(devices, res.variants)
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
           ("compat / stock", "compat-dio", "stock-dio")])


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
    for k in ("kernel", "guest cpu", "guest memory", "disk", "fio", "util-linux", "patched loop.ko", "stock loop.ko"):
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
    def verdict(rr, t):
        if quick:
            return "none (quick mode)"
        m = statistics.median(rr)
        return "met" if m >= t else f"missed by {100 * (t - m):.1f} points"

    body = [[f"part-dio / raw ≥ {RAW_TARGET[j]}", j, e, fmt_ratio(ratios("part-dio", "raw", j, e)),
             verdict(ratios("part-dio", "raw", j, e), RAW_TARGET[j])] for j, e in rows if j in RAW_TARGET]
    body += [[f"part-dio / stock-dio ≥ {STOCK_TARGET}", j, e, fmt_ratio(ratios("part-dio", "stock-dio", j, e)),
              verdict(ratios("part-dio", "stock-dio", j, e), STOCK_TARGET)] for j, e in rows]
    table(L, ["target", "workload", "engine", "measured", "verdict"], body)

    L.append("## Loop partition / raw partition\n")
    L.append("![loop vs raw](loop-vs-raw.png)\n")
    table(L, ["workload", "engine"] + LOOP_VARIANTS,
          [[j, e] + [fmt_ratio(ratios(v, "raw", j, e)) for v in LOOP_VARIANTS] for j, e in rows])
    L.append("## Patched / stock driver\n")
    L.append("The patched driver submits the reads and writes of `part-dio` and `compat-dio` to "
             "the disk from `->queue_rq()` (`direct_submit=1` under Setup), where the stock "
             "driver hands them to its worker thread: both columns measure that (compat mode "
             "differs from the stock driver in nothing else on this path), so no column here is "
             "the same I/O code loaded twice, and this table has no noise floor.  The wall clock "
             "is no cost measure under TCG: at queue depth 32 the stock worker runs on the second "
             "vCPU, so the stock path has two CPUs where direct submission has one.\n")
    L.append("![patched vs stock](patched-vs-stock.png)\n")
    table(L, ["workload", "engine", "partitioned (part-dio) / stock-dio", "compat (compat-dio) / stock-dio"],
          [[j, e, fmt_ratio(ratios("part-dio", "stock-dio", j, e)), fmt_ratio(ratios("compat-dio", "stock-dio", j, e))]
           for j, e in rows])

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

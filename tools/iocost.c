// SPDX-License-Identifier: GPL-2.0
/*
 * iocost: the guest CPU time a number of direct I/Os cost, measured inside
 * one process so that nothing of its start-up is counted
 * (bench/run-cost.sh, in the cost boot: one vCPU under QEMU -icount).
 *
 * usage: iocost DEVICE read|write rand|seq BLOCK_SIZE QUEUE_DEPTH N WINDOWS
 *
 * Opens DEVICE with O_DIRECT and submits I/Os of BLOCK_SIZE bytes in
 * batches of QUEUE_DEPTH with io_submit() (fio's libaio engine makes the
 * same calls) and waits for the whole batch with io_getevents(); offsets
 * come from a fixed pseudo-random sequence (rand) or one after the other
 * (seq), wrapping at the end of the device.
 * The buffers lie in huge pages (MAP_HUGETLB; run-cost.sh reserves
 * them), so that a buffer is physically contiguous in every run: in pages
 * of 4 KiB, how many of a 1 MiB buffer's pages the allocator happens to
 * place side by side decides how many segments its bio has, which differs
 * from one run to the next.
 * It does 2 N I/Os (64 at least) to warm up, then WINDOWS windows of N
 * I/Os, and reads the CPU's busy time and the jiffies before and after
 * each window from /proc/timer_list: busy = "now at" - .idle_sleeptime -
 * .iowait_sleeptime (tick_sched's, NO_HZ_IDLE; to the nanosecond), less
 * what one read of the file costs.  It prints one line,
 *
 *     Q1_NS MIN_NS MAX_NS WAITED CLEAN
 *
 * the lower quartile, least and greatest cost of one I/O over the windows
 * without a tick, CLEAN of them, if they are a quarter of the windows or
 * more, else over all windows (see main()); the quartile also leaves out
 * the windows into which a daemon's or a timer's work fell, as long as
 * they are fewer than three in four; and the number of batches
 * in the windows that were not complete when the submitter came back
 * from io_submit() (see run()).
 * Needs one online CPU: with more, one CPU's busy time is not the work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "iocost: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static char tl[1 << 20];

/* The huge page size of x86-64, the guest's. */
#define HUGE (2ULL << 20)

/*
 * Busy nanoseconds of CPU 0 since boot, from /proc/timer_list, and the
 * jiffies it prints after them (the ticks).
 */
static uint64_t busy_ns(uint64_t *jiffies)
{
	unsigned long long now = 0, idle = 0, iowait = 0, jif = 0;
	int fd = open("/proc/timer_list", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;
	char *p;
	int have = 0;

	if (fd < 0)
		die("open /proc/timer_list");
	while ((n = read(fd, tl + len, sizeof(tl) - 1 - len)) > 0)
		len += n;
	if (n < 0)
		die("read /proc/timer_list");
	close(fd);
	tl[len] = 0;
	for (p = tl; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "now at %llu nsecs", &now) == 1)
			have |= 1;
		else if (sscanf(p, " .idle_sleeptime : %llu nsecs", &idle) == 1)
			have |= 2;
		else if (sscanf(p, " .iowait_sleeptime: %llu nsecs", &iowait) == 1)
			have |= 4;
		else if (have == 7 && sscanf(p, "jiffies: %llu", &jif) == 1)
			have |= 8;
		if (have == 15)
			break;
	}
	if (have != 15) {
		errno = 0;
		die("/proc/timer_list lacks now at, .idle_sleeptime, .iowait_sleeptime or jiffies (CONFIG_NO_HZ_IDLE?)");
	}
	*jiffies = jif;
	return now - idle - iowait;
}

static aio_context_t ctx;
static struct iocb *cbs;
static int fd, is_write, is_rand, qd;
static uint64_t bs, nblocks, next, rnd = 2004;

static uint64_t next_offset(void)
{
	if (!is_rand)
		return (next++ % nblocks) * bs;
	rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((rnd >> 17) % nblocks) * bs;
}

static void prep(struct iocb *cb)
{
	cb->aio_lio_opcode = is_write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
	cb->aio_offset = next_offset();
}

/*
 * The head of the ring of completions that io_setup() maps into the
 * process (fs/aio.c's struct aio_ring); the context is its address.
 */
struct aio_ring {
	unsigned int id, nr, head, tail;
};

static uint64_t waited;

/*
 * n I/Os in batches of qd: submit a batch, wait for all of it.  The
 * guest's disk completes a request as it is issued, so a batch is
 * complete when io_submit() returns, or when a worker that it woke has
 * run: as SCHED_IDLE (main()), the submitter leaves the CPU to the worker
 * on its way out of io_submit(), before it looks at the ring.  A batch
 * whose completions are still missing then (the worker had to sleep, for
 * a lock or for memory, say) is counted in "waited", and the submitter
 * sleeps in io_getevents() until they come.  The ring is read without a
 * system call, as fio's userspace_reap does.
 */
static void run(uint64_t n)
{
	const volatile struct aio_ring *ring = (const void *)(uintptr_t)ctx;
	struct io_event ev[256];
	struct iocb *list[256];
	uint64_t done = 0;
	int i, k, m, got;

	while (done < n) {
		m = n - done < (uint64_t)qd ? (int)(n - done) : qd;
		for (i = 0; i < m; i++) {
			prep(&cbs[i]);
			list[i] = &cbs[i];
		}
		if (syscall(SYS_io_submit, ctx, m, list) != m)
			die("io_submit");
		if ((ring->tail + ring->nr - ring->head) % ring->nr < (unsigned int)m)
			waited++;
		for (got = 0; got < m; got += k) {
			k = syscall(SYS_io_getevents, ctx, m - got, m - got, ev, NULL);
			if (k < 0) {
				if (errno == EINTR) {
					k = 0;
					continue;
				}
				die("io_getevents");
			}
			for (i = 0; i < k; i++) {
				if (ev[i].res != (int64_t)bs) {
					errno = ev[i].res < 0 ? -ev[i].res : 0;
					die(is_write ? "a write did not complete" : "a read did not complete");
				}
			}
		}
		done += m;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t size, n, b0, b1, j0, j1, len, e = 0;
	double *cost, *clean, *set;
	int nclean = 0, nset;
	char *buf;
	int i, windows;

	if (argc != 8 || (strcmp(argv[2], "read") && strcmp(argv[2], "write")) ||
	    (strcmp(argv[3], "rand") && strcmp(argv[3], "seq"))) {
		fprintf(stderr, "usage: iocost DEVICE read|write rand|seq BLOCK_SIZE QUEUE_DEPTH N WINDOWS\n");
		return 2;
	}
	is_write = !strcmp(argv[2], "write");
	is_rand = !strcmp(argv[3], "rand");
	bs = strtoull(argv[4], NULL, 0);
	qd = atoi(argv[5]);
	n = strtoull(argv[6], NULL, 0);
	windows = atoi(argv[7]);
	if (bs < 512 || bs % 512 || qd < 1 || qd > 256 || n < 1 || windows < 1 || windows > 1000) {
		fprintf(stderr, "iocost: BLOCK_SIZE a multiple of 512, QUEUE_DEPTH 1..256, N at least 1, WINDOWS 1..1000\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) != 1) {
		fprintf(stderr, "iocost: %ld CPUs online: the measure needs one\n", sysconf(_SC_NPROCESSORS_ONLN));
		return 2;
	}
	fd = open(argv[1], (is_write ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		die(argv[1]);
	if (ioctl(fd, BLKGETSIZE64, &size))
		die("BLKGETSIZE64");
	nblocks = size / bs;
	if (!nblocks) {
		errno = 0;
		die("the device is smaller than one block");
	}
	len = (bs * qd + HUGE - 1) / HUGE * HUGE;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap of huge pages for the buffers (is vm.nr_hugepages set? run-cost.sh sets it)");
	memset(buf, 0x5a, bs * qd);
	cbs = calloc(qd, sizeof(*cbs));
	cost = calloc(windows, sizeof(*cost));
	clean = calloc(windows, sizeof(*clean));
	if (!cbs || !cost || !clean)
		die("calloc");
	for (i = 0; i < qd; i++) {
		cbs[i].aio_fildes = fd;
		cbs[i].aio_buf = (uintptr_t)(buf + i * bs);
		cbs[i].aio_nbytes = bs;
		cbs[i].aio_data = i;
	}
	if (syscall(SYS_io_setup, qd, &ctx))
		die("io_setup");
	/*
	 * Any other task that wakes up runs first: a worker woken by
	 * io_submit() as soon as the submitter leaves the kernel, and the
	 * submitter again only when the worker has nothing left to do.  As
	 * a task of the default policy, whether a worker preempted the
	 * submitter right away or later depended on the tasks' virtual run
	 * times: another interleaving, another cost.
	 */
	if (sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){ 0 }))
		die("sched_setscheduler SCHED_IDLE");

	run(2 * n < 64 ? 64 : 2 * n);
	waited = 0;
	/* What reading /proc/timer_list costs: the least of a few reads. */
	for (i = 0; i < 5; i++) {
		b0 = busy_ns(&j0);
		b1 = busy_ns(&j1) - b0;
		if (!i || b1 < e)
			e = b1;
	}
	for (i = 0; i < windows; i++) {
		b0 = busy_ns(&j0);
		run(n);
		b1 = busy_ns(&j1);
		if (b1 - b0 <= e) {
			errno = 0;
			die("a window cost no more than reading /proc/timer_list");
		}
		cost[i] = (double)(b1 - b0 - e) / n;
		if (j1 == j0)
			clean[nclean++] = cost[i];
	}
	/*
	 * A tick (HZ=250: every 4 million instructions here) falls into
	 * some windows and not into others, and costs as much as a few
	 * I/Os: the median of all windows would follow how many had one.
	 * So the windows without one count, if a quarter of them or more
	 * are; else (windows of 1 MiB I/Os, longer than a tick) every window
	 * holds about as many ticks as its length gives, and all count.
	 */
	set = nclean >= (windows + 3) / 4 ? clean : cost;
	nset = set == clean ? nclean : windows;
	qsort(set, nset, sizeof(*set), cmp_double);
	/*
	 * Other work falling into a window only adds to it, and may last
	 * for many windows (a kworker's, a journal commit's): the median
	 * followed it whenever it touched half of a repetition's windows
	 * (stock against stock, 4 KiB writes: +3.3 % in one repetition of
	 * five, its least window like the others').  The lower quartile
	 * follows it only past three windows in four.
	 */
	printf("%.0f %.0f %.0f %llu %d\n", set[nset / 4],
	       set[0], set[nset - 1], (unsigned long long)waited, nclean);
	return 0;
}

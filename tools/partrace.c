// SPDX-License-Identifier: GPL-2.0
/*
 * partrace - attach, scan and detach one loop device over and over while
 * reader threads open its partitions and the whole device, and check the
 * partition state after every step.
 *
 *   partrace [-n CYCLES] [-r READERS] [-P] [-u] DEV FILE-A FILE-B
 *   partrace -c [-n CYCLES] [-r READERS] DEV FILE-A FILE-B
 *   partrace -w CYCLE FILE      only write cycle CYCLE's image into FILE
 *
 * Cycle C writes a new table into FILE-A (even C) or FILE-B (odd C), the
 * one that is not attached: a GPT (primary and backup, valid CRCs) of 2 to
 * 12 partitions whose starts and sizes change from cycle to cycle, and in
 * the first sector of partition K the stamp "partrace cycle C part K".
 * It then attaches the file read-only with LOOP_CONFIGURE (-P: with
 * LO_FLAGS_PARTSCAN; otherwise it checks that no partition appeared and
 * scans with BLKRRPART), and detaches it with LOOP_CLR_FD and close().
 * Checked at every step, against what this cycle wrote:
 *   before the scan (no -P): the device has no partition
 *   after the scan: exactly this cycle's partitions in /sys/block/NAME
 *     (number, start, size), each /dev node with the dev_t of sysfs, and
 *     the first sector of each (read with O_DIRECT) carries its stamp
 *   after the detach has completed (at once, or at the readers' last close
 *     when one of them held the device open; readers pause once the
 *     detach has waited 200 ms, counted as readers_held): no partition
 *   readers: a partition that opens and reads shows its own number (the
 *     one sysfs gives for the open file's dev_t: in compat mode a path may
 *     name another partition by the time it is opened, counted as
 *     "renumbered") and the current cycle; a read of an open partition
 *     never fails
 *   -u: the kernel's uevents (netlink, group 1) of each cycle: exactly one
 *     "add" and one "remove" for each partition of the table, none for
 *     any other partition of the device
 * The device must be set up for this: -P works in any mode, BLKRRPART on
 * an unbound-then-attached device needs a partitioned-mode driver.
 *
 * -c: no lost rescan (partitioned mode).  After the plain attach, the
 * other file gets a second table of this cycle (another count and
 * layout, the same stamps), and a thread's BLKRRPART is started together
 * with LOOP_CHANGE_FD to that file, then together with LOOP_SET_CAPACITY.
 * BLKRRPART must succeed, and after each pair has returned the partitions
 * must be exactly the second table: whichever ran first, either the
 * BLKRRPART read it or LOOP_CHANGE_FD reread it, the device reporting
 * LO_FLAGS_PARTSCAN once its table was read.  A BLKRRPART that returned 0
 * without reading leaves no partition: counted as lost_rescan.  LOOP_CHANGE_FD
 * is meant for a file of the same content; the two tables only make a
 * stale reading visible, so readers open the whole device only, and
 * partitions must not be held open by anyone else (run without udev).
 *
 * Known limits.  The detach is awaited by opening the device and asking
 * LOOP_GET_STATUS64: on a kernel whose media change leaves
 * GD_NEED_PART_SCAN set (6.1 without the scan-race fix), that open drops
 * partitions a failed detach left behind, so left_after_detach is a lower
 * bound there (the leftovers still show in the other counts).  A reader
 * opening the whole device just as LOOP_CLR_FD checks for other openers
 * is not counted by it (a window mainline shares); its reads then fail
 * until it closes, which would count as reader_eio.  In compat mode the
 * extended dev_t numbers are reused at every scan: the reader judges the
 * partition its descriptor refers to (counted as renumbered when the path
 * named another), which assumes no other disk takes those numbers meanwhile.
 *
 * Prints progress and the counts on standard output, the first failures
 * (what was expected, what was seen) on standard error.  Exit status 0
 * when no invariant broke, 1 when one did, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "gpt.h"

#define SECTORS		32768		/* 16 MiB images */
#define MAX_PARTS	12
#define NODE_MAX	(MAX_PARTS + 1)	/* readers try p1..p13 and the disk */
#define STAMP		"partrace cycle %u part %u\n"
#define MAX_REPORTS	10

struct part {
	unsigned long long start, size;	/* in 512-byte sectors */
};

struct table {
	unsigned int n;
	struct part p[MAX_PARTS + 1];	/* p[1..n] */
};

static const char *dev_path, *dev_name;
static atomic_uint cur_cycle;
static atomic_int stop_readers, hold_readers;
static int change_mode;		/* -c */

/* What broke, counted; the first MAX_REPORTS are described on stderr. */
enum broken {
	B_LEFT_AFTER_DETACH,	/* partitions on an unbound device */
	B_BEFORE_SCAN,		/* partitions right after a plain attach */
	B_AFTER_SCAN,		/* not exactly this cycle's partitions */
	B_NODE,			/* /dev node missing or of another dev_t */
	B_STAMP,		/* a partition reads another one's data */
	B_READER_WRONG,		/* a reader read another partition or cycle */
	B_READER_EIO,		/* a read of an open partition failed */
	B_UEVENT,		/* not one add and one remove per partition */
	B_OP,			/* an ioctl that must work failed */
	B_LOST_RESCAN,		/* -c: BLKRRPART returned 0, table not read */
	B_NR
};
static const char *const broken_name[B_NR] = {
	"left_after_detach", "before_scan", "after_scan", "nodes", "stamps",
	"reader_wrong", "reader_eio", "uevents", "failed_ops", "lost_rescan",
};
static atomic_ulong broken[B_NR];
static atomic_int reports;

static void breaks(enum broken what, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&broken[what], 1);
	if (atomic_fetch_add(&reports, 1) >= MAX_REPORTS)
		return;
	fprintf(stderr, "partrace: %s: cycle %u: ", broken_name[what],
		atomic_load(&cur_cycle));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void die(const char *what)
{
	fprintf(stderr, "partrace: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Cycle C's table: every cycle differs from the one before in count and layout. */
static void make_table(unsigned int c, struct table *t)
{
	unsigned long long lba = 64 + (c % 7) * 8;
	unsigned int k;

	t->n = 2 + c % (MAX_PARTS - 1);
	for (k = 1; k <= t->n; k++) {
		t->p[k].start = lba;
		t->p[k].size = 128ULL * (1 + (c + k) % 4);
		lba += t->p[k].size + 8 * ((c + k) % 3);
	}
}

/* A GPT header for the entries at ENT_LBA, written at MY_LBA. */
static void gpt_header(uint8_t *h, uint64_t my_lba, uint64_t alt_lba,
		       uint64_t ent_lba, uint32_t ent_crc, unsigned int c)
{
	memset(h, 0, 512);
	memcpy(h, "EFI PART", 8);
	put32(h + 8, 0x00010000);
	put32(h + 12, 92);
	put64(h + 24, my_lba);
	put64(h + 32, alt_lba);
	put64(h + 40, 34);			/* first usable */
	put64(h + 48, SECTORS - 34);		/* last usable */
	memset(h + 56, 0x5a, 16);		/* disk GUID */
	put32(h + 56, c);
	put64(h + 72, ent_lba);
	put32(h + 80, 128);
	put32(h + 84, 128);
	put32(h + 88, ent_crc);
	put32(h + 16, crc32_le(h, 92));
}

static void write_image(int fd, unsigned int c, const struct table *t)
{
	static uint8_t mbr[512], hdr[512], ent[128 * 128], stamp[512];
	static const uint8_t linux_data[16] = {
		0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47,
		0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4 };
	uint32_t ent_crc;
	unsigned int k;

	memset(mbr, 0, sizeof(mbr));
	mbr[446 + 4] = 0xee;			/* protective MBR */
	put32(mbr + 446 + 8, 1);
	put32(mbr + 446 + 12, SECTORS - 1);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	memset(ent, 0, sizeof(ent));
	for (k = 1; k <= t->n; k++) {
		uint8_t *e = ent + (k - 1) * 128;

		memcpy(e, linux_data, 16);
		memset(e + 16, 0xa5, 16);	/* partition GUID */
		put32(e + 16, c);
		put32(e + 20, k);
		put64(e + 32, t->p[k].start);
		put64(e + 40, t->p[k].start + t->p[k].size - 1);
	}
	ent_crc = crc32_le(ent, sizeof(ent));
	if (pwrite(fd, mbr, 512, 0) != 512)
		die("write MBR");
	gpt_header(hdr, 1, SECTORS - 1, 2, ent_crc, c);
	if (pwrite(fd, hdr, 512, 512) != 512 ||
	    pwrite(fd, ent, sizeof(ent), 2 * 512) != sizeof(ent))
		die("write primary GPT");
	gpt_header(hdr, SECTORS - 1, 1, SECTORS - 33, ent_crc, c);
	if (pwrite(fd, ent, sizeof(ent), (SECTORS - 33) * 512ULL) != sizeof(ent) ||
	    pwrite(fd, hdr, 512, (SECTORS - 1) * 512ULL) != 512)
		die("write backup GPT");
	for (k = 1; k <= t->n; k++) {
		memset(stamp, 0, sizeof(stamp));
		snprintf((char *)stamp, sizeof(stamp), STAMP, c, k);
		if (pwrite(fd, stamp, 512, t->p[k].start * 512) != 512)
			die("write stamp");
	}
}

static int read_attr(const char *part, const char *attr, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/block/%s/%s/%s", dev_name, part, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

struct seen {
	unsigned int n;			/* partitions seen */
	char names[64][NAME_MAX + 1];
};

/* The partitions of the device as sysfs lists them now. */
static void list_parts(struct seen *s)
{
	size_t len = strlen(dev_name);
	struct dirent *d;
	DIR *dir;
	char path[128];

	s->n = 0;
	snprintf(path, sizeof(path), "/sys/block/%s", dev_name);
	dir = opendir(path);
	if (!dir)
		die(path);
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, dev_name, len) || d->d_name[len] != 'p')
			continue;
		if (s->n < 64)
			snprintf(s->names[s->n], sizeof(s->names[0]), "%s", d->d_name);
		s->n++;
	}
	closedir(dir);
}

static void names_of(const struct seen *s, char *buf, size_t len)
{
	unsigned int i;
	size_t o = 0;

	buf[0] = 0;
	for (i = 0; i < s->n && i < 64 && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%s", i ? " " : "", s->names[i]);
}

static void expect_none(enum broken what, const char *when)
{
	struct seen s;
	char names[512];

	list_parts(&s);
	if (!s.n)
		return;
	names_of(&s, names, sizeof(names));
	breaks(what, "%s: expected no partition of %s, seen %u: %s",
	       when, dev_name, s.n, names);
}

static unsigned long parts_checked;

static void expect_table(unsigned int c, const struct table *t)
{
	char part[32], buf[64], want[64], node[64], names[512];
	static uint8_t *sector;
	unsigned int k, pn;
	struct seen s;
	struct stat st;
	unsigned int maj, min;
	int fd;

	if (!sector && posix_memalign((void **)&sector, 4096, 4096))
		die("posix_memalign");
	list_parts(&s);
	if (s.n != t->n) {
		names_of(&s, names, sizeof(names));
		breaks(B_AFTER_SCAN, "expected %u partitions of %s, seen %u: %s",
		       t->n, dev_name, s.n, names);
	}
	for (k = 1; k <= t->n; k++) {
		snprintf(part, sizeof(part), "%sp%u", dev_name, k);
		if (read_attr(part, "partition", buf, sizeof(buf))) {
			breaks(B_AFTER_SCAN, "expected %s (start %llu, size %llu), it is missing",
			       part, t->p[k].start, t->p[k].size);
			continue;
		}
		pn = strtoul(buf, NULL, 10);
		snprintf(want, sizeof(want), "%u %llu %llu", k, t->p[k].start, t->p[k].size);
		read_attr(part, "start", buf, sizeof(buf));
		snprintf(buf + strlen(buf), 8, " ");
		read_attr(part, "size", buf + strlen(buf), sizeof(buf) - strlen(buf));
		{
			char got[96];

			snprintf(got, sizeof(got), "%u %s", pn, buf);
			if (strcmp(got, want))
				breaks(B_AFTER_SCAN, "%s: expected number, start, size '%s', seen '%s'",
				       part, want, got);
		}
		if (read_attr(part, "dev", buf, sizeof(buf)) ||
		    sscanf(buf, "%u:%u", &maj, &min) != 2) {
			breaks(B_AFTER_SCAN, "%s: no dev attribute", part);
			continue;
		}
		snprintf(node, sizeof(node), "/dev/%s", part);
		if (stat(node, &st) || !S_ISBLK(st.st_mode) ||
		    major(st.st_rdev) != maj || minor(st.st_rdev) != min) {
			breaks(B_NODE, "%s: expected a block node %u:%u, seen %s", node,
			       maj, min, errno == ENOENT ? "no node" : "another node");
			continue;
		}
		fd = open(node, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0) {
			breaks(B_STAMP, "%s: open failed: %s", node, strerror(errno));
			continue;
		}
		snprintf(want, sizeof(want), STAMP, c, k);
		if (pread(fd, sector, 512, 0) != 512)
			breaks(B_STAMP, "%s: read of sector 0 failed: %s", node, strerror(errno));
		else if (memcmp(sector, want, strlen(want)))
			breaks(B_STAMP, "%s: expected '%.*s', seen '%.40s'", node,
			       (int)strlen(want) - 1, want, sector);
		close(fd);
		parts_checked++;
	}
}

/* Readers: open a partition or the disk, read its first sector, close. */
static atomic_ulong reader_opens, reader_reads, reader_renumbered;

/*
 * The number of the partition an open file descriptor refers to, as the
 * kernel sees it (0 for the whole disk), or -1.  Stable while it is open:
 * an open partition is not deleted.
 */
static int partno_of(int fd)
{
	char path[64], buf[16];
	struct stat st;
	ssize_t n;
	int sfd;

	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return -1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition",
		 major(st.st_rdev), minor(st.st_rdev));
	sfd = open(path, O_RDONLY | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(sfd, buf, sizeof(buf) - 1);
	close(sfd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return atoi(buf);
}

static void *reader(void *arg)
{
	unsigned int seed = (unsigned long)arg;
	char node[64], want[64];
	uint8_t *buf;
	unsigned int k, c, sc, sk;
	ssize_t n;
	int fd;

	if (posix_memalign((void **)&buf, 4096, 4096))
		die("posix_memalign");
	while (!atomic_load(&stop_readers)) {
		if (atomic_load(&hold_readers)) {
			usleep(1000);
			continue;
		}
		k = change_mode ? 0 : rand_r(&seed) % (NODE_MAX + 1);
		if (k)
			snprintf(node, sizeof(node), "%sp%u", dev_path, k);
		else
			snprintf(node, sizeof(node), "%s", dev_path);
		fd = open(node, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (fd < 0)
			continue;	/* no such partition now, or detaching */
		atomic_fetch_add(&reader_opens, 1);
		n = pread(fd, buf, 512, 0);
		c = atomic_load(&cur_cycle);	/* the device stays bound while open */
		if (k && n < 0 && errno != ENXIO)
			breaks(B_READER_EIO, "reader: read of %s (open) failed: %s",
			       node, strerror(errno));
		if (k && n >= 0 && n < 512)
			breaks(B_READER_WRONG, "reader: %s (open): read of sector 0 returned %zd bytes",
			       node, n);
		if (k && n == 512) {
			int pn = partno_of(fd);

			/*
			 * In compat mode the numbers on the extended major are
			 * handed out anew at every scan: the node a path named
			 * may be another partition's by the time it is opened.
			 * Judge the data by the partition actually open.
			 */
			if (pn > 0 && (unsigned int)pn != k) {
				atomic_fetch_add(&reader_renumbered, 1);
				k = pn;
			}
			atomic_fetch_add(&reader_reads, 1);
			snprintf(want, sizeof(want), STAMP, c, k);
			if (pn < 0)
				breaks(B_READER_WRONG, "reader: %s: open, but its partition number is unreadable", node);
			else if (pn == 0)
				breaks(B_READER_WRONG, "reader: %s: open, read, but no longer in sysfs: a deleted partition",
				       node);
			else if (sscanf((char *)buf, STAMP, &sc, &sk) != 2 || sc != c || sk != k)
				breaks(B_READER_WRONG, "reader: %s (partition %u): expected '%.*s', seen '%.40s'",
				       node, k, (int)strlen(want) - 1, want, buf);
		}
		close(fd);
	}
	free(buf);
	return NULL;
}

/* Kernel uevents for this device's partitions, counted per partition number. */
static int uevent_fd = -1;
static unsigned int uev_add[64], uev_remove[64], uev_other;

static void drain_uevents(void)
{
	static char msg[8192];
	size_t len = strlen(dev_name);
	const char *action, *name, *type;
	ssize_t n;
	char *p;

	for (;;) {
		n = recv(uevent_fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			if (errno == ENOBUFS)
				breaks(B_UEVENT, "uevents lost (ENOBUFS): counts are incomplete");
			else
				die("recv uevent");
			continue;
		}
		msg[n] = 0;
		action = name = type = "";
		for (p = msg; p < msg + n; p += strlen(p) + 1) {
			if (!strncmp(p, "ACTION=", 7))
				action = p + 7;
			else if (!strncmp(p, "DEVNAME=", 8))
				name = p + 8;
			else if (!strncmp(p, "DEVTYPE=", 8))
				type = p + 8;
		}
		if (strcmp(type, "partition") || strncmp(name, dev_name, len) ||
		    name[len] != 'p')
			continue;
		{
			unsigned int k = strtoul(name + len + 1, NULL, 10) % 64;

			if (!strcmp(action, "add"))
				uev_add[k]++;
			else if (!strcmp(action, "remove"))
				uev_remove[k]++;
			else
				uev_other++;
		}
	}
}

static void expect_uevents(const struct table *t)
{
	unsigned int k, want;

	drain_uevents();
	for (k = 1; k < 64; k++) {
		want = k <= t->n;
		if (uev_add[k] != want || uev_remove[k] != want)
			breaks(B_UEVENT, "%sp%u: expected %u add and %u remove uevents, seen %u and %u",
			       dev_name, k, want, want, uev_add[k], uev_remove[k]);
	}
	memset(uev_add, 0, sizeof(uev_add));
	memset(uev_remove, 0, sizeof(uev_remove));
}

static void open_uevents(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int size = 32 << 20;

	uevent_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
	if (uevent_fd < 0)
		die("uevent socket");
	if (setsockopt(uevent_fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		die("SO_RCVBUFFORCE");
	if (bind(uevent_fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind uevent socket");
}

/*
 * Wait until the device is unbound: LOOP_CLR_FD leaves it to the last
 * close, which may be a reader's.  Readers that keep opening the device
 * can keep it open for good (there is always one of them in it with more
 * readers than CPUs), as they would on the stock driver: after 200 ms
 * they pause until the device is unbound.  Returns 0 when unbound, -1 on
 * timeout.
 */
static unsigned long deferred, held;

static int wait_unbound(void)
{
	struct loop_info64 info;
	double start = now(), end = start + 20;
	int fd, rc, waited = 0;

	while (now() < end) {
		fd = open(dev_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			rc = ioctl(fd, LOOP_GET_STATUS64, &info);
			close(fd);
			if (rc < 0 && errno == ENXIO) {
				deferred += waited;
				held += atomic_exchange(&hold_readers, 0);
				return 0;
			}
		}
		waited = 1;
		if (now() - start > 0.2)
			atomic_store(&hold_readers, 1);
		usleep(1000);
	}
	atomic_store(&hold_readers, 0);
	return -1;
}

/* -c: a BLKRRPART started together with another ioctl on the device. */
static pthread_barrier_t race_start;
static int race_rc, race_errno;

static void *rereadpt(void *arg)
{
	int fd = open(dev_path, O_RDONLY | O_CLOEXEC);

	pthread_barrier_wait(&race_start);
	race_rc = fd < 0 ? -1 : ioctl(fd, BLKRRPART);
	race_errno = errno;
	if (fd >= 0)
		close(fd);
	return arg;
}

/*
 * Start BLKRRPART in a thread and REQ (with ARG) here at the same moment;
 * then the partitions must be T, stamped with cycle C.
 */
static unsigned long races;

static void race_rereadpt(int fd, unsigned long req, unsigned long arg,
			  const char *name, unsigned int c, const struct table *t)
{
	struct seen s;
	pthread_t th;
	int rc, err;

	if (pthread_create(&th, NULL, rereadpt, NULL))
		die("pthread_create");
	pthread_barrier_wait(&race_start);
	rc = ioctl(fd, req, arg);
	err = errno;
	pthread_join(th, NULL);
	races++;
	if (rc)
		breaks(B_OP, "%s (with BLKRRPART): %s", name, strerror(err));
	if (race_rc) {
		breaks(B_OP, "BLKRRPART (with %s): %s", name, strerror(race_errno));
		return;
	}
	list_parts(&s);
	if (!s.n) {
		breaks(B_LOST_RESCAN, "BLKRRPART with %s returned 0, and %s has no partition; expected %u",
		       name, dev_name, t->n);
		return;
	}
	expect_table(c, t);
}

static void usage(void)
{
	fprintf(stderr, "usage: partrace [-n CYCLES] [-r READERS] [-P] [-u] DEV FILE-A FILE-B\n"
		"       partrace -c [-n CYCLES] [-r READERS] DEV FILE-A FILE-B\n"
		"       partrace -w CYCLE FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int cycles = 1000, nreaders = 3, c, i;
	int partscan = 0, uevents = 0, opt, files[2], fd;
	struct loop_config cfg;
	pthread_t *threads;
	struct table t = { 0 }, t2 = { 0 };
	double start, last;

	while ((opt = getopt(argc, argv, "cn:r:Puw:")) != -1) {
		switch (opt) {
		case 'w':
			if (argc - optind != 1)
				usage();
			c = strtoul(optarg, NULL, 10);
			fd = open(argv[optind], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0 || ftruncate(fd, SECTORS * 512ULL))
				die(argv[optind]);
			make_table(c, &t);
			write_image(fd, c, &t);
			return 0;
		case 'n': cycles = strtoul(optarg, NULL, 10); break;
		case 'r': nreaders = strtoul(optarg, NULL, 10); break;
		case 'P': partscan = 1; break;
		case 'u': uevents = 1; break;
		case 'c': change_mode = 1; break;
		default: usage();
		}
	}
	if (argc - optind != 3 || !cycles || (change_mode && (partscan || uevents)))
		usage();
	if (pthread_barrier_init(&race_start, NULL, 2))
		die("pthread_barrier_init");
	dev_path = argv[optind];
	dev_name = strrchr(dev_path, '/') ? strrchr(dev_path, '/') + 1 : dev_path;
	for (i = 0; i < 2; i++) {
		files[i] = open(argv[optind + 1 + i], O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (files[i] < 0 || ftruncate(files[i], SECTORS * 512ULL))
			die(argv[optind + 1 + i]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (uevents)
		open_uevents();
	expect_none(B_LEFT_AFTER_DETACH, "at start");
	threads = calloc(nreaders ? nreaders : 1, sizeof(*threads));
	if (!threads)
		die("calloc");
	for (i = 0; i < nreaders; i++)
		if (pthread_create(&threads[i], NULL, reader, (void *)((i + 1) * 2654435761UL)))
			die("pthread_create");

	printf("# partrace: %s, %u cycles, %u readers, scan with %s%s\n", dev_path,
	       cycles, nreaders, partscan ? "LO_FLAGS_PARTSCAN" :
	       change_mode ? "BLKRRPART racing LOOP_CHANGE_FD and LOOP_SET_CAPACITY" : "BLKRRPART",
	       uevents ? ", uevents checked" : "");
	start = last = now();
	for (c = 1; c <= cycles; c++) {
		atomic_store(&cur_cycle, c);
		if (uevents) {
			/* A cycle cut short by a failed ioctl leaves its events. */
			drain_uevents();
			memset(uev_add, 0, sizeof(uev_add));
			memset(uev_remove, 0, sizeof(uev_remove));
		}
		make_table(c, &t);
		write_image(files[c % 2], c, &t);

		/*
		 * Read-only: a close after writing would make udev's inotify
		 * watch (compat mode has it) ask for a rescan of its own.
		 */
		fd = open(dev_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			breaks(B_OP, "open %s: %s", dev_path, strerror(errno));
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = files[c % 2];
		cfg.info.lo_flags = partscan ? LO_FLAGS_PARTSCAN : 0;
		if (ioctl(fd, LOOP_CONFIGURE, &cfg)) {
			breaks(B_OP, "LOOP_CONFIGURE: %s", strerror(errno));
			close(fd);
			continue;
		}
		if (change_mode) {
			expect_none(B_BEFORE_SCAN, "attached, not scanned");
			make_table(c + 1, &t2);
			write_image(files[(c + 1) % 2], c, &t2);
			race_rereadpt(fd, LOOP_CHANGE_FD, files[(c + 1) % 2],
				      "LOOP_CHANGE_FD", c, &t2);
			race_rereadpt(fd, LOOP_SET_CAPACITY, 0, "LOOP_SET_CAPACITY", c, &t2);
		} else if (!partscan) {
			expect_none(B_BEFORE_SCAN, "attached, not scanned");
			if (ioctl(fd, BLKRRPART))
				breaks(B_OP, "BLKRRPART on the bound device: %s", strerror(errno));
		}
		if (!change_mode)
			expect_table(c, &t);
		if (ioctl(fd, LOOP_CLR_FD))
			breaks(B_OP, "LOOP_CLR_FD: %s", strerror(errno));
		close(fd);
		if (wait_unbound()) {
			breaks(B_OP, "still bound 20 s after LOOP_CLR_FD and the last close we know of");
			break;
		}
		expect_none(B_LEFT_AFTER_DETACH, "detached");
		if (uevents)
			expect_uevents(&t);
		if (now() - last >= 10 || c == cycles) {
			unsigned long b = 0;

			for (i = 0; i < B_NR; i++)
				b += atomic_load(&broken[i]);
			printf("# partrace: cycle %u/%u, %.0fs, %lu broken\n", c, cycles,
			       now() - start, b);
			last = now();
		}
	}
	atomic_store(&stop_readers, 1);
	for (i = 0; i < nreaders; i++)
		pthread_join(threads[i], NULL);

	printf("partrace: cycles=%u partitions=%lu reader_opens=%lu reader_reads=%lu reader_renumbered=%lu deferred_detaches=%lu readers_held=%lu races=%lu %.1fs\n",
	       c - 1, parts_checked, atomic_load(&reader_opens), atomic_load(&reader_reads),
	       atomic_load(&reader_renumbered), deferred, held, races, now() - start);
	{
		unsigned long b = 0;

		printf("partrace: broken:");
		for (i = 0; i < B_NR; i++) {
			printf(" %s=%lu", broken_name[i], atomic_load(&broken[i]));
			b += atomic_load(&broken[i]);
		}
		printf("\n");
		return b || c <= cycles ? 1 : 0;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * fuzzpt - write mangled partition tables to a block device and have the
 * kernel scan each one, checking what it made of them.
 *
 *   fuzzpt [-s SEED] [-n COUNT] [-f FIRST] [-v] DEVICE
 *
 * For table i (FIRST <= i < FIRST + COUNT) the bytes depend only on SEED
 * and i, so "fuzzpt -s SEED -f i -n 1 DEVICE" replays one table.  Each
 * table is written through DEVICE (so the kernel reads back what was
 * written, not a stale page cache), then BLKRRPART asks for a scan.
 * BLKRRPART needs no partition of DEVICE open: run it on a device that
 * nothing else uses.
 *
 * Checked after every scan, from /sys/class/block/DEVICE:
 *   - every partition lies inside the device (start + size <= capacity);
 *   - its partition number is 1..255 and its node name is DEVICE"p"N;
 *   - with M minors per device (MAX_PART in the environment, which the
 *     device's sysfs "range" must match: M = MAX_PART, 1 for MAX_PART=0;
 *     without MAX_PART, M is read from "range"), partition N < M has the
 *     device's major and minor base + N, and one from M on is on the
 *     extended dev_t major 259; no two partitions share a dev_t;
 *   - /dev/DEVICE"p"N is a block node of that dev_t, /proc/partitions
 *     lists it with it, and lists no other partition of DEVICE;
 *   - its attributes can be read (nothing else touches the device);
 *   - for the GPT kinds whose headers are valid (gpt-entries, gpt-many),
 *     exactly the partitions the table's valid entries describe.
 * BLKRRPART may fail (a clear error is a safe result); its errno is counted.
 *
 * Progress on stderr every 100 tables.  Output: one line per table with -v (with a digest of the partitions'
 * numbers, starts and sizes, to compare two modes), then a summary line
 *   "tables=N scanned=N refused=N partitions=N max_partitions=N predicted=N bad=N"
 * (predicted: the tables whose partitions were checked against the table)
 * Exit status 0 when bad=0, 1 otherwise, 2 on usage or I/O errors.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpt.h"

#define SECTOR		512
#define HEAD_SECTORS	260	/* written at the start: MBR, GPT header, 1024 entries */
#define MAX_EBR		6	/* extended boot records laid out per table */

static uint64_t rng_state;

/* splitmix64: small, and the same sequence on every machine */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzzpt: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* One DOS partition entry (16 bytes at 0x1be + 16 * slot). */
static void dos_entry(uint8_t *sec, int slot, uint8_t type, uint32_t start,
		      uint32_t size)
{
	uint8_t *e = sec + 0x1be + 16 * slot;

	memset(e, 0, 16);
	e[0] = rnd_below(4) ? 0x00 : 0x80;
	e[4] = type;
	put32(e + 8, start);
	put32(e + 12, size);
}

static void dos_sign(uint8_t *sec)
{
	sec[510] = 0x55;
	sec[511] = 0xaa;
}

/* A plausible sector number: mostly inside the device, sometimes not. */
static uint32_t some_lba(uint64_t nsect)
{
	switch (rnd_below(6)) {
	case 0: return 0;
	case 1: return (uint32_t)rnd();
	case 2: return (uint32_t)(nsect - rnd_below(8));
	case 3: return (uint32_t)(nsect + rnd_below(1 << 20));
	default: return rnd_below(nsect);
	}
}

static void scribble(uint8_t *buf, size_t len, unsigned int n)
{
	while (n--)
		buf[rnd_below(len)] = rnd();
}

enum kind {
	DOS_RANDOM,	/* random entries, valid signature */
	DOS_OVERLAP,	/* overlapping, zero-size and past-the-end entries */
	EBR_LOOP,	/* extended partition whose EBR chain loops back */
	EBR_RANDOM,	/* a chain of EBRs with random links and entries */
	GPT_ENTRIES,	/* valid headers, random entries, right CRCs */
	GPT_MANY,	/* 256 to 1024 entries, some used, right CRCs */
	GPT_HEADER,	/* random header fields, right header CRC */
	GPT_FLIPS,	/* a valid GPT with random bytes flipped */
	NKINDS
};

static const char *const kind_name[NKINDS] = {
	"dos-random", "dos-overlap", "ebr-loop", "ebr-random",
	"gpt-entries", "gpt-many", "gpt-header", "gpt-flips",
};

/*
 * GPT at LBA 1, entries from LBA 2; entry_size 128 unless the kind
 * mangles it.  Only the primary is written: the kernel falls back to the
 * alternate header (at last_lba, never written) only if this one fails.
 */
static void make_gpt(uint8_t *head, uint64_t nsect, enum kind kind, int full)
{
	uint8_t *hdr = head + SECTOR, *ent = head + 2 * SECTOR;
	uint32_t nent = 128, esize = 128, max_ent, i, used;
	uint64_t first, last = nsect - 34;

	if (kind == GPT_MANY)
		nent = 256 + rnd_below(769);
	max_ent = (HEAD_SECTORS - 2) * SECTOR / esize;
	if (nent > max_ent)
		nent = max_ent;
	/* protective MBR */
	dos_entry(head, 0, 0xee, 1, nsect > 0xffffffffULL ? 0xffffffffU : (uint32_t)(nsect - 1));
	dos_sign(head);

	memset(ent, 0, (size_t)nent * esize);
	/*
	 * A few used entries, at any index of the array; a "full" GPT_MANY
	 * table fills all of them, past the 255 partitions a disk can have.
	 */
	used = 1 + rnd_below(kind == GPT_MANY ? 4 : 6);
	if (kind == GPT_MANY && full)
		used = nent;
	for (i = 0; i < used && i < nent; i++) {
		uint8_t *e = ent + (kind == GPT_MANY && !full ? rnd_below(nent) : i) * esize;
		uint64_t start = 34 + rnd_below(nsect), len = rnd_below(nsect / 4 + 1);

		put64(e, 0x4f68bce3e8cd4db1ULL);	/* type: Linux data (low half) */
		put64(e + 8, 0xe47d09d8477de4a1ULL ^ rnd());
		put64(e + 16, rnd());			/* unique GUID */
		put64(e + 24, rnd());
		if (kind == GPT_ENTRIES && rnd_below(3) == 0)
			start = rnd();			/* anywhere, even 2^63 */
		if (rnd_below(8) == 0)
			len = 0;			/* zero size */
		put64(e + 32, start);			/* first LBA */
		put64(e + 40, start + len - (len ? 1 : 0) - (rnd_below(10) == 0 ? 2 : 0));
		if (kind == GPT_ENTRIES)
			scribble(e, esize, rnd_below(4));
	}

	first = 2 + ((uint64_t)nent * esize + SECTOR - 1) / SECTOR;
	memcpy(hdr, "EFI PART", 8);
	put32(hdr + 8, 0x00010000);	/* revision 1.0 */
	put32(hdr + 12, 92);		/* header size */
	put64(hdr + 24, 1);		/* my LBA */
	put64(hdr + 32, nsect - 1);	/* alternate LBA */
	put64(hdr + 40, first);
	put64(hdr + 48, last);
	put64(hdr + 56, rnd());		/* disk GUID */
	put64(hdr + 64, rnd());
	put64(hdr + 72, 2);		/* entries LBA */
	put32(hdr + 80, nent);
	put32(hdr + 84, esize);
	put32(hdr + 88, crc32_le(ent, (size_t)nent * esize));

	if (kind == GPT_HEADER) {
		static const uint32_t sizes[] = { 0, 1, 64, 127, 129, 256, 4096, 0xffffffffU };

		switch (rnd_below(6)) {
		case 0: put32(hdr + 80, (uint32_t)rnd()); break;		/* entry count */
		case 1: put32(hdr + 84, sizes[rnd_below(8)]); break;		/* entry size */
		case 2: put64(hdr + 72, rnd_below(2) ? rnd() : nsect - 1); break; /* entries LBA */
		case 3: put64(hdr + 40, rnd()); put64(hdr + 48, rnd()); break;	/* usable range */
		case 4: put32(hdr + 12, rnd_below(2) ? (uint32_t)rnd() : 512); break; /* header size */
		default: scribble(hdr + 16, 76, 1 + rnd_below(8)); break;
		}
	}
	put32(hdr + 16, 0);
	put32(hdr + 16, crc32_le(hdr, 92));
	if (kind == GPT_FLIPS)
		scribble(head, HEAD_SECTORS * SECTOR, 1 + rnd_below(16));
}

/*
 * DOS label with an extended partition at LBA 2048 whose EBRs follow each
 * other every 2048 sectors; the kinds differ in how the links go wrong.
 * EBR k sits at base + k * 2048 and is written by the caller from ebr[k].
 */
static void make_ebr(uint8_t *head, uint8_t ebr[][SECTOR], int *nebr,
		     uint64_t nsect, enum kind kind, int full)
{
	const uint32_t base = 2048, step = 2048;
	int n = 1 + rnd_below(MAX_EBR), k;

	dos_entry(head, 0, 0x83, 64, 1984 - rnd_below(2) * 4000);
	dos_entry(head, 1, rnd_below(2) ? 0x05 : 0x0f, base, (uint32_t)(nsect - base));
	dos_sign(head);
	for (k = 0; k < n; k++) {
		uint32_t next = (k + 1) * step;	/* relative to the extended start */

		memset(ebr[k], 0, SECTOR);
		/*
		 * A chain that loops back is followed until the parser gives
		 * up after 100 links: with a data partition in every EBR that
		 * is 100 partitions (seconds of udev and sysfs under TCG), so
		 * most looping chains carry zero-size entries, which the
		 * parser skips but still has to walk.
		 */
		dos_entry(ebr[k], 0, 0x83, 1 + rnd_below(64),
			  kind == EBR_LOOP && !full ? 0 : rnd_below(2 * step));
		if (kind == EBR_LOOP) {
			if (k == n - 1)
				next = rnd_below(n) * step;	/* back to an earlier EBR or itself */
		} else if (rnd_below(4) == 0) {
			next = some_lba(nsect);
		}
		if (k < n - 1 || kind == EBR_LOOP)
			dos_entry(ebr[k], 1, 0x05, next, step);
		if (kind == EBR_RANDOM && rnd_below(3) == 0)
			scribble(ebr[k] + 0x1be, 64, 1 + rnd_below(8));
		dos_sign(ebr[k]);
	}
	*nebr = n;
}

static void make_dos(uint8_t *head, uint64_t nsect, enum kind kind)
{
	int slot;

	for (slot = 0; slot < 4; slot++) {
		uint32_t start = some_lba(nsect), size = some_lba(nsect);
		uint8_t type = rnd_below(3) ? 0x83 : (uint8_t)rnd();

		if (kind == DOS_OVERLAP) {
			start = 64 + rnd_below(64);
			size = rnd_below(4) == 0 ? 0 : (uint32_t)(nsect - start + rnd_below(3) * 1000);
			type = 0x83;
		}
		dos_entry(head, slot, type, start, size);
	}
	if (kind == DOS_RANDOM && rnd_below(2))
		scribble(head + 0x1be, 64, 1 + rnd_below(16));
	dos_sign(head);
}

static void pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t r = pwrite(fd, buf, len, off);

	if (r != (ssize_t)len)
		die("write %zu bytes at %lld: %s", len, (long long)off,
		    r < 0 ? strerror(errno) : "short write");
}

static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char path[1024];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int read_dev(const char *dir, unsigned int *maj, unsigned int *min)
{
	char path[1024];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/dev", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%u:%u", maj, min) == 2;
	fclose(f);
	return ok ? 0 : -1;
}

#define EXT_MAJOR	259	/* BLOCK_EXT_MAJOR: partitions beyond the device's minors */

struct check {
	const char *name;	/* "loop0" */
	unsigned int maj, min;	/* of the whole device */
	int max_part;		/* its minors: 0 is compat mode, every partition on EXT_MAJOR */
	uint64_t capacity;	/* sectors */
};

/* The partitions of the device in /proc/partitions: 1 if NAME is MAJ:MIN there. */
static int in_proc_partitions(const char *name, unsigned int maj, unsigned int min)
{
	unsigned int pmaj, pmin;
	unsigned long long blocks;
	char line[256], pname[128];
	FILE *f = fopen("/proc/partitions", "r");
	int found = 0;

	if (!f)
		die("/proc/partitions: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %llu %127s", &pmaj, &pmin, &blocks, pname) == 4 &&
		    !strcmp(pname, name))
			found = pmaj == maj && pmin == min ? 1 : -1;
	fclose(f);
	return found == 1;
}

/* How many lines of /proc/partitions name a partition of the device. */
static int proc_partitions_of(const char *name)
{
	char line[256], pname[128];
	size_t len = strlen(name);
	FILE *f = fopen("/proc/partitions", "r");
	int n = 0;

	if (!f)
		die("/proc/partitions: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %*u %*u %127s", pname) == 1 &&
		    !strncmp(pname, name, len) && pname[len] == 'p')
			n++;
	fclose(f);
	return n;
}

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t saved = rng_state, h;

	rng_state = a * 0x9e3779b97f4a7c15ULL ^ b * 0xc2b2ae3d27d4eb4fULL ^ c;
	h = rnd();
	rng_state = saved;
	return h;
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/*
 * The partitions a GPT_ENTRIES or GPT_MANY table must give (its headers
 * and CRCs are valid, the alternate header is absent): the kernel's
 * efi_partition() takes entry i as partition i + 1 for i < 255 when
 * is_pte_valid() holds (a type GUID, first and last LBA within the
 * device, last >= first).  Every such entry lies inside the device, so
 * blk_add_partition() neither skips nor truncates one.  Returns how many,
 * with the digest check_parts() makes of them in *layout.
 */
static int gpt_expected(const uint8_t *head, uint64_t nsect, uint64_t *layout)
{
	static const uint8_t no_type[16];
	const uint8_t *hdr = head + SECTOR, *ent = head + 2 * SECTOR;
	uint32_t nent = get_le(hdr + 80, 4), esize = get_le(hdr + 84, 4), i;
	int n = 0;

	*layout = 0;
	for (i = 0; i < nent && i < 255; i++) {
		const uint8_t *e = ent + (size_t)i * esize;
		uint64_t start = get_le(e + 32, 8), end = get_le(e + 40, 8);

		if (!memcmp(e, no_type, sizeof(no_type)) || start > nsect - 1 ||
		    end > nsect - 1 || end < start)
			continue;
		*layout += mix(i + 1, start, end - start + 1);
		n++;
	}
	return n;
}

/*
 * Returns the number of partitions; *bad counts the ones that break a rule
 * and *layout gets a digest of (number, start, size) of all of them, the
 * same whatever the major, minors and the order sysfs lists them in.
 * Rules: the name is NAMEpN for partition N (1-255); it lies inside the
 * device; its dev_t is the device's major and minor + N below max_part,
 * EXT_MAJOR from there (and always in compat mode), and no other
 * partition's; /dev/NAMEpN is a block node of that dev_t and
 * /proc/partitions lists it with it unless it is empty, and lists no
 * other partition of the device.  Nothing else touches the device (udev is stopped), so a
 * partition whose attributes cannot be read breaks a rule too.
 */
static int check_parts(const struct check *c, unsigned long table, int *bad,
		       uint64_t *layout)
{
	char sysdir[256], pdir[512], node[300];
	static dev_t seen[512];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int n = 0, listed = 0, j;
	size_t len = strlen(c->name);

	snprintf(sysdir, sizeof(sysdir), "/sys/class/block/%s", c->name);
	d = opendir(sysdir);
	if (!d)
		die("%s: %s", sysdir, strerror(errno));
	while ((de = readdir(d))) {
		uint64_t start, size, partno;
		unsigned int maj, min;
		char want[300];

		if (strncmp(de->d_name, c->name, len) || de->d_name[len] != 'p')
			continue;
		snprintf(pdir, sizeof(pdir), "%s/%s", sysdir, de->d_name);
		if (read_u64(pdir, "partition", &partno) || read_u64(pdir, "start", &start) ||
		    read_u64(pdir, "size", &size) || read_dev(pdir, &maj, &min)) {
			printf("table %lu: BAD %s: listed in sysfs, its attributes unreadable\n",
			       table, de->d_name);
			(*bad)++;
			continue;
		}
		for (j = 0; j < n && j < (int)(sizeof(seen) / sizeof(seen[0])); j++)
			if (seen[j] == makedev(maj, min)) {
				printf("table %lu: BAD %s is %u:%u, as another partition\n",
				       table, de->d_name, maj, min);
				(*bad)++;
			}
		if (n < (int)(sizeof(seen) / sizeof(seen[0])))
			seen[n] = makedev(maj, min);
		n++;
		snprintf(node, sizeof(node), "/dev/%s", de->d_name);
		if (stat(node, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(maj, min)) {
			printf("table %lu: BAD %s: no block node %u:%u\n", table, node, maj, min);
			(*bad)++;
		}
		/* /proc/partitions leaves out empty partitions */
		if (size)
			listed++;
		if (size && !in_proc_partitions(de->d_name, maj, min)) {
			printf("table %lu: BAD %s: not in /proc/partitions as %u:%u\n",
			       table, de->d_name, maj, min);
			(*bad)++;
		}
		*layout += mix(partno, start, size);
		snprintf(want, sizeof(want), "%sp%" PRIu64, c->name, partno);
		if (partno < 1 || partno > 255 || strcmp(want, de->d_name)) {
			printf("table %lu: BAD %s is partition %" PRIu64 "\n", table, de->d_name, partno);
			(*bad)++;
		}
		if (start + size > c->capacity || start + size < start) {
			printf("table %lu: BAD %s: start %" PRIu64 " + size %" PRIu64 " beyond %" PRIu64 " sectors\n",
			       table, de->d_name, start, size, c->capacity);
			(*bad)++;
		}
		if (c->max_part && partno < (uint64_t)c->max_part &&
		    (maj != c->maj || min != c->min + partno)) {
			printf("table %lu: BAD %s is %u:%u, expected %u:%" PRIu64 "\n",
			       table, de->d_name, maj, min, c->maj, c->min + partno);
			(*bad)++;
		}
		if (partno >= (uint64_t)c->max_part && maj != EXT_MAJOR) {
			printf("table %lu: BAD %s is %u:%u, expected major %d (extended dev_t)\n",
			       table, de->d_name, maj, min, EXT_MAJOR);
			(*bad)++;
		}
	}
	closedir(d);
	j = proc_partitions_of(c->name);
	if (j != listed) {
		printf("table %lu: BAD /proc/partitions lists %d partitions of %s, sysfs %d not empty\n",
		       table, j, c->name, listed);
		(*bad)++;
	}
	return n;
}

int main(int argc, char **argv)
{
	static uint8_t head[HEAD_SECTORS * SECTOR], ebr[MAX_EBR][SECTOR];
	unsigned long seed = 1, count = 1000, first = 0, i;
	unsigned long scanned = 0, refused = 0, parts = 0, maxp = 0, predicted = 0, errs[256] = { 0 };
	int opt, verbose = 0, fd, bad = 0, e;
	uint64_t bytes, range;
	struct check c = { 0 };
	struct stat st;
	const char *dev, *mp;
	char sysdir[256];

	while ((opt = getopt(argc, argv, "s:n:f:v")) != -1) {
		switch (opt) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'f': first = strtoul(optarg, NULL, 0); break;
		case 'v': verbose = 1; break;
		default: die("usage: fuzzpt [-s SEED] [-n COUNT] [-f FIRST] [-v] DEVICE");
		}
	}
	if (optind != argc - 1)
		die("usage: fuzzpt [-s SEED] [-n COUNT] [-f FIRST] [-v] DEVICE");
	dev = argv[optind];
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISBLK(st.st_mode))
		die("%s: not a block device I can open read-write", dev);
	if (ioctl(fd, BLKGETSIZE64, &bytes))
		die("%s: BLKGETSIZE64: %s", dev, strerror(errno));
	if (bytes < (1 << 20))
		die("%s: want a device of at least 1 MiB", dev);
	c.name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	c.maj = major(st.st_rdev);
	c.min = minor(st.st_rdev);
	c.capacity = bytes / SECTOR;
	snprintf(sysdir, sizeof(sysdir), "/sys/class/block/%s", c.name);
	if (read_u64(sysdir, "range", &range) || !range)
		die("%s: cannot read its minors from %s/range", dev, sysdir);
	/* MAX_PART is what the test expects; the driver must agree. */
	mp = getenv("MAX_PART");
	c.max_part = mp ? atoi(mp) : range > 1 ? (int)range : 0;
	if ((uint64_t)(c.max_part ? c.max_part : 1) != range)
		die("%s has %" PRIu64 " minors (sysfs range), expected %d for MAX_PART=%d",
		    dev, range, c.max_part ? c.max_part : 1, c.max_part);
	printf("fuzzpt: seed %lu, tables %lu..%lu, %s (%u:%u, %" PRIu64 " sectors, max_part %d)\n",
	       seed, first, first + count - 1, dev, c.maj, c.min, c.capacity, c.max_part);
	fflush(stdout);

	for (i = first; i < first + count; i++) {
		enum kind kind = i % NKINDS;
		/* one table of each kind in 64 is a big one (100+ partitions) */
		int full = (i / NKINDS) % 64 == 0;
		int nebr = 0, k, n;
		uint64_t layout = 0;

		rng_state = seed * 0x100000001b3ULL + i;
		memset(head, 0, sizeof(head));
		switch (kind) {
		case DOS_RANDOM:
		case DOS_OVERLAP:
			make_dos(head, c.capacity, kind);
			break;
		case EBR_LOOP:
		case EBR_RANDOM:
			make_ebr(head, ebr, &nebr, c.capacity, kind, full);
			break;
		default:
			make_gpt(head, c.capacity, kind, full);
			break;
		}
		pwrite_all(fd, head, sizeof(head), 0);
		/*
		 * Every EBR slot, the unused ones zeroed, so that the device
		 * holds this table only and -f I -n 1 replays it exactly.
		 */
		for (k = 0; k < MAX_EBR; k++) {
			off_t off = (off_t)(2048 + (uint64_t)k * 2048) * SECTOR;
			static const uint8_t zero[SECTOR];

			if ((uint64_t)off + SECTOR <= bytes)
				pwrite_all(fd, k < nebr ? ebr[k] : zero, SECTOR, off);
		}
		/*
		 * No fsync: the scan reads through the same page cache the
		 * table was just written to, and a flush per table would cost
		 * more than the scan under TCG.
		 */
		e = ioctl(fd, BLKRRPART, 0) ? errno : 0;
		if (e) {
			refused++;
			errs[e < 256 ? e : 255]++;
		} else {
			scanned++;
		}
		n = check_parts(&c, i, &bad, &layout);
		/*
		 * Which partitions should exist, for the two kinds whose
		 * result is defined (a quarter of the tables, big ones included).
		 */
		if (!e && (kind == GPT_ENTRIES || kind == GPT_MANY)) {
			uint64_t want_layout;
			int want = gpt_expected(head, c.capacity, &want_layout);

			predicted++;
			if (want != n || want_layout != layout) {
				printf("table %lu: BAD %s: %d partitions (layout %016" PRIx64
				       "), the table has %d valid entries (layout %016" PRIx64 ")\n",
				       i, kind_name[kind], n, layout, want, want_layout);
				bad++;
			}
		}
		parts += n;
		if ((unsigned long)n > maxp)
			maxp = n;
		if ((i - first + 1) % 100 == 0 || i + 1 == first + count)
			fprintf(stderr, "fuzzpt: %lu of %lu tables, %lu partitions so far\n",
				i - first + 1, count, parts);
		if (verbose)
			printf("table %lu %s: BLKRRPART %s, %d partitions, layout %016" PRIx64 "\n",
			       i, kind_name[kind], e ? strerror(e) : "ok", n, layout);
	}
	/* Leave the device without a table. */
	memset(head, 0, sizeof(head));
	pwrite_all(fd, head, sizeof(head), 0);
	if (fsync(fd) || ioctl(fd, BLKRRPART, 0))
		die("clearing the table on %s: %s", dev, strerror(errno));
	close(fd);

	for (e = 1; e < 256; e++)
		if (errs[e])
			printf("fuzzpt: BLKRRPART failed %lu times with %s\n", errs[e], strerror(e));
	printf("tables=%lu scanned=%lu refused=%lu partitions=%lu max_partitions=%lu predicted=%lu bad=%d\n",
	       count, scanned, refused, parts, maxp, predicted, bad);
	return bad ? 1 : 0;
}

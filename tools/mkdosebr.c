// SPDX-License-Identifier: GPL-2.0
/*
 * mkdosebr - write a DOS (MBR) partition table with a long chain of
 * logical partitions into a disk image.
 *
 * libfdisk (sfdisk, fdisk) refuses to create more than 60 DOS partitions,
 * while the kernel's msdos parser follows EBR chains much further.  This
 * tool writes the layout of the 2004 partitioned-loop demo:
 *
 *   p1        primary, type 0x83
 *   p2        extended (type 0x05), covering every logical partition
 *   p5..pN    logical partitions, each preceded by its EBR
 *
 * Every partition starts on a 1 MiB boundary.  The image is extended to
 * the size the layout needs (sparse) if it is a regular file.
 *
 * usage: mkdosebr [-p P1_MIB] [-l LOGICAL_MIB] [-L LAST_MIB] -n LOGICALS IMAGE
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR		512u
#define MIB_SECTORS	2048u		/* 1 MiB in 512-byte sectors */
#define MAX_LOGICALS	(256 - 4)

struct dos_entry {
	uint8_t  boot;
	uint8_t  chs_first[3];
	uint8_t  type;
	uint8_t  chs_last[3];
	uint32_t lba_start;		/* little endian on disk */
	uint32_t lba_count;
} __attribute__((packed));

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

/* Fill one 16-byte entry; CHS is set to the LBA-only marker fe ff ff. */
static void set_entry(uint8_t *sector, int slot, uint8_t type,
		      uint32_t start, uint32_t count)
{
	uint8_t *e = sector + 446 + 16 * slot;

	memset(e, 0, 16);
	e[1] = 0xfe; e[2] = 0xff; e[3] = 0xff;
	e[4] = type;
	e[5] = 0xfe; e[6] = 0xff; e[7] = 0xff;
	put_le32(e + 8, start);
	put_le32(e + 12, count);
}

static int write_sector(int fd, uint64_t lba, const uint8_t *buf)
{
	if (pwrite(fd, buf, SECTOR, (off_t)(lba * SECTOR)) != SECTOR) {
		fprintf(stderr, "mkdosebr: write at sector %" PRIu64 ": %s\n",
			lba, strerror(errno));
		return -1;
	}
	return 0;
}

static long parse_num(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "mkdosebr: %s must be an integer in [%ld, %ld], got '%s'\n",
			what, min, max, s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mkdosebr [-p P1_MIB] [-l LOGICAL_MIB] [-L LAST_MIB] -n LOGICALS IMAGE\n"
		"  writes p1 (0x83), p2 extended (0x05) and LOGICALS logical partitions\n"
		"  p5..p(4+LOGICALS), each LOGICAL_MIB MiB, the last one LAST_MIB MiB\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long p1_mib = 8, log_mib = 1, last_mib = -1, n = -1;
	uint8_t mbr[SECTOR], ebr[SECTOR];
	uint64_t ext_start, ext_len, pos, end;
	struct stat st;
	int opt, fd, i;

	while ((opt = getopt(argc, argv, "p:l:L:n:h")) != -1) {
		switch (opt) {
		case 'p': p1_mib = parse_num(optarg, "-p", 1, 1 << 20); break;
		case 'l': log_mib = parse_num(optarg, "-l", 1, 1 << 20); break;
		case 'L': last_mib = parse_num(optarg, "-L", 1, 1 << 20); break;
		case 'n': n = parse_num(optarg, "-n", 1, MAX_LOGICALS); break;
		default: usage();
		}
	}
	if (n < 0 || optind != argc - 1)
		usage();
	if (last_mib < 0)
		last_mib = log_mib;

	/* Layout: MBR, 1 MiB gap, p1, then the extended partition. */
	ext_start = MIB_SECTORS + (uint64_t)p1_mib * MIB_SECTORS;
	ext_len = (uint64_t)(n - 1) * (1 + log_mib) * MIB_SECTORS +
		  (uint64_t)(1 + last_mib) * MIB_SECTORS;
	end = ext_start + ext_len;
	if (end > UINT32_MAX) {
		fprintf(stderr, "mkdosebr: layout needs %" PRIu64 " sectors, beyond 32-bit LBA\n", end);
		return 2;
	}

	fd = open(argv[optind], O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		fprintf(stderr, "mkdosebr: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < end * SECTOR &&
	    ftruncate(fd, (off_t)(end * SECTOR)) != 0) {
		fprintf(stderr, "mkdosebr: cannot extend %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}

	memset(mbr, 0, sizeof(mbr));
	put_le32(mbr + 440, 0x0ebd05a2);	/* disk signature, fixed for reproducibility */
	set_entry(mbr, 0, 0x83, MIB_SECTORS, (uint32_t)(p1_mib * MIB_SECTORS));
	set_entry(mbr, 1, 0x05, (uint32_t)ext_start, (uint32_t)ext_len);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	if (write_sector(fd, 0, mbr))
		return 1;

	/*
	 * Each EBR sits 1 MiB before its logical partition.  Entry 0 is the
	 * logical partition, relative to the EBR; entry 1 links to the next
	 * EBR, relative to the start of the extended partition.
	 */
	pos = ext_start;
	for (i = 0; i < n; i++) {
		uint64_t size = (uint64_t)(i == n - 1 ? last_mib : log_mib) * MIB_SECTORS;
		uint64_t next = pos + MIB_SECTORS + size;

		memset(ebr, 0, sizeof(ebr));
		set_entry(ebr, 0, 0x83, MIB_SECTORS, (uint32_t)size);
		if (i < n - 1) {
			uint64_t nsize = (uint64_t)(i + 1 == n - 1 ? last_mib : log_mib) * MIB_SECTORS;

			set_entry(ebr, 1, 0x05, (uint32_t)(next - ext_start),
				  (uint32_t)(MIB_SECTORS + nsize));
		}
		ebr[510] = 0x55;
		ebr[511] = 0xaa;
		if (write_sector(fd, pos, ebr))
			return 1;
		pos = next;
	}
	if (fsync(fd) || close(fd)) {
		fprintf(stderr, "mkdosebr: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	printf("%s: p1 %ld MiB, p2 extended, p5..p%ld (%ld logical), %" PRIu64 " sectors\n",
	       argv[optind], p1_mib, 4 + n, n, end);
	return 0;
}

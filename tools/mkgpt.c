// SPDX-License-Identifier: GPL-2.0
/*
 * mkgpt - write a GPT with one partition entry taken as given, however
 * wrong, with valid CRCs so that the kernel's parser reads the entry.
 *
 *   mkgpt TARGET FIRST-LBA LAST-LBA
 *
 * TARGET is an image file or a block device; its size sets the disk size.
 * Writes the protective MBR (LBA 0), the primary header (LBA 1) and 128
 * entries (LBA 2-33); entry 1 is a Linux data partition from FIRST-LBA to
 * LAST-LBA.  No backup GPT: the kernel uses the primary when it is valid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpt.h"

int main(int argc, char **argv)
{
	static uint8_t buf[34 * 512];
	uint8_t *mbr = buf, *hdr = buf + 512, *ent = buf + 1024;
	unsigned long long first, last, bytes;
	struct stat st;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: mkgpt TARGET FIRST-LBA LAST-LBA\n");
		return 2;
	}
	first = strtoull(argv[2], NULL, 0);
	last = strtoull(argv[3], NULL, 0);
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "mkgpt: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bytes = st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &bytes)) {
		fprintf(stderr, "mkgpt: %s: BLKGETSIZE64: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (bytes < 68 * 512) {
		fprintf(stderr, "mkgpt: %s: too small for a GPT\n", argv[1]);
		return 1;
	}

	/* protective MBR: one 0xee entry from LBA 1 */
	mbr[0x1be + 4] = 0xee;
	put32(mbr + 0x1be + 8, 1);
	put32(mbr + 0x1be + 12, bytes / 512 - 1 > 0xffffffffULL ? 0xffffffffU : bytes / 512 - 1);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;

	put64(ent, 0x477284830fc63dafULL);	/* 0fc63daf-8483-4772-8e79-3d69d8477de4 */
	put64(ent + 8, 0xe47d47d8693d798eULL);
	put64(ent + 16, 0x0123456789abcdefULL);	/* unique GUID */
	put64(ent + 24, 0xfedcba9876543210ULL);
	put64(ent + 32, first);
	put64(ent + 40, last);

	memcpy(hdr, "EFI PART", 8);
	put32(hdr + 8, 0x00010000);
	put32(hdr + 12, 92);
	put64(hdr + 24, 1);
	put64(hdr + 32, bytes / 512 - 1);
	put64(hdr + 40, 34);
	put64(hdr + 48, bytes / 512 - 34);
	put64(hdr + 56, 0x1122334455667788ULL);
	put64(hdr + 64, 0x99aabbccddeeff00ULL);
	put64(hdr + 72, 2);
	put32(hdr + 80, 128);
	put32(hdr + 84, 128);
	put32(hdr + 88, crc32_le(ent, 128 * 128));
	put32(hdr + 16, crc32_le(hdr, 92));

	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) || fsync(fd)) {
		fprintf(stderr, "mkgpt: writing %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return close(fd) ? 1 : 0;
}

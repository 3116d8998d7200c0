// SPDX-License-Identifier: GPL-2.0
/*
 * loopctl - the loop ioctls that util-linux has no command for, so that
 * tests can drive them from a shell.
 *
 *   loopctl add N              LOOP_CTL_ADD on /dev/loop-control, prints N
 *   loopctl remove N           LOOP_CTL_REMOVE
 *   loopctl get-free           LOOP_CTL_GET_FREE, prints the index
 *   loopctl change-fd DEV FILE LOOP_CHANGE_FD: switch DEV's backing file
 *   loopctl clr-then-set DEV FILE
 *                              on one descriptor of DEV: LOOP_SET_FD to FILE,
 *                              LOOP_CLR_FD, then LOOP_SET_FD and
 *                              LOOP_CONFIGURE to FILE again; prints one
 *                              line per ioctl, "NAME: ok" or "NAME: ENAME"
 *   loopctl clr-then-open DEV [OTHER...]
 *                              LOOP_CLR_FD on DEV (a loop device or one
 *                              of its partitions), then, with DEV still
 *                              open, open each OTHER; prints one line per
 *                              step, "LOOP_CLR_FD: ok" or "LOOP_CLR_FD:
 *                              ENAME", "open OTHER: ok" or "open OTHER:
 *                              ENAME"
 *   loopctl read-fd FD LEN     LEN bytes (at most 4096) at offset 0 of the
 *                              open descriptor FD, read with O_DIRECT so
 *                              that they come from the device, not the
 *                              page cache, to standard output
 *
 * Exit status 0 on success; on failure the errno name is printed on
 * stderr as "loopctl: OP: ENAME (message)" and the status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENXIO: return "ENXIO";
	case EBADF: return "EBADF";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ENODEV: return "ENODEV";
	case EACCES: return "EACCES";
	case EIO: return "EIO";
	default: return "E?";
	}
}

static int fail(const char *op)
{
	int e = errno;

	fprintf(stderr, "loopctl: %s: %s (%s)\n", op, errname(e), strerror(e));
	return 1;
}

static int ctl(unsigned long req, long arg, const char *op)
{
	int fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return fail("open /dev/loop-control");
	ret = ioctl(fd, req, arg);
	if (ret < 0)
		return fail(op);
	printf("%d\n", ret);
	close(fd);
	return 0;
}

static void step(int ret, const char *op)
{
	printf("%s: %s\n", op, ret < 0 ? errname(errno) : "ok");
}

static int clr_then_set(const char *devname, const char *filename)
{
	struct loop_config cfg;
	int dev = open(devname, O_RDWR | O_CLOEXEC);
	int file = open(filename, O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return fail(devname);
	if (file < 0)
		return fail(filename);
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = file;
	step(ioctl(dev, LOOP_SET_FD, file), "LOOP_SET_FD");
	step(ioctl(dev, LOOP_CLR_FD, 0), "LOOP_CLR_FD");
	step(ioctl(dev, LOOP_SET_FD, file), "LOOP_SET_FD");
	step(ioctl(dev, LOOP_CONFIGURE, &cfg), "LOOP_CONFIGURE");
	return 0;
}

static int clr_then_open(const char *devname, int n, char **others)
{
	int dev = open(devname, O_RDONLY | O_CLOEXEC);
	int i, fd;

	if (dev < 0)
		return fail(devname);
	step(ioctl(dev, LOOP_CLR_FD, 0), "LOOP_CLR_FD");
	for (i = 0; i < n; i++) {
		fd = open(others[i], O_RDONLY | O_CLOEXEC);
		printf("open %s: %s\n", others[i], fd < 0 ? errname(errno) : "ok");
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

static int read_fd(int fd, long len)
{
	static char buf[4096] __attribute__((aligned(4096)));
	int flags = fcntl(fd, F_GETFL);
	ssize_t n;

	if (len <= 0 || len > (long)sizeof(buf)) {
		fprintf(stderr, "loopctl: read-fd: LEN must be 1 to %zu\n", sizeof(buf));
		return 2;
	}
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) < 0)
		return fail("fcntl O_DIRECT");
	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return fail("pread");
	if (n < len)
		len = n;
	return fwrite(buf, 1, len, stdout) == (size_t)len ? 0 : fail("write");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "add"))
		return ctl(LOOP_CTL_ADD, atol(argv[2]), "LOOP_CTL_ADD");
	if (argc == 3 && !strcmp(argv[1], "remove"))
		return ctl(LOOP_CTL_REMOVE, atol(argv[2]), "LOOP_CTL_REMOVE");
	if (argc == 2 && !strcmp(argv[1], "get-free"))
		return ctl(LOOP_CTL_GET_FREE, 0, "LOOP_CTL_GET_FREE");
	if (argc == 4 && !strcmp(argv[1], "change-fd")) {
		int dev = open(argv[2], O_RDONLY | O_CLOEXEC);
		int file = open(argv[3], O_RDONLY | O_CLOEXEC);

		if (dev < 0)
			return fail(argv[2]);
		if (file < 0)
			return fail(argv[3]);
		if (ioctl(dev, LOOP_CHANGE_FD, file) < 0)
			return fail("LOOP_CHANGE_FD");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "clr-then-set"))
		return clr_then_set(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "clr-then-open"))
		return clr_then_open(argv[2], argc - 3, argv + 3);
	if (argc == 4 && !strcmp(argv[1], "read-fd"))
		return read_fd(atoi(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: loopctl add N | remove N | get-free | change-fd DEV FILE | clr-then-set DEV FILE | clr-then-open DEV [OTHER...] | read-fd FD LEN\n");
	return 2;
}

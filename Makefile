# Partitioned loop devices on Debian 12's kernels (linux-source-6.1, and
# 6.12 with LINE=6.12): build, boot, test, bench.
#
#   make bench      build everything, boot boots/bench.conf (the guest runs
#                   bench/run: fio, attach timing), write the report
#                   (build/bench/report.md): the main job
#   make check      build everything, then the boots main, builtin, stock and
#                   bench-quick in turn: tests/ (the test command)
#   make deb        the DKMS package (6.1 and 6.12); make check-dkms tests it on
#                   Debian's own kernels of both lines
#   make check-debug   the tests and tests/robust on a KASAN/KFENCE/lockdep kernel
#   make check-series  checkpatch and bisectability of patches/
#   make deps | tree | kernel | stock-module | image | tools | boot   the stages one by one
#                   (make boot BOOT=NAME TESTS=...: one boot of boots/)
#   make clean      drop build/ (kernel tree, objects, image, results)
#   make clean-cache  also drop ccache and mkosi's package cache
#
# Every stage prints its name and elapsed time; see README.md.
#
# The shape: a boot is data, one file in boots/ (kernel, image, command
# line, disks, tests, timeout, settings); scripts/boot.sh boots any of
# them and the check targets are lists of boots.  The guest's settings and
# their defaults are stated once, in tests/settings; a boot writes them to
# the guest in one file.  scripts/ runs on the host, tests/ and bench/ in
# the guest (read from the 9p share, so editing them rebuilds no image;
# editing mkosi.extra/ or mkosi.finalize does).

SHELL := /bin/bash
# Fixed: mkosi.conf and the guest's paths (/mnt/project/build) name it.
override BUILD := $(CURDIR)/build
export BUILD
PARTLOOP_START := $(shell date +%s)
export PARTLOOP_START
TESTS ?=
BOOT ?= main
# The kernel line of tree, kernel*, stock-module, check-series, check and
# check-debug: 6.1 (the default, also in scripts/lib.sh) or 6.12.  The
# image always carries the default line's kernel; another line's boots
# bring their modules from the share.
LINE ?= 6.1
export LINE

DEPS := linux-source-6.1 linux-source-6.12 qemu-system-x86 ovmf mkosi debootstrap systemd-container \
	fio gcc make bc bison flex libelf-dev libssl-dev cpio kmod quilt ccache \
	dwarves rsync zstd xz-utils util-linux fdisk e2fsprogs shellcheck git \
	python3 gnuplot-nox

.PHONY: all deps tree tools kernel kernel-config kernel-default-line kernel-builtin kernel-debug kernel-bench check-debug stock-module stock-module-bench image image-dkms boot bench check \
	check-series deb check-dkms clean clean-cache shellcheck

all: bench

deps:
	@scripts/deps.sh $(DEPS)

tree: deps
	@scripts/tree.sh

kernel: tree
	@scripts/kernel.sh

# Only the guest kernel's configuration (what check-series needs).
kernel-config: tree
	@scripts/kernel.sh config

# The C helpers the guest runs (tools/), built on the host.
tools: deps
	@scripts/tools.sh

# The second guest kernel, with loop built in (tests/builtin).
kernel-builtin: tree
	@scripts/kernel.sh builtin

# The third, with KASAN, KFENCE, DEBUG_LIST, ... (kernel/debug.config).
kernel-debug: tree
	@scripts/kernel.sh debug

# The fourth, for make bench: no lockdep (kernel/bench.config).
kernel-bench: tree
	@scripts/kernel.sh bench

ifeq ($(LINE),6.1)
image: kernel
else
image: kernel-default-line
endif
	@LINE= scripts/image.sh

# The default line's kernel, for the image, when LINE names another.
kernel-default-line: deps
	@LINE= scripts/tree.sh
	@LINE= scripts/kernel.sh

# The unpatched loop.c built against the guest kernel, for the quick
# benchmark and the stock boot, and against the benchmark's kernel.
stock-module: kernel
	@scripts/stock-module.sh

stock-module-bench: kernel-bench
	@scripts/stock-module.sh bench

# fio: raw partition against loop partitions, patched against stock.
# BENCH_QUICK=1 and BENCH_* settings: see scripts/bench.sh.
ifneq ($(LINE),6.1)
bench:
	$(error make bench runs on the default line, 6.1 (LINE=$(LINE) given): see README.md, "Kernel lines")
else
# The quick benchmark runs on the test kernel; the full one on its own.
ifeq ($(BENCH_QUICK),1)
bench: shellcheck image stock-module tools
else
bench: shellcheck image stock-module stock-module-bench tools
endif
	@scripts/bench.sh
endif

# One boot of boots/ (BOOT, default main) on the current build, running
# TESTS (groups or group/case) instead of the boot's own selection if set.
# With LINE=6.12 the line's kernel is brought up to date too (BOOT names
# the line's boot, main-6.12 say).
ifneq ($(LINE),6.1)
boot: kernel
endif
boot: image tools
	@BOOT="$(BOOT)" scripts/boot.sh $(TESTS)

# The test boots main, builtin, stock and bench-quick (scripts/check.sh);
# TESTS=... runs only those, in the main boot.
check: shellcheck image kernel-builtin stock-module tools
	@TESTS="$(TESTS)" scripts/check.sh

# Everything in tests/, robust/ included, on the debug kernel.
check-debug: shellcheck image kernel-debug tools
	@TESTS="$(TESTS)" scripts/check-debug.sh

# The DKMS package of the patched driver, for both lines (whatever LINE
# says): build/partloop-dkms_VERSION_all.deb.  It carries each line's
# loop.c and checks that it builds against Debian's own headers of each
# line (downloaded and unpacked in build/debian-headers), as DKMS will.
deb: deps
	@LINE=6.1 scripts/tree.sh
	@LINE=6.12 scripts/tree.sh
	@scripts/deb.sh

# The guest with Debian's own kernel of LINE, for check-dkms:
# build/image-dkms (6.1, linux-image-amd64) or build/image-dkms-6.12
# (linux-image-6.12-amd64, image-dkms/line-6.12.conf).
image-dkms: deps
	@scripts/image.sh dkms

# Install the package in both guests (boots dkms and dkms-6.12) and run the
# tests against the loop.ko DKMS built there.
check-dkms: shellcheck deb tools
	@$(MAKE) --no-print-directory image-dkms LINE=6.1
	@$(MAKE) --no-print-directory image-dkms LINE=6.12
	@scripts/check-dkms.sh

# checkpatch --strict on every patch, every prefix of the series builds.
check-series: kernel-config
	@scripts/check-series.sh

shellcheck: deps
	@shellcheck -x scripts/*.sh mkosi.finalize mkosi.extra/usr/local/sbin/* \
		tests/run tests/new tests/boot-entry tests/settings tests/*/rc tests/lib/*.sh tests/*/[0-9][0-9][0-9]-* .ci/run tools/*.sh \
		bench/run bench/*.sh image-dkms/mkosi.finalize
	@shellcheck -s sh image-dkms/mkosi.postinst dkms/debian/preinst dkms/debian/postinst dkms/debian/prerm
	@echo "shellcheck: clean"

clean:
	rm -rf $(BUILD)

clean-cache:
	rm -rf $(HOME)/.cache/partloop


# SPDX-License-Identifier: GPL-2.0-only
#
# vnpu top-level build.
#
#   make           build the module, runtime, tools and tests
#   make check     install missing dependencies, run every test (host + VM)
#   make demo      install missing dependencies, show the devices in the VM
#   make lint      checkpatch --strict and a W=1 build of the module
#   make install   install module, udev rule, runtime and tools
#   make deps      install the Debian packages the build and tests need

KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | grep '^6\.12\.' | grep -v vnpudebug | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
LINUX_SOURCE ?= /usr/src/linux-source-6.12.tar.xz
PREFIX ?= /usr/local
DESTDIR ?=

BUILD := build
CC ?= gcc

DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
WARN := -Wall -Wextra -Werror
USER_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -Iuapi $(DRM_CFLAGS)
# kselftest_harness.h trips -Wsign-compare (EXPECT_EQ(literal, unsigned)) and
# -Wunused-parameter and, with its setjmp-based ASSERT, -Wclobbered by design.
TEST_CFLAGS := $(USER_CFLAGS) -Wno-sign-compare -Wno-unused-parameter -Wno-clobbered
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

KSFT_DIR := $(BUILD)/linux/tools/testing/selftests
KSFT_HEADERS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
CHECKPATCH := $(BUILD)/linux/scripts/checkpatch.pl

RT_SRCS := $(wildcard libruntime/*.c)
RT_OBJS := $(RT_SRCS:libruntime/%.c=$(BUILD)/obj/libruntime/%.o)
RT_SONAME := libvnpurt.so.0
RT_SO := $(BUILD)/lib/$(RT_SONAME)
RT_A := $(BUILD)/lib/libvnpurt.a
RT_CFLAGS := $(USER_CFLAGS) -fPIC -fvisibility=default -Ilibruntime/include

TOOLS := $(BUILD)/bin/vnpu-smi $(BUILD)/bin/vnpu-test-summary
TOOLS += $(BUILD)/bin/vnpu-plan $(BUILD)/bin/vnpu-bench-exec
TOOLS += $(BUILD)/bin/vnpu-trace
# Planner benchmark instances (make bench-planner); not needed to build or test.
PLANNER_DATA ?= ../shared/bench-data/planner
VM_TESTS := $(BUILD)/selftests/vnpu_param $(BUILD)/selftests/vnpu_module \
	$(BUILD)/selftests/vnpu_submit $(BUILD)/selftests/vnpu_kernel \
	$(BUILD)/selftests/vnpu_exec
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
VM_TESTS += $(BUILD)/selftests/vnpu_bo $(BUILD)/selftests/vnpu_quota \
	$(BUILD)/selftests/vnpu_mem_stress
# Tests of the runtime link libvnpurt.
RT_TESTS := $(BUILD)/selftests/vnpu_runtime $(BUILD)/selftests/vnpu_streams
RT_TESTS += $(BUILD)/selftests/vnpu_smi_work
RT_TESTS += $(BUILD)/selftests/vnpu_pool
HOST_TESTS := $(BUILD)/host/ksft_totals_test
HOST_TESTS += $(BUILD)/host/planner_test
HOST_TESTS += $(BUILD)/host/pool_core_test
HOST_TESTS += $(BUILD)/host/status_test

.PHONY: all module runtime tools selftests hosttests check check-debug debug-kernel demo stress bench-runtime bench-mem lint install \
	deps clean FORCE
.PHONY: bench-planner bench-exec
.PHONY: bench-pool

all: module runtime tools selftests hosttests

deps:
	@tools/install-deps.sh

# --- kernel module -------------------------------------------------------

$(BUILD)/kdir: FORCE
	@mkdir -p $(BUILD)
	@if [ ! -f $(KDIR)/Makefile ]; then \
		echo "vnpu: no kernel headers at KDIR=$(KDIR); run 'make deps' (as root) first" >&2; \
		exit 1; \
	fi
	@echo "$(KDIR)" | cmp -s - $@ || echo "$(KDIR)" >$@

driver/vnpu_kconfig.h: driver/configure $(BUILD)/kdir
	driver/configure $(KDIR) $@

module: driver/vnpu_kconfig.h
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# --- kselftest harness and checkpatch, from Debian's linux-source ----------

$(KSFT_HEADERS) $(CHECKPATCH):
	@if [ ! -f $(LINUX_SOURCE) ]; then \
		echo "vnpu: $(LINUX_SOURCE) missing; run 'make deps' (as root) first" >&2; \
		exit 1; \
	fi
	mkdir -p $(BUILD)/linux
	tar -xJf $(LINUX_SOURCE) -C $(BUILD)/linux --strip-components=1 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	touch $(KSFT_HEADERS) $(CHECKPATCH)

# --- runtime library ---------------------------------------------------------

runtime: $(RT_SO) $(RT_A)

$(BUILD)/obj/libruntime/%.o: libruntime/%.c $(wildcard libruntime/*.h libruntime/include/*.h) \
		uapi/drm/vnpu_accel.h
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(RT_SO): $(RT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(RT_SONAME) -o $@ $^ -ldrm -lpthread
	ln -sf $(RT_SONAME) $(BUILD)/lib/libvnpurt.so

$(RT_A): $(RT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# --- tools --------------------------------------------------------------------

tools: $(TOOLS)

$(BUILD)/bin/vnpu-smi: tools/smi/vnpu-smi.c $(RT_SO) libruntime/include/vnpu.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/vnpu-plan: tools/plan/vnpu-plan.c $(RT_SO) libruntime/include/vnpu.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/vnpu-trace: tools/trace/vnpu-trace.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@

# One table row per instance; MiniMalloc instances get the capacity their
# file name ends in.
bench-planner: $(BUILD)/bin/vnpu-plan
	@echo "| instance | buffers | LB | greedy | best | greedy/ref | best/ref | ms |"
	@for f in $(PLANNER_DATA)/*.csv; do \
		cap=$$(basename $$f .csv | sed -n 's/^minimalloc__.*\.\([0-9][0-9]*\)$$/--capacity \1/p'); \
		$(BUILD)/bin/vnpu-plan --table $$cap $$f || exit 1; \
	done

# Pool and data cache benchmark in the VM (tools/bench/pool.plan); reports, never asserts.
$(BUILD)/bin/vnpu-bench-pool: tools/bench/vnpu-bench-pool.c $(RT_SO) libruntime/include/vnpu.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

bench-pool: $(BUILD)/bin/vnpu-bench-pool module
	tools/vm/run-vm.sh --plan tools/bench/pool.plan --out $(BUILD)/bench-pool

$(BUILD)/bin/vnpu-bench-exec: tools/bench/vnpu-bench-exec.c selftests/vnpu_utils.h \
		uapi/drm/vnpu_accel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@ -lpthread

# Execution benchmarks in the VM; figures in build/bench-exec/exec/exec.log.
bench-exec: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/bench/exec.plan --out $(BUILD)/bench-exec

$(BUILD)/bin/vnpu-test-summary: tools/summary/vnpu-test-summary.c tools/summary/ksft_totals.c \
		tools/summary/ksft_totals.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(filter %.c,$^) -o $@

# --- tests --------------------------------------------------------------------

selftests: $(VM_TESTS) $(RT_TESTS) $(EXAMPLES)

# The examples build like any application of the runtime would.
$(EXAMPLES): $(BUILD)/examples/%: examples/%.c libruntime/include/vnpu.h $(RT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt -lpthread \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(RT_TESTS): $(BUILD)/selftests/%: selftests/%.c selftests/vnpu_utils.h uapi/drm/vnpu_accel.h \
		libruntime/include/vnpu.h $(RT_SO) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(KSFT_DIR) -Ilibruntime/include $< -o $@ \
		-L$(BUILD)/lib -lvnpurt -lpthread -Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/selftests/%: selftests/%.c selftests/vnpu_utils.h selftests/vnpu_exec_utils.h \
		uapi/drm/vnpu_accel.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(KSFT_DIR) $< -o $@ -lm -lpthread

hosttests: $(HOST_TESTS)

$(BUILD)/host/status_test: selftests/host/status_test.c libruntime/status.c \
		libruntime/include/vnpu.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include $(filter %.c,$^) -o $@

$(BUILD)/host/ksft_totals_test: selftests/host/ksft_totals_test.c tools/summary/ksft_totals.c \
		tools/summary/ksft_totals.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Itools/summary $(filter %.c,$^) -o $@

$(BUILD)/host/planner_test: selftests/host/planner_test.c libruntime/planner.c libruntime/status.c \
		libruntime/include/vnpu.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include -Ilibruntime \
		$(filter %.c,$^) -o $@ -lpthread

$(BUILD)/host/pool_core_test: selftests/host/pool_core_test.c libruntime/pool_core.c \
		libruntime/pool_core.h libruntime/include/vnpu.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include -Ilibruntime \
		$(filter %.c,$^) -o $@

check: deps
	@$(MAKE) --no-print-directory all
	@tools/check.sh

# The debug-kernel tier: every VM test on a KASAN/lockdep/kmemleak kernel
# built from linux-source-6.12 and cached in /var/cache/vnpu (the first
# build takes most of an hour on 2 cores). Not part of make check.
debug-kernel: deps
	@tools/debug-kernel/build.sh

check-debug: deps
	@tools/debug-kernel/check.sh

$(BUILD)/bench/vnpu-bench-runtime: tools/bench/vnpu-bench-runtime.c libruntime/include/vnpu.h $(RT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt -ldrm \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bench/vnpu-bench-mem: tools/bench/vnpu-bench-mem.c selftests/vnpu_utils.h \
		uapi/drm/vnpu_accel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@

# Buffer creation cost against vgem, and with 1k/10k/100k live buffers, in the VM.
bench-mem: all $(BUILD)/bench/vnpu-bench-mem
	@tools/vm/run-vm.sh --plan tools/bench/bench.plan --out $(BUILD)/bench-mem

# Runtime overheads against the raw driver, measured in the VM.
bench-runtime: all $(BUILD)/bench/vnpu-bench-runtime
	@tools/vm/run-vm.sh --plan tools/bench/runtime.plan --out $(BUILD)/bench-runtime

# The full stress counts; results and timings in build/stress.
stress: deps
	@$(MAKE) --no-print-directory all
	@VNPU_TEST_TIMEOUT=3000 tools/vm/run-vm.sh --timeout 7200 --plan selftests/stress.plan --out $(BUILD)/stress

demo: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/demo.plan --out $(BUILD)/demo

# --- quality gates ------------------------------------------------------------

lint: driver/vnpu_kconfig.h $(CHECKPATCH)
	perl $(CHECKPATCH) --no-tree --strict --quiet -f \
		$(filter-out %.mod.c driver/vnpu_kconfig.h,$(wildcard driver/*.c driver/*.h)) \
		uapi/drm/vnpu_accel.h
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 clean
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules 2>&1 | tee $(BUILD)/w1.log
	@if grep -q 'warning:' $(BUILD)/w1.log; then \
		echo "lint: the W=1 build warned" >&2; exit 1; fi
	@echo "lint: clean"

# --- install ------------------------------------------------------------------

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	install -D -m 0644 tools/udev/70-vnpu.rules $(DESTDIR)/etc/udev/rules.d/70-vnpu.rules
	install -D -m 0644 $(RT_SO) $(DESTDIR)$(PREFIX)/lib/$(RT_SONAME)
	ln -sf $(RT_SONAME) $(DESTDIR)$(PREFIX)/lib/libvnpurt.so
	install -D -m 0644 $(RT_A) $(DESTDIR)$(PREFIX)/lib/libvnpurt.a
	install -D -m 0644 libruntime/include/vnpu.h $(DESTDIR)$(PREFIX)/include/vnpu.h
	install -D -m 0644 uapi/drm/vnpu_accel.h $(DESTDIR)$(PREFIX)/include/drm/vnpu_accel.h
	install -D -m 0755 $(BUILD)/bin/vnpu-smi $(DESTDIR)$(PREFIX)/bin/vnpu-smi
	install -D -m 0755 $(BUILD)/bin/vnpu-trace $(DESTDIR)$(PREFIX)/bin/vnpu-trace
	-ldconfig
	-depmod -a $(KVER)
	-udevadm control --reload-rules && udevadm trigger --subsystem-match=accel

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD) driver/vnpu_kconfig.h

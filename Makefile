# SPDX-License-Identifier: GPL-2.0-only
#
# vnpu top-level build.
#
#   make           build the module, runtime, tools and tests
#   make check     install missing dependencies, run every test (host + VM)
#   make demo      install missing dependencies, serve ONNX models on two
#                  devices in the VM (tools/demo.plan)
#   make troubleshooting-capture  run the leak hunt of the troubleshooting guide in the VM
#   make lint      checkpatch --strict and a W=1 build of the module; the
#                  runtime's layers (tools/layer-check.sh)
#   make fuzz      a long ioctl fuzz run in the VM (DURATION=seconds, SEED=n)
#   make install   install module, udev rule, runtime, tools and man pages
#                  (DESTDIR, PREFIX, LIBDIR, ...; see Documentation/install.rst)
#   make uninstall remove what make install installed
#   make deps      install the Debian packages the build and tests need
#   make abi-check compare libvnpurt's exports with the committed list
#   make abi-update after adding a public function: map, list, packaging
#   make dkms-install  register the module with DKMS, build and install it
#                  for every kernel that has headers
#   make deb       Debian packages (dpkg-buildpackage) into build/deb/
#   make check-packaging  DKMS build, packages built, installed, used in the
#                  VM and purged

KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | grep '^6\.12\.' | grep -v vnpudebug | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
LINUX_SOURCE ?= /usr/src/linux-source-6.12.tar.xz
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UDEVRULESDIR ?= /etc/udev/rules.d
SYSTEMDUNITDIR ?= /etc/systemd/system
# Release version: the top entry of debian/changelog (see abi-update).
VERSION := $(shell sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog 2>/dev/null)

BUILD := build
CC ?= gcc

DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
WARN := -Wall -Wextra -Werror
USER_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -Iuapi $(DRM_CFLAGS)
# Distribution flags (dpkg-buildflags under debhelper: hardening); usually empty.
USER_CFLAGS += $(CPPFLAGS) $(CFLAGS)
# kselftest_harness.h trips -Wsign-compare (EXPECT_EQ(literal, unsigned)) and
# -Wunused-parameter and, with its setjmp-based ASSERT, -Wclobbered by design.
TEST_CFLAGS := $(USER_CFLAGS) -Wno-sign-compare -Wno-unused-parameter -Wno-clobbered
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

KSFT_DIR := $(BUILD)/linux/tools/testing/selftests
KSFT_HEADERS := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
CHECKPATCH := $(BUILD)/linux/scripts/checkpatch.pl

# The runtime's layers (Documentation/architecture.rst): core/, mm/, graph/,
# multi/, and init.c above them all.
RT_SRCS := $(wildcard libruntime/*.c libruntime/*/*.c)
# ONNX models are parsed by protobuf-c code generated from Debian's
# onnx.proto (libonnx-dev) at build time; none of it is committed.
ONNX_PROTO := /usr/include/onnx/onnx.proto
ONNX_GEN := $(BUILD)/gen/onnx/onnx.pb-c.c $(BUILD)/gen/onnx/onnx.pb-c.h
RT_OBJS := $(RT_SRCS:libruntime/%.c=$(BUILD)/obj/libruntime/%.o) $(BUILD)/obj/gen/onnx.pb-c.o
# The public headers: vnpu.h and the per-area headers it includes.
RT_HEADERS := libruntime/include/vnpu.h $(wildcard libruntime/include/vnpu/*.h)
RT_SONAME := libvnpurt.so.1
RT_SO := $(BUILD)/lib/$(RT_SONAME)
RT_A := $(BUILD)/lib/libvnpurt.a
RT_CFLAGS := $(USER_CFLAGS) -fPIC -fvisibility=default -Ilibruntime/include -Ilibruntime \
	-I$(BUILD)/gen
# Only the symbols of the version script are exported (tools/abi-check.sh).
RT_MAP := libruntime/libvnpurt.map
RT_LDFLAGS := -Wl,--version-script=$(RT_MAP) -Wl,-z,defs $(LDFLAGS)

TOOLS := $(BUILD)/bin/vnpu-smi $(BUILD)/bin/vnpu-test-summary
TOOLS += $(BUILD)/bin/vnpu-plan $(BUILD)/bin/vnpu-bench-exec
TOOLS += $(BUILD)/bin/vnpu-trace
TOOLS += $(BUILD)/bin/vnpu-poold $(BUILD)/bin/vnpu-pool
TOOLS += $(BUILD)/bin/vnpu-run $(BUILD)/bin/vnpu-serve
# Planner benchmark instances (make bench-planner); not needed to build or test.
PLANNER_DATA ?= ../shared/bench-data/planner
VM_TESTS := $(BUILD)/selftests/vnpu_param $(BUILD)/selftests/vnpu_module \
	$(BUILD)/selftests/vnpu_submit $(BUILD)/selftests/vnpu_kernel \
	$(BUILD)/selftests/vnpu_ops $(BUILD)/selftests/vnpu_exec
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
VM_TESTS += $(BUILD)/selftests/vnpu_topo
VM_TESTS += $(BUILD)/selftests/vnpu_bo $(BUILD)/selftests/vnpu_quota \
	$(BUILD)/selftests/vnpu_mem_stress
# Hardening: fuzzer, fault injection, unplug/reset, SIGKILL stress, security.
VM_TESTS += $(BUILD)/selftests/vnpu_fuzz $(BUILD)/selftests/vnpu_faults \
	$(BUILD)/selftests/vnpu_unplug $(BUILD)/selftests/vnpu_kill_stress \
	$(BUILD)/selftests/vnpu_security
# Tests of the runtime link libvnpurt.
RT_TESTS := $(BUILD)/selftests/vnpu_runtime $(BUILD)/selftests/vnpu_streams
RT_TESTS += $(BUILD)/selftests/vnpu_smi_work
RT_TESTS += $(BUILD)/selftests/vnpu_pool
RT_TESTS += $(BUILD)/selftests/vnpu_collectives
RT_TESTS += $(BUILD)/selftests/vnpu_poold
RT_TESTS += $(BUILD)/selftests/vnpu_onnx_conformance $(BUILD)/selftests/vnpu_graph
HOST_TESTS := $(BUILD)/host/ksft_totals_test
HOST_TESTS += $(BUILD)/host/planner_test
HOST_TESTS += $(BUILD)/host/pqtree_test
HOST_TESTS += $(BUILD)/host/pool_core_test
HOST_TESTS += $(BUILD)/host/addr_map_test
HOST_TESTS += $(BUILD)/host/status_test
HOST_TESTS += $(BUILD)/host/lease_proto_test
# The runtime's layers: tools/layer-check.sh on the tree and on broken copies.
HOST_TESTS += $(BUILD)/host/layer-check
# ABI list, man pages, uAPI in C/C++, DESTDIR install and an example built
# against it (selftests/packaging/host-checks.sh).
HOST_TESTS += $(BUILD)/host/packaging-checks
# As root: DKMS build, Debian packages built, installed, used in the VM and
# purged (selftests/packaging/system-checks.sh; skips itself otherwise).
HOST_TESTS += $(BUILD)/host/packaging-system
# The VM runner with a fake QEMU: KVM probe, fallback, stall and oops verdicts.
HOST_TESTS += $(BUILD)/host/run-vm-test
# The planner benchmark's modes on small instances and its bad arguments
# (selftests/host/planner-bench-test.sh). The benchmark itself is built in
# build/bench/, not build/host/: tools/check.sh runs every program there.
PLANNER_BENCH := $(BUILD)/bench/planner_bench
HOST_TESTS += $(BUILD)/host/planner-bench-check

.PHONY: all module runtime tools selftests hosttests check check-debug debug-kernel demo stress stress-debug fuzz bench-runtime bench-mem lint install \
	deps clean FORCE
.PHONY: bench-planner bench-exec bench-compute bench-models
.PHONY: bench-pool bench-topo bench-lease bench-onnx troubleshooting-capture

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

# Models of the demo, benchmarks and graph tests, with their test data
# (tools/onnx/gen-models.py, Debian's python3-onnx and numpy).
ONNX_PYTHON ?= /usr/bin/python3
ONNX_MODELS := $(BUILD)/onnx/.stamp
$(ONNX_MODELS): tools/onnx/gen-models.py
	@rm -rf $(BUILD)/onnx
	$(ONNX_PYTHON) tools/onnx/gen-models.py $(BUILD)/onnx
	@touch $@

# Standard networks exported by PyTorch's own exporter, with torch's outputs
# (tools/onnx/export-torch.py, Debian's python3-torch and python3-torchvision).
TORCH_MODELS := $(BUILD)/onnx-torch/.stamp
$(TORCH_MODELS): tools/onnx/export-torch.py
	@rm -rf $(BUILD)/onnx-torch
	$(ONNX_PYTHON) tools/onnx/export-torch.py $(BUILD)/onnx-torch
	@touch $@

$(ONNX_GEN) &: $(ONNX_PROTO)
	@if [ ! -f $(ONNX_PROTO) ] || ! command -v protoc-c >/dev/null; then \
		echo "vnpu: onnx.proto or protoc-c missing; run 'make deps' (as root) first" >&2; \
		exit 1; \
	fi
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -I$(dir $(ONNX_PROTO)).. onnx/onnx.proto

$(BUILD)/obj/gen/onnx.pb-c.o: $(ONNX_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(BUILD)/obj/libruntime/%.o: libruntime/%.c $(wildcard libruntime/*/*.h) $(RT_HEADERS) \
		uapi/drm/vnpu_accel.h $(ONNX_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(RT_SO): $(RT_OBJS) $(RT_MAP) $(BUILD)/abi/map-ok
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(RT_SONAME) $(RT_LDFLAGS) -o $@ $(RT_OBJS) -ldrm -lprotobuf-c -lpthread
	ln -sf $(RT_SONAME) $(BUILD)/lib/libvnpurt.so

$(RT_A): $(RT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# --- tools --------------------------------------------------------------------

tools: $(TOOLS)

$(BUILD)/bin/vnpu-smi: tools/smi/vnpu-smi.c tools/common/attr.h $(RT_SO) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/vnpu-plan: tools/plan/vnpu-plan.c $(RT_SO) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/bin/vnpu-trace: tools/trace/vnpu-trace.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@

$(BUILD)/bin/vnpu-run: tools/run/vnpu-run.c tools/run/tensor_compare.h $(RT_SO) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt -lm -lpthread \
		-Wl,-rpath,'$$ORIGIN/../lib'

# The demo's inference service and the ONNX benchmarks (tools/demo/vnpu-serve.c).
$(BUILD)/bin/vnpu-serve: tools/demo/vnpu-serve.c tools/run/tensor_compare.h $(RT_SO) \
		$(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include -Itools/run $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-lm -lpthread -Wl,-rpath,'$$ORIGIN/../lib'

# ONNX models: load and plan time, arena against naive sum and lower bound,
# latency on one stream, two streams and two devices, CPU reference; in the
# VM, figures in build/bench-onnx/onnx-bench/onnx.log.
bench-onnx: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/bench/onnx.plan --out $(BUILD)/bench-onnx

# The device pool daemon and its CLI share the protocol code with the runtime.
LEASE_PROTO := libruntime/multi/lease_proto.c libruntime/multi/lease_proto.h
$(BUILD)/bin/vnpu-poold $(BUILD)/inst/bin/vnpu-poold: tools/pool/vnpu-poold.c $(LEASE_PROTO) \
		tools/common/attr.h uapi/drm/vnpu_accel.h
$(BUILD)/bin/vnpu-pool $(BUILD)/inst/bin/vnpu-pool: tools/pool/vnpu-pool.c $(LEASE_PROTO)
$(BUILD)/bin/vnpu-poold $(BUILD)/inst/bin/vnpu-poold $(BUILD)/bin/vnpu-pool $(BUILD)/inst/bin/vnpu-pool:
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/multi $(filter %.c,$^) -o $@ $(LDFLAGS)

# One table row per instance; MiniMalloc instances get the capacity their
# file name ends in.
bench-planner: $(BUILD)/bin/vnpu-plan $(PLANNER_BENCH)
	@echo "| instance | buffers | LB | greedy | best | greedy/ref | best/ref | ms | cpu ms | nodes |"
	@for f in $(PLANNER_DATA)/*.csv; do \
		cap=$$(basename $$f .csv | sed -n 's/^minimalloc__.*\.\([0-9][0-9]*\)$$/--capacity \1/p'); \
		$(BUILD)/bin/vnpu-plan --table $$cap $$f || exit 1; \
	done
	@$(PLANNER_BENCH) $(PLANNER_BENCH_ARGS)

# The planner's sources, built into the programs that call its private
# interface (planner_search.h) as well as into the runtime: the host test
# and the benchmark (planner_bench --strips probes the strip search).
PLANNER_SRCS := libruntime/mm/planner.c libruntime/core/status.c \
	libruntime/mm/planner_search.c libruntime/mm/planner_sweep.c libruntime/mm/planner_bands.c \
	libruntime/mm/planner_merge.c libruntime/mm/planner_pq.c libruntime/mm/planner_strips.c \
	libruntime/mm/planner_cuts.c libruntime/mm/pqtree.c \
	libruntime/mm/pqtree.h libruntime/mm/planner_search.h

# Generated instances of known optimum (selftests/host/planner_gen.c), per
# family and size: share at the optimum, worst ratio, time. The default (50
# seeds, 200 to 6,000 buffers, every family) takes about a quarter of an hour of
# CPU; PLANNER_BENCH_ARGS="--seeds 10 --sizes 400,1500" for a quick look.
$(PLANNER_BENCH): selftests/host/planner_bench.c selftests/host/planner_gen.c \
		selftests/host/planner_gen.h $(PLANNER_SRCS) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include -Ilibruntime $(filter %.c,$^) -o $@ -lpthread

# Pool and data cache benchmark in the VM (tools/bench/pool.plan); reports, never asserts.
$(BUILD)/bin/vnpu-bench-pool: tools/bench/vnpu-bench-pool.c $(RT_SO) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

bench-pool: $(BUILD)/bin/vnpu-bench-pool module
	tools/vm/run-vm.sh --plan tools/bench/pool.plan --out $(BUILD)/bench-pool

# Lease request latency of vnpu-poold, 1 and 50 clients, in the VM
# (tools/bench/lease.plan); figures in build/bench-lease/bench-lease/bench.log.
$(BUILD)/bin/vnpu-bench-lease: tools/bench/vnpu-bench-lease.c $(LEASE_PROTO)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/multi $(filter %.c,$^) -o $@

bench-lease: $(BUILD)/bin/vnpu-bench-lease $(BUILD)/bin/vnpu-poold module
	tools/vm/run-vm.sh --plan tools/bench/lease.plan --out $(BUILD)/bench-lease

$(BUILD)/bin/vnpu-bench-exec: tools/bench/vnpu-bench-exec.c selftests/vnpu_utils.h \
		uapi/drm/vnpu_accel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@ -lpthread

# Execution benchmarks in the VM; figures in build/bench-exec/exec/exec.log.
bench-exec: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/bench/exec.plan --out $(BUILD)/bench-exec

$(BUILD)/bin/vnpu-bench-compute: tools/bench/vnpu-bench-compute.c selftests/vnpu_exec_utils.h \
		selftests/vnpu_utils.h uapi/drm/vnpu_accel.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@

# Device compute against numpy/OpenBLAS on one thread, and a resnet18
# inference against torch on one thread, in the VM; table in
# build/bench-compute/bench-compute/compute.log.
# Three rounds take about 25 minutes under software emulation.
bench-compute: deps module $(BUILD)/bin/vnpu-bench-compute $(BUILD)/bin/vnpu-run $(TORCH_MODELS)
	@VNPU_TEST_TIMEOUT=3600 tools/vm/run-vm.sh --plan tools/bench/compute.plan \
		--out $(BUILD)/bench-compute

# Whole networks (build/onnx-torch) on vnpu against torch on one thread, in
# the VM (tools/bench/vnpu-bench-models.py); table in
# build/bench-models/bench-models/models.log. Three rounds take about half
# an hour under software emulation.
bench-models: deps module $(BUILD)/bin/vnpu-run $(TORCH_MODELS)
	@VNPU_TEST_TIMEOUT=3600 tools/vm/run-vm.sh --plan tools/bench/models.plan \
		--out $(BUILD)/bench-models

$(BUILD)/bin/vnpu-test-summary: tools/summary/vnpu-test-summary.c tools/summary/ksft_totals.c \
		tools/summary/ksft_totals.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(filter %.c,$^) -o $@

# --- tests --------------------------------------------------------------------

selftests: $(VM_TESTS) $(RT_TESTS) $(EXAMPLES) $(ONNX_MODELS) $(TORCH_MODELS)

# The examples build like any application of the runtime would.
$(EXAMPLES): $(BUILD)/examples/%: examples/%.c $(RT_HEADERS) $(RT_SO)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt -lpthread \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(RT_TESTS): $(BUILD)/selftests/%: selftests/%.c selftests/vnpu_utils.h selftests/vnpu_exec_utils.h \
		tools/common/attr.h \
		uapi/drm/vnpu_accel.h \
		$(RT_HEADERS) tools/run/tensor_compare.h $(RT_SO) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(KSFT_DIR) -Ilibruntime/include $< -o $@ \
		-L$(BUILD)/lib -lvnpurt -lm -lpthread -Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/selftests/%: selftests/%.c selftests/vnpu_utils.h selftests/vnpu_exec_utils.h \
		selftests/vnpu_cmd_fixture.h tools/common/attr.h \
		uapi/drm/vnpu_accel.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(KSFT_DIR) $< -o $@ -lm -lpthread

hosttests: $(HOST_TESTS)

$(BUILD)/host/status_test: selftests/host/status_test.c libruntime/core/status.c \
		$(RT_HEADERS) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include $(filter %.c,$^) -o $@

$(BUILD)/host/lease_proto_test: selftests/host/lease_proto_test.c $(LEASE_PROTO) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/multi $(filter %.c,$^) -o $@

$(BUILD)/host/ksft_totals_test: selftests/host/ksft_totals_test.c tools/summary/ksft_totals.c \
		tools/summary/ksft_totals.h $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Itools/summary $(filter %.c,$^) -o $@

$(BUILD)/host/planner_test: selftests/host/planner_test.c $(PLANNER_SRCS) \
		selftests/host/planner_gen.c selftests/host/planner_gen.h $(RT_HEADERS) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include -Ilibruntime \
		$(filter %.c,$^) -o $@ -lpthread

$(BUILD)/host/pqtree_test: selftests/host/pqtree_test.c libruntime/mm/pqtree.c \
		libruntime/mm/pqtree.h libruntime/mm/planner_search.c libruntime/mm/planner_search.h \
		$(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/mm $(filter %.c,$^) -o $@

$(BUILD)/host/pool_core_test: selftests/host/pool_core_test.c libruntime/mm/pool_core.c \
		libruntime/mm/pool_core.h $(RT_HEADERS) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include -Ilibruntime/mm \
		$(filter %.c,$^) -o $@

$(BUILD)/host/addr_map_test: selftests/host/addr_map_test.c libruntime/core/addr_map.c \
		libruntime/core/addr_map.h $(RT_HEADERS) $(KSFT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN_FLAGS) -I$(KSFT_DIR) -Ilibruntime/include -Ilibruntime/core \
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

# make stress's SIGKILL seeds, scheduler race, unplug and teardown groups
# (selftests/stress.plan) on the debug kernel.
stress-debug: deps
	@VNPU_TEST_TIMEOUT=3000 tools/debug-kernel/check.sh selftests/stress.plan stress-debug \
		"teardown unplug-full kill-seeds"

$(BUILD)/bench/vnpu-bench-runtime: tools/bench/vnpu-bench-runtime.c $(RT_HEADERS) $(RT_SO)
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

$(BUILD)/bench/vnpu-bench-topo: tools/bench/vnpu-bench-topo.c $(RT_SO) $(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ -L$(BUILD)/lib -lvnpurt \
		-Wl,-rpath,'$$ORIGIN/../lib'

# Peer-copy bandwidth per link class and all-reduce bus bandwidth on 8
# devices, in the VM; figures in build/bench-topo/topo/topo.log.
bench-topo: all $(BUILD)/bench/vnpu-bench-topo
	@tools/vm/run-vm.sh --plan tools/bench/topo.plan --out $(BUILD)/bench-topo

# Runtime overheads against the raw driver, measured in the VM.
bench-runtime: all $(BUILD)/bench/vnpu-bench-runtime
	@tools/vm/run-vm.sh --plan tools/bench/runtime.plan --out $(BUILD)/bench-runtime

# The full stress counts; results and timings in build/stress.
stress: deps
	@$(MAKE) --no-print-directory all
	@VNPU_TEST_TIMEOUT=3000 tools/vm/run-vm.sh --plan selftests/stress.plan --out $(BUILD)/stress

# A long ioctl fuzz run in the VM: make fuzz DURATION=600 [SEED=n]
# (seconds; results in build/fuzz). make check runs 20 s of it.
DURATION ?= 300
fuzz: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)/plans
	@printf '%s\n' 'group fuzz vram_size_mb=64 host_size_mb=128' \
		"run fuzz sh -c 'VNPU_FUZZ_SECONDS=$(DURATION) $(if $(SEED),VNPU_FUZZ_SEED=$(SEED) )build/selftests/vnpu_fuzz'" \
		>$(BUILD)/plans/fuzz.plan
	@VNPU_TEST_TIMEOUT=$$(($(DURATION) + 300)) tools/vm/run-vm.sh --timeout $$(($(DURATION) + 900)) \
		--plan $(BUILD)/plans/fuzz.plan --out $(BUILD)/fuzz

demo: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/demo.plan --out $(BUILD)/demo

# Runs the leak hunt of Documentation/troubleshooting.rst in the VM; the
# guide quotes the output.
troubleshooting-capture: deps
	@$(MAKE) --no-print-directory all
	@tools/vm/run-vm.sh --plan tools/docs/troubleshooting.plan --out $(BUILD)/troubleshooting
	@echo "output: $(BUILD)/troubleshooting/leak/walkthrough.log"

# --- quality gates ------------------------------------------------------------

lint: driver/vnpu_kconfig.h $(CHECKPATCH)
	tools/layer-check.sh
	perl $(CHECKPATCH) --no-tree --strict --quiet -f \
		$(filter-out %.mod.c driver/vnpu_kconfig.h,$(wildcard driver/*.c driver/*.h)) \
		uapi/drm/vnpu_accel.h
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 clean
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules 2>&1 | tee $(BUILD)/w1.log
	@if grep -q 'warning:' $(BUILD)/w1.log; then \
		echo "lint: the W=1 build warned" >&2; exit 1; fi
	@echo "lint: clean"

# --- install ------------------------------------------------------------------
#
# Every path honours DESTDIR (a staging root) and the directory variables at
# the top (PREFIX, BINDIR, LIBDIR, INCLUDEDIR, MANDIR, PKGCONFIGDIR,
# UDEVRULESDIR, SYSTEMDUNITDIR). Only a real install (DESTDIR empty) runs
# depmod, ldconfig and udevadm. Layout: Documentation/install.rst.

# Programs for users, each with its page man/NAME.1; vnpu-test-summary and
# the benchmarks belong to the tests and stay out.
INSTALL_TOOLS := $(BUILD)/inst/bin/vnpu-smi $(BUILD)/inst/bin/vnpu-trace \
	$(BUILD)/inst/bin/vnpu-plan $(BUILD)/inst/bin/vnpu-pool $(BUILD)/inst/bin/vnpu-poold \
	$(BUILD)/inst/bin/vnpu-run
# systemd units of the vnpu pool service: tools/systemd/*.service, *.socket,
# *.timer (none yet); each one found there is installed and uninstalled.
SYSTEMD_UNITS := $(wildcard tools/systemd/*.service tools/systemd/*.socket \
	tools/systemd/*.timer)
# Hand-written pages: tools (1), the driver (4). Section 3 is generated from
# the kernel-doc comments of vnpu.h by tools/gen-man3.py.
MAN_STATIC := $(wildcard man/*.[1-9])
MAN_STAMP := $(BUILD)/man/.stamp
MODULE_INSTALL_DIR = $(DESTDIR)/lib/modules/$(KVER)/updates
# Debian's headers carry no signing key: do not try to sign without one.
MODSIGN = $(if $(wildcard $(KDIR)/certs/signing_key.pem $(KDIR)/output/signing_key.pem),,\
	CONFIG_MODULE_SIG_ALL=)
pc_rel = $(patsubst $(PREFIX)%,$${prefix}%,$(1))

.PHONY: man userspace print-install-tools install-module install-user install-runtime install-tools \
	install-man install-udev install-systemd uninstall abi-check abi-update \
	dkms-src dkms-install dkms-uninstall deb check-packaging

# Installed programs are linked without the build tree's rpath.
$(BUILD)/inst/bin/vnpu-smi: tools/smi/vnpu-smi.c tools/common/attr.h $(RT_SO) $(RT_HEADERS)
$(BUILD)/inst/bin/vnpu-plan: tools/plan/vnpu-plan.c $(RT_SO) $(RT_HEADERS)
$(BUILD)/inst/bin/vnpu-smi $(BUILD)/inst/bin/vnpu-plan:
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ $(LDFLAGS) -L$(BUILD)/lib -lvnpurt

$(BUILD)/inst/bin/vnpu-run: tools/run/vnpu-run.c tools/run/tensor_compare.h $(RT_SO) \
		$(RT_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Ilibruntime/include $< -o $@ $(LDFLAGS) -L$(BUILD)/lib -lvnpurt -lm \
		-lpthread

$(BUILD)/inst/bin/vnpu-trace: tools/trace/vnpu-trace.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@ $(LDFLAGS)

man: $(MAN_STAMP)

print-install-tools:
	@echo $(notdir $(INSTALL_TOOLS))

# What install-user installs, built (the package build's build step).
userspace: $(RT_SO) $(RT_A) $(INSTALL_TOOLS) $(MAN_STAMP)

$(MAN_STAMP): tools/gen-man3.py $(RT_HEADERS) $(MAN_STATIC) debian/changelog
	rm -rf $(BUILD)/man
	python3 tools/gen-man3.py --version "$(VERSION)" libruntime/include/vnpu.h $(BUILD)/man/man3
	for f in $(MAN_STATIC); do \
		sec=$${f##*.}; mkdir -p $(BUILD)/man/man$$sec; \
		sed 's/@VERSION@/$(VERSION)/g' $$f >$(BUILD)/man/man$$sec/$${f##*/} || exit 1; \
	done
	touch $@

install: install-module install-user
	@if [ -z "$(DESTDIR)" ]; then \
		echo "ldconfig; depmod -a $(KVER); udevadm control --reload-rules"; \
		ldconfig; depmod -a $(KVER); \
		udevadm control --reload-rules 2>/dev/null && \
			udevadm trigger --subsystem-match=accel 2>/dev/null; \
	fi; true

install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates \
		INSTALL_MOD_PATH=$(abspath $(DESTDIR)) $(MODSIGN) modules_install

# Everything but the module: what the Debian packages hold besides DKMS.
install-user: install-runtime install-tools install-man install-udev install-systemd

install-runtime: $(RT_SO) $(RT_A)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR)/drm
	install -m 0644 $(RT_SO) $(DESTDIR)$(LIBDIR)/$(RT_SONAME)
	ln -sf $(RT_SONAME) $(DESTDIR)$(LIBDIR)/libvnpurt.so
	install -m 0644 $(RT_A) $(DESTDIR)$(LIBDIR)/libvnpurt.a
	install -d $(DESTDIR)$(INCLUDEDIR)/vnpu
	install -m 0644 libruntime/include/vnpu.h $(DESTDIR)$(INCLUDEDIR)/vnpu.h
	install -m 0644 $(wildcard libruntime/include/vnpu/*.h) $(DESTDIR)$(INCLUDEDIR)/vnpu/
	install -m 0644 uapi/drm/vnpu_accel.h $(DESTDIR)$(INCLUDEDIR)/drm/vnpu_accel.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
		libruntime/vnpurt.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/vnpurt.pc

install-tools: $(INSTALL_TOOLS)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(INSTALL_TOOLS) $(DESTDIR)$(BINDIR)/

install-man: $(MAN_STAMP)
	for d in $(BUILD)/man/man*; do \
		install -d $(DESTDIR)$(MANDIR)/$${d##*/} && \
		install -m 0644 $$d/* $(DESTDIR)$(MANDIR)/$${d##*/}/ || exit 1; \
	done

install-udev:
	install -D -m 0644 tools/udev/70-vnpu.rules $(DESTDIR)$(UDEVRULESDIR)/70-vnpu.rules

install-systemd:
	$(if $(SYSTEMD_UNITS),install -d $(DESTDIR)$(SYSTEMDUNITDIR))
	$(if $(SYSTEMD_UNITS),install -m 0644 $(SYSTEMD_UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/)

# Removes exactly what install put there, and the directories that it
# leaves empty below PREFIX.
uninstall:
	rm -f $(foreach x,ko ko.xz ko.zst ko.gz,$(MODULE_INSTALL_DIR)/driver/vnpu.$(x))
	-rmdir $(MODULE_INSTALL_DIR)/driver $(MODULE_INSTALL_DIR) 2>/dev/null
	rm -f $(DESTDIR)$(LIBDIR)/$(RT_SONAME) $(DESTDIR)$(LIBDIR)/libvnpurt.so \
		$(DESTDIR)$(LIBDIR)/libvnpurt.a $(DESTDIR)$(PKGCONFIGDIR)/vnpurt.pc \
		$(DESTDIR)$(INCLUDEDIR)/vnpu.h $(DESTDIR)$(INCLUDEDIR)/drm/vnpu_accel.h \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/vnpu/,$(notdir $(wildcard libruntime/include/vnpu/*.h))) \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_TOOLS))) \
		$(DESTDIR)$(UDEVRULESDIR)/70-vnpu.rules \
		$(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(SYSTEMD_UNITS))) \
		$(foreach f,$(MAN_STATIC),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(f)))/$(notdir $(f))) \
		$(DESTDIR)$(MANDIR)/man3/libvnpurt.3 $(DESTDIR)$(MANDIR)/man3/vnpu_*.3
	-for d in $(DESTDIR)$(INCLUDEDIR)/drm $(DESTDIR)$(INCLUDEDIR)/vnpu $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man*; do \
		rmdir $$d 2>/dev/null; done; true
	@if [ -z "$(DESTDIR)" ]; then \
		ldconfig; depmod -a $(KVER); udevadm control --reload-rules 2>/dev/null; \
	fi; true

# --- ABI ----------------------------------------------------------------------

# vnpu.h and the version script agree before the library is linked.
$(BUILD)/abi/map-ok: $(RT_MAP) $(RT_HEADERS) tools/abi-check.sh
	@mkdir -p $(dir $@)
	@tools/abi-check.sh map
	@touch $@

abi-check: $(RT_SO)
	tools/abi-check.sh check $(RT_SO)

# After adding a public function to vnpu.h: export it (in the node of the
# current API level), relink, rewrite the committed list. Commit
# libruntime/libvnpurt.map, libruntime/abi/ and debian/ with the function.
abi-update:
	tools/abi-check.sh update-map
	$(MAKE) --no-print-directory runtime
	tools/abi-check.sh update-list $(RT_SO)

# --- DKMS and Debian packages -------------------------------------------------

DKMS_SRCDIR ?= /usr/src/vnpu-$(VERSION)
# The module's sources: the top-level Makefile runs driver/configure.
DKMS_FILES := Makefile Kbuild driver/Kbuild driver/configure uapi/drm/vnpu_accel.h \
	$(filter-out driver/vnpu_kconfig.h %.mod.c,$(wildcard driver/*.c driver/*.h))

dkms-src:
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)
	for f in $(DKMS_FILES); do \
		install -D -m $$([ -x $$f ] && echo 0755 || echo 0644) $$f \
			$(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; \
	done
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DESTDIR)$(DKMS_SRCDIR)/dkms.conf

# As root, from a checkout: the same as the vnpu-dkms package does. A
# version already registered is removed first, so the current sources build.
dkms-install:
	@if dkms status vnpu/$(VERSION) | grep -q .; then \
		echo "dkms remove vnpu/$(VERSION) --all"; dkms remove vnpu/$(VERSION) --all >/dev/null; \
	fi
	$(MAKE) --no-print-directory dkms-src
	dkms add vnpu/$(VERSION)
	for k in $$(ls /lib/modules); do \
		[ -e /lib/modules/$$k/build/Makefile ] || continue; \
		dkms install vnpu/$(VERSION) -k $$k; rc=$$?; \
		[ $$rc = 0 ] || [ $$rc = 77 ] || exit $$rc; \
	done

dkms-uninstall:
	-dkms remove vnpu/$(VERSION) --all
	rm -rf $(DKMS_SRCDIR)

deb:
	tools/build-deb.sh $(BUILD)/deb

# The packaging and layer tests as host test programs for tools/check.sh.
$(BUILD)/host/packaging-checks: selftests/packaging/host-checks.sh
$(BUILD)/host/packaging-system: selftests/packaging/system-checks.sh
$(BUILD)/host/run-vm-test: selftests/host/run-vm-test.sh
$(BUILD)/host/layer-check: selftests/host/layer-check-test.sh tools/layer-check.sh
$(BUILD)/host/planner-bench-check: selftests/host/planner-bench-test.sh $(PLANNER_BENCH) \
	$(BUILD)/bin/vnpu-plan
$(BUILD)/host/packaging-checks $(BUILD)/host/packaging-system $(BUILD)/host/run-vm-test \
		$(BUILD)/host/layer-check $(BUILD)/host/planner-bench-check:
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec "$$(dirname "$$0")/../../%s" "$$@"\n' $< >$@
	chmod +x $@

check-packaging: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)/results/packaging
	@selftests/packaging/host-checks.sh | tee $(BUILD)/results/packaging/host-checks.log
	@selftests/packaging/system-checks.sh | tee $(BUILD)/results/packaging/system-checks.log
	@$(BUILD)/bin/vnpu-test-summary $(BUILD)/results/packaging/*.log

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD) driver/vnpu_kconfig.h

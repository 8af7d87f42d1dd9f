#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: out-of-range module parameters refuse to load with a clear
# message in the kernel log; valid ones load and show up in sysfs.
# Runs as root with vnpu not loaded; VNPU_KO names the module file.
set -u

ko=${VNPU_KO:?VNPU_KO must name vnpu.ko}
pass=0 fail=0 skip=0 n=0

result() { # result OK|FAIL|SKIP description
	n=$((n + 1))
	case $1 in
	OK) pass=$((pass + 1)); echo "ok $n $2" ;;
	SKIP) skip=$((skip + 1)); echo "ok $n $2 # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $n $2" ;;
	esac
}

# refuses "PARAMS" "expected kernel log text"
refuses() {
	local params=$1 text=$2 marker
	marker="vnpu-modparams-$RANDOM$RANDOM"
	echo "$marker" >/dev/kmsg
	# shellcheck disable=SC2086 # params are split on purpose
	if insmod "$ko" $params 2>/dev/null; then
		rmmod vnpu
		result FAIL "refuses $params (it loaded)"
		return
	fi
	if dmesg | sed -n "/$marker/,\$p" | grep -qF -- "$text"; then
		result OK "refuses $params"
	else
		echo "# kernel log lacks: $text"
		result FAIL "refuses $params"
	fi
}

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || grep -q '^vnpu ' /proc/modules; then
	echo "1..0 # SKIP needs root and vnpu not loaded"
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0"
	exit 4
fi
echo "1..32"

# The module's own dependencies (drm, ...) must be there for its init to run.
for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
	modprobe "$dep"
done

refuses "num_devices=0" "num_devices=0 is out of range (1-16)"
refuses "num_devices=17" "num_devices=17 is out of range (1-16)"
refuses "vram_size_mb=15" "vram_size_mb=15 is out of range (16-262144)"
refuses "vram_size_mb=262145" "vram_size_mb=262145 is out of range"
refuses "host_size_mb=15" "host_size_mb=15 is out of range (16-262144)"
refuses "host_size_mb=262145" "host_size_mb=262145 is out of range"
refuses "compute_engines=0" "compute_engines=0 is out of range (1-8)"
refuses "compute_engines=9" "compute_engines=9 is out of range"
refuses "copy_engines=0" "copy_engines=0 is out of range (1-8)"
refuses "copy_engines=9" "copy_engines=9 is out of range"
refuses "job_timeout_ms=0" "job_timeout_ms=0 is out of range (1-3600000)"
refuses "max_queues_per_process=0" "max_queues_per_process=0 is out of range (1-4096)"
refuses "max_queues_per_process=4097" "max_queues_per_process=4097 is out of range"
refuses "max_bos_per_process=0" "max_bos_per_process=0 is out of range (1-1048576)"
refuses "max_bos_per_process=1048577" "max_bos_per_process=1048577 is out of range"
refuses "max_syncobjs_per_process=0" "max_syncobjs_per_process=0 is out of range (1-1048576)"
refuses "max_syncobjs_per_process=1048577" "max_syncobjs_per_process=1048577 is out of range"
refuses "num_devices=1 numa_node=0,0" "numa_node lists 2 nodes for 1 devices"
refuses "numa_node=-2" "numa_node=-2 for device 0 is not an online node"
refuses "numa_node=1023" "numa_node=1023 for device 0 is not an online node"
refuses "devices_per_board=0" "devices_per_board=0 is out of range (1-16)"
refuses "boards_per_node=17" "boards_per_node=17 is out of range (1-16)"
refuses "link_bandwidth_mbps=100,10" "link_bandwidth_mbps needs 3 values (board,node,system), got 2"
refuses "link_bandwidth_mbps=100,10,0" "link_bandwidth_mbps=0 for system is out of range (1-10000000)"
refuses "link_bandwidth_mbps=100,200,50" "link_bandwidth_mbps: node (200) is higher than board (100)"
refuses "link_latency_ns=10,5,20" "link_latency_ns: node (5) is lower than board (10)"
refuses "link_latency_ns=1,2,10000001" "link_latency_ns=10000001 for system is out of range (0-10000000)"

# A refused load leaves nothing behind.
if grep -q '^vnpu ' /proc/modules || ls /dev/accel 2>/dev/null | grep -q .; then
	result FAIL "refused loads leave no module and no device"
else
	result OK "refused loads leave no module and no device"
fi

# Valid parameters load, and each device reports its own NUMA node.
if insmod "$ko" num_devices=3 numa_node=0,-1 vram_size_mb=32; then
	node0=$(cat /sys/bus/platform/devices/vnpu.0/vnpu/numa_node)
	node1=$(cat /sys/bus/platform/devices/vnpu.1/vnpu/numa_node)
	node2=$(cat /sys/bus/platform/devices/vnpu.2/vnpu/numa_node)
	if [ "$node0/$node1/$node2" = "0/-1/-1" ]; then
		result OK "numa_node=0,-1 gives nodes 0, -1, -1"
	else
		result FAIL "numa_node=0,-1 gives nodes 0, -1, -1 (got $node0/$node1/$node2)"
	fi
	if rmmod vnpu; then
		result OK "unload with no clients"
	else
		result FAIL "unload with no clients"
	fi
else
	result FAIL "numa_node=0,-1 gives nodes 0, -1, -1 (load failed)"
	result FAIL "unload with no clients"
fi

# A described machine: boards of one device, two boards per node.
if insmod "$ko" num_devices=4 devices_per_board=1 boards_per_node=2 \
	link_bandwidth_mbps=900,90,9 link_latency_ns=1,20,300; then
	d=/sys/bus/platform/devices/vnpu.0/vnpu
	row="$(cat $d/link_class)|$(cat $d/link_bandwidth_mbps)|$(cat $d/link_latency_ns)"
	want="self node system system|0 90 9 9|0 20 300 300"
	if [ "$row" = "$want" ]; then
		result OK "topology parameters give device 0 the row $want"
	else
		result FAIL "topology parameters give device 0 the row $want (got $row)"
	fi
	node3=$(cat /sys/bus/platform/devices/vnpu.3/vnpu/topology_node)
	if [ "$node3" = 1 ]; then
		result OK "device 3 is in topology node 1"
	else
		result FAIL "device 3 is in topology node 1 (got $node3)"
	fi
	rmmod vnpu
else
	result FAIL "topology parameters load"
	result FAIL "device 3 is in topology node 1 (load failed)"
fi

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: inside the test VM, with the vnpu packages installed: the
# DKMS-built module loads with modprobe, /usr/bin/vnpu-smi and an example
# linked against the installed libvnpurt see the devices, and the module
# unloads. VNPU_EXAMPLE names the example program (built by
# system-checks.sh with pkg-config against libvnpurt-dev); the other
# examples, built the same way beside it in examples/, run as well.
set -u
cd "$(dirname "$0")/../.." || exit 1
. selftests/packaging/lib.sh

example=${VNPU_EXAMPLE:-build/packaging/system/vnpu-devices}

t_modprobe() {
	local path
	path=$(modinfo -n vnpu) || return 1
	echo "modinfo -n vnpu: $path"
	case $path in
	*/updates/dkms/vnpu.ko*) ;;
	*) echo "not the module DKMS installed"; return 1 ;;
	esac
	modprobe vnpu num_devices=2 || return 1
	[ -d /sys/module/vnpu ] || { echo "/sys/module/vnpu missing"; return 1; }
	ls -l /dev/accel/
}

t_smi() {
	local out n
	/usr/bin/vnpu-smi || return 1
	out=$(/usr/bin/vnpu-smi --query-device=name,accel --format=csv,noheader) ||
		{ echo "$out"; return 1; }
	echo "$out"
	n=$(echo "$out" | grep -c '^vnpu[0-9]')
	[ "$n" = 2 ] || { echo "expected 2 devices, saw $n"; return 1; }
}

t_example() {
	local out
	ldd "$example" | grep libvnpurt
	ldd "$example" | grep -qE 'libvnpurt\.so\.1 => (/usr)?/lib/[^ ]*/libvnpurt\.so\.1' ||
		{ echo "example does not load the installed libvnpurt.so.1"; return 1; }
	out=$("$example") || { echo "$out"; return 1; }
	echo "$out"
	echo "$out" | grep -q '^2 vnpu device(s)'
}

# The examples the tree's tests run, here built against libvnpurt-dev.
t_examples() {
	local dir=${example%/*}/examples
	[ -x examples/run-examples.sh ] || skip "no examples/run-examples.sh"
	[ -d "$dir" ] || { echo "no $dir"; return 1; }
	examples/run-examples.sh "$dir"
}

t_unload() {
	modprobe -r vnpu || return 1
	[ ! -d /sys/module/vnpu ] || { echo "vnpu still loaded"; return 1; }
}

tap_begin
tap_run modprobe-loads-dkms-module t_modprobe
tap_run installed-vnpu-smi-lists-devices t_smi
tap_run example-runs-from-installed-library t_example
tap_run examples-built-against-dev-package-run t_examples
tap_run modprobe-r-unloads t_unload
tap_end

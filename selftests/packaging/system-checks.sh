#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: the slow packaging checks, which change the machine and so
# need root (`make check-packaging`; `make check` runs them too, as
# build/host/packaging-system):
#
#   1. DKMS builds the module against the headers of every installed kernel
#      (in a private DKMS tree: nothing is installed);
#   2. dpkg-buildpackage builds vnpu-dkms, libvnpurt1, libvnpurt-dev and
#      vnpu-tools, and lintian finds no error in them;
#   3. the packages install: DKMS builds and installs the module for every
#      kernel with headers;
#   4. an example program builds against the installed libvnpurt-dev with
#      `pkg-config --cflags --libs vnpurt`, and so does the C++ header test;
#   5. in the test VM, the installed module loads with modprobe, and
#      /usr/bin/vnpu-smi and the example run from the installed files;
#   6. purging the packages leaves nothing behind: the file lists of /usr,
#      /etc, /boot, /opt and /var/lib/dkms are the same as before step 3 in
#      every path that names vnpu or lies where the packages and DKMS write
#      (other differences, from other programs running meanwhile, are only
#      shown), and DKMS knows no vnpu module.
#
# Runs under a lock, so two checkouts testing at once take turns. Refuses
# to touch vnpu packages it did not install itself. Prints kselftest TAP.
# VNPU_SKIP_PACKAGING_SYSTEM=1 skips it (development runs of changes that
# do not touch packaging; CI never sets it).
set -uo pipefail

if [ "${VNPU_SKIP_PACKAGING_SYSTEM:-0}" = 1 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP VNPU_SKIP_PACKAGING_SYSTEM=1"
	echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0"
	exit 4
fi

top=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)
cd "$top" || exit 1
# shellcheck source=selftests/packaging/lib.sh
. selftests/packaging/lib.sh

work=$top/build/packaging/system
debs=$top/build/packaging/deb
version=$(sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog)
packages=(vnpu-dkms libvnpurt1 libvnpurt-dev vnpu-tools)
marker=/var/lib/vnpu-packaging-test
lock=/run/lock/vnpu-packaging.lock
apt_opts=(-y -q -o DPkg::Lock::Timeout=600 -o APT::Sandbox::User=root)
export DEBIAN_FRONTEND=noninteractive

# Kernels that have headers: those DKMS can build for.
kernels() {
	local d
	for d in /lib/modules/*; do
		[ -f "$d/build/Makefile" ] && basename "$d"
	done
}

installed_vnpu_packages() {
	dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
		awk '$2 !~ /^un/ && $2 !~ /^pn/ { print $1 }'
}

snapshot() {
	find /usr /etc /boot /opt /var/lib/dkms -xdev 2>/dev/null |
		grep -vE '^/var/lib/dkms/mok\.(key|pub)$' | sort
}

preconditions() {
	[ "$(id -u)" = 0 ] || skip "needs root (installs packages, loads DKMS)"
	local t
	for t in dkms dpkg-buildpackage dh_dkms lintian apt-get; do
		command -v "$t" >/dev/null || skip "$t missing: run 'make deps'"
	done
	[ -n "$(kernels)" ] || skip "no kernel headers installed"
}

t_dkms_build() {
	preconditions
	local d=$work/dkms k f rc=0
	rm -rf "$d"
	make --no-print-directory -s dkms-src DESTDIR="$d/src" DKMS_SRCDIR="/vnpu-$version" || return 1
	mkdir -p "$d/tree"
	dkms add "vnpu/$version" --sourcetree "$d/src" --dkmstree "$d/tree" >/dev/null || return 1
	for k in $(kernels); do
		if ! dkms build "vnpu/$version" -k "$k" --sourcetree "$d/src" --dkmstree "$d/tree" \
			>"$d/build-$k.log" 2>&1; then
			if grep -q 'BUILD_EXCLUSIVE' "$d/build-$k.log"; then
				echo "$k: not a target kernel (BUILD_EXCLUSIVE), skipped"
				continue
			fi
			cat "$d/build-$k.log"
			cat "$d/tree/vnpu/$version/build/make.log" 2>/dev/null
			rc=1
			continue
		fi
		f=$(ls "$d/tree/vnpu/$version/$k"/*/module/vnpu.ko* 2>/dev/null | head -n1)
		if [ -z "$f" ]; then
			echo "$k: dkms build left no module"
			rc=1
		elif [ "$(modinfo -F vermagic "$f" | cut -d' ' -f1)" != "$k" ]; then
			echo "$k: module vermagic is '$(modinfo -F vermagic "$f")'"
			rc=1
		else
			echo "$k: built ${f#"$d"/tree/}"
			grep '^configure:' "$d/tree/vnpu/$version/$k"/*/log/make.log 2>/dev/null | sed 's/^/  /'
		fi
	done
	return $rc
}

t_deb_build() {
	preconditions
	tools/build-deb.sh "$debs"
}

deb_files() {
	local p
	for p in "${packages[@]}"; do
		ls "$debs/${p}_${version}_"*.deb 2>/dev/null || { echo "no $p .deb" >&2; return 1; }
	done
}

t_install() {
	preconditions
	local files leftover
	files=$(deb_files) || return 1
	leftover=$(installed_vnpu_packages)
	if [ -n "$leftover" ]; then
		if [ -e "$marker" ]; then
			echo "purging packages an interrupted earlier run left: $leftover"
			# shellcheck disable=SC2086
			apt-get purge "${apt_opts[@]}" $leftover >/dev/null || return 1
			rm -f "$marker"
		else
			skip "vnpu packages are installed ($leftover) and were not installed by this test"
		fi
	fi
	snapshot >"$work/before.list"
	touch "$marker"
	# shellcheck disable=SC2086
	apt-get install "${apt_opts[@]}" --no-install-recommends $files >"$work/install.log" 2>&1 ||
		{ cat "$work/install.log"; return 1; }
	grep -iE 'dkms|vnpu|Building|Installing|Signing' "$work/install.log" | head -n 30
	local k rc=0
	for k in $(kernels); do
		if dkms status -m vnpu -v "$version" -k "$k" | grep -q ': installed'; then
			ls /lib/modules/"$k"/updates/dkms/vnpu.ko*
		else
			echo "$k: vnpu not installed by DKMS: $(dkms status -m vnpu -k "$k")"
			rc=1
		fi
	done
	[ "$(pkg-config --modversion vnpurt)" = "$version" ] ||
		{ echo "pkg-config --modversion vnpurt: $(pkg-config --modversion vnpurt)"; rc=1; }
	man -w vnpu_init vnpu-smi vnpu libvnpurt || rc=1
	[ -f /lib/udev/rules.d/70-vnpu.rules ] || { echo "udev rule missing"; rc=1; }
	return $rc
}

t_example() {
	dpkg-query -W libvnpurt-dev >/dev/null 2>&1 || skip "libvnpurt-dev not installed"
	local flags
	flags=$(pkg-config --cflags --libs vnpurt) || return 1
	echo "pkg-config --cflags --libs vnpurt: $flags"
	# shellcheck disable=SC2086 # split on purpose
	gcc -std=c11 -Wall -Wextra -Werror examples/vnpu-devices.c $flags \
		-o "$work/vnpu-devices" || return 1
	if readelf -d "$work/vnpu-devices" | grep -qE 'RPATH|RUNPATH'; then
		echo "example has an rpath"
		return 1
	fi
	ldd "$work/vnpu-devices" | grep libvnpurt
	# The public headers, as installed, in C++ with only vnpurt's flags.
	# shellcheck disable=SC2046
	g++ -std=c++17 -Wall -Wextra -Werror $(pkg-config --cflags vnpurt) \
		selftests/packaging/uapi_cxx.cpp -o "$work/uapi_cxx" || return 1
	# Every example, with the examples' own Makefile; vm-installed.sh runs
	# them in the VM.
	make --no-print-directory -s -C examples OUT="$work/examples" \
		CFLAGS="-O2 -Wall -Wextra -Werror" || return 1
	echo "examples built: $(ls "$work/examples" | tr '\n' ' ')"
}

t_vm() {
	dpkg-query -W vnpu-dkms >/dev/null 2>&1 || skip "vnpu-dkms not installed"
	[ -x "$work/vnpu-devices" ] || { echo "no example program"; return 1; }
	local out=$top/build/packaging/vm rc
	tools/vm/run-vm.sh --plan selftests/packaging/installed.plan --out "$out" \
		>"$work/vm.log" 2>&1
	rc=$?
	grep -E '^\[installed/|run-vm:' "$work/vm.log" | sed 's/^\[installed\/installed\] //'
	[ "$rc" = 0 ] || { echo "run-vm failed ($rc): see $out/console.log"; tail -n 20 "$work/vm.log"; return 1; }
	grep -q '# Totals: pass:[1-9][0-9]* fail:0 ' "$out/installed/installed.log" ||
		{ echo "tests in the VM failed"; return 1; }
	grep -q '# Totals: pass:[0-9]* fail:0 ' "$out/vm-checks.log" ||
		{ echo "VM checks failed:"; cat "$out/vm-checks.log"; return 1; }
}

t_purge() {
	[ -e "$marker" ] || skip "nothing was installed"
	# shellcheck disable=SC2046
	apt-get purge "${apt_opts[@]}" $(installed_vnpu_packages) >"$work/purge.log" 2>&1 ||
		{ cat "$work/purge.log"; return 1; }
	rm -f "$marker"
	local rc=0 left
	snapshot >"$work/after.list"
	# Paths only in one of the lists. Whatever names vnpu or lies where the
	# packages and DKMS write is a leftover; anything else was changed by
	# something else running meanwhile (another apt-get on a shared
	# machine) and is only shown.
	diff "$work/before.list" "$work/after.list" | sed -n 's/^[<>] //p' >"$work/purge.diff"
	local ours='vnpu|^/(usr/)?lib/modules/|^/usr/src/|^/var/lib/dkms/|^/etc/(modprobe\.d|udev|modules-load\.d)/|^/usr/include/drm|^/(usr/)?lib/(udev|systemd)/'
	if grep -qE "$ours" "$work/purge.diff"; then
		echo "left behind or removed by the packages:"
		grep -E "$ours" "$work/purge.diff"
		rc=1
	fi
	if grep -vqE "$ours" "$work/purge.diff"; then
		echo "changed meanwhile, not by the vnpu packages (not counted):"
		grep -vE "$ours" "$work/purge.diff" | head -n 20
	fi
	left=$(installed_vnpu_packages)
	[ -z "$left" ] || { echo "still known to dpkg: $left"; rc=1; }
	if dkms status -m vnpu | grep -q .; then
		echo "DKMS still knows: $(dkms status -m vnpu)"
		rc=1
	fi
	left=$(find /lib/modules -name 'vnpu.ko*' 2>/dev/null)
	[ -z "$left" ] || { echo "module files left: $left"; rc=1; }
	[ "$rc" = 0 ] && echo "nothing left behind ($(wc -l <"$work/after.list") paths compared)"
	return $rc
}

rm -rf "$work"
mkdir -p "$work"
tap_begin
if exec 9>"$lock" && flock -w 1800 9; then
	:
else
	echo "# could not take $lock; running anyway"
fi
tap_run dkms-builds-module-for-every-kernel t_dkms_build
tap_run debian-packages-build-lintian-clean t_deb_build
tap_run packages-install-dkms-installs-module t_install
tap_run example-builds-against-installed-dev-package t_example
tap_run vm-runs-installed-module-and-programs t_vm
tap_run purge-leaves-nothing-behind t_purge
tap_end

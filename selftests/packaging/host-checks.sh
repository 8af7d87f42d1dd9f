#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: the fast packaging checks, run on the host by `make check`
# (as build/host/packaging-checks): the ABI list, the manual pages, the
# public headers in C and C++, `make install` into a DESTDIR with an example
# program built against it through pkg-config, and `make uninstall` leaving
# nothing behind. Needs a built tree (`make`). Prints kselftest TAP.
set -uo pipefail

top=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)
cd "$top" || exit 1
# shellcheck source=selftests/packaging/lib.sh
. selftests/packaging/lib.sh

work=$top/build/packaging/host
stage=$work/destdir
lib=build/lib/libvnpurt.so.1
mk() { make --no-print-directory -s "$@"; }
CC=${CC:-gcc}
CXX=${CXX:-g++}
multiarch=$($CC -print-multiarch 2>/dev/null)

t_abi() {
	tools/abi-check.sh check "$lib"
}

t_man() {
	local ko=()
	[ -f driver/vnpu.ko ] && ko=(--ko driver/vnpu.ko)
	local t tools=()
	for t in $(mk print-install-tools); do
		tools+=("build/bin/$t")
	done
	tools/man-check.sh "${ko[@]}" "${tools[@]}"
}

# The layout a distribution uses (PREFIX=/usr, multiarch LIBDIR).
t_install() {
	rm -rf "$stage"
	local module=()
	[ -f driver/vnpu.ko ] && module=(install-module)
	mk install-user "${module[@]}" DESTDIR="$stage" PREFIX=/usr \
		LIBDIR="/usr/lib/$multiarch" >"$work/install.log" 2>&1 ||
		{ cat "$work/install.log"; return 1; }
	local f missing=0
	for f in "usr/lib/$multiarch/libvnpurt.so.1" "usr/lib/$multiarch/libvnpurt.so" \
		"usr/lib/$multiarch/libvnpurt.a" "usr/lib/$multiarch/pkgconfig/vnpurt.pc" \
		usr/include/vnpu.h usr/include/vnpu/stream.h usr/include/vnpu/graph.h \
		usr/include/drm/vnpu_accel.h usr/bin/vnpu-smi \
		usr/bin/vnpu-trace usr/bin/vnpu-plan usr/bin/vnpu-pool usr/bin/vnpu-poold usr/bin/vnpu-run \
		usr/share/man/man1/vnpu-pool.1 usr/share/man/man1/vnpu-poold.1 usr/share/man/man1/vnpu-run.1 \
		etc/systemd/system/vnpu-poold.service etc/systemd/system/vnpu-poold.socket \
		usr/share/man/man1/vnpu-smi.1 \
		usr/share/man/man1/vnpu-trace.1 usr/share/man/man1/vnpu-plan.1 usr/share/man/man4/vnpu.4 \
		usr/share/man/man3/libvnpurt.3 usr/share/man/man3/vnpu_init.3 \
		etc/udev/rules.d/70-vnpu.rules; do
		[ -e "$stage/$f" ] || { echo "not installed: /$f"; missing=1; }
	done
	if [ ${#module[@]} -gt 0 ] && ! compgen -G "$stage/lib/modules/*/updates/driver/vnpu.ko*" >/dev/null; then
		echo "module not installed under /lib/modules/*/updates"
		missing=1
	fi
	[ "$(readlink "$stage/usr/lib/$multiarch/libvnpurt.so")" = libvnpurt.so.1 ] ||
		{ echo "libvnpurt.so does not point to libvnpurt.so.1"; missing=1; }
	(cd "$stage" && find . -type f -o -type l | sort | sed 's|^\.||')
	return $missing
}

# pkg-config on the staged tree: its vnpurt.pc first, the paths it gives
# moved into the stage. libdrm (Requires.private) comes from the system, so
# its -I moves into the stage too and finds nothing there: vnpu.h does not
# need it, and the uAPI tests add libdrm's own flags.
stage_pkg_config() {
	PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$stage/usr/lib/$multiarch/pkgconfig \
		pkg-config "$@"
}
uapi_cflags() {
	echo "-I$stage/usr/include $(pkg-config --cflags libdrm)"
}

t_pkg_config() {
	local v
	v=$(stage_pkg_config --modversion vnpurt) || return 1
	echo "vnpurt $v: $(stage_pkg_config --cflags --libs vnpurt)"
	[ "$v" = "$(sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog)" ] ||
		{ echo "version $v is not the one in debian/changelog"; return 1; }
	stage_pkg_config --static --libs vnpurt | grep -q -- '-ldrm' ||
		{ echo "--static --libs lacks libdrm"; return 1; }
}

t_example() {
	local out=$work/example flags
	mkdir -p "$out"
	flags=$(stage_pkg_config --cflags --libs vnpurt) || return 1
	# shellcheck disable=SC2086 # pkg-config output is split on purpose
	$CC -std=c11 -Wall -Wextra -Werror examples/vnpu-devices.c $flags -o "$out/vnpu-devices" ||
		return 1
	readelf -d "$out/vnpu-devices" | grep -q 'NEEDED.*\[libvnpurt\.so\.1\]' ||
		{ echo "example does not need libvnpurt.so.1"; return 1; }
	# Static: the archive and the private dependencies pkg-config names.
	# shellcheck disable=SC2046
	$CC -std=c11 -Wall -Werror examples/vnpu-devices.c $(stage_pkg_config --cflags vnpurt) \
		"$stage/usr/lib/$multiarch/libvnpurt.a" \
		$(stage_pkg_config --static --libs-only-l vnpurt | sed 's/-lvnpurt//') \
		-o "$out/vnpu-devices-static" || return 1
	# Every example, with the examples' own Makefile.
	PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$stage/usr/lib/$multiarch/pkgconfig \
		make --no-print-directory -s -C examples OUT="$out/all" CFLAGS="-O2 -Wall -Wextra -Werror" ||
		return 1
	echo "examples built: $(ls "$out/all" | tr '\n' ' ')"
	# No device on the host: the runtime must load and say so.
	local msg rc
	msg=$(LD_LIBRARY_PATH=$stage/usr/lib/$multiarch "$out/vnpu-devices" 2>&1)
	rc=$?
	echo "$msg"
	if [ $rc = 0 ] || echo "$msg" | grep -q 'VNPU_ERROR_NO_DEVICE'; then
		return 0
	fi
	return 1
}

t_installed_tool() {
	local smi=$stage/usr/bin/vnpu-smi
	if readelf -d "$smi" | grep -qE 'RPATH|RUNPATH'; then
		echo "installed vnpu-smi carries an rpath"
		return 1
	fi
	LD_LIBRARY_PATH=$stage/usr/lib/$multiarch "$smi" --help
}

# In the installed layout: <drm/vnpu_accel.h> finds drm.h through libdrm's
# flags (which `pkg-config --cflags vnpurt` includes on an installed system).
t_uapi_c() {
	local std extra cflags
	cflags=$(uapi_cflags) || return 1
	# -pedantic only from C11: libdrm's own drm_mode.h has anonymous unions.
	for std in c89 gnu89 c99 c11:-pedantic c17:-pedantic; do
		extra=''
		case $std in *:*) extra=${std#*:} std=${std%%:*} ;; esac
		# shellcheck disable=SC2086
		$CC -std=$std -Wall -Wextra -Werror $extra $cflags -c \
			selftests/packaging/uapi_c.c -o "$work/uapi_c.o" ||
			{ echo "fails in -std=$std $extra"; return 1; }
	done
	echo "compiles in c89, gnu89, c99, c11 and c17 (-pedantic)"
}

t_uapi_cxx() {
	local std cflags
	cflags=$(uapi_cflags) || return 1
	for std in c++11 c++17 c++20; do
		# shellcheck disable=SC2086
		$CXX -std=$std -Wall -Wextra -Werror -pedantic $cflags \
			selftests/packaging/uapi_cxx.cpp -o "$work/uapi_cxx" ||
			{ echo "fails in -std=$std"; return 1; }
	done
	echo "compiles in c++11, c++17, c++20"
	# Each per-area header of vnpu.h, alone, in C and C++.
	local h n=0
	for h in "$stage"/usr/include/vnpu/*.h; do
		h=vnpu/${h##*/}
		# shellcheck disable=SC2086
		printf '#include <%s>\n' "$h" | $CC -x c -std=c11 -Wall -Wextra -Werror -pedantic \
			$cflags -fsyntax-only - || { echo "$h alone fails in C"; return 1; }
		# shellcheck disable=SC2086
		printf '#include <%s>\n' "$h" | $CXX -x c++ -std=c++11 -Wall -Wextra -Werror \
			-pedantic $cflags -fsyntax-only - || { echo "$h alone fails in C++"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "no header installed in /usr/include/vnpu"; return 1; }
	echo "each of the $n headers of vnpu/ compiles alone in C11 and C++11"
}

t_dkms_tree() {
	local d=$work/dkms v
	v=$(sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog)
	rm -rf "$d"
	mk dkms-src DESTDIR="$d" DKMS_SRCDIR=/vnpu || return 1
	grep -qx "PACKAGE_VERSION=\"$v\"" "$d/vnpu/dkms.conf" ||
		{ echo "dkms.conf version is not $v"; return 1; }
	bash -n "$d/vnpu/dkms.conf" || return 1
	# Every object driver/Kbuild names has its source in the tree.
	local o bad=0
	for o in $(sed -n 's/\\$//; s/^[^#]*[-+:]=//p' driver/Kbuild | tr ' \t' '\n\n' | grep '\.o$'); do
		[ "$o" = vnpu.o ] && continue
		[ -f "$d/vnpu/driver/${o%.o}.c" ] || { echo "DKMS tree lacks driver/${o%.o}.c"; bad=1; }
	done
	[ -x "$d/vnpu/driver/configure" ] || { echo "driver/configure missing or not executable"; bad=1; }
	[ ! -e "$d/vnpu/driver/vnpu_kconfig.h" ] || { echo "generated vnpu_kconfig.h shipped"; bad=1; }
	find "$d/vnpu" -type f | sed "s|^$d/vnpu/||" | sort | tr '\n' ' '
	echo
	return $bad
}

t_uninstall() {
	mk uninstall DESTDIR="$stage" PREFIX=/usr LIBDIR="/usr/lib/$multiarch" \
		>"$work/uninstall.log" 2>&1 || { cat "$work/uninstall.log"; return 1; }
	local left
	left=$(cd "$stage" && find . ! -type d | sed 's|^\.||')
	if [ -n "$left" ]; then
		echo "left behind by make uninstall:"
		echo "$left"
		return 1
	fi
}

rm -rf "$work"
mkdir -p "$work"
tap_begin
if [ ! -f "$lib" ]; then
	echo "# $lib missing: run make first"
fi
tap_run abi-symbols-match-committed-list t_abi
tap_run man-pages-in-sync t_man
tap_run install-into-destdir t_install
tap_run pkg-config-file t_pkg_config
tap_run example-builds-and-runs-against-destdir t_example
tap_run installed-vnpu-smi-runs t_installed_tool
tap_run uapi-header-self-contained-c t_uapi_c
tap_run public-headers-compile-in-cxx t_uapi_cxx
tap_run dkms-source-tree t_dkms_tree
tap_run uninstall-leaves-nothing t_uninstall
tap_end

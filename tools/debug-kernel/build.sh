#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the debug-kernel tier: Debian's linux-source-6.12 with KASAN,
# lockdep, kmemleak, DEBUG_OBJECTS and fault injection (debug.config),
# cached outside the tree and keyed by the source and the fragment, so a
# rebuild happens only when either changes. Installs the image as
# /boot/vmlinuz-<release> and the modules under /lib/modules/<release>,
# where tools/vm/run-vm.sh --kernel <release> finds them, and prints the
# release on the last line.
#
# A 2-core machine needs about 40 minutes for the first build.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
source_tar=${LINUX_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
cache=${VNPU_DEBUG_KERNEL_CACHE:-/var/cache/vnpu/debug-kernel}
fragment=$here/debug.config
jobs=${JOBS:-$(nproc)}

[ -f "$source_tar" ] || { echo "debug-kernel: $source_tar missing (make deps)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "debug-kernel: installing the kernel needs root" >&2; exit 1; }

key=$(cat "$fragment" <(stat -c '%s %Y' "$source_tar") | sha256sum | cut -c1-12)
src=$cache/linux-$key
mkdir -p "$cache"

if [ -f "$src/.vnpu-built" ]; then
	release=$(cat "$src/.vnpu-built")
	if [ -f "/boot/vmlinuz-$release" ] && [ -d "/lib/modules/$release" ]; then
		echo "debug-kernel: cached build $release"
		echo "$release"
		exit 0
	fi
fi

if [ ! -f "$src/Makefile" ]; then
	echo "debug-kernel: extracting $source_tar"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$source_tar" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi

cd "$src"
make -s defconfig kvm_guest.config LOCALVERSION=-vnpudebug
scripts/kconfig/merge_config.sh -m .config "$fragment" >/dev/null
make -s olddefconfig LOCALVERSION=-vnpudebug
# Dependencies drop options silently; every wanted option must survive.
missing=0
while IFS= read -r opt; do
	case $opt in CONFIG_*) ;; *) continue ;; esac
	if ! grep -qx -- "$opt" .config; then
		echo "debug-kernel: $opt did not survive olddefconfig" >&2
		missing=1
	fi
done <"$fragment"
[ "$missing" = 0 ] || exit 1
grep -qx 'CONFIG_DRM_SCHED=m' .config || { echo "debug-kernel: no DRM_SCHED" >&2; exit 1; }

echo "debug-kernel: building with $jobs jobs (about 40 minutes on 2 cores)"
start=$(date +%s)
make -j"$jobs" LOCALVERSION=-vnpudebug bzImage modules >build.log 2>&1 || {
	tail -40 build.log >&2
	exit 1
}
release=$(make -s LOCALVERSION=-vnpudebug kernelrelease)
make -s LOCALVERSION=-vnpudebug INSTALL_MOD_STRIP=1 modules_install >/dev/null
install -m 0644 arch/x86/boot/bzImage "/boot/vmlinuz-$release"
echo "$release" >.vnpu-built
echo "debug-kernel: built $release in $(($(date +%s) - start)) s"
echo "$release"

#!/bin/bash
# Build the tiny busybox initramfs used by tools/vm/run-vm.sh.
#
#   tools/vm/mkinitramfs.sh OUT.cpio.gz [KVER]
#
# The image only has to get the guest as far as mounting the host root over
# virtio-9p; everything else runs from the host filesystem inside a chroot.
# It contains: static busybox, /init (tools/vm/init) and the 9p client modules
# of KVER, decompressed so that busybox insmod can load them.
#
# The image is rebuilt only when an input changes: a fingerprint of the
# inputs is stored next to it in OUT.cpio.gz.stamp.
set -euo pipefail
# modprobe lives in /sbin, which is not on every PATH.
export PATH="$PATH:/usr/sbin:/sbin"

usage() { echo "usage: $0 OUT.cpio.gz [KVER]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi

out=$1
kver=${2:-$(uname -r)}
here=$(cd "$(dirname "$0")" && pwd -P)
busybox=${BUSYBOX:-/bin/busybox}
# 9p alone does not pull in the virtio transport (it is requested at mount
# time), so ask for both; modprobe lists dependencies first.
want_mods="9pnet_virtio 9p"

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ -d "/lib/modules/$kver" ] || die "no /lib/modules/$kver"
[ -x "$busybox" ] || die "no busybox at $busybox (install busybox-static)"
# A dynamically linked busybox would need its libraries in the image too.
if command -v file >/dev/null &&
	LC_ALL=C file -L "$busybox" | grep -q 'dynamically linked'; then
	die "$busybox is dynamically linked (install busybox-static)"
fi
command -v cpio >/dev/null || die "cpio not found"

# Ordered, de-duplicated list of module files (dependencies first).
# Modules built into the kernel print "builtin ..." and need nothing.
deps=$(for m in $want_mods; do
	modprobe -S "$kver" --show-depends "$m" ||
		die "modprobe cannot resolve $m for $kver"
done)
mapfile -t mod_files < <(awk '$1 == "insmod" && !seen[$2]++ { print $2 }' <<<"$deps")
# A kernel with 9p built in (the debug-kernel tier) needs no module.
[ ${#mod_files[@]} -gt 0 ] || [ "$(grep -c '^builtin ' <<<"$deps")" = 2 ] ||
	die "no 9p modules found for $kver"

# Fingerprint of everything that ends up in the image.
stamp=$({
	echo "kver=$kver"
	sha256sum "$here/init" "$0" "$busybox"
	for f in "${mod_files[@]}"; do
		printf '%s ' "$f"; stat -c '%s %Y' "$f"
	done
} | sha256sum | cut -d' ' -f1)

if [ -s "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,host,hostroot,results,lib/modules}
cp "$busybox" "$stage/bin/busybox"
# Applet links are created by /init at boot (busybox --install), which keeps
# this script independent of the applet list.
install -m 0755 "$here/init" "$stage/init"

: > "$stage/lib/modules/load-order"
for f in "${mod_files[@]}"; do
	base=$(basename "$f")
	name=${base%%.ko*}.ko
	case $f in
	*.ko.xz)  xz -dc "$f" ;;
	*.ko.zst) zstd -dcq "$f" ;;
	*.ko.gz)  gzip -dc "$f" ;;
	*.ko)     cat "$f" ;;
	*) die "unknown module format: $f" ;;
	esac > "$stage/lib/modules/$name"
	echo "$name" >> "$stage/lib/modules/load-order"
done

mkdir -p "$(dirname "$out")"
tmp_out=$(mktemp "$out.XXXXXX")
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null --create --format=newc --owner=0:0 --quiet) |
	gzip -1 > "$tmp_out"
chmod 0644 "$tmp_out"
mv -f "$tmp_out" "$out"
echo "$stamp" > "$out.stamp"
echo "mkinitramfs: built $out for $kver (${#mod_files[@]} modules)" >&2

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the Debian packages (vnpu-dkms, libvnpurt1, libvnpurt-dev,
# vnpu-tools) with dpkg-buildpackage and checks them with lintian.
#
#   tools/build-deb.sh [--no-lintian] [OUTDIR]     (default build/deb)
#
# The package is built from a copy of the working tree's files (tracked and
# new, not ignored), so the checkout itself is never cleaned by
# debian/rules. The .deb files, .changes, .buildinfo and lintian.log end up
# in OUTDIR. lintian errors fail the build; warnings are shown.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
lintian=1
if [ "${1:-}" = --no-lintian ]; then
	lintian=0
	shift
fi
out=$(realpath -m "${1:-$top/build/deb}")
version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$top/debian/changelog")
[ -n "$version" ] || { echo "build-deb: no version in debian/changelog" >&2; exit 1; }
case $out/ in
"$top"/build/* | /tmp/* | /var/tmp/*) ;;
*) [ ! -e "$out" ] || { echo "build-deb: refusing to empty $out (not under build/ or /tmp)" >&2; exit 1; } ;;
esac

rm -rf "$out"
src=$out/src/vnpu-$version
mkdir -p "$src"
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | xargs -0 cp -a --parents -t "$src"
else
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf -
fi

cd "$src"
echo "build-deb: dpkg-buildpackage in $src"
dpkg-buildpackage --build=binary --no-sign -j"$(nproc)" >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed; full log in $out/build.log" >&2
	exit 1
}
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
ls -1 "$out"/*.deb

if [ "$lintian" = 1 ]; then
	echo "build-deb: lintian"
	rc=0
	lintian --fail-on error --display-info "$out"/*.changes >"$out/lintian.log" 2>&1 || rc=$?
	cat "$out/lintian.log"
	if [ "$rc" != 0 ]; then
		echo "build-deb: lintian reported errors" >&2
		exit 1
	fi
	echo "build-deb: lintian: no errors ($(grep -c '^W:' "$out/lintian.log" || true) warnings)"
fi

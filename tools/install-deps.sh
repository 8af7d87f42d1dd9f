#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Installs the Debian packages vnpu needs to build and test, if any are
# missing. Needs root for apt-get; otherwise says what to install.
set -euo pipefail

packages=(
	build-essential pkg-config kmod xz-utils
	linux-headers-6.12-amd64	# headers and the matching kernel image
	linux-source-6.12		# kselftest harness and checkpatch.pl
	libdrm-dev
	qemu-system-x86 busybox-static cpio
	tmux				# vnpu-smi top test
	# Packaging: DKMS, Debian packages, man pages, C++ header test
	dkms dh-dkms openssl debhelper dpkg-dev devscripts lintian fakeroot
	g++ python3 groff-base man-db
	# make debug-kernel: building linux-source-6.12
	flex bison bc libelf-dev libssl-dev
	# ONNX models: protobuf-c code generated from onnx.proto at build time,
	# the ONNX backend node tests, demo models generated with python3-onnx
	protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
	python3-onnx python3-numpy
	# standard networks exported by PyTorch (tools/onnx/export-torch.py)
	python3-torch python3-torchvision
	# make bench-compute: numpy's BLAS is OpenBLAS
	libopenblas0-pthread
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "vnpu: missing packages: ${missing[*]}" >&2
	echo "vnpu: run 'sudo make deps' or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "vnpu: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another install already running (a second make in another tree) is waited
# for, not failed on.
apt_opts=(-o DPkg::Lock::Timeout=900)
apt-get "${apt_opts[@]}" update -q
apt-get "${apt_opts[@]}" install -y -q --no-install-recommends "${missing[@]}"

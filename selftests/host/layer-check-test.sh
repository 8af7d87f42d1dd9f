#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: tools/layer-check.sh passes on libruntime/ as it is and fails
# on a copy in which a lower layer includes an upper layer's header, or
# which has a folder the layer table does not know. Run by `make check` as
# build/host/layer-check. Prints kselftest TAP.
set -uo pipefail

top=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)
cd "$top" || exit 1
# shellcheck source=selftests/packaging/lib.sh
. selftests/packaging/lib.sh

work=$(mktemp -d /tmp/vnpu-layer.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A fresh copy of libruntime/ in $work/libruntime.
fresh() {
	rm -rf "$work/libruntime"
	cp -r libruntime "$work/libruntime"
}

# Runs the check on the copy; passes if it fails naming "$1".
expect_fail() {
	local out
	if out=$(tools/layer-check.sh "$work/libruntime" 2>&1); then
		echo "passed: $out"
		return 1
	fi
	echo "$out"
	echo "$out" | grep -qF -- "$1"
}

t_tree() {
	tools/layer-check.sh
}

t_core_includes_mm() {
	fresh
	sed -i '0,/^#include "runtime.h"/s||&\n#include "mm/mm.h"|' "$work/libruntime/core/context.c"
	expect_fail 'core/context.c:'
}

t_relative_upward() {
	fresh
	sed -i '0,/^#include "runtime.h"/s||&\n#include "../graph/graph.h"|' "$work/libruntime/core/stream.c"
	expect_fail 'may not include graph/'
}

t_sibling_layers() {
	fresh
	sed -i '0,/^#include "core\/runtime.h"/s||&\n#include "multi/multi.h"|' "$work/libruntime/mm/pool.c"
	expect_fail 'mm/pool.c:'
}

t_unknown_folder() {
	fresh
	mkdir "$work/libruntime/extra"
	echo '#include "core/runtime.h"' >"$work/libruntime/extra/x.c"
	expect_fail 'libruntime/extra/'
}

tap_begin
tap_run libruntime-layers-hold t_tree
tap_run core-including-mm-fails t_core_includes_mm
tap_run relative-upward-include-fails t_relative_upward
tap_run mm-including-multi-fails t_sibling_layers
tap_run unknown-folder-fails t_unknown_folder
tap_end

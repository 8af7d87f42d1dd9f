#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-debug / make stress-debug: a VM plan on the debug-kernel tier
# (KASAN, lockdep, kmemleak, DEBUG_OBJECTS, fault injection).
#
#   tools/debug-kernel/check.sh [PLAN [NAME [GROUPS]]]
#
# Builds or reuses the cached kernel, builds the module against it, runs
# PLAN (default selftests/vm.plan; only its groups named in the
# space-separated GROUPS when given, in that order) plus a final kmemleak
# scan, with results in build/results/NAME (default vm-debug), then rebuilds
# the module for the distribution kernel. Fails on any test failure or any kernel report (the
# VM runner's gate).
set -uo pipefail
cd "$(dirname "$0")/../.."

base_plan=${1:-selftests/vm.plan}
name=${2:-vm-debug}
groups=${3:-}
[ -f "$base_plan" ] || { echo "check-debug: no plan $base_plan" >&2; exit 1; }
for g in $groups; do
	grep -q "^group $g\b" "$base_plan" || { echo "check-debug: no group $g in $base_plan" >&2; exit 1; }
done

release=$(tools/debug-kernel/build.sh | tail -n1) || exit 1
[ -d "/lib/modules/$release/build" ] || { echo "check-debug: no build tree for $release" >&2; exit 1; }

make --no-print-directory all KDIR="/lib/modules/$release/build" || exit 1

plan=build/$name.plan
out=build/results/$name
{
# A group runs from its line to the next group line. Named groups run in
# the order GROUPS gives them.
if [ -z "$groups" ]; then
	cat "$base_plan"
else
	for g in $groups; do
		awk -v want="$g" '$1 == "group" { keep = $2 == want } keep' "$base_plan"
		echo
	done
fi
cat <<'PLAN'

# kmemleak: scan twice (objects must age), then nothing may be reported.
group kmemleak --no-module
run scan sh -c 'echo scan >/sys/kernel/debug/kmemleak; sleep 6; echo scan >/sys/kernel/debug/kmemleak; n=$(grep -c "^unreferenced object" /sys/kernel/debug/kmemleak); cat /sys/kernel/debug/kmemleak | head -60; echo "TAP version 13"; echo "1..1"; if [ "$n" = 0 ]; then echo "ok 1 kmemleak reports nothing"; echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"; else echo "not ok 1 kmemleak reports $n objects"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1; fi'
PLAN
} >"$plan"

start=$(date +%s)
VNPU_TEST_TIMEOUT=${VNPU_TEST_TIMEOUT:-1500} \
	tools/vm/run-vm.sh --kernel "$release" --mem 3072 --plan "$plan" --out "$out"
vm_rc=$?
echo "check-debug: VM run took $(($(date +%s) - start)) s on $release"

# Back to the distribution kernel for everything else.
make --no-print-directory module >/dev/null

mapfile -t logs < <(find "$out" -mindepth 2 -name '*.log' | sort)
build/bin/vnpu-test-summary "${logs[@]}" "$out/vm-checks.log" "$out/vm-runner.log"
summary_rc=$?
[ "$vm_rc" = 0 ] && [ "$summary_rc" = 0 ]

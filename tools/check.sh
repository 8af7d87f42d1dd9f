#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs every vnpu test: the host-only unit tests, then the kselftests in the
# QEMU test VM against the real module. Ends with one line
# "N passed, N failed[, N skipped]" summed over every suite.
set -u
cd "$(dirname "$0")/.."

results=build/results
rm -rf "$results"
mkdir -p "$results/host"
start=$(date +%s)
logs=()

echo "== host unit tests (ASan/UBSan)"
# As the VM runner's vm-checks do for the guest: a program that exits
# non-zero without its "# Totals:" line (it crashed) counts as one failure;
# otherwise its own results count.
checks=$results/host-checks.log
n=0
checks_tap=()
for t in build/host/*; do
	name=$(basename "$t")
	log="$results/host/$name.log"
	"$t" >"$log" 2>&1
	rc=$?
	n=$((n + 1))
	if [ "$rc" = 0 ] || grep -q '# Totals: ' "$log"; then
		checks_tap+=("ok $n run host/$name")
	elif [ "$rc" = 4 ]; then	# KSFT_SKIP: the suite skipped itself
		checks_tap+=("ok $n run host/$name # SKIP")
	else
		checks_tap+=("not ok $n run host/$name exit code $rc, no results")
	fi
	sed 's/^/[host] /' "$log"
	logs+=("$log")
done
{
	echo "TAP version 13"
	echo "1..$n"
	printf '%s\n' "${checks_tap[@]}"
	ok=$(printf '%s\n' "${checks_tap[@]}" | grep -c '^ok ')
	skip=$(printf '%s\n' "${checks_tap[@]}" | grep -c '# SKIP$')
	echo "# Totals: pass:$((ok - skip)) fail:$((n - ok)) xfail:0 xpass:0 skip:$skip error:0"
} >"$checks"
sed 's/^/[host-checks] /' "$checks"
logs+=("$checks")

echo "== VM tests"
# The whole-run limit is derived from the plan; a stalled or stopped guest
# ends the run early (tools/vm/run-vm.sh).
tools/vm/run-vm.sh --plan selftests/vm.plan --out "$results/vm"
vm_rc=$?
# Every suite log the guest wrote, the guest's own checks (missing if the VM
# never got that far, which the summary then counts as a failure) and the
# host runner's: how the VM ended, and each command cut off or never run.
while IFS= read -r log; do
	logs+=("$log")
done < <(find "$results/vm" -mindepth 2 -name '*.log' 2>/dev/null | sort)
logs+=("$results/vm/vm-checks.log" "$results/vm/vm-runner.log")

echo "== done in $(($(date +%s) - start)) s ($(cut -d' ' -f1 "$results/vm/accel" 2>/dev/null || echo no VM)," \
	"boot-to-first-test $(cat "$results/vm/boot-to-first-test-seconds" 2>/dev/null || echo n/a) s)"
if [ "$vm_rc" != 0 ]; then
	echo "VM run failed: see $results/vm/console.log" >&2
fi
build/bin/vnpu-test-summary "${logs[@]}"
summary_rc=$?
[ "$vm_rc" = 0 ] && [ "$summary_rc" = 0 ]

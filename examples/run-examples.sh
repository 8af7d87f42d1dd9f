#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Runs every built example against the loaded driver and reports each as a
# kselftest result, so make check counts them.
set -u
dir=${1:-build/examples}
examples=(hello streams outage shared_stream)
pass=0 fail=0 n=0

echo "TAP version 13"
echo "1..${#examples[@]}"
for e in "${examples[@]}"; do
	n=$((n + 1))
	if "$dir/$e"; then
		pass=$((pass + 1))
		echo "ok $n example $e"
	else
		fail=$((fail + 1))
		echo "not ok $n example $e"
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The leak hunt of Documentation/troubleshooting.rst, run for real: each
# command is printed after "$ ", followed by what it printed. Runs as root
# in the test VM from the repository root (make troubleshooting-capture);
# the guide quotes this output.
set -u
export PATH=$PWD/build/bin:$PATH
leaky=build/examples/leaky
log=/tmp/log.txt

run() { # COMMAND: shows it, then runs it in this shell
	printf '$ %s\n' "$1"
	eval "$1"
}

echo "## 1. monitor"
run "$leaky 24 150 &"
sleep 0.3
run 'vnpu-smi --watch $! -i 0.4 -c 9'
wait

echo "## 2. log"
run "VNPU_LOG=debug $leaky 6 10 2>$log"
run "grep -E 'allocate|free|context' $log"
# Allocations never freed: the address of each allocate without a later free.
run "awk '/: allocate/ {live[\$7] = \$0} /: free/ {delete live[\$7]} END {for (a in live) print live[a]}' $log"

echo "## 3. minimize"
run "VNPU_LAUNCH_BLOCKING=1 VNPU_LOG=debug $leaky 3 0 2>&1"

echo "## 4. correlate"
run "VNPU_LEAK_REPORT=1 $leaky 24 10"
VNPU_LEAK_REPORT=1 $leaky 24 10 >/dev/null 2>/tmp/report.txt
site=$(grep -m1 'device allocation' /tmp/report.txt | grep -o 'leaky+0x[0-9a-f]*' | sed 's/leaky+//')
run "addr2line -f -i -p -e $leaky $site"
run "vnpu-smi error 203"
echo "# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The SIGKILL stress over many seeds (make stress): vnpu_kill_stress once
# per seed, each printing its own results.
#
#   selftests/vnpu_kill_seeds.sh FIRST COUNT [TEST]
#
# Seed k is 7919 * k + 1 for k = FIRST .. FIRST+COUNT-1, so any seed of a
# failing run can be run again alone (VNPU_KILL_SEED=...). TEST is the
# kselftest test name (default random_sigkills_leave_nothing); the stress's
# own environment (VNPU_KILL_SECONDS, VNPU_RACE_SECONDS, ...) passes through.
set -u
first=${1:?FIRST}
count=${2:?COUNT}
test=${3:-random_sigkills_leave_nothing}
here=$(dirname "$0")
bin=$here/../build/selftests/vnpu_kill_stress
rc=0
for k in $(seq "$first" $((first + count - 1))); do
	VNPU_KILL_SEED=$((7919 * k + 1)) "$bin" -t "$test" || rc=1
done
exit "$rc"

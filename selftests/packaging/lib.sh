# SPDX-License-Identifier: GPL-2.0-only
#
# TAP helpers of the packaging tests, in the kselftest format that
# tools/summary reads. Sourced, not run.
#
#   tap_begin
#   tap_run NAME FUNCTION [ARGS...]   one test: FUNCTION's output becomes
#                                     "# " comments; exit 0 passes, 4 skips
#                                     (kselftest's KSFT_SKIP), else fails
#   tap_end                           plan and "# Totals:" line; returns 1
#                                     if any test failed

tap_n=0 tap_pass=0 tap_fail=0 tap_skip=0

tap_begin() {
	echo "TAP version 13"
}

tap_run() {
	local name=$1 rc start
	shift
	start=$(date +%s)
	# A nested suite's totals line must not count twice in the summary.
	"$@" 2>&1 | sed -u -e 's/# Totals:/# (nested) totals:/' -e 's/^/# /'
	rc=${PIPESTATUS[0]}
	tap_n=$((tap_n + 1))
	case $rc in
	0)
		tap_pass=$((tap_pass + 1))
		echo "ok $tap_n $name # $(($(date +%s) - start)) s"
		;;
	4)
		tap_skip=$((tap_skip + 1))
		echo "ok $tap_n $name # SKIP"
		;;
	*)
		tap_fail=$((tap_fail + 1))
		echo "not ok $tap_n $name"
		;;
	esac
	return 0
}

tap_end() {
	echo "1..$tap_n"
	echo "# Totals: pass:$tap_pass fail:$tap_fail xfail:0 xpass:0 skip:$tap_skip error:0"
	[ "$tap_fail" = 0 ]
}

# Skip (exit 4) with a reason.
skip() {
	echo "SKIP: $*"
	exit 4
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: vnpu-run on the generated models (build/onnx): outputs match
# numpy's on one stream, on two streams and split across two devices,
# --output-dir writes TensorProto files that match too, the memory report
# has its four lines, int64 token ids are given to the run (an embedding)
# while an int64 input that is a shape becomes a constant given at load,
# --warmup runs untimed before the --repeat runs, a bad model or
# input is refused with status 1 and a bad count with status 2.
# kselftest TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
run=build/bin/vnpu-run
m=build/onnx
n=0 pass=0 fail=0
out=$(mktemp -d -p "${VNPU_OUT:-/tmp}")
trap 'rm -rf "$out"' EXIT

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); echo "not ok $n $2"
	fi
}
check() {	# LABEL MODEL ARGS...: runs and checks against the model's test data
	local label=$1 model=$2
	shift 2
	$run "$m/$model.onnx" --input "$m/$model/test_data_set_0/input_0.pb" \
		--check-outputs "$m/$model/test_data_set_0/output_0.pb" "$@" >"$out/log" 2>&1
	local rc=$?
	sed 's/^/# /' "$out/log"
	[ $rc = 0 ] && grep -q "matches" "$out/log"
	ok $? "$label"
}

echo "TAP version 13"
echo "1..15"
check mlp-one-stream mlp
check branches-two-streams branches --streams 2
check mlp-split-across-two-devices mlp --devices 2
check mlp-memory-report mlp --memory-report
rc=0
for w in static: dynamic: total: device:; do grep -q "^  $w" "$out/log" || rc=1; done
ok $rc memory-report-has-static-dynamic-total-device
$run $m/branches.onnx --input $m/branches/test_data_set_0/input_0.pb --output-dir "$out" \
	>/dev/null && [ -s "$out/output_0.pb" ] &&
	$run $m/branches.onnx --input $m/branches/test_data_set_0/input_0.pb \
	--check-outputs "$out/output_0.pb" >/dev/null
ok $? output-dir-writes-tensorproto-files
$run $m/bad/cycle.onnx --input $m/mlp/test_data_set_0/input_0.pb >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
[ $rc = 1 ] && grep -q "cycle" "$out/log"
ok $? bad-model-is-refused
$run $m/mlp.onnx --input $m/branches/test_data_set_0/output_0.pb >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
[ $rc = 1 ] && grep -q "shape" "$out/log"
ok $? input-of-the-wrong-shape-is-refused
$run $m/mlp.onnx --input $m/mlp/test_data_set_0/input_0.pb \
	--check-outputs $m/branches/test_data_set_0/output_0.pb >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
[ $rc = 1 ] && grep -q "MISMATCH" "$out/log"
ok $? wrong-expected-output-is-a-mismatch
# int64 token ids are given to the run: a Gather on the device.
check int64-ids-are-given-to-the-run embedding
! grep -q "given at load instead" "$out/log"
ok $? int64-ids-are-not-constants
# An int64 input that is a shape (Reshape's) is refused at run: given to
# the loader as a constant instead, saying so.
t=/usr/share/libonnx-testdata/data/node/test_reshape_reduced_dims
$run $t/model.onnx --input $t/test_data_set_0/input_0.pb --input $t/test_data_set_0/input_1.pb \
	--check-outputs $t/test_data_set_0/output_0.pb >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
[ $rc = 0 ] && grep -q "matches" "$out/log" &&
	grep -q "int64 inputs given at load instead.*must be a constant" "$out/log"
ok $? int64-shape-input-is-a-constant-of-the-graph
check mlp-warmup-then-timed-runs mlp --warmup 2 --repeat 3
grep -q "3 run(s) after 2 warm-up run(s): [0-9.]* ms per run" "$out/log"
ok $? warmup-runs-are-reported-apart-from-the-timed-ones
rc=0
for bad in "--warmup -1" "--warmup x" "--warmup 1000001" "--repeat 0" "--repeat 2x"; do
	# shellcheck disable=SC2086 # each case is an option and its value
	$run $m/mlp.onnx --input $m/mlp/test_data_set_0/input_0.pb $bad >"$out/log" 2>&1
	r=$?
	sed 's/^/# /' "$out/log"
	[ $r = 2 ] && grep -q "bad --" "$out/log" || rc=1
done
ok $rc bad-warmup-or-repeat-count-is-a-usage-error
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Description: standard networks exported by PyTorch (build/onnx-torch,
# tools/onnx/export-torch.py: five torchvision image networks, a
# transformer encoder over int64 token ids given at run, with dynamic
# batch and sequence axes, run at two sizes, a GRU and LSTM model) run
# through vnpu-run and match torch's own outputs within rtol 1e-3, atol
# 1e-5; resnet18 and the transformer in float16 too, against torch's fp32
# result of the fp16-rounded model (tolerances and their reasons in
# Documentation/onnx.rst), and quantised in ONNX's QDQ format (int8:
# the transformer at the fp32 tolerance, resnet18 within rtol 2e-2,
# atol 5e-2, since a rounding flip of one quantisation moves its logits); every fp32 network also as exported at
# operator set 17 (the others are at the exporter's default, 14); six
# other torchvision architectures (mobilenet_v3_small, densenet121,
# convnext_tiny, swin_t, the video network r3d_18 and the segmentation
# network lraspp_mobilenet_v3_large); each
# prints its memory report (static and
# dynamic memory, the arena beside its lower bound).
# kselftest TAP.
set -u
cd "$(dirname "$0")/.." || exit 1
run=build/bin/vnpu-run
m=build/onnx-torch
# MODEL or MODEL@SET (test_data_set_SET, default 0).
models="resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x0_5 efficientnet_b0 transformer
	transformer@1 recurrent resnet18_fp16 transformer_fp16 transformer_fp16@1 resnet18_int8
	transformer_int8 transformer_int8@1 resnet18_op17 mobilenet_v2_op17 squeezenet1_1_op17
	shufflenet_v2_x0_5_op17 efficientnet_b0_op17 transformer_op17 transformer_op17@1
	recurrent_op17 mobilenet_v3_small densenet121 convnext_tiny swin_t r3d_18
	lraspp_mobilenet_v3_large"
n=0 pass=0 fail=0
out=$(mktemp -d -p "${VNPU_OUT:-/tmp}")
trap 'rm -rf "$out"' EXIT

echo "TAP version 13"
echo "1..$(echo $models | wc -w)"
for entry in $models; do
	n=$((n + 1))
	model=${entry%@*} set=0
	[ "$entry" = "$model" ] || set=${entry#*@}
	extra=()
	tol=(--rtol 1e-3 --atol 1e-5)
	# The transformer's batch and sequence axes are symbolic: the loader
	# is given the sizes of the data set (2 x 16 or 3 x 10).
	case $entry in
	transformer*@1) extra=(--batch 3 --dim seq=10) ;;
	transformer*) extra=(--batch 2 --dim seq=16) ;;
	esac
	# fp16 storage: every operator's output is rounded to 11 bits.
	case $model in
	resnet18_fp16) tol=(--rtol 1e-2 --atol 1e-2) ;;
	transformer_fp16) tol=(--rtol 1e-2 --atol 2e-3) ;;
	# A sum one rounding apart can cross a QuantizeLinear boundary, and
	# one flipped step moves every logit: torch's own reference moves by
	# up to 0.024 between its CPU kernels (Documentation/onnx.rst).
	resnet18_int8) tol=(--rtol 2e-2 --atol 5e-2) ;;
	esac
	$run "$m/$model.onnx" --input "$m/$model/test_data_set_$set/input_0.pb" \
		--check-outputs "$m/$model/test_data_set_$set/output_0.pb" \
		"${tol[@]}" --memory-report "${extra[@]}" >"$out/log" 2>&1
	rc=$?
	sed 's/^/# /' "$out/log"
	# The transformer's token ids are int64 inputs given to the run
	# (Gather at indices read by the device), not constants at load.
	if grep -q "int64 inputs given at load instead" "$out/log"; then
		rc=1
	fi
	if [ $rc = 0 ] && grep -q "matches" "$out/log" && grep -q "^  dynamic:" "$out/log"; then
		pass=$((pass + 1)); echo "ok $n ${entry/@/-set}-matches-torch"
	else
		fail=$((fail + 1)); echo "not ok $n ${entry/@/-set}-matches-torch"
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]

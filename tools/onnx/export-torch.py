#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Exports standard PyTorch networks to ONNX with Debian's python3-torch and
# python3-torchvision, the way a user deploys them: torch.onnx.export in
# evaluation mode at the exporter's default operator set. No weights are
# downloaded: every parameter and batch-normalization statistic is drawn
# from torch.manual_seed(0), so the files are the same on every build.
# Torch's own outputs for a fixed input are the reference:
#
#   OUTDIR/NAME.onnx
#   OUTDIR/NAME/test_data_set_0/{input,output}_0.pb   (TensorProto files)
#
# Models (images are 1 x 3 x 64 x 64: each architecture ends in an adaptive
# average pool, so a small image runs the same operators as 224 x 224):
#
#   resnet18, mobilenet_v2, squeezenet1_1, shufflenet_v2_x0_5,
#   efficientnet_b0   torchvision, 1000 classes
#
# usage: export-torch.py OUTDIR [NAME...]
import os
import sys

import torch
import torchvision
from onnx import numpy_helper

IMAGE = (1, 3, 64, 64)


def randomize(model):
    """Deterministic, non-trivial weights and normalization statistics."""
    torch.manual_seed(0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def vision(name):
    def build():
        torch.manual_seed(0)
        return randomize(getattr(torchvision.models, name)(weights=None))
    return build


MODELS = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "shufflenet_v2_x0_5": vision("shufflenet_v2_x0_5"),
    "efficientnet_b0": vision("efficientnet_b0"),
}


def save_pb(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def export(out, name):
    model = MODELS[name]()
    torch.manual_seed(1)
    x = torch.rand(IMAGE)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"])
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    save_pb(os.path.join(d, "input_0.pb"), x.numpy(), "input")
    save_pb(os.path.join(d, "output_0.pb"), y.numpy(), "output")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export-torch.py OUTDIR [NAME...]")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name in sys.argv[2:] or MODELS:
        export(out, name)


if __name__ == "__main__":
    main()

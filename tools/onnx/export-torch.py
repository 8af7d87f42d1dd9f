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
#   transformer       torch.nn.TransformerEncoder: 2 layers, d_model 32,
#                     4 heads, GELU; a linear embedding of 8 input features
#                     per position, a learned positional add, mean over the
#                     sequence, a 5-class head; input 2 x 16 x 8, exported
#                     with a dynamic batch axis
#   recurrent         a GRU (8 -> 16 features) then a bidirectional LSTM
#                     (16 -> 2 x 16) over 12 steps of a batch of 2, a
#                     3-class head on the last step
#   resnet18_fp16, transformer_fp16
#                     the same networks in float16: the exported fp32 file
#                     converted by to_fp16() below (initializers, constants,
#                     casts, graph inputs and outputs to float16). torch
#                     cannot run half convolutions on the CPU, so the
#                     reference is torch's fp32 computation of the model
#                     whose weights and input are rounded to fp16, stored
#                     as float16 (Documentation/onnx.rst gives the
#                     tolerance and why)
#
# usage: export-torch.py OUTDIR [NAME...]
import os
import sys

import onnx
import torch
import torchvision
from onnx import TensorProto, numpy_helper

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


class Encoder(torch.nn.Module):
    """A small transformer encoder classifier."""

    def __init__(self, features=8, d=32, heads=4, layers=2, classes=5, seq=16):
        super().__init__()
        self.embed = torch.nn.Linear(features, d)
        self.pos = torch.nn.Parameter(0.1 * torch.randn(1, seq, d))
        layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=64,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, x):
        h = self.embed(x) + self.pos[:, :x.shape[1]]
        return self.head(self.encoder(h).mean(dim=1))


class Recurrent(torch.nn.Module):
    """A small recurrent classifier: GRU, then a bidirectional LSTM."""

    def __init__(self, features=8, hidden=16, classes=3):
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden)
        self.lstm = torch.nn.LSTM(hidden, hidden, bidirectional=True)
        self.head = torch.nn.Linear(2 * hidden, classes)

    def forward(self, x):
        h, _ = self.gru(x)
        h, _ = self.lstm(h)
        return self.head(h[-1])


def recurrent():
    torch.manual_seed(0)
    return Recurrent().eval()


def transformer():
    torch.manual_seed(0)
    return Encoder().eval()


MODELS = {
    "resnet18": vision("resnet18"),
    "mobilenet_v2": vision("mobilenet_v2"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "shufflenet_v2_x0_5": vision("shufflenet_v2_x0_5"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "transformer": transformer,
    "recurrent": recurrent,
}

# The float16 variants (of the models named before "_fp16").
FP16 = ["resnet18_fp16", "transformer_fp16"]

# Inputs of the models that do not take an image, and their dynamic axes.
INPUTS = {"transformer": (2, 16, 8), "recurrent": (12, 2, 8)}
DYNAMIC = {"transformer": {"input": {0: "batch"}, "output": {0: "batch"}}}


def to_fp16(model):
    """Converts an fp32 ONNX model to fp16 storage in place: every float
    initializer and Constant, every Cast to float, the graph's float
    inputs and outputs. Intermediate types are left to the loader."""
    g = model.graph

    def half(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype("float16"),
                                               t.name))

    for t in g.initializer:
        half(t)
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Constant" and a.name == "value":
                half(a.t)
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    return model


def save_pb(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def export(out, name):
    base = name[:-len("_fp16")] if name.endswith("_fp16") else name
    fp16 = base != name
    model = MODELS[base]()
    torch.manual_seed(1)
    x = torch.rand(INPUTS.get(base, IMAGE))
    if fp16:
        # The half model: weights and input rounded to fp16, computed in fp32.
        with torch.no_grad():
            for p in list(model.parameters()) + list(model.buffers()):
                if p.is_floating_point():
                    p.copy_(p.half().float())
        x = x.half().float()
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      dynamic_axes=DYNAMIC.get(base))
    if fp16:
        onnx.save(to_fp16(onnx.load(path)), path)
    with torch.no_grad():
        y = model(x)
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    dtype = "float16" if fp16 else "float32"
    save_pb(os.path.join(d, "input_0.pb"), x.numpy().astype(dtype), "input")
    save_pb(os.path.join(d, "output_0.pb"), y.numpy().astype(dtype), "output")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export-torch.py OUTDIR [NAME...]")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name in sys.argv[2:] or list(MODELS) + FP16:
        export(out, name)


if __name__ == "__main__":
    main()

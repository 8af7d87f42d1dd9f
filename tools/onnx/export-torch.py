#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Exports standard PyTorch networks to ONNX with Debian's python3-torch and
# python3-torchvision, the way a user deploys them: torch.onnx.export in
# evaluation mode at the exporter's default operator set (14), and at the
# highest it supports (17). No weights are
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
#                     4 heads, GELU; an nn.Embedding of int64 token ids
#                     (a vocabulary of 100), a learned positional add,
#                     mean over the sequence, a 5-class head; ids 2 x 16,
#                     exported with dynamic batch and sequence axes, and a
#                     second data set of 3 x 10
#   recurrent         a GRU (8 -> 16 features) then a bidirectional LSTM
#                     (16 -> 2 x 16) over 12 steps of a batch of 2, a
#                     3-class head on the last step
#   mobilenet_v3_small, densenet121, convnext_tiny, swin_t, r3d_18,
#   lraspp_mobilenet_v3_large
#                     other torchvision architectures (OTHERS below); r3d_18
#                     takes a clip of 1 x 3 x 4 x 32 x 32
#   resnet18_fp16, transformer_fp16
#                     the same networks in float16: the exported fp32 file
#                     converted by to_fp16() below (initializers, constants,
#                     casts, graph inputs and outputs to float16). torch
#                     cannot run half convolutions on the CPU, so the
#                     reference is torch's fp32 computation of the model
#                     whose weights and input are rounded to fp16, stored
#                     as float16 (Documentation/onnx.rst gives the
#                     tolerance and why)
#   NAME_op17         each fp32 model above exported at operator set 17, the
#                     highest torch 1.13 supports (the others are at its
#                     default, 14)
#   resnet18_int8, transformer_int8
#                     the same networks quantised in ONNX's QDQ format:
#                     QuantizeLinear/DequantizeLinear pairs on the input
#                     (uint8, per tensor) and the weights (int8, symmetric,
#                     per output channel) of every Conv and of every Linear
#                     called as a module (resnet18 with each batch norm
#                     folded into its Conv first), scales calibrated on the
#                     fixed input; exported from torch's fake-quantize
#                     operators, with torch's result of the same
#                     computation, in ONNX's rounding, as the reference
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


# Token ids of the transformer: 0 .. VOCAB - 1.
VOCAB = 100


class Encoder(torch.nn.Module):
    """A small transformer encoder classifier."""

    def __init__(self, vocab=VOCAB, d=32, heads=4, layers=2, classes=5, seq=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(0.1 * torch.randn(1, seq, d))
        layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=64,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, ids):
        h = self.embed(ids) + self.pos[:, :ids.shape[1]]
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

# The float16 and int8 variants (of the models named before the suffix).
FP16 = ["resnet18_fp16", "transformer_fp16", "resnet18_int8", "transformer_int8"]


def video(name):
    def build():
        torch.manual_seed(0)
        return randomize(getattr(torchvision.models.video, name)(weights=None))
    return build


class Segmentation(torch.nn.Module):
    """A torchvision segmentation network's "out" map as the one output."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def segmentation(name):
    def build():
        torch.manual_seed(0)
        net = getattr(torchvision.models.segmentation, name)(weights=None,
                                                              weights_backbone=None)
        return Segmentation(randomize(net)).eval()
    return build


# Other architectures, each for what it adds: hard-swish and squeeze-excite
# (mobilenet_v3_small), a Concat per dense layer (densenet121), channel-last
# LayerNorm and GELU (convnext_tiny), shifted-window attention with its
# masks and index tables (swin_t), 3-D convolutions over a clip of 4
# frames (r3d_18), a bilinear upsampling head (lraspp_mobilenet_v3_large).
OTHERS = {
    "mobilenet_v3_small": vision("mobilenet_v3_small"),
    "densenet121": vision("densenet121"),
    "convnext_tiny": vision("convnext_tiny"),
    "swin_t": vision("swin_t"),
    "r3d_18": video("r3d_18"),
    "lraspp_mobilenet_v3_large": segmentation("lraspp_mobilenet_v3_large"),
}

# Every fp32 model again at the highest operator set the exporter supports
# (torch 1.13: 17, where LayerNormalization is one node).
HIGHEST_OPSET = 17
OPSET17 = [name + "_op17" for name in MODELS]
MODELS.update(OTHERS)

# Inputs of the models that do not take an image, and their dynamic axes.
INPUTS = {"transformer": (2, 16), "recurrent": (12, 2, 8), "r3d_18": (1, 3, 4, 32, 32)}
# The models whose input is int64 token ids, not floats.
TOKENS = {"transformer"}
DYNAMIC = {"transformer": {"input": {0: "batch", 1: "seq"}, "output": {0: "batch"}}}
# test_data_set_1 of the models with dynamic axes: other batch and sequence sizes.
SECOND_INPUTS = {"transformer": (3, 10)}


def make_input(base, shape):
    """Token ids for the models that take them, else uniform [0, 1)."""
    if base in TOKENS:
        return torch.randint(0, VOCAB, shape, dtype=torch.int64)
    return torch.rand(shape)


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


def fold_batchnorms(model):
    """Folds each BatchNorm2d into the Conv2d just before it (torchvision's
    resnets name them convN/bnN and downsample[0]/[1])."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    for parent in list(model.modules()):
        kids = list(parent.named_children())
        for (cn, c), (bn, b) in zip(kids, kids[1:]):
            if isinstance(c, torch.nn.Conv2d) and isinstance(b, torch.nn.BatchNorm2d):
                setattr(parent, cn, fuse_conv_bn_eval(c, b))
                setattr(parent, bn, torch.nn.Identity())
    return model


class WeightQuant(torch.nn.Module):
    """int8 per-output-channel symmetric fake quantisation of a weight."""

    def __init__(self, w):
        super().__init__()
        amax = w.detach().abs().flatten(1).max(dim=1).values.clamp(min=1e-8)
        self.scale = amax / 127
        self.zero = torch.zeros_like(self.scale, dtype=torch.int32)

    def forward(self, w):
        if torch.onnx.is_in_onnx_export() or not QUANT_REF:
            return torch.fake_quantize_per_channel_affine(w, self.scale, self.zero, 0, -128, 127)
        return qdq(w, self.scale.view(-1, *([1] * (w.dim() - 1))), 0, -128, 127)


def qdq(x, scale, zero, lo, hi):
    """ONNX's QuantizeLinear then DequantizeLinear: x / scale rounded half
    to even, plus the zero point, saturated; back to float."""
    return (torch.clamp(torch.round(x / scale) + zero, lo, hi) - zero) * scale


# False while exporting (torch's fake-quantize operators become the QDQ
# pairs); True for the reference, computed in ONNX's rounding (torch's
# fake quantisation multiplies by 1 / scale, which can round differently).
QUANT_REF = False


def quantize(model, x):
    """Inserts fake quantisation at the input and the weight of every Conv2d
    and Linear module, calibrated on @x."""
    from torch.nn.utils import parametrize
    targets = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))
               and type(m) is not torch.nn.modules.linear.NonDynamicallyQuantizableLinear]
    ranges = {}

    def record(m, args):
        ranges[m] = (min(0.0, args[0].min().item()), max(0.0, args[0].max().item()))

    hooks = [m.register_forward_pre_hook(record) for m in targets]
    # With gradients on, torch's transformer layers call their Linear
    # modules (their no-grad fast path does not).
    with torch.enable_grad():
        model(x)
    for h in hooks:
        h.remove()
    for m in targets:
        lo, hi = ranges[m]
        scale = max(hi - lo, 1e-8) / 255
        zero = int(min(255, max(0, round(-lo / scale))))

        def fq(mod, args, scale=scale, zero=zero):
            if torch.onnx.is_in_onnx_export() or not QUANT_REF:
                return (torch.fake_quantize_per_tensor_affine(args[0], scale, zero, 0, 255),)
            return (qdq(args[0], scale, zero, 0, 255),)

        m.register_forward_pre_hook(fq)
        with torch.no_grad():
            parametrize.register_parametrization(m, "weight", WeightQuant(m.weight))
    return model


def fold_weight_quant(model):
    """Stores the quantised weights: each QuantizeLinear of an initializer
    becomes the int8 initializer it computes (x / scale rounded half to
    even in fp32, plus the zero point, saturated), as QDQ models ship."""
    import numpy as np
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    consts = {n.output[0]: n.attribute[0].t for n in g.node if n.op_type == "Constant"}
    for n in [n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] in inits]:
        w = numpy_helper.to_array(inits[n.input[0]])
        scale = numpy_helper.to_array(consts[n.input[1]])
        zero = numpy_helper.to_array(consts[n.input[2]])
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        shape = [1] * w.ndim
        if scale.ndim:
            shape[axis] = -1
        info = np.iinfo(zero.dtype)
        q = np.round(w / scale.reshape(shape)) + zero.reshape(shape).astype(np.float32)
        q = np.clip(q, info.min, info.max).astype(zero.dtype)
        g.initializer.append(numpy_helper.from_array(q, n.output[0]))
        g.node.remove(n)
    used = {i for n in g.node for i in n.input}
    for t in [t for t in g.initializer if t.name not in used]:
        g.initializer.remove(t)
    return model


def save_pb(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def export(out, name):
    global QUANT_REF
    base = name.rsplit("_", 1)[0] if name.endswith(("_fp16", "_int8", "_op17")) else name
    fp16 = name.endswith("_fp16")
    opset = HIGHEST_OPSET if name.endswith("_op17") else None
    model = MODELS[base]()
    torch.manual_seed(1)
    x = make_input(base, INPUTS.get(base, IMAGE))
    if name.endswith("_int8"):
        model = quantize(fold_batchnorms(model), x)
    if fp16:
        # The half model: weights and input rounded to fp16, computed in fp32.
        with torch.no_grad():
            for p in list(model.parameters()) + list(model.buffers()):
                if p.is_floating_point():
                    p.copy_(p.half().float())
        if x.is_floating_point():
            x = x.half().float()
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      dynamic_axes=DYNAMIC.get(base), opset_version=opset)
    if fp16:
        onnx.save(to_fp16(onnx.load(path)), path)
    if name.endswith("_int8"):
        onnx.save(fold_weight_quant(onnx.load(path)), path)
    # A model with dynamic axes gets a second data set at other sizes.
    sets = [x]
    if base in SECOND_INPUTS:
        x2 = make_input(base, SECOND_INPUTS[base])
        sets.append(x2.half().float() if fp16 and x2.is_floating_point() else x2)
    QUANT_REF = True
    for k, xin in enumerate(sets):
        with torch.set_grad_enabled(name.endswith("_int8")):
            y = model(xin).detach()
        d = os.path.join(out, name, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        dtype = "float16" if fp16 else "float32"
        save_pb(os.path.join(d, "input_0.pb"),
                xin.numpy() if base in TOKENS else xin.numpy().astype(dtype), "input")
        save_pb(os.path.join(d, "output_0.pb"), y.numpy().astype(dtype), "output")
    QUANT_REF = False


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: export-torch.py OUTDIR [NAME...]")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name in sys.argv[2:] or list(MODELS) + FP16 + OPSET17:
        export(out, name)


if __name__ == "__main__":
    main()

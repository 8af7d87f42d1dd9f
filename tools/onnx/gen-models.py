#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Generates the ONNX models of the demo, the benchmarks and the graph tests
# with python3-onnx, with deterministic weights (numpy seed), into OUTDIR:
#
#   mlp.onnx        64 -> 128 -> 64 -> 10 perceptron, Gemm/Relu/Softmax, batch 8
#   cnn.onnx        small CNN: Conv/Relu/MaxPool/Conv/Relu/GlobalAveragePool/
#                   Flatten/Gemm/Softmax on 1x12x12 images, batch 8
#   branches.onnx   two independent Gemm/Relu branches joined by Add (streams)
#   int_io.onnx     uint8 in, int32 out: MatMulInteger, Greater, Where
#   embedding.onnx, gather_elements_run.onnx, topk.onnx   int64 inputs at
#                   run: Gather and GatherElements at indices given at run,
#                   TopK's values and int64 indices
#   NAME/test_data_set_0/{input,output}_K.pb   inputs and numpy's outputs
#   NAME/weights/*.pb                          the weights, for CPU references
#   bad/*.onnx      malformed or unsupported models for the error tests
#
# usage: gen-models.py OUTDIR
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="vnpu-gen-models")
    m.ir_version = 7
    return m


def save(m, path, check=True):
    if check:
        onnx.checker.check_model(m)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def write_set(out, name, inputs, outputs, weights):
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    w = os.path.join(out, name, "weights")
    os.makedirs(w, exist_ok=True)
    for n, a in weights.items():
        with open(os.path.join(w, n + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def relu(x):
    return np.maximum(x, 0)


def mlp(out, rng, batch=8):
    sizes = [64, 128, 64, 10]
    w = {}
    nodes = []
    prev = "x"
    for i in range(3):
        w["W%d" % i] = (rng.standard_normal((sizes[i], sizes[i + 1])) /
                        np.sqrt(sizes[i])).astype(np.float32)
        w["b%d" % i] = (0.1 * rng.standard_normal(sizes[i + 1])).astype(np.float32)
        nodes.append(helper.make_node("Gemm", [prev, "W%d" % i, "b%d" % i], ["g%d" % i],
                                      name="fc%d" % i))
        if i < 2:
            nodes.append(helper.make_node("Relu", ["g%d" % i], ["r%d" % i], name="relu%d" % i))
            prev = "r%d" % i
    nodes.append(helper.make_node("Softmax", ["g2"], ["y"], name="softmax", axis=-1))
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "mlp.onnx"))
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    h = x
    for i in range(3):
        h = h @ w["W%d" % i] + w["b%d" % i]
        if i < 2:
            h = relu(h)
    write_set(out, "mlp", [("x", x)], [("y", softmax(h).astype(np.float32))], w)


def conv2d(x, w, b):
    n, c, hh, ww = x.shape
    k, _, r, s = w.shape
    y = np.zeros((n, k, hh - r + 1, ww - s + 1), np.float32)
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", x[:, :, i:i + hh - r + 1, j:j + ww - s + 1], w[:, :, i, j])
    return y + b[None, :, None, None]


def cnn(out, rng, batch=8):
    w = {
        "c1w": (rng.standard_normal((4, 1, 3, 3)) / 3).astype(np.float32),
        "c1b": (0.1 * rng.standard_normal(4)).astype(np.float32),
        "c2w": (rng.standard_normal((8, 4, 3, 3)) / 6).astype(np.float32),
        "c2b": (0.1 * rng.standard_normal(8)).astype(np.float32),
        "fcw": (rng.standard_normal((8, 10)) / 3).astype(np.float32),
        "fcb": (0.1 * rng.standard_normal(10)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], name="conv1", kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], name="conv2", kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["logits"], name="fc"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(nodes, "cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 1, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "cnn.onnx"))
    x = rng.standard_normal((batch, 1, 12, 12)).astype(np.float32)
    h = relu(conv2d(x, w["c1w"], w["c1b"]))
    h = h.reshape(batch, 4, 5, 2, 5, 2).max(axis=(3, 5))
    h = relu(conv2d(h, w["c2w"], w["c2b"]))
    h = h.mean(axis=(2, 3))
    y = softmax(h @ w["fcw"] + w["fcb"]).astype(np.float32)
    write_set(out, "cnn", [("x", x)], [("y", y)], w)


def branches(out, rng, batch=8):
    w = {n: (rng.standard_normal(s) / 8).astype(np.float32) for n, s in
         [("Wa", (64, 64)), ("Wb", (64, 64)), ("Wc", (64, 16)), ("ba", (64,)), ("bb", (64,))]}
    nodes = [
        helper.make_node("Gemm", ["x", "Wa", "ba"], ["a0"], name="branch_a"),
        helper.make_node("Relu", ["a0"], ["a1"], name="relu_a"),
        helper.make_node("Gemm", ["x", "Wb", "bb"], ["b0"], name="branch_b"),
        helper.make_node("Relu", ["b0"], ["b1"], name="relu_b"),
        helper.make_node("Add", ["a1", "b1"], ["s"], name="join"),
        helper.make_node("MatMul", ["s", "Wc"], ["y"], name="head"),
    ]
    g = helper.make_graph(nodes, "branches",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 16])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "branches.onnx"))
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = (relu(x @ w["Wa"] + w["ba"]) + relu(x @ w["Wb"] + w["bb"])) @ w["Wc"]
    write_set(out, "branches", [("x", x)], [("y", y.astype(np.float32))], w)


def weights_first(out, rng, batch=8):
    """A chain of four MatMuls whose weights are each transposed by a node
    listed first, as some exporters list weight processing: the loader runs
    each Transpose just before its MatMul, so one transposed weight at a
    time is alive, not four."""
    w = {"W%d" % i: (rng.standard_normal((64, 64)) / 8).astype(np.float32) for i in range(4)}
    nodes = [helper.make_node("Transpose", ["W%d" % i], ["Wt%d" % i], name="transpose%d" % i)
             for i in range(4)]
    prev = "x"
    for i in range(4):
        out_name = "y" if i == 3 else "h%d" % i
        nodes.append(helper.make_node("MatMul", [prev, "Wt%d" % i], [out_name], name="mm%d" % i))
        prev = out_name
    g = helper.make_graph(nodes, "weights_first",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 64])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "weights_first.onnx"))
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    h = x
    for i in range(4):
        h = h @ w["W%d" % i].T
    write_set(out, "weights_first", [("x", x)], [("y", h.astype(np.float32))], w)


def dynamic_axes(out):
    """y = Relu(x) with symbolic batch and sequence axes: sized at load."""
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dynamic_axes",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         ["batch", "seq", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                         ["batch", "seq", 4])])
    save(model(g), os.path.join(out, "dynamic_axes.onnx"))


def int_io(out, rng):
    """uint8 in, int32 out: MatMulInteger, Greater and Where on the device.

    Every intermediate is a multiple of 64 bytes: the planner's naive sum
    counts the tensors' bytes without the 64-byte alignment of the arena.
    """
    w = {"W": rng.randint(0, 256, (8, 16)).astype(np.uint8), "za": np.array(128, np.uint8),
         "zero": np.zeros(1, np.int32)}
    nodes = [
        helper.make_node("MatMulInteger", ["q", "W", "za"], ["mm"], name="mm"),
        helper.make_node("Greater", ["mm", "zero"], ["pos"], name="pos"),
        helper.make_node("Where", ["pos", "mm", "zero"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "int_io",
                          [helper.make_tensor_value_info("q", TensorProto.UINT8, [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [4, 16])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "int_io.onnx"))
    q = rng.randint(0, 256, (4, 8)).astype(np.uint8)
    mm = (q.astype(np.int32) - 128) @ w["W"].astype(np.int32)
    write_set(out, "int_io", [("q", q)], [("y", np.maximum(mm, 0).astype(np.int32))], w)


def int_large_k(out, rng):
    """MatMulInteger of 1024 terms whose int32 sums pass 2^24: exact only
    if the device sums integers exactly, not in fp32. Intermediates are
    multiples of 64 bytes, as in int_io."""
    w = {"W": rng.randint(200, 256, (1024, 16)).astype(np.uint8)}
    g = helper.make_graph([helper.make_node("MatMulInteger", ["q", "W"], ["y"], name="mm")],
                          "int_large_k",
                          [helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 16])],
                          [numpy_helper.from_array(a, n) for n, a in w.items()])
    save(model(g), os.path.join(out, "int_large_k.onnx"))
    q = rng.randint(200, 256, (2, 1024)).astype(np.uint8)
    y = q.astype(np.int64) @ w["W"].astype(np.int64)
    assert y.min() > 1 << 24
    write_set(out, "int_large_k", [("q", q)], [("y", y.astype(np.int32))], w)


def indices_at_run(out, rng):
    """Gather (an embedding of token ids, negative ones too) and
    GatherElements at int64 indices given at run; TopK (operator set 11,
    the smallest, ties and a constant k) with both outputs."""
    table = rng.randn(10, 4).astype(np.float32)
    g = helper.make_graph([helper.make_node("Gather", ["W", "ids"], ["y"], name="embed")],
                          "embedding",
                          [helper.make_tensor_value_info("ids", TensorProto.INT64, [3, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5, 4])],
                          [numpy_helper.from_array(table, "W")])
    save(model(g), os.path.join(out, "embedding.onnx"))
    ids = rng.randint(-10, 10, (3, 5)).astype(np.int64)
    write_set(out, "embedding", [("ids", ids)], [("y", table[ids])], {"W": table})

    data = rng.randn(3, 6).astype(np.float32)
    g = helper.make_graph([helper.make_node("GatherElements", ["D", "idx"], ["y"],
                                            name="gather_elements", axis=1)],
                          "gather_elements_run",
                          [helper.make_tensor_value_info("idx", TensorProto.INT64, [3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                          [numpy_helper.from_array(data, "D")])
    save(model(g), os.path.join(out, "gather_elements_run.onnx"))
    idx = rng.randint(-6, 6, (3, 4)).astype(np.int64)
    write_set(out, "gather_elements_run", [("idx", idx)],
              [("y", np.take_along_axis(data, np.where(idx < 0, idx + 6, idx), 1))], {"D": data})

    k = np.array([3], np.int64)
    g = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk",
                                            axis=1, largest=0)],
                          "topk",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 7])],
                          [helper.make_tensor_value_info("v", TensorProto.FLOAT, [4, 3]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, [4, 3])],
                          [numpy_helper.from_array(k, "k")])
    m = model(g)
    m.opset_import[0].version = 11
    save(m, os.path.join(out, "topk.onnx"))
    x = rng.randint(-3, 4, (4, 7)).astype(np.float32)
    i = np.argsort(x, axis=1, kind="stable")[:, :3]
    write_set(out, "topk", [("x", x)],
              [("v", np.take_along_axis(x, i, 1)), ("i", i.astype(np.int64))], {"k": k})


EINSUMS = [
    # name, equation, shape of the input x, shape of the weight w (or None)
    ("einsum_batch_matmul", "bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("einsum_implicit", "ij,jk", (3, 4), (4, 5)),
    ("einsum_inner", "i,i->", (7,), (7,)),
    ("einsum_outer", "i,j->ij", (3,), (4,)),
    ("einsum_transpose", "ijk->kji", (2, 3, 4), None),
    ("einsum_diagonal", "ii->i", (5, 5), None),
    ("einsum_trace", "ii", (5, 5), None),
    ("einsum_sum", "ij->j", (3, 6), None),
    ("einsum_attention", "bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("einsum_ellipsis", "...ij,...jk->...ik", (2, 3, 4, 5), (1, 5, 6)),
    ("einsum_ellipsis_implicit", "...ij,jk", (2, 3, 4), (4, 5)),
]


def einsums(out, rng):
    """One model per equation: x the input, w (when two operands) a weight."""
    for name, eq, xs, ws in EINSUMS:
        w = {} if ws is None else {"w": rng.standard_normal(ws).astype(np.float32)}
        x = rng.standard_normal(xs).astype(np.float32)
        y = np.einsum(eq, x, *w.values()).astype(np.float32)
        g = helper.make_graph([helper.make_node("Einsum", ["x"] + list(w), ["y"], name="einsum",
                                                equation=eq)], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             list(y.shape))],
                              [numpy_helper.from_array(a, n) for n, a in w.items()])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], w)


def pool3d_ref(x, k, st, pads, op, include_pad):
    """MaxPool or AveragePool over N x C x D x H x W, as ONNX defines them."""
    n, c = x.shape[:2]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + 3]) for i in range(3)],
                constant_values=np.nan)
    outs = [(x.shape[2 + i] + pads[i] + pads[i + 3] - k[i]) // st[i] + 1 for i in range(3)]
    y = np.zeros((n, c) + tuple(outs), np.float32)
    for od in range(outs[0]):
        for oh in range(outs[1]):
            for ow in range(outs[2]):
                win = xp[:, :, od * st[0]:od * st[0] + k[0], oh * st[1]:oh * st[1] + k[1],
                         ow * st[2]:ow * st[2] + k[2]].reshape(n, c, -1)
                if op == "MaxPool":
                    y[:, :, od, oh, ow] = np.nanmax(win, axis=2)
                elif include_pad:
                    y[:, :, od, oh, ow] = np.nansum(win, axis=2) / win.shape[2]
                else:
                    y[:, :, od, oh, ow] = np.nanmean(win, axis=2)
    return y


POOLS_3D = [
    # name, operator, kernel, strides, pads (begin d h w, end d h w), count_include_pad
    ("maxpool3d", "MaxPool", (2, 3, 3), (2, 1, 2), (1, 1, 0, 0, 1, 1), 0),
    ("avgpool3d", "AveragePool", (3, 2, 2), (1, 2, 2), (1, 0, 1, 1, 1, 0), 0),
    ("avgpool3d_include_pad", "AveragePool", (2, 2, 3), (1, 1, 1), (1, 1, 1, 0, 1, 1), 1),
]


def pools_3d(out, rng):
    for name, op, k, st, pads, inc in POOLS_3D:
        x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
        y = pool3d_ref(x, k, st, pads, op, inc)
        attrs = dict(kernel_shape=list(k), strides=list(st), pads=list(pads))
        if op == "AveragePool":
            attrs["count_include_pad"] = inc
        g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="pool", **attrs)], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             list(y.shape))])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], {})


def conv_ref(x, w, b, st, dil, pads, group, dtype=np.float32):
    """Conv over N x C x spatial..., as ONNX defines it (zero padding)."""
    sp = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] +
                [(pads[i], pads[i + sp]) for i in range(sp)])
    k = w.shape[2:]
    span = [(k[i] - 1) * dil[i] + 1 for i in range(sp)]
    outs = [(xp.shape[2 + i] - span[i]) // st[i] + 1 for i in range(sp)]
    cg, kg = x.shape[1] // group, w.shape[0] // group
    y = np.zeros((x.shape[0], w.shape[0]) + tuple(outs))
    for pos in np.ndindex(*outs):
        win = xp[(slice(None), slice(None)) +
                 tuple(slice(pos[i] * st[i], pos[i] * st[i] + span[i], dil[i])
                       for i in range(sp))]
        for g in range(group):
            y[(slice(None), slice(g * kg, (g + 1) * kg)) + pos] = np.tensordot(
                win[:, g * cg:(g + 1) * cg], w[g * kg:(g + 1) * kg],
                axes=(list(range(1, sp + 2)), list(range(1, sp + 2))))
    if b is not None:
        y += b.reshape((1, -1) + (1,) * sp)
    return y.astype(dtype)


def conv_transpose_ref(x, w, b, st, dil, pads, outpad, group, out_shape=None):
    """ConvTranspose over N x C x spatial..., as ONNX defines it."""
    sp = x.ndim - 2
    ins, k = x.shape[2:], w.shape[2:]
    full = [st[i] * (ins[i] - 1) + outpad[i] + (k[i] - 1) * dil[i] + 1 for i in range(sp)]
    if out_shape is not None:
        # The total padding split with the larger half at the beginning (NOTSET).
        tot = [full[i] - out_shape[i] for i in range(sp)]
        pb = [tot[i] - tot[i] // 2 for i in range(sp)]
        outs = list(out_shape)
    else:
        pb = list(pads[:sp])
        outs = [full[i] - pads[i] - pads[i + sp] for i in range(sp)]
    cg, og = x.shape[1] // group, w.shape[1]
    lo = [min(0, pb[i]) for i in range(sp)]
    ext = [max(full[i], pb[i] + outs[i]) - lo[i] for i in range(sp)]
    z = np.zeros((x.shape[0], og * group) + tuple(ext))
    for ipos in np.ndindex(*ins):
        for kpos in np.ndindex(*k):
            o = tuple(ipos[i] * st[i] + kpos[i] * dil[i] - lo[i] for i in range(sp))
            for g in range(group):
                z[(slice(None), slice(g * og, (g + 1) * og)) + o] += (
                    x[(slice(None), slice(g * cg, (g + 1) * cg)) + ipos].astype(np.float64) @
                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + kpos])
    y = z[(slice(None), slice(None)) +
          tuple(slice(pb[i] - lo[i], pb[i] - lo[i] + outs[i]) for i in range(sp))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * sp)
    return y.astype(np.float32)


CONVS_3D = [
    # name, operator, x, w, bias, attributes
    ("conv3d", "Conv", (2, 4, 5, 6, 7), (6, 2, 2, 3, 2), True,
     dict(group=2, strides=[2, 1, 2], dilations=[1, 2, 1], pads=[1, 0, 1, 0, 2, 1])),
    # Depth padding past a whole kernel depth: column rows of zeros.
    ("conv3d_depth_pads", "Conv", (1, 3, 3, 5, 5), (4, 3, 3, 3, 3), False,
     dict(strides=[1, 2, 2], dilations=[2, 1, 1], pads=[2, 1, 1, 2, 1, 1])),
    ("conv3d_depthwise_same", "Conv", (1, 3, 4, 5, 6), (3, 1, 3, 3, 3), True,
     dict(group=3, strides=[2, 2, 1], auto_pad="SAME_UPPER")),
    ("convtranspose3d", "ConvTranspose", (1, 4, 3, 4, 3), (4, 3, 3, 2, 3), True,
     dict(group=2, strides=[2, 1, 2], dilations=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1],
          output_padding=[1, 0, 1])),
    ("convtranspose3d_output_shape", "ConvTranspose", (2, 2, 3, 3, 2), (2, 3, 2, 3, 3), False,
     dict(strides=[2, 2, 3], output_shape=[7, 6, 5])),
]


def convs_3d(out, rng):
    for name, op, xs, ws, has_b, attrs in CONVS_3D:
        x = rng.standard_normal(xs).astype(np.float32)
        w = {"w": rng.standard_normal(ws).astype(np.float32)}
        oc = ws[0] if op == "Conv" else ws[1] * attrs.get("group", 1)
        if has_b:
            w["b"] = rng.standard_normal(oc).astype(np.float32)
        b = w.get("b")
        st = attrs.get("strides", [1] * 3)
        dil = attrs.get("dilations", [1] * 3)
        if op == "Conv":
            pads = attrs.get("pads", [0] * 6)
            if attrs.get("auto_pad") == "SAME_UPPER":
                tot = [max(0, (-(-xs[2 + i] // st[i]) - 1) * st[i] +
                           (ws[2 + i] - 1) * dil[i] + 1 - xs[2 + i]) for i in range(3)]
                pads = [t // 2 for t in tot] + [t - t // 2 for t in tot]
            y = conv_ref(x, w["w"], b, st, dil, pads, attrs.get("group", 1))
        else:
            y = conv_transpose_ref(x, w["w"], b, st, dil, attrs.get("pads", [0] * 6),
                                   attrs.get("output_padding", [0] * 3), attrs.get("group", 1),
                                   attrs.get("output_shape"))
        nodes = [helper.make_node(op, ["x"] + list(w), ["y"], name="conv", **attrs)]
        if name == "conv3d_depth_pads":
            # The columns where a larger tensor of non-zero values was: the
            # zero rows must be written, not found in fresh memory.
            w["big_shape"] = np.array((13,) + xs[1:], np.int64)
            nodes = [helper.make_node("Expand", ["x", "big_shape"], ["big"], name="expand"),
                     helper.make_node("ReduceMean", ["big"], ["xm"], name="mean", axes=[0]),
                     helper.make_node(op, ["xm", "w"], ["y"], name="conv", **attrs)]
        g = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             list(y.shape))],
                              [numpy_helper.from_array(a, n) for n, a in w.items()])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], w)


def requantize(acc, mul, yz, ytype):
    """round(acc * mul) + y_zero_point, saturated: the multiplier and the
    product in float32, as the device computes them, ties to even."""
    info = np.iinfo(ytype)
    q = np.rint(acc.astype(np.float32) * mul.astype(np.float32)).astype(np.int64) + int(yz)
    return np.clip(q, info.min, info.max).astype(ytype)


def int_conv(x, xz, w, wz, **attrs):
    """ConvInteger's sums, exactly: w's zero point per output channel."""
    wc = w.astype(np.int64) - wz.astype(np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    sp = x.ndim - 2
    y = conv_ref(x.astype(np.float64) - int(xz), wc.astype(np.float64), None,
                 attrs.get("strides", [1] * sp), attrs.get("dilations", [1] * sp),
                 attrs.get("pads", [0] * 2 * sp), attrs.get("group", 1), np.float64)
    return np.rint(y).astype(np.int64)


def quant_per_axis(out, rng):
    """QLinearConv with its bias and per-channel weights, ConvInteger in 3-D
    with per-channel zero points, MatMulInteger per row and column, and
    QLinearMatMul with per-row and per-column scales, against numpy. The
    intermediates are multiples of 64 bytes, as in int_io."""
    u8 = lambda lo, hi, s: rng.randint(lo, hi, s).astype(np.uint8)
    i8 = lambda lo, hi, s: rng.randint(lo, hi, s).astype(np.int8)
    f32 = lambda *v: np.array(v, np.float32)
    models = []
    # QLinearConv: x uint8, w int8 per output channel, an int32 bias (past
    # 2^24 on channel 0, which saturates).
    x = u8(0, 256, (1, 4, 8, 8))
    w = {"xs": f32(0.02), "xz": np.array(120, np.uint8), "w": i8(-128, 128, (4, 4, 2, 2)),
         "ws": f32(0.01, 0.02, 0.005, 0.03), "wz": np.array([0, 3, -5, 1], np.int8),
         "ys": f32(0.1), "yz": np.array(128, np.uint8),
         "b": np.array([1 << 25, -3000, 12345, -999], np.int32)}
    attrs = dict(pads=[1, 0, 0, 1], strides=[2, 1])
    acc = int_conv(x, w["xz"], w["w"], w["wz"], **attrs) + w["b"].reshape(1, -1, 1, 1)
    mul = (w["xs"] * w["ws"]) / w["ys"]
    y = requantize(acc, mul.reshape(1, -1, 1, 1), w["yz"], np.uint8)
    models.append(("qlinearconv_bias_per_channel", "QLinearConv",
                   ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], x, w, y, attrs))
    # ConvInteger 3-D, w's zero points per output channel, depth padding.
    x = u8(0, 256, (1, 2, 4, 4, 4))
    w = {"xz": np.array(100, np.uint8), "w": u8(0, 256, (4, 2, 2, 2, 2)),
         "wz": np.array([128, 0, 255, 7], np.uint8)}
    attrs = dict(pads=[2, 1, 1, 1, 0, 0], dilations=[2, 1, 1])
    y = int_conv(x, w["xz"], w["w"], w["wz"], **attrs).astype(np.int32)
    models.append(("convinteger3d_per_channel", "ConvInteger", ["x", "w", "xz", "wz"], x, w,
                   y, attrs))
    # MatMulInteger: A's zero point per row ([D1, M, 1]), B's per column.
    x = u8(0, 256, (2, 3, 16))
    w = {"b": u8(0, 256, (16, 4)), "az": u8(0, 256, (2, 3, 1)), "bz": u8(0, 256, (4,))}
    y = ((x.astype(np.int64) - w["az"]) @ (w["b"].astype(np.int64) - w["bz"])).astype(np.int32)
    models.append(("matmulinteger_per_row_column", "MatMulInteger", ["x", "b", "az", "bz"], x,
                   w, y, {}))
    # QLinearMatMul: a's scale and zero point per row, b's per column.
    x = u8(0, 256, (4, 16))
    w = {"as": f32(0.01, 0.02, 0.03, 0.015), "az": u8(100, 150, (4,)),
         "b": i8(-128, 128, (16, 16)), "bs": (0.001 + 0.01 * rng.rand(16)).astype(np.float32),
         "bz": i8(-3, 4, (16,)), "ys": f32(0.5), "yz": np.array(-3, np.int8)}
    acc = (x.astype(np.int64) - w["az"].reshape(-1, 1)) @ (w["b"].astype(np.int64) - w["bz"])
    mul = (w["as"].reshape(-1, 1) * w["bs"].reshape(1, -1)) / w["ys"]
    y = requantize(acc, mul, w["yz"], np.int8)
    models.append(("qlinearmatmul_per_row_column", "QLinearMatMul",
                   ["x", "as", "az", "b", "bs", "bz", "ys", "yz"], x, w, y, {}))
    for name, op, inputs, x, w, y, attrs in models:
        g = helper.make_graph([helper.make_node(op, inputs, ["y"], name="q", **attrs)], name,
                              [helper.make_tensor_value_info(
                                  "x", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype], list(x.shape))],
                              [helper.make_tensor_value_info(
                                  "y", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[y.dtype], list(y.shape))],
                              [numpy_helper.from_array(a, n) for n, a in w.items()])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], w)


def resize_1d_ref(data, scale, n_out, cubic, a=-0.75):
    """One axis of Resize (half_pixel, exclude_outside 0) as the
    definition's reference interpolates: the taps nearest to the input
    coordinate over the input padded with its edge values."""
    taps = 4 if cubic else 2
    pad = taps // 2
    padded = np.concatenate([np.repeat(data[:1], pad), data, np.repeat(data[-1:], pad)])
    out = np.zeros(n_out)
    for x in range(n_out):
        o = (x + 0.5) / scale - 0.5
        r = 1.0 if o == np.floor(o) else o - np.floor(o)
        if cubic:
            s = 1 - r
            c = [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                 ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                 ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a]
        else:
            c = [1 - r, r]
        xp = o + pad
        idx = sorted(sorted(range(len(padded)), key=lambda i: (abs(xp - i), i))[:taps])
        out[x] = np.dot(c, padded[idx])
    return out


def resize_ref(x, sizes, cubic):
    """Resize to @sizes, the last axis first, in float64."""
    y = x.astype(np.float64)
    for d in reversed(range(x.ndim)):
        if sizes[d] != y.shape[d]:
            y = np.apply_along_axis(resize_1d_ref, d, y, sizes[d] / x.shape[d], sizes[d], cubic)
    return y


def range_and_resize(out, rng):
    """Range of constant float32 and int32 scalars (numpy.arange, the
    definition's reference) into an elementwise node, and linear and cubic
    Resize of float16 (computed in fp32, rounded once) against numpy."""
    models = []
    # float32: numpy's sequence given as x, compared bit for bit (Equal);
    # start + i * delta in float32 differs from it at 6 of 10, in double at 7.
    st, lim, dl = np.float32(1.3), np.float32(7.9), np.float32(0.7)
    x = np.arange(st, lim, dl, dtype=np.float32)
    models.append(("range_float", [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
                                   helper.make_node("Equal", ["x", "r"], ["y"], name="equal")],
                   x, {"s": st, "l": lim, "d": dl}, np.ones(x.shape, np.bool_)))
    st, lim, dl = np.int32(10), np.int32(-7), np.int32(-3)
    r = np.arange(st, lim, dl, dtype=np.int32)
    x = rng.randint(-8, 12, r.shape).astype(np.int32)
    models.append(("range_int32", [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range"),
                                   helper.make_node("Max", ["x", "r"], ["y"], name="max")],
                   x, {"s": st, "l": lim, "d": dl}, np.maximum(x, r)))
    # Intermediates of multiples of 64 bytes, as in int_io.
    for mode, sizes in (("linear", (1, 2, 6, 16)), ("cubic", (1, 2, 2, 24))):
        x = rng.standard_normal((1, 2, 4, 8)).astype(np.float16)
        y = resize_ref(x, sizes, mode == "cubic").astype(np.float32).astype(np.float16)
        node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize",
                                mode=mode)
        models.append(("resize_%s_fp16" % mode, [node], x,
                       {"sizes": np.array(sizes, np.int64)}, y))
    for name, nodes, x, w, y in models:
        g = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(
                                  "x", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype], list(x.shape))],
                              [helper.make_tensor_value_info(
                                  "y", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[y.dtype], list(y.shape))],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in w.items()])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], {n: np.asarray(a) for n, a in w.items()})


def bad(out):
    d = os.path.join(out, "bad")
    os.makedirs(d, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w4 = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    # t1 = x + t2, t2 = relu(t1): a cycle.
    g = helper.make_graph([helper.make_node("Add", ["x", "t2"], ["t1"], name="add_in_cycle"),
                           helper.make_node("Relu", ["t1"], ["t2"], name="relu_in_cycle"),
                           helper.make_node("Identity", ["t2"], ["y"], name="out")],
                          "cycle", [x], [y])
    save(model(g), os.path.join(d, "cycle.onnx"), check=False)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="needs_w")],
                          "missing_initializer", [x], [y])
    save(model(g), os.path.join(d, "missing_initializer.onnx"), check=False)
    w3 = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mismatch")],
                          "shape_mismatch", [x], [y], [w3])
    save(model(g), os.path.join(d, "shape_mismatch.onnx"), check=False)
    g = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det")],
                          "unsupported_op", [x], [y])
    save(model(g), os.path.join(d, "unsupported_op.onnx"))
    # Add from operator set 6: no numpy broadcasting yet, not what the device runs.
    g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="old_add")],
                          "old_opset", [x], [y])
    m = model(g)
    m.opset_import[0].version = 6
    save(m, os.path.join(d, "old_opset.onnx"), check=False)
    # Reshape to a shape given as an int64 graph input: valid, but the shape
    # must be given at load (vnpu_graph_options.constants).
    xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    shp = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                          "shape_input", [xs, shp], [ys])
    save(model(g), os.path.join(d, "shape_input.onnx"))
    # Pad by wrapping around (operator set 19's mode): constant, reflect
    # and edge are supported.
    pads = numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads")
    yp = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])
    g = helper.make_graph([helper.make_node("Pad", ["x", "pads"], ["y"], name="wrap_pad",
                                            mode="wrap")],
                          "unsupported_attribute", [x], [yp], [pads])
    save(model(g), os.path.join(d, "unsupported_attribute.onnx"))
    bad_operators(d, x)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="ok")],
                          "small", [x], [y], [w4])
    good = model(g).SerializeToString()
    save(model(g), os.path.join(d, "small.onnx"))
    with open(os.path.join(d, "truncated.onnx"), "wb") as f:
        f.write(good[:len(good) // 2])
    with open(os.path.join(d, "corrupt.onnx"), "wb") as f:
        f.write(bytes([0xff] * 64) + good[64:])


def variadic(out, rng):
    """DenseNet-sized variadic nodes: a Sum of 20 inputs, a Concat of 41."""
    x = rng.standard_normal((2, 3)).astype(np.float32)
    parts = [x * (i + 1) for i in range(40)]
    nodes = [helper.make_node("Mul", ["x", "k%d" % i], ["p%d" % i]) for i in range(40)]
    nodes.append(helper.make_node("Sum", ["p%d" % i for i in range(20)], ["z"]))
    nodes.append(helper.make_node("Concat", ["p%d" % i for i in range(40)] + ["z"], ["y"],
                                  axis=1))
    inits = [numpy_helper.from_array(np.array(i + 1, np.float32), "k%d" % i) for i in range(40)]
    y = np.concatenate(parts + [sum(parts[:20])], axis=1)
    g = helper.make_graph(nodes, "variadic",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 123])],
                          inits)
    save(model(g), os.path.join(out, "variadic.onnx"))
    write_set(out, "variadic", [("x", x)], [("y", y)], {})


def pads(out, rng):
    """Pad in reflect and edge modes over three axes, against numpy.pad."""
    x = rng.standard_normal((2, 5, 6)).astype(np.float32)
    for mode, p in (("reflect", [0, 2, 3, 1, 4, 1]), ("edge", [1, 0, 2, 2, 3, 5])):
        name = "pad_" + mode
        y = np.pad(x, list(zip(p[:3], p[3:])), mode=mode)
        g = helper.make_graph([helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             list(y.shape))],
                              [numpy_helper.from_array(np.array(p, np.int64), "p")])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], {})


def cumsums(out, rng):
    """CumSum against numpy: float along an inner axis, exclusive and
    reverse along the last, and int32 position ids from a 0/1 mask."""
    cases = (("cumsum", np.float32, (3, 5, 4), 1, 0, 0),
             ("cumsum_exclusive_reverse", np.float32, (3, 5, 4), -1, 1, 1),
             ("cumsum_int", np.int32, (2, 9), 1, 0, 0))
    for name, dt, shape, axis, excl, rev in cases:
        if dt == np.int32:
            x = (rng.rand(*shape) > 0.3).astype(np.int32) * 4000000
        else:
            x = rng.standard_normal(shape).astype(np.float32)
        v = np.flip(x, axis) if rev else x
        y = np.cumsum(v, axis=axis, dtype=np.float64 if dt != np.int32 else np.int64)
        if excl:
            y = y - v
        y = (np.flip(y, axis) if rev else y).astype(dt)
        t = TensorProto.INT32 if dt == np.int32 else TensorProto.FLOAT
        g = helper.make_graph([helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=excl,
                                                reverse=rev)], name,
                              [helper.make_tensor_value_info("x", t, list(shape))],
                              [helper.make_tensor_value_info("y", t, list(shape))],
                              [numpy_helper.from_array(np.array(axis, np.int64), "axis")])
        save(model(g), os.path.join(out, name + ".onnx"))
        write_set(out, name, [("x", x)], [("y", y)], {})


def bad_operators(d, x):
    """One model per bad attribute or shape of an operator: bad/op_NAME.onnx."""
    any_y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)

    def one(name, op, inputs, inits, **attrs):
        nodes = [helper.make_node(op, inputs, ["y"], name=name, **attrs)]
        g = helper.make_graph(nodes, name, [x], [any_y],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
        save(model(g), os.path.join(d, "op_%s.onnx" % name), check=False)

    i64 = lambda *v: np.array(v, np.int64)
    f32 = lambda *v: np.array(v, np.float32)
    one("conv_group", "Conv", ["x4", "W"], {"x4": np.ones((1, 4, 5, 5), np.float32),
                                           "W": np.ones((3, 1, 3, 3), np.float32)}, group=3)
    one("concat_shapes", "Concat", ["x", "c"], {"c": np.ones((3, 5), np.float32)}, axis=0)
    x5, w3d = np.ones((1, 4, 3, 4, 4), np.float32), np.ones((2, 4, 2, 2, 2), np.float32)
    one("conv3d_kernel_shape", "Conv", ["x5", "W"], {"x5": x5, "W": w3d}, kernel_shape=[2, 2])
    one("conv3d_pads", "Conv", ["x5", "W"], {"x5": x5, "W": w3d}, pads=[1, 1, 1, 1])
    one("conv3d_group", "Conv", ["x5", "W"],
        {"x5": x5, "W": np.ones((3, 1, 2, 2, 2), np.float32)}, group=3)
    one("convtranspose3d_pads", "ConvTranspose", ["x5", "W"],
        {"x5": x5, "W": np.ones((4, 2, 2, 2, 2), np.float32)}, pads=[0, 0, 0, 0])
    one("concat_axis", "Concat", ["x", "x"], {}, axis=5)
    one("split_sizes", "Split", ["x", "s"], {"s": i64(1, 2)}, axis=1)
    one("slice_step0", "Slice", ["x", "st", "en", "ax", "sp"],
        {"st": i64(0), "en": i64(2), "ax": i64(1), "sp": i64(0)})
    one("gather_index", "Gather", ["x", "i"], {"i": i64(0, 9)}, axis=1)
    one("scatternd_index", "ScatterND", ["x", "i", "u"],
        {"i": np.array([[1, 4]], np.int64), "u": f32(5)})
    one("scatternd_updates", "ScatterND", ["x", "i", "u"],
        {"i": np.array([[1], [0]], np.int64), "u": np.ones((2, 3), np.float32)})
    one("pad_length", "Pad", ["x", "p"], {"p": i64(0, 1, 0)})
    one("clip_bounds", "Clip", ["x", "lo"], {"lo": f32(0, 1)})
    one("pow_exponent", "Pow", ["x", "e"], {"e": np.array([True])})
    one("pow_shapes", "Pow", ["x", "e"], {"e": np.ones(3, np.float32)})
    one("tile_repeats", "Tile", ["x", "r"], {"r": i64(1, 2, 3)})
    one("expand_shape", "Expand", ["x", "s"], {"s": i64(3, 4)})
    one("depth_to_space", "DepthToSpace", ["x4"], {"x4": np.ones((1, 4, 2, 2), np.float32)},
        blocksize=3)
    one("prelu_slope", "PRelu", ["x", "slope"], {"slope": f32(1, 2, 3)})
    one("cast_to", "Cast", ["x"], {}, to=TensorProto.INT64)
    x3 = np.ones((3, 1, 2), np.float32)
    one("lstm_weights", "LSTM", ["x3", "W", "R"], {"x3": x3, "W": np.ones((1, 8, 3), np.float32),
                                                  "R": np.ones((1, 8, 2), np.float32)},
        hidden_size=2)
    one("gru_activation", "GRU", ["x3", "W", "R"], {"x3": x3, "W": np.ones((1, 6, 2), np.float32),
                                                    "R": np.ones((1, 6, 2), np.float32)},
        hidden_size=2, activations=["Relu", "Tanh"])
    one("resize_roi", "Resize", ["x", "roi", "sc"], {"roi": f32(0, 0, 1), "sc": f32(1, 2)},
        mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    one("resize_mode", "Resize", ["x", "", "sc"], {"sc": f32(1, 2)}, mode="bicubic")
    one("range_delta", "Range", ["a", "b", "c"], {"a": i64(0), "b": i64(4), "c": i64(0)})
    one("range_scalars", "Range", ["a", "b", "c"], {"a": i64(0, 1), "b": i64(4), "c": i64(1)})
    one("range_type", "Range", ["a", "b", "c"],
        {"a": np.array(0, np.uint8), "b": np.array(4, np.uint8), "c": np.array(1, np.uint8)})
    one("conv_transpose_weights", "ConvTranspose", ["x4", "W"],
        {"x4": np.ones((1, 4, 5, 5), np.float32), "W": np.ones((3, 1, 3, 3), np.float32)})
    one("shrink_lambd", "Shrink", ["x"], {}, lambd=-1.0)
    one("batchnorm_training", "BatchNormalization", ["x", "s", "b", "m", "v"],
        {k: np.ones(4, np.float32) for k in "sbmv"}, training_mode=1)
    one("argmax_axis", "ArgMax", ["x"], {}, axis=2)
    one("argmin_select", "ArgMin", ["x"], {}, select_last_index=2)
    one("logsoftmax_axis", "LogSoftmax", ["x"], {}, axis=-3)
    one("nll_target", "NegativeLogLikelihoodLoss", ["x", "t"], {"t": i64(0, 7)})
    one("nll_reduction", "NegativeLogLikelihoodLoss", ["x", "t"], {"t": i64(0, 1)},
        reduction="max")
    one("sce_weight", "SoftmaxCrossEntropyLoss", ["x", "t", "w"],
        {"t": i64(0, 1), "w": f32(1, 2)})
    one("gather_elements_index", "GatherElements", ["x", "i"],
        {"i": np.array([[0, 5]], np.int64)}, axis=1)
    # float16 and the quantisation operators (x is 2 x 4).
    f16 = lambda *s: np.ones(s, np.float16)
    one("gemm_fp16_alpha", "Gemm", ["a16", "b16"], {"a16": f16(2, 3), "b16": f16(3, 4)},
        alpha=2.0)
    one("quant_scale", "QuantizeLinear", ["x", "s", "z"],
        {"s": f32(0.1, 0.2, 0.3), "z": np.zeros(3, np.uint8)}, axis=1)
    one("quant_zero_type", "QuantizeLinear", ["x", "s", "z"],
        {"s": f32(0.1), "z": np.zeros((), np.int32)})
    one("dequant_input_type", "DequantizeLinear", ["x", "s"], {"s": f32(0.1)})
    one("dequant_zero_type", "DequantizeLinear", ["q", "s", "z"],
        {"q": np.zeros((2, 4), np.int8), "s": f32(0.1), "z": np.zeros((), np.uint8)})
    # The bool operators, the comparisons, Where and the integer Casts.
    b8 = lambda *s: np.ones(s, np.bool_)
    one("and_type", "And", ["x", "bt"], {"bt": b8(2, 4)})
    one("less_shapes", "Less", ["x", "c"], {"c": np.ones((3, 5), np.float32)})
    one("equal_types", "Equal", ["x", "i"], {"i": np.zeros((2, 4), np.int32)})
    one("isinf_detect", "IsInf", ["x"], {}, detect_negative=2)
    one("where_shapes", "Where", ["cond", "x", "x"], {"cond": b8(3)})
    one("cast_narrow", "Cast", ["i"], {"i": np.zeros((2, 4), np.int32)}, to=TensorProto.INT8)
    # CastLike (operator set 15) to int64, which the device does not hold.
    g = helper.make_graph([helper.make_node("CastLike", ["x", "l64"], ["y"], name="castlike_type")],
                          "castlike_type", [x], [any_y], [numpy_helper.from_array(i64(1), "l64")])
    m = model(g)
    m.opset_import[0].version = 15
    save(m, os.path.join(d, "op_castlike_type.onnx"), check=False)
    one("eyelike_rank", "EyeLike", ["x3"], {"x3": x3}, k=1)
    one("dynquant_type", "DynamicQuantizeLinear", ["h16"], {"h16": f16(2, 4)})
    # The integer products: operands that fit, zero points and scales per
    # tensor or along the axis the definition allows, a bias per channel.
    u8 = lambda *s: np.ones(s, np.uint8)
    one("pool3d_pads", "MaxPool", ["x5"], {"x5": np.ones((1, 1, 2, 2, 2), np.float32)},
        kernel_shape=[1, 1, 1], pads=[0, 0, 0, 0])
    one("einsum_size", "Einsum", ["x", "e"], {"e": np.ones((3, 2), np.float32)},
        equation="ij,jk->ik")
    one("einsum_output", "Einsum", ["x"], {}, equation="ij->k")
    one("einsum_ellipsis", "Einsum", ["x"], {}, equation="...j->j")
    one("matmulinteger_inner", "MatMulInteger", ["qa", "qb"], {"qa": u8(2, 3), "qb": u8(4, 2)})
    one("convinteger_zero", "ConvInteger", ["qx", "qw", "qz"],
        {"qx": u8(1, 2, 4, 4), "qw": u8(1, 2, 3, 3), "qz": u8(2)})
    one("matmulinteger_zero_rows", "MatMulInteger", ["qa", "qb", "qz23"],
        {"qa": u8(2, 3), "qb": u8(3, 2), "qz23": u8(2, 3)})
    one("qlinearmatmul_scale", "QLinearMatMul", ["qa", "s3", "qz1", "qb", "s", "qz1", "s", "qz1"],
        {"qa": u8(2, 3), "qb": u8(3, 2), "s3": f32(0.1, 0.2, 0.3), "s": f32(0.1), "qz1": u8(1)})
    one("concat_inputs", "Concat", ["x"] * 257, {}, axis=0)
    one("cumsum_axis", "CumSum", ["x", "a"], {"a": i64(2)})
    one("scatter_elements_index", "ScatterElements", ["x", "i", "u"],
        {"i": np.array([[0, 5]], np.int64), "u": np.ones((1, 2), np.float32)}, axis=1)
    one("gathernd_batch", "GatherND", ["x", "i"], {"i": np.zeros((3, 1), np.int64)},
        batch_dims=1)
    one("onehot_depth", "OneHot", ["i", "d", "v"],
        {"i": i64(0, 1), "d": i64(0), "v": f32(0, 1)})
    one("pad_reflect_wide", "Pad", ["x", "p"], {"p": i64(0, 4, 0, 0)}, mode="reflect")
    one("pad_edge_empty", "Pad", ["x", "p"], {"p": i64(0, -4, 0, 1)}, mode="edge")
    one("fold_transpose_perm", "Transpose", ["c"], {"c": np.zeros((2, 3), np.int64)},
        perm=[0, 0])
    one("qlinearconv_bias", "QLinearConv",
        ["qx", "s", "qz1", "qw", "s", "qz1", "s", "qz1", "bias"],
        {"qx": u8(1, 2, 4, 4), "qw": u8(2, 2, 3, 3), "s": f32(0.1), "qz1": u8(1),
         "bias": np.zeros(1, np.int32)})
    # Gather and GatherElements at run: indices of a float type; TopK: bad
    # k, axis and largest, and a k given at run.
    fx = helper.make_tensor_value_info("fi", TensorProto.FLOAT, [3])
    g = helper.make_graph([helper.make_node("Gather", ["x", "fi"], ["y"], name="gather_run_type")],
                          "gather_run_type", [x, fx], [any_y])
    save(model(g), os.path.join(d, "op_gather_run_type.onnx"), check=False)
    ix = helper.make_tensor_value_info("ix", TensorProto.INT64, [2, 4, 1])
    g = helper.make_graph([helper.make_node("GatherElements", ["x", "ix"], ["y"],
                                            name="gather_elements_rank", axis=1)],
                          "gather_elements_rank", [x, ix], [any_y])
    save(model(g), os.path.join(d, "op_gather_elements_rank.onnx"), check=False)
    any_i = helper.make_tensor_value_info("i", TensorProto.INT64, None)

    def topk(name, inputs, inits, extra=(), opset=11, **attrs):
        g = helper.make_graph([helper.make_node("TopK", inputs, ["y", "i"], name=name, **attrs)],
                              name, [x] + list(extra), [any_y, any_i],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
        m = model(g)
        m.opset_import[0].version = opset
        save(m, os.path.join(d, "op_%s.onnx" % name), check=False)
    topk("topk_k", ["x", "k"], {"k": i64(5)}, axis=1)
    topk("topk_k_zero", ["x"], {}, opset=1, k=0)
    topk("topk_axis", ["x", "k"], {"k": i64(1)}, axis=2)
    topk("topk_largest", ["x", "k"], {"k": i64(1)}, largest=2)
    topk("topk_k_at_run", ["x", "kr"], {},
         extra=[helper.make_tensor_value_info("kr", TensorProto.INT64, [1])])
    # Shape arithmetic folded at load divides by zero.
    nodes = [helper.make_node("Div", ["four", "zero"], ["shape"], name="fold_div"),
             helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    g = helper.make_graph(nodes, "fold_div", [x], [any_y],
                          [numpy_helper.from_array(i64(4, 2), "four"),
                           numpy_helper.from_array(i64(2, 0), "zero")])
    save(model(g), os.path.join(d, "op_fold_div.onnx"), check=False)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen-models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(20261202)
    mlp(out, rng)
    cnn(out, rng)
    branches(out, rng)
    weights_first(out, rng)
    dynamic_axes(out)
    int_io(out, rng)
    int_large_k(out, rng)
    indices_at_run(out, rng)
    einsums(out, rng)
    pools_3d(out, rng)
    variadic(out, rng)
    pads(out, rng)
    cumsums(out, rng)
    convs_3d(out, rng)
    quant_per_axis(out, rng)
    range_and_resize(out, rng)
    bad(out)


if __name__ == "__main__":
    main()

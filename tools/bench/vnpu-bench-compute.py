#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-compute: the device's compute operators against numpy with
# OpenBLAS on one thread, side by side in the same guest. Reports, never
# asserts. Each round times every case with numpy (OpenBLAS's own choice
# of kernels for the CPU, and its Haswell AVX2 + FMA kernels forced with
# OPENBLAS_CORETYPE, each in a process of its own), then with vnpu on one
# compute engine (module parameter compute_split=0), then with the
# operator split across the device's compute engines (compute_split=1);
# three rounds, each figure their median and spread (min..max).
# A whole network, resnet18 (build/onnx-torch), is measured the way make
# bench-models measures it (vnpu_model() and TorchWorker of
# vnpu-bench-models.py: vnpu-run after one warm-up run, and torch on one
# thread, with its own kernels and with SSE4.1 forced, each in a process
# of its own), on one engine and on all of them; its reference is torch's
# own CPU inference (oneDNN's convolutions), not numpy, which has no
# network to run.
#
#   vnpu-bench-compute.py BENCH_BINARY [ROUNDS]
#   vnpu-bench-compute.py --numpy    (one round of numpy, "case seconds")
#
# VNPU_BENCH_CASES (default "sgemm:64 sgemm:256 sgemm:512 sgemm:1024
# conv resnet18") selects the cases; a model of vnpu-bench-models.py is a
# case.
# A ratio is numpy's time over vnpu's: 1.0 is as fast as OpenBLAS on one
# thread, 0.5 half as fast; the goals are judged against the faster of the
# two OpenBLAS kernels.
import ctypes
import importlib.util
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ of the imported script in the tree

os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402 (after the thread count)

spec = importlib.util.spec_from_file_location(
    "bench_models", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "vnpu-bench-models.py"))
models = importlib.util.module_from_spec(spec)
spec.loader.exec_module(models)

ALL = os.environ.get("VNPU_BENCH_CASES",
                     "sgemm:64 sgemm:256 sgemm:512 sgemm:1024 conv resnet18").split()
# The operator cases (numpy and vnpu-bench-compute) and the networks.
CASES = [c for c in ALL if c not in models.MODELS]
NETS = [c for c in ALL if c in models.MODELS]
LABELS = {
    "sgemm:64": "sgemm 64^3",
    "sgemm:256": "sgemm 256^3",
    "sgemm:512": "sgemm 512^3",
    "sgemm:1024": "sgemm 1024^3",
    "conv": "conv 3x3 56x56x64",
}
REPS = {"sgemm:64": 50, "sgemm:256": 10, "sgemm:512": 3, "sgemm:1024": 1, "conv": 3}
SPLIT = "/sys/module/vnpu/parameters/compute_split"


def numpy_case(case):
    rng = np.random.default_rng(1)
    if case.startswith("sgemm:"):
        n = int(case[6:])
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)

        def work():
            return a @ b
    else:
        x = rng.uniform(-1, 1, (64, 56, 56)).astype(np.float32)
        w = rng.uniform(-1, 1, (64, 64 * 9)).astype(np.float32)

        def work():
            # im2col (a copy, as the device does) and one sgemm
            xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
            win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
            cols = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2)).reshape(64 * 9, 56 * 56)
            return w @ cols
    reps = REPS[case]
    if reps > 1:
        work()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def parse(out):
    res = {}
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        words = line.split()
        res[words[0]] = float(words[1])
    return res


def numpy_cases(coretype):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    out = subprocess.run([sys.executable, sys.argv[0], "--numpy"], check=True, env=env,
                         stdout=subprocess.PIPE, text=True).stdout
    return parse(out)


def set_split(split):
    with open(SPLIT, "w") as f:
        f.write("1" if split else "0")


def vnpu_cases(binary, split):
    set_split(split)
    out = subprocess.run([binary] + CASES + ["submit"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return parse(out)


def blas_info():
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        info = "%s, core %s" % (lib.openblas_get_config().decode(),
                               lib.openblas_get_corename().decode())
    except OSError:
        info = "libopenblas.so.0 not found"
    with open("/proc/self/maps") as f:
        libs = sorted({ln.split()[-1] for ln in f if "blas" in ln.lower() and "/" in ln})
    return info, libs


KINDS = (("numpy", "OpenBLAS default"), ("haswell", "OpenBLAS Haswell"),
         ("one", "vnpu 1 engine"), ("all", "vnpu all engines"))


def main():
    if sys.argv[1] == "--numpy":
        np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)
        print("# %s" % blas_info()[0])
        for c in CASES:
            print("%s %.6f" % (c, numpy_case(c)), flush=True)
        return
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)
    info, libs = blas_info()
    print("# numpy %s, BLAS: %s" % (np.__version__, info))
    print("# BLAS libraries mapped: %s" % ", ".join(libs))
    print("# OPENBLAS_NUM_THREADS=%s, CPUs online: %d" %
          (os.environ["OPENBLAS_NUM_THREADS"], os.cpu_count()))
    print("# " + models.device_info())
    res = {c: {k: [] for k, _ in KINDS} for c in CASES + ["submit"]}
    nets = {n: {"torch": [], "sse": [], "one": [], "all": []} for n in NETS}
    workers = {}
    for key, _, env in models.TORCH_KINDS if NETS else ():
        workers[key] = models.TorchWorker(env=env)
        for line in workers[key].info:
            print(line)
    for r in range(rounds):
        for key, got in (("numpy", numpy_cases(None)), ("haswell", numpy_cases("Haswell")),
                         ("one", vnpu_cases(binary, False)),
                         ("all", vnpu_cases(binary, True))):
            for c, t in got.items():
                res[c][key].append(t)
            print("# round %d %s: %s" % (r + 1, key, " ".join(
                "%s=%.4f" % (c, t) for c, t in got.items())), flush=True)
        for n in NETS:
            iters = models.ITERS[n]
            for key, w in workers.items():
                nets[n][key].append(w.seconds(n, iters))
            for key, split in (("one", False), ("all", True)):
                set_split(split)
                nets[n][key].append(models.vnpu_model(n, iters)["s"])
            print("# round %d %s (%d runs after a warm-up one): %s" % (r + 1, n, iters, " ".join(
                "%s=%.4f" % (k, t[-1]) for k, t in nets[n].items())), flush=True)
    set_split(True)
    for w in workers.values():
        w.close()

    print()
    print("Times in ms; ratios are OpenBLAS's time over vnpu's, against the faster")
    print("OpenBLAS kernel of each round. A network's reference is torch on one")
    print("thread instead, with its own kernels and with SSE4.1 forced, in the")
    print("first two columns; its ratios are against the faster of the two.")
    print()
    print("| case | " + " | ".join(label + " ms" for _, label in KINDS) +
          " | ratio 1 engine | ratio all engines |")
    print("|---" * (len(KINDS) + 3) + "|")
    for c in CASES:
        cells = [LABELS[c]]
        for key, _ in KINDS:
            cells.append(models.fmt(res[c][key], 1e3))
        best = [min(a, b) for a, b in zip(res[c]["numpy"], res[c]["haswell"])]
        for key in ("one", "all"):
            ratios = [n / v for n, v in zip(best, res[c][key])]
            cells.append("%.2f (%.2f..%.2f)" % models.spread(ratios))
        print("| " + " | ".join(cells) + " |")
    for n in NETS:
        cells = ["%s inference" % n, "torch: " + models.fmt(nets[n]["torch"], 1e3),
                 "torch SSE4.1: " + models.fmt(nets[n]["sse"], 1e3)]
        cells += [models.fmt(nets[n][key], 1e3) for key in ("one", "all")]
        best = [min(t) for t in zip(nets[n]["torch"], nets[n]["sse"])]
        for key in ("one", "all"):
            cells.append(models.fmt([t / v for t, v in zip(best, nets[n][key])], 1, 2))
        print("| " + " | ".join(cells) + " |")
    print()
    print("A job of one 4-byte FILL (submit to fence, no work): %.2f ms (%.2f..%.2f)" %
          tuple(x * 1e3 for x in models.spread(res["submit"]["one"])))
    print()
    print("# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0")


if __name__ == "__main__":
    main()

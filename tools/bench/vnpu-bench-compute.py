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
#
#   vnpu-bench-compute.py BENCH_BINARY [ROUNDS]
#   vnpu-bench-compute.py --numpy    (one round of numpy, "case seconds")
#
# VNPU_BENCH_CASES (default "sgemm:64 sgemm:256 sgemm:512 sgemm:1024
# conv") selects the cases.
# A ratio is numpy's time over vnpu's: 1.0 is as fast as OpenBLAS on one
# thread, 0.5 half as fast; the goals are judged against the faster of the
# two OpenBLAS kernels.
import ctypes
import os
import subprocess
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402 (after the thread count)

CASES = os.environ.get("VNPU_BENCH_CASES",
                       "sgemm:64 sgemm:256 sgemm:512 sgemm:1024 conv").split()
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


def vnpu_cases(binary, split):
    with open(SPLIT, "w") as f:
        f.write("1" if split else "0")
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


def spread(v):
    v = sorted(v)
    return v[len(v) // 2], v[0], v[-1]


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
    with open("/sys/module/vnpu/parameters/simd") as f:
        print("# vnpu simd parameter: %s" % f.read().strip())
    res = {c: {k: [] for k, _ in KINDS} for c in CASES + ["submit"]}
    for r in range(rounds):
        for key, got in (("numpy", numpy_cases(None)), ("haswell", numpy_cases("Haswell")),
                         ("one", vnpu_cases(binary, False)),
                         ("all", vnpu_cases(binary, True))):
            for c, t in got.items():
                res[c][key].append(t)
            print("# round %d %s: %s" % (r + 1, key, " ".join(
                "%s=%.4f" % (c, t) for c, t in got.items())), flush=True)
    with open(SPLIT, "w") as f:
        f.write("1")

    print()
    print("Times in ms; ratios are OpenBLAS's time over vnpu's, against the faster")
    print("OpenBLAS kernel of each round.")
    print()
    print("| case | " + " | ".join(label + " ms" for _, label in KINDS) +
          " | ratio 1 engine | ratio all engines |")
    print("|---" * (len(KINDS) + 3) + "|")
    for c in CASES:
        cells = [LABELS[c]]
        for key, _ in KINDS:
            cells.append("%.1f (%.1f..%.1f)" % tuple(x * 1e3 for x in spread(res[c][key])))
        best = [min(a, b) for a, b in zip(res[c]["numpy"], res[c]["haswell"])]
        for key in ("one", "all"):
            ratios = [n / v for n, v in zip(best, res[c][key])]
            cells.append("%.2f (%.2f..%.2f)" % spread(ratios))
        print("| " + " | ".join(cells) + " |")
    print()
    print("A job of one 4-byte FILL (submit to fence, no work): %.2f ms (%.2f..%.2f)" %
          tuple(x * 1e3 for x in spread(res["submit"]["one"])))
    print()
    print("# resnet18: no resnet18 model in the tree; rows above only")
    print("# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0")


if __name__ == "__main__":
    main()

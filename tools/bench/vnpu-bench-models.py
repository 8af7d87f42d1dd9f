#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench-models: the networks exported by tools/onnx/export-torch.py
# (build/onnx-torch) on vnpu beside torch's own CPU inference on one
# thread, side by side in the same guest. Reports, never asserts.
#
# Each round measures every model twice, one right after the other:
#   vnpu   vnpu-run --memory-report --check-outputs --warmup 1 --repeat N:
#          the load time (vnpu_graph_memory.load_ns: parse, plan and the
#          upload of the weights), the plan time, the planned arena beside
#          its lower bound and the naive sum, the mean time of N runs after
#          one warm-up run; the outputs must match torch's exported ones.
#   torch  the same network rebuilt by export-torch.py (same seed, so the
#          same weights; its output is checked against the exported one)
#          on the same input, torch.set_num_threads(1) (and OMP_NUM_THREADS
#          and OPENBLAS_NUM_THREADS 1), inference mode, the
#          mean of N inferences, in a worker process that imports torch and
#          builds the model once for the whole run (the first inference,
#          the check of the output, warms it up); twice, with the kernels
#          torch and its oneDNN choose for the CPU, and in a second worker
#          with their SSE kernels forced (ATEN_CPU_CAPABILITY=default,
#          ONEDNN_MAX_CPU_ISA=SSE41), as software emulation runs AVX2 code
#          slower than SSE code.
# Three rounds by default; each time is the median and spread (min..max)
# of the rounds. The ratio is the faster torch's time over vnpu's in the
# same round, that is vnpu's inferences per second over torch's: 1.0 is as
# fast as torch on one thread, 0.5 half as fast.
#
#   vnpu-bench-models.py [--rounds N] [--iters N] [--run VNPU_RUN]
#                        [--models DIR] [MODEL...]
#   vnpu-bench-models.py --torch-worker DIR   (reads "MODEL ITERS" lines,
#                                              answers "MODEL SECONDS")
#
# Run from the repository root (as the VM's plans do). vnpu-bench-compute.py
# measures its resnet18 row with vnpu_model() and TorchWorker from here.
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ of export-torch.py in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
RUN = "build/bin/vnpu-run"
MODELS_DIR = "build/onnx-torch"
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x0_5",
          "efficientnet_b0", "transformer", "recurrent"]
# Timed runs per round (after one warm-up run): a resnet18 inference takes
# about 10 s on the emulated device, the transformer and GRU a tenth of one.
ITERS = {"resnet18": 2, "mobilenet_v2": 2, "squeezenet1_1": 2, "shufflenet_v2_x0_5": 3,
         "efficientnet_b0": 2, "transformer": 10, "recurrent": 10}
# The transformer's batch axis is symbolic: the loader is given its size
# (as in selftests/vnpu_models.sh).
# The sizes of the symbolic axes of the first data set, given at load.
SIZES = {"transformer": ["--batch", "2", "--dim", "seq=16"]}
# The comparison of the outputs with torch's (as in selftests/vnpu_models.sh).
RTOL, ATOL = 1e-3, 1e-5
PARAMS = "/sys/module/vnpu/parameters/"
# The two torch workers: torch's own choice of kernels, and SSE forced.
TORCH_KINDS = (("torch", "torch", {}),
               ("sse", "torch SSE4.1",
                {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41"}))


def test_data(mdir, name, what):
    return os.path.join(mdir, name, "test_data_set_0", what + "_0.pb")


class BenchError(Exception):
    pass


def vnpu_model(name, iters, run=RUN, mdir=MODELS_DIR):
    """One vnpu-run of NAME: load and plan ms, arena, naive sum, lower
    bound (bytes) and seconds per inference, as a dict."""
    cmd = [run, os.path.join(mdir, name + ".onnx"), "--input", test_data(mdir, name, "input"),
           "--check-outputs", test_data(mdir, name, "output"), "--rtol", str(RTOL),
           "--atol", str(ATOL), "--memory-report", "--warmup", "1", "--repeat", str(iters)]
    cmd += SIZES.get(name, [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout
    timing = re.search(r"timing: +load ([0-9.]+) ms, plan ([0-9.]+) ms", out)
    arena = re.search(r"dynamic: arena (\d+) bytes .*naive sum (\d+), lower bound (\d+)", out)
    ran = re.search(r"warm-up run\(s\): ([0-9.]+) ms per run", out)
    if p.returncode or "matches" not in out or not (timing and arena and ran):
        raise BenchError("%s: vnpu-run failed (exit %d):\n%s" % (name, p.returncode, out))
    return {"load": float(timing.group(1)) / 1e3, "plan": float(timing.group(2)) / 1e3,
            "arena": int(arena.group(1)), "naive": int(arena.group(2)),
            "lower": int(arena.group(3)), "s": float(ran.group(1)) / 1e3}


class TorchWorker:
    """A process of its own that imports torch once, runs it on one thread
    and times one model at a time (its output checked first); ENV is added
    to its environment."""

    def __init__(self, mdir=MODELS_DIR, env=None):
        # One thread in torch's OpenMP and in the OpenBLAS under it as well,
        # whose own thread pool torch.set_num_threads() does not size.
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **(env or {}))
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--torch-worker",
                                   mdir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        self.info = []
        while True:
            line = self._line()
            if line == "ready":
                break
            self.info.append(line)

    def _line(self):
        line = self.p.stdout.readline()
        if not line:
            raise BenchError("the torch worker ended (exit %s)" % self.p.wait())
        return line.rstrip("\n")

    def seconds(self, name, iters):
        self.p.stdin.write("%s %d\n" % (name, iters))
        self.p.stdin.flush()
        line = self._line()
        while line.startswith("#"):
            print(line, flush=True)
            line = self._line()
        words = line.split()
        if words[0] != name:
            raise BenchError("torch: %s" % " ".join(words))
        return float(words[1])

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def torch_worker(mdir):
    """The worker's side: the models of export-torch.py, one thread."""
    import numpy as np
    import torch
    from onnx import TensorProto, numpy_helper

    spec = importlib.util.spec_from_file_location(
        "export_torch", os.path.join(HERE, "..", "onnx", "export-torch.py"))
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    torch.set_num_threads(1)
    cfg = torch.__config__.show()
    cap = re.search(r"CPU capability usage: (\S+)", cfg)
    blas = re.search(r"BLAS_INFO=([^,]*)", cfg)
    print("# torch %s, %d thread(s), CPU capability %s, MKL-DNN (oneDNN) %s (ISA limit %s), "
          "BLAS_INFO=%s" % (
              torch.__version__, torch.get_num_threads(), cap.group(1) if cap else "?",
              "on" if torch.backends.mkldnn.is_available() else "off",
              os.environ.get("ONEDNN_MAX_CPU_ISA", "none"), blas.group(1) if blas else "?"),
          flush=True)

    def load(path):
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    built = {}
    print("ready", flush=True)
    for line in sys.stdin:
        name, iters = line.split()
        if name not in built:
            model = export.MODELS[name]()
            x = torch.from_numpy(load(test_data(mdir, name, "input")).copy())
            with torch.inference_mode():
                y = model(x).numpy()
            want = load(test_data(mdir, name, "output"))
            if y.shape != want.shape or not np.allclose(y, want, rtol=RTOL, atol=ATOL):
                print("%s: torch's output here differs from the exported one" % name,
                      flush=True)
                return 1
            built[name] = (model, x)
            if len(built) == 1:
                with open("/proc/self/maps") as f:
                    libs = sorted({ln.split()[-1] for ln in f if "/" in ln and
                                   re.search(r"blas|lapack|dnnl|gomp", ln)})
                print("# torch's BLAS, oneDNN and OpenMP libraries: %s" %
                      (", ".join(libs) or "none apart from libtorch"), flush=True)
        model, x = built[name]
        with torch.inference_mode():
            t0 = time.perf_counter()
            for _ in range(int(iters)):
                model(x)
            s = (time.perf_counter() - t0) / int(iters)
        print("%s %.6f" % (name, s), flush=True)
    return 0


def read_param(name):
    try:
        with open(PARAMS + name) as f:
            return f.read().strip()
    except OSError:
        return "?"


def device_info():
    """The module's parameters that decide how vnpu computes."""
    return "vnpu: %s compute engine(s), compute_split=%s, simd=%s; %d CPUs online" % (
        read_param("compute_engines"), read_param("compute_split"), read_param("simd"),
        os.cpu_count())


def spread(v):
    v = sorted(v)
    return v[len(v) // 2], v[0], v[-1]


def fmt(v, scale=1.0, digits=1):
    m, lo, hi = (x * scale for x in spread(v))
    if len(v) == 1:
        return "%.*f" % (digits, m)
    return "%.*f (%.*f..%.*f)" % (digits, m, digits, lo, digits, hi)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--torch-worker":
        return torch_worker(sys.argv[2])
    ap = argparse.ArgumentParser(description="whole networks on vnpu beside torch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, help="timed runs per model and round")
    ap.add_argument("--run", default=RUN)
    ap.add_argument("--models", default=MODELS_DIR)
    ap.add_argument("names", nargs="*", metavar="MODEL")
    a = ap.parse_args()
    names = a.names or MODELS
    bad = [n for n in names if n not in MODELS]
    if bad or a.rounds < 1 or (a.iters is not None and a.iters < 1):
        ap.error("models are %s; --rounds and --iters want 1 or more" % " ".join(MODELS))

    print("# " + device_info(), flush=True)
    workers = {}
    for key, _, env in TORCH_KINDS:
        workers[key] = TorchWorker(a.models, env)
        for line in workers[key].info:
            print(line, flush=True)
    res = {n: {"vnpu": [], "torch": [], "sse": []} for n in names}
    failed = []
    for r in range(a.rounds):
        for n in names:
            if n in failed:
                continue
            iters = a.iters or ITERS[n]
            try:
                v = vnpu_model(n, iters, a.run, a.models)
                t = [workers[key].seconds(n, iters) for key, _, _ in TORCH_KINDS]
            except BenchError as e:
                print("# " + str(e).replace("\n", "\n# "))
                failed.append(n)
                continue
            res[n]["vnpu"].append(v)
            res[n]["torch"].append(t[0])
            res[n]["sse"].append(t[1])
            print("# round %d %s: load %.1f ms, vnpu %.1f ms, torch %.1f ms, torch SSE4.1 %.1f ms "
                  "(%d runs)" % (r + 1, n, v["load"] * 1e3, v["s"] * 1e3, t[0] * 1e3, t[1] * 1e3,
                                 iters), flush=True)
    for w in workers.values():
        w.close()

    print()
    print("Times in ms, inferences/s; each the median and spread (min..max) of %d "
          "round(s). Memory in bytes (the same every round). torch runs on one thread with "
          "its own kernels and with SSE4.1 forced; its inferences/s and the ratio (torch's "
          "time over vnpu's: vnpu's inferences/s over torch's) take the faster of the two "
          "in each round." % a.rounds)
    print()
    print("| model | load ms | plan ms | arena | lower bound | naive sum | vnpu ms | "
          "vnpu inf/s | torch ms | torch SSE4.1 ms | torch inf/s | ratio |")
    print("|---" * 12 + "|")
    for n in names:
        if n in failed:
            print("| %s | failed: see above |" % n)
            continue
        v = res[n]["vnpu"]
        vs = [x["s"] for x in v]
        if len({(x["arena"], x["lower"], x["naive"]) for x in v}) > 1:
            print("# %s: the memory figures differ between rounds; the first round's:" % n)
        best = [min(t) for t in zip(res[n]["torch"], res[n]["sse"])]
        print("| " + " | ".join([
            n, fmt([x["load"] for x in v], 1e3), fmt([x["plan"] for x in v], 1e3, 2),
            str(v[0]["arena"]), str(v[0]["lower"]), str(v[0]["naive"]),
            fmt(vs, 1e3), fmt([1 / s for s in vs], 1, 2), fmt(res[n]["torch"], 1e3),
            fmt(res[n]["sse"], 1e3), fmt([1 / s for s in best], 1, 2),
            fmt([b / s for s, b in zip(vs, best)], 1, 2)]) + " |")
    print()
    print("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0" %
          (len(names) - len(failed), len(failed)))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())

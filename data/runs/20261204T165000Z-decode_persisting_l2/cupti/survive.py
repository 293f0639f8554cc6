"""Do lines a kernel read survive labkit's cold flush? A timed read of buffer X (CuPy's sum over 268 MB of uint32),
each sample after labkit's pad, where the read just before the pad was X itself ('same'), another buffer Y of the
same size ('other'), or nothing ('none'); in shuffled order, 15 samples each, under several flushes: cold (a memset
of 2 x L2), cold with a memset of 8 x L2, cold_clean (then a read of 2 x L2). If 'same' runs faster than 'other',
some of X's lines outlived the flush. Usage: python3 survive.py OUT.json"""
import json
import random
import statistics
import sys

import labkit.timing.events as ev
from labkit.cuda import cupy
from labkit.device import describe

cp = cupy()
l2 = describe().l2_bytes
N = 268435456 // 4
X = cp.random.randint(0, 1 << 30, size=N, dtype=cp.uint32)
Y = cp.random.randint(0, 1 << 30, size=N, dtype=cp.uint32)
sink = cp.zeros((), dtype=cp.uint64)
rows = []
for label, mode, flush in (("cold 2xL2", "cold", None), ("cold 8xL2", "cold", 8 * l2), ("cold_clean 2xL2", "cold_clean", None)):
    smp = ev._Sampler.create(mode, flush)
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    times = {"same": [], "other": [], "none": []}
    order = [k for k in times for _ in range(16)]
    random.Random(7).shuffle(order)
    with smp.stream:
        for i, prev in enumerate(order):
            if prev != "none":
                cp.sum(X if prev == "same" else Y, dtype=cp.uint64, out=sink)
            smp.pad()
            e0.record(smp.stream)
            cp.sum(X, dtype=cp.uint64, out=sink)
            e1.record(smp.stream)
            e1.synchronize()
            if i >= 3:
                times[prev].append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{label:16s} timed read of X (268 MB) after a read of: X {med['same']:7.2f} us   Y {med['other']:7.2f} us   "
          f"nothing {med['none']:7.2f} us   X/Y {med['same'] / med['other']:.3f}", flush=True)
    rows.append({"flush": label, "median_us": med, "samples_us": times})
    del smp
json.dump(rows, open(sys.argv[1], "w"))

"""Where the cold first stage's ~3.7 us go: the plan's call timed cold (flush of 2 x L2, spin) with, between the pad
and the start event, a touch kernel that reads one 4-byte word every STRIDE bytes of some buffers: the K/V pools
('pool64k': a word per 64 KB, 'pool2m': per 2 MB), the page table, seq_lens and cu_seqlens_q ('meta', every word), or
both. A touched word brings its page's translation and one L2 line, so 'pool2m' warms translations and ~nothing else.
Then per-CTA stamps (-DDIAG_FIRST timeline build: entry, first stage landed, exit) under each condition."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import flush_l2, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import geometry as G  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402

OUT = os.environ["R"]
MODE = {"v": None}
cp = cupy()
TOUCH = cp.RawKernel(r'''
extern "C" __global__ void touch(const int* p, long long n, long long stride, int* sink) {
    long long i = (long long)(blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < n && p[i] == 0x7fffffff) sink[0] = 1;  // a read the compiler keeps
}''', "touch")
SINK = cp.zeros(1, dtype=cp.int32)


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] == "stamp":
        f = {fl.name: getattr(p.kernel, fl.name) for fl in dataclasses.fields(p.kernel)}
        p = dataclasses.replace(p, kernel=DiagBuild(**f, defines=("-DDIAG_CHAIN",)))
    return p


R.plan_for_device = plan_for_device


def toucher(bufs, stride_bytes):
    def run():
        for a in bufs:
            words = a.nbytes // 4
            stride = max(1, stride_bytes // 4)
            n = (words + stride - 1) // stride
            TOUCH(((n + 255) // 256,), (256,), (a.view(cp.int32) if a.dtype != cp.int32 else a, np.int64(words),
                                                np.int64(stride), SINK))
    return run


def conditions(runner):
    bf = runner.buffers
    pool = [bf[k] for k in ("k_pool", "v_pool", "kv") if k in bf]
    meta = [bf[k] for k in ("table", "seq", "cuq")]
    return {"none": None, "pool64k": toucher(pool, 65536), "pool2m": toucher(pool, 2 << 20), "meta": toucher(meta, 4),
            "meta+pool2m": lambda: (toucher(meta, 4)(), toucher(pool, 2 << 20)())}


results = {"timing": [], "stamps": {}}


def timing(b, n, d, hq, hk):
    nbytes = 2 * b * n * hk * d * 2
    with B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk) as (runner, plan, _):
        runner.run_once()
        label = kernel_label(plan.kernel)
        conds = conditions(runner)
        fn = lambda: runner.launch_call(0)  # noqa: E731
        for rnd in range(3):
            base = None
            for name, setup in conds.items():
                t = time_gpu(fn, name=name, mode="cold", iterations=40, setup=setup)
                p50 = t.stats.p50_s
                base = base or p50
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "kernel": label, "round": rnd, "condition": name,
                       "p50_us": p50 * 1e6, "TBps": nbytes / p50 / 1e12, "vs_none": p50 / base - 1}
                results["timing"].append(row)
                print(f"r{rnd} {row['point']:18s} {label:18s} {name:12s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} "
                      f"TB/s {row['vs_none']:+.2%}", flush=True)


def stamps(b, n, d, hq=32, hk=8, calls=15):
    MODE["v"] = "stamp"
    try:
        ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, timeline=True)
        runner, plan, _ = ctx.__enter__()
    finally:
        MODE["v"] = None
    try:
        runner.run_once()
        for name, setup in conditions(runner).items():
            per = []
            for _ in range(calls):
                flush_l2()
                if setup:
                    setup()
                runner.run_once()
                rec = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
                t0, t1, first = rec[:, 2], rec[:, 3], rec[:, 4]
                base = t0.min()
                per.append({"entry_max": t0.max() - base, "first_min": first.min() - base,
                            "first_p50": np.median(first - base), "first_max": first.max() - base,
                            "exit_p50": np.median(t1 - base), "exit_max": t1.max() - base})
            summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
            key = f"{b}x{n} d{d} {hq}/{hk} {kernel_label(plan.kernel)} {name}"
            results["stamps"][key] = {"ns_from_first_entry_median_of_calls": summary, "calls": calls}
            print(f"stamps {key}: " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)
    finally:
        del runner
        ctx.__exit__(None, None, None)


def save():
    with open(f"{OUT}/tlb.json", "w") as f:
        json.dump(results, f, indent=1)


t0 = time.time()
for pt in [(1, 8192, 128, 32, 8), (1, 1024, 128, 32, 8), (2, 704, 256, 24, 4), (64, 1024, 128, 32, 8),
           (8, 8192, 128, 32, 8), (64, 8192, 128, 32, 8)]:
    try:
        timing(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"timing {pt}: {type(exc).__name__}: {exc}", flush=True)
    save()
for pt in [(1, 8192, 128), (1, 1024, 128)]:
    try:
        stamps(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"stamps {pt}: {type(exc).__name__}: {exc}", flush=True)
    save()
print(f"elapsed {time.time() - t0:.0f} s", flush=True)

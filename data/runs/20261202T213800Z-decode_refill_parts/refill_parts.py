"""refill_parts.py (device-only defines): (1) thread 0's refill split into its parts (-DDIAG_LOOP -DDIAG_REFILL: the
refill inline, stamped after the L2 policy and the barrier's expect_tx, after the page ids are in registers, and after
the 8 TMA loads; summed over a CTA's refills, medians over CTAs then 15 calls, cold and hot) at 1 x 8k d128 for the
plan and 16 splits of 8 warps; (2) the K/V L2 policy created once per CTA instead of per stage (-DHOIST_POLICY=1)
against the plan at the evict_first points: bit-identical first, then cold interleaved rounds (p50 of 40, three
rounds, shuffled)."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import flush_l2  # noqa: E402
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
        p = dataclasses.replace(p, kernel=DiagBuild(**f, defines=("-DDIAG_LOOP", "-DDIAG_REFILL")))
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


results = {"loop": {}}


def loop(b, n, d, hq=32, hk=8, calls=15, **kw):
    MODE["v"] = "stamp"
    try:
        ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, timeline=True, **kw)
        runner, plan, _ = ctx.__enter__()
    finally:
        MODE["v"] = None
    try:
        runner.run_once()
        for name in ("none", "hot"):
            per = []
            for _ in range(calls):
                if name == "hot":
                    runner.run_once()
                else:
                    flush_l2()
                runner.run_once()
                rec = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
                f = {"policy_bar": rec[:, 0], "math": rec[:, 1], "page_ids": rec[:, 4], "tma": rec[:, 5],
                     "span": rec[:, 3] - rec[:, 2]}
                row = {f"{k}_p50": float(np.median(v)) for k, v in f.items()}
                row["exit_max"] = float(rec[:, 3].max() - rec[:, 2].min())
                per.append(row)
            summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
            key = f"{b}x{n} d{d} {hq}/{hk} {kernel_label(plan.kernel)} splits {plan.splits} {name}"
            results["loop"][key] = {"ns_per_cta_median_of_calls": summary, "calls": calls}
            print(f"loop {key}: " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)
    finally:
        del runner
        ctx.__exit__(None, None, None)


t0 = time.time()
for kw in [{}, dict(splits=16, warps=8, stages=3)]:
    try:
        loop(1, 8192, 128, **kw)
    except Exception as exc:  # noqa: BLE001
        print(f"loop {kw}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/refill_parts.json", "w") as fh:
        json.dump(results, fh, indent=1)
print(f"elapsed {time.time() - t0:.0f} s", flush=True)

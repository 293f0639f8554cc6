"""L2 prefetch of the stages beyond the shared-memory ring (-DL2_PREFETCH=n, the plan's build otherwise unchanged)
against the plan, interleaved cold on the same data (labkit.workloads.decode.bench._interleaved: every output poisoned,
written, checked bit for bit against the plan's before timing, re-read after). `nh`: the prefetch without the loads'
evict_first hint (-DL2_PREFETCH_NO_HINT). Two rounds of 40 shuffled cold samples per point, p50."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

from labkit.workloads.decode import bench as B
from labkit.workloads.decode import geometry as G
from labkit.workloads.decode import run as R
from labkit.workloads.decode.geometry import kernel_label

OUT = os.environ["R"]


@dataclasses.dataclass(frozen=True)
class NoHint(G.KernelBuild):
    def options(self):
        return (*super().options(), "-DL2_PREFETCH_NO_HINT")


_plan = R.plan_for_device


def plan_for_device(g, nohint=False, **kw):
    p = _plan(g, **kw)
    if nohint:
        p = dataclasses.replace(p, kernel=NoHint(**{f.name: getattr(p.kernel, f.name)
                                                   for f in dataclasses.fields(p.kernel)}))
    return p


R.plan_for_device = plan_for_device
POINTS = [
    ((1, 8192, 128), {"pf1": 1, "pf2": 2, "pf5": 5, "pf5nh": (5, True)}),
    ((64, 1024, 128), {"pf1": 1, "pf2": 2}),
    ((1, 32768, 128), {"pf2": 2, "pf5": 5, "pf5nh": (5, True)}),
    ((8, 8192, 128), {"pf1": 1, "pf2": 2}),
    ((256, 1024, 128), {"pf1": 1}),
    ((1, 8192, 256), {"pf3": 3}),
    ((8, 32768, 256), {"pf1": 1}),
    ((64, 8192, 128), {"pf1": 1}),
]
only = sys.argv[1:]
results = []
t0 = time.time()
for (b, n, d), variants in POINTS:
    if only and f"{b}x{n}d{d}" not in only:
        continue
    knobs = {"plan": {}}
    for name, v in variants.items():
        if isinstance(v, dict):
            knobs[name] = v
            continue
        pf, nh = v if isinstance(v, tuple) else (v, False)
        knobs[name] = {"l2_prefetch": pf, **({"nohint": True} if nh else {})}

    def check(outs):
        ref = outs["plan"]
        for name, out in outs.items():
            if not (np.isfinite(out).all() and np.array_equal(out, ref)):
                raise AssertionError(f"{b}x{n} d{d} {name}: output differs from the plan's "
                                     f"(max {np.nanmax(np.abs(out - ref)):.3g})")
        print(f"check {b}x{n} d{d}: {len(outs)} outputs bit-identical to the plan's, all finite", flush=True)

    shape = {"heads_q": 32, "heads_kv": 8, "page_size": 64}
    nbytes = 2 * b * n * 8 * d * 2
    for rnd in range(2):
        try:
            plans, timing, _ = B._interleaved(b, n, d, knobs, shape, 40, check, what="l2pf")
        except Exception as exc:
            print(f"{b}x{n} d{d}: {type(exc).__name__}: {exc}", flush=True)
            break
        base = timing["plan"].stats.p50_s
        for name, t in timing.items():
            row = {"point": f"{b}x{n} d{d}", "round": rnd, "variant": name,
                   "kernel": kernel_label(plans[name].kernel), "splits": plans[name].splits,
                   "ctas_per_sm": plans[name].ctas_per_sm, "p50_us": t.stats.p50_s * 1e6,
                   "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
            results.append(row)
            print(f"AB r{rnd} {b}x{n} d{d} {name:6s} {row['kernel']:24s} s{row['splits']} {row['ctas_per_sm']}/SM "
                  f"p50 {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s {row['vs_plan']:+.2%}", flush=True)
        with open(f"{OUT}/ab_l2pf.json", "w") as f:
            json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)

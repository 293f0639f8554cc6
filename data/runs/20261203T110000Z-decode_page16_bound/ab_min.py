"""A/B: page-16 d128 builds bounded by __launch_bounds__ to more CTAs per SM (min_ctas), through labkit decode
compare's own machinery, with plan_call wrapped so a build may carry min_ctas (a device-side experiment only)."""
import dataclasses, json, sys, time
from concurrent.futures import ProcessPoolExecutor

import labkit.workloads.decode.plan as P

orig = P.plan_call


def patched(g, *, min_ctas=None, unbounded=False, **kw):
    plan = orig(g, **kw)
    if unbounded:
        min_ctas = 0
    if min_ctas is not None:
        kb = dataclasses.replace(plan.kernel, min_ctas=min_ctas)
        per_sm = P.occupancy(kb, kw.get("arch", "sm_90"))
        plan = dataclasses.replace(plan, kernel=kb, ctas_per_sm=per_sm, pdl=per_sm == 1)
    return plan


def install():
    for name, mod in list(sys.modules.items()):
        if name.startswith("labkit.workloads.decode") and getattr(mod, "plan_call", None) is orig:
            mod.plan_call = patched


POINTS = [  # the plan (bounded one-stage builds at pages of 16) against the plan of 90655c8 and load variants
    (256, 1024, [dict(unbounded=True), dict(page_prefetch=False), dict(wide_boxes=False, page_prefetch=False)]),
    (64, 1024, [dict(stages=3), dict(page_prefetch=False), dict(unbounded=True)]),
    (128, 1024, [dict(unbounded=True), dict(page_prefetch=False)]),
    (64, 8192, [dict(stages=3), dict(page_prefetch=False)]),
    (64, 4096, [dict(stages=3)]),
    (256, 8192, [dict(unbounded=True)]),
]


def warm(job):
    import labkit.workloads.decode.compare  # noqa: F401
    install()
    from labkit.workloads.decode.build import compile_kernel
    from labkit.workloads.decode.run import geometry_for
    b, n, kw = job
    g = geometry_for(b, n, head_dim=128, heads_q=32, heads_kv=8, page_size=16)
    plan = patched(g, **kw)
    compile_kernel(plan.kernel)
    return f"{b}x{n} {kw}: {plan.ctas_per_sm}/SM"


if __name__ == "__main__":
    out = sys.argv[1]
    jobs = [(b, n, kw) for b, n, builds in POINTS for kw in ({}, *builds)]
    with ProcessPoolExecutor(14) as ex:
        for r in ex.map(warm, jobs):
            print(r, flush=True)
    import labkit.workloads.decode.compare as C
    install()
    import pandas as pd
    rows = []
    for b, n, builds in POINTS:
        t = time.time()
        try:
            rs = C.compare_builds(b, n, 128, tuple(builds), page_size=16, iterations=int(sys.argv[2]))
        except Exception as exc:  # keep going: one point's failure is a row of its own
            print(f"== {b}x{n} p16 FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        rows += rs
        df = pd.DataFrame(rs)[["batch", "kv_len", "splits", "kernel", "ctas_per_sm", "p50_us", "TBps", "build",
                               "vs_plan", "max_diff", "bit_equal"]]
        print(f"== {b}x{n} p16 ({time.time() - t:.0f} s)\n{df.to_string(index=False)}", flush=True)
        with open(out, "w") as f:
            json.dump(rows, f, indent=1, default=str)

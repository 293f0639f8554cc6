"""Is PDL what the bench's cold samples charge labkit's one-CTA-per-SM plan at batch 12-13 on an H100 (under ncu, with
no PDL in play, the plan trails cuDNN by 1.6-2.1 % at 12 x 8k and 13 x 8k; in the bench by 2.8-5.6 %)? labkit's plan,
the same plan launched without PDL, and one 4-warp 3-stage CTA per unit (no PDL), in the bench's cold mode (memset
flush), p50 of 20 per run, 8 rounds in shuffled order; every output compared with the plan's."""
import dataclasses
import random
import sys

import numpy as np

import labkit.workloads.decode.run as run_mod
from labkit.workloads.decode import DecodeGeometry, make_inputs, run_decode

plan_for_device = run_mod.plan_for_device
VARIANTS = ("plan", "plan_no_pdl", "w4s3")


def timed(x, variant):
    if variant == "plan_no_pdl":
        run_mod.plan_for_device = lambda *a, **k: dataclasses.replace(plan_for_device(*a, **k), pdl=False)
    try:
        knobs = dict(warps=4, stages=3) if variant == "w4s3" else {}
        r = run_decode(x, splits=1 if variant == "w4s3" else None, iterations=20, mode="cold", **knobs)
    finally:
        run_mod.plan_for_device = plan_for_device
    return r


rng = random.Random(7)
for b, n in ((12, 8192), (13, 8192), (12, 16384)):
    g = DecodeGeometry(b, 32, 8, 128, 64, n // 64, b * n // 64 + 8)
    x = make_inputs(g, seq_lens=np.full(b, n), seed=1, share_pages=False)
    ref = None
    p50 = {v: [] for v in VARIANTS}
    for rnd in range(8):
        order = list(VARIANTS)
        rng.shuffle(order)
        for v in order:
            r = timed(x, v)
            if rnd == 0:
                print(f"{b}x{n} {v}: {r.plan}", flush=True)
            used = ~np.isnan(r.out)
            if ref is None:
                ref = r.out
            assert np.allclose(r.out[used], ref[used], atol=2e-3, rtol=0), f"{v}: output differs"
            p50[v].append(r.timing.stats.p50_s * 1e6)
    base = np.median(p50["plan"])
    for v in VARIANTS:
        m = np.median(p50[v])
        print(f"{b}x{n} {v:12s} median of 8 p50s {m:8.2f} us ({(m / base - 1) * 100:+.2f} %), "
              f"range {min(p50[v]):.2f}-{max(p50[v]):.2f}", flush=True)
sys.exit(0)

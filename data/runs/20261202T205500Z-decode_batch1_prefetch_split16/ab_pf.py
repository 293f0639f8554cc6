"""L2 prefetch, second round (-DL2_PREFETCH=n, PF_POLICY=1 evict_last / 2 no hint; device A/B): the CTA asks L2 for the n stages past its ring as soon as its ring's loads
are issued (PF_SLIDE=1: and each refill asks for the stage n past it), so a refill's TMA loads hit L2 instead of
DRAM. Issued by thread 0 (PF_ISSUER=0) or the last warp's lane 0. Against the plan's build, same K/V, splits and
clusters; first the variants against exact attention over labkit's correctness cases, then per point the variants
bit-identical to the plan, cold interleaved rounds (p50 of 40, three rounds, shuffled), the short calls also in a
CUDA graph. Thread 0's stamps (DIAG_LOOP is not in this diff) are not taken."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import geometry as G  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode import study as S  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32, make_inputs  # noqa: E402
from labkit.workloads.decode.reference import decode_reference  # noqa: E402

OUT = os.environ["R"]
MODE = {"v": None}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)

    @property
    def threads(self):  # the launch's block: one more warp with a producer
        return 32 * (self.warps + any("PRODUCER_WARP=1" in d for d in self.defines))


_plan = R.plan_for_device
W7 = "-DPF_ISSUER=(WARPS * 32 - 32)"
VARIANTS = {
    "pf8L": ("-DL2_PREFETCH=8", "-DPF_POLICY=1"),
    "pf8wL": ("-DL2_PREFETCH=8", W7, "-DPF_POLICY=1"),
    "pf4swL": ("-DL2_PREFETCH=4", "-DPF_SLIDE=1", W7, "-DPF_POLICY=1"),
    "pf8wN": ("-DL2_PREFETCH=8", W7, "-DPF_POLICY=2"),
}
WIDE = set()


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    v = MODE["v"]
    if v in VARIANTS or v in WIDE:
        fields = {f.name: getattr(p.kernel, f.name) for f in dataclasses.fields(G.KernelBuild)}
        kb = DiagBuild(**{**fields, "wide_boxes": v in WIDE}, defines=VARIANTS.get(v, ()))
        p = dataclasses.replace(p, kernel=kb)
    return p


R.plan_for_device = plan_for_device
results = {"ab": [], "stamps": {}}


def ab(b, n, d, hq, hk, graph=False):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", *VARIANTS)
    runners, plans, outs, ctxs = {}, {}, {}, []
    try:
        for name in variants:
            MODE["v"] = name
            try:
                ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk)
                runner, plans[name], _ = ctx.__enter__()
            finally:
                MODE["v"] = None
            ctxs.append(ctx)
            runner.buffers["out"].fill(0xFFFF)  # poison (bf16 NaN)
            runner.run_once()
            outs[name] = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
            runners[name] = runner
        label = kernel_label(plans["plan"].kernel)
        same = all(bool(np.isfinite(outs[v]).all() and np.array_equal(outs[v], outs["plan"])) for v in VARIANTS)
        print(f"check {b}x{n} d{d} {hq}/{hk} {label} splits {plans['plan'].splits}: variants bit-identical to the plan: "
              f"{same}", flush=True)
        if not same:
            raise AssertionError("a variant differs")
        fns = {name: (lambda r=r: r.launch_call(0)) for name, r in runners.items()}
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name, "kernel": label,
                       "splits": plans[name].splits, "mode": "cold", "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results["ab"].append(row)
                print(f"r{rnd} {row['point']:18s} {name:6s} {label:18s} {row['p50_us']:8.2f} us {row['TBps']:6.3f}TB/s "
                      f"{row['vs_plan']:+.2%}", flush=True)
            if graph:
                gt = {name: time_gpu(f, name=name, mode="graph", iterations=40, graph_calls=20).stats.p50_s
                      for name, f in fns.items()}
                for name, v in gt.items():
                    results["ab"].append({"point": f"{b}x{n} d{d} {hq}/{hk}", "round": rnd, "variant": name,
                                          "mode": "graph", "p50_us": v * 1e6, "vs_plan": v / gt["plan"] - 1})
                print(f"r{rnd} {b}x{n} d{d} in a graph: " + ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in gt.items()),
                      flush=True)
        for name, r in runners.items():
            if not np.array_equal(bf16_to_f32(cp.asnumpy(r.buffers["out"])), outs[name]):
                raise AssertionError(f"{name}: timed calls wrote a different output")
    finally:
        runners.clear()
        for ctx in reversed(ctxs):
            ctx.__exit__(None, None, None)


checked = []


def correctness():
    bad = 0
    for name, (g, lens, q_lens) in S.CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=3)
        ref = decode_reference(x, g.head_dim ** -0.5)
        mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
        used = int(x.cu_seqlens_q[-1])
        for knobs in ({"warps": 4}, {"warps": 8, **({"dim_warps": 2} if g.head_dim == 256 else {})}):
            for stages in (1, 3):
                for splits, cl in ((1, None), (3, None), (2, True), (8, True)):
                    if splits > g.max_pages or (cl and g.group * g.max_q_len > 16):
                        continue
                    for v in ("pf4swL", "pf8L"):
                        MODE["v"] = v
                        try:
                            run = R.run_decode(x, splits=splits, stages=stages, cluster=cl, **knobs)
                        except Exception as exc:  # noqa: BLE001  (a build that does not fit)
                            print(f"skip {name} {knobs} stages {stages} splits {splits}: {type(exc).__name__}: {exc}",
                                  flush=True)
                            continue
                        finally:
                            MODE["v"] = None
                        err = np.abs(run.out[:used] - ref[:used])
                        ok = bool((err <= 2.0 ** -8 * (np.abs(ref[:used]) + mag[:used]) + 1e-3).all()
                                  and np.isnan(run.out[used:]).all())
                        bad += not ok
                        checked.append(ok)
                        print(f"{'check' if ok else 'FAILED'} {v} {name} {knobs} stages {stages} splits {splits} "
                              f"cluster {bool(cl)}: max err {np.nanmax(err):.2e}", flush=True)
    return bad


def save():
    with open(f"{OUT}/ab_pf.json", "w") as f:
        json.dump(results, f, indent=1)


t0 = time.time()
bad = correctness()
print(f"correctness: {bad} of {len(checked)} failed, {time.time() - t0:.0f} s", flush=True)
if bad:
    sys.exit(1)
POINTS = [(1, 8192, 128, 32, 8, True), (1, 32768, 128, 32, 8, False), (1, 8192, 256, 32, 8, False),
          (8, 8192, 128, 32, 8, False), (2, 704, 256, 24, 4, True), (64, 8192, 128, 32, 8, False)]
for pt in POINTS:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    save()
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
print(f"elapsed {time.time() - t0:.0f} s", flush=True)

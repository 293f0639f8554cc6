"""A stage's TMA loads shared by lane 0 of several warps (-DSPREAD_ISSUE=1: warp w issues loads w, w + ISSUERS, ...;
thread 0's arrive.expect_tx counts the stage) against the plan's build (thread 0 issues them all, in the prologue and
after each stage's release), same K/V, splits and clusters. First the variant against exact attention over labkit's
correctness cases (4- and 8-warp builds, 1 and 3 stages, split counts 1 and 3, clusters of 2 and 8); per point, outputs
poisoned, the variant bit-identical to the plan, cold interleaved rounds (p50 of 40, three rounds, shuffled), the short
calls also in a CUDA graph. Then thread 0's stamps (-DDIAG_CHAIN timeline build: entry, first page id in hand, its
first loads issued, first stage landed, exit, and its summed time in refills) both ways."""
import dataclasses
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import flush_l2, interleave, time_gpu  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode import geometry as G  # noqa: E402
from labkit.workloads.decode import run as R  # noqa: E402
from labkit.workloads.decode import study as S  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.inputs import bf16_to_f32, make_inputs  # noqa: E402
from labkit.workloads.decode.reference import decode_reference  # noqa: E402

OUT = os.environ["R"]
MODE = {"v": None}
DEFINES = {"spread": ("-DSPREAD_ISSUE=1",), "stamp_plan": ("-DDIAG_CHAIN",),
           "stamp_spread": ("-DDIAG_CHAIN", "-DSPREAD_ISSUE=1")}


@dataclasses.dataclass(frozen=True)
class DiagBuild(G.KernelBuild):
    defines: tuple = ()

    def options(self):
        return (*super().options(), *self.defines)


_plan = R.plan_for_device


def plan_for_device(g, **kw):
    p = _plan(g, **kw)
    if MODE["v"] in DEFINES:
        f = {fl.name: getattr(p.kernel, fl.name) for fl in dataclasses.fields(p.kernel)}
        p = dataclasses.replace(p, kernel=DiagBuild(**f, defines=DEFINES[MODE["v"]]))
    return p


R.plan_for_device = plan_for_device
results = {"ab": [], "stamps": {}}


def ab(b, n, d, hq, hk, graph=False):
    cp = cupy()
    nbytes = 2 * b * n * hk * d * 2
    variants = ("plan", "spread")
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
        same = bool(np.isfinite(outs["spread"]).all() and np.array_equal(outs["spread"], outs["plan"]))
        print(f"check {b}x{n} d{d} {hq}/{hk} {label} splits {plans['plan'].splits}: spread bit-identical to the plan: "
              f"{same}", flush=True)
        if not same:
            raise AssertionError("spread differs")
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


def stamps(b, n, d, variant, hq=32, hk=8, calls=15):
    cp = cupy()
    MODE["v"] = variant
    try:
        ctx = B.shape_runner(b, n, d, heads_q=hq, heads_kv=hk, timeline=True)
        runner, plan, _ = ctx.__enter__()
    finally:
        MODE["v"] = None
    try:
        runner.run_once()
        per = []
        for _ in range(calls):
            flush_l2()
            runner.run_once()
            rec = cp.asnumpy(runner.scratch[("decode", "timeline")]).view(np.uint64).reshape(-1, 6).astype(np.int64)
            base = rec[:, 2].min()
            f = {"pid": rec[:, 1], "issued": rec[:, 5], "first": rec[:, 4], "exit": rec[:, 3]}
            row = {f"{k}_p50": float(np.median(v - base)) for k, v in f.items()}
            row.update({"first_max": float(f["first"].max() - base), "exit_max": float(f["exit"].max() - base),
                        "refill_ns_p50": float(np.median(rec[:, 0]))})
            per.append(row)
        label = kernel_label(plan.kernel)
    finally:
        del runner
        ctx.__exit__(None, None, None)
    summary = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    key = f"{b}x{n} d{d} {hq}/{hk} {variant} {label}"
    results["stamps"][key] = {"ns_from_first_entry_median_of_calls": summary, "calls": calls}
    print(f"stamps {key}: " + ", ".join(f"{k} {v:.0f}" for k, v in summary.items()), flush=True)


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
                    MODE["v"] = "spread"
                    try:
                        run = R.run_decode(x, splits=splits, stages=stages, cluster=cl, **knobs)
                    except Exception as exc:  # noqa: BLE001  (a build that does not fit: not this variant's concern)
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
                    print(f"{'check' if ok else 'FAILED'} spread {name} {knobs} stages {stages} splits {splits} "
                          f"cluster {bool(cl)}: max err {np.nanmax(err):.2e}", flush=True)
    return bad


def save():
    with open(f"{OUT}/ab_spread.json", "w") as f:
        json.dump(results, f, indent=1)


t0 = time.time()
bad = correctness()
print(f"correctness: {bad} of {len(checked)} failed, {time.time() - t0:.0f} s", flush=True)
if bad:
    sys.exit(1)
POINTS = [(1, 8192, 128, 32, 8, True), (2, 704, 256, 24, 4, True), (1, 1024, 128, 32, 8, True),
          (64, 1024, 128, 32, 8, False), (256, 1024, 128, 32, 8, False), (1, 32768, 128, 32, 8, False),
          (8, 8192, 128, 32, 8, False), (8, 1024, 128, 32, 8, False), (64, 8192, 128, 32, 8, False),
          (8, 32768, 256, 32, 8, False), (64, 1024, 256, 32, 8, False), (256, 1024, 256, 32, 8, False)]
for pt in POINTS:
    try:
        ab(*pt)
    except Exception as exc:  # noqa: BLE001
        print(f"ab {pt}: {type(exc).__name__}: {exc}", flush=True)
    cupy().get_default_memory_pool().free_all_blocks()
    save()
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
for pt in [(1, 8192, 128, 32, 8), (1, 1024, 128, 32, 8), (2, 704, 256, 24, 4), (8, 8192, 128, 32, 8),
           (64, 1024, 128, 32, 8)]:
    for v in ("stamp_plan", "stamp_spread", "stamp_plan", "stamp_spread"):
        try:
            stamps(*pt[:3], v, *pt[3:])
        except Exception as exc:  # noqa: BLE001
            print(f"stamps {pt} {v}: {type(exc).__name__}: {exc}", flush=True)
        save()
print(f"elapsed {time.time() - t0:.0f} s", flush=True)

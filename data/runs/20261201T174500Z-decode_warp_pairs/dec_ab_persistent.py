"""A/B on the H200: persistent CTAs (pers: PERSISTENT=1, one CTA per SM slot walking the (sequence, KV head, row
block) units, one split each, thread 0 keeping the stage ring going across units so the next unit's first stages
load while this one merges; at head_dim 256 the warp-pair build with 2 stages, the most that fits beside a separate
merge buffer; at 128 the plan's own build) against the committed plan (plan). Checks first: every element against
exact attention for the persistent builds, with the CTA count cut to 3 SMs' worth so each CTA walks several units
(ragged lengths, empty row blocks of multi-token queries); then per point one runner per variant on the same data,
timed interleaved (cold, shuffled rounds)."""
import json, os, sys, time, dataclasses
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, os.getcwd())
import numpy as np

import labkit.workloads.decode.geometry as geo
import importlib
bld = importlib.import_module("labkit.workloads.decode.build")
from labkit.kernels import compile_cubin

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("OUT", "/tmp")
ORIG_OPTIONS, ORIG_PATH = geo.KernelBuild.options, bld.kernel_path
STATE = {"extra": (), "dir": None}
geo.KernelBuild.options = lambda self: ORIG_OPTIONS(self) + STATE["extra"]
bld.kernel_path = lambda f, name: (os.path.join(HERE, STATE["dir"], name) if STATE["dir"] else ORIG_PATH(f, name))
# name: (kernel folder under .dbg/dec, extra NVRTC options, plan overrides)
VARIANTS = {"plan": (None, (), {}), "pers": (None, (), {})}


def variant_overrides(v, plan, d):
    if v == "plan":
        return {}
    return dict(persistent=True, stages=2 if d == 256 else plan.kernel.stages)


import labkit.workloads.decode.run as run_mod
ORIG_PLAN_CALL = run_mod.plan_call


def plan_call_sms(g, **kw):  # the checks' persistent plans: as many CTAs as STATE["sms"] SMs hold
    if STATE.get("sms"):
        kw["sms"] = STATE["sms"]
    return ORIG_PLAN_CALL(g, **kw)


run_mod.plan_call = plan_call_sms


POINTS = [(64, 1024, 256), (128, 1024, 256), (256, 1024, 256), (64, 8192, 256), (32, 1024, 256), (96, 1024, 256),
          (64, 1024, 128), (128, 1024, 128), (256, 1024, 128), (64, 8192, 128)]
HEADS = {(2, 704, 256): dict(heads_q=24, heads_kv=4)}
LOG = open(f"{OUT}/dec_ab.log", "a")
RES = {"checks": [], "rows": [], "floor": None, "sorted": [], "plans": {}}


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True); LOG.write(s + "\n"); LOG.flush()


def save():
    json.dump(RES, open(f"{OUT}/dec_ab.json", "w"), indent=1)


def set_variant(name, min_ctas=None):
    folder, extra, _ = VARIANTS[name]
    STATE["dir"] = folder
    STATE["extra"] = extra
    STATE["variant"] = name


def _compile(args):
    path, opts = args
    compile_cubin(path, arch="sm_90", options=opts)
    return path


def plan_overrides(plan):
    k = plan.kernel
    return dict(splits=plan.splits, stages=k.stages, qk_chains=k.qk_chains, warps=k.warps, dim_warps=k.dim_warps,
                keys_per_warp=k.keys_per_warp, kv_evict_first=k.kv_evict_first, cluster=k.cluster_splits > 1)


def main():
    from labkit.workloads.decode.plan import plan_call, describe_plan
    from labkit.workloads.decode.run import geometry_for, run_decode
    t0 = time.time()
    # ---- plans, and every build compiled up front in parallel (NVRTC, cached on disk)
    jobs, plans = [], {}
    for (b, n, d) in POINTS:
        set_variant("plan")
        plan = plan_call(geometry_for(b, n, head_dim=d, **HEADS.get((b, n, d), {})))
        plans[(b, n, d)] = plan
        RES["plans"][f"{b}x{n} d{d}"] = describe_plan(plan)
        for v in VARIANTS:
            set_variant(v, plan.ctas_per_sm)
            ov = plan_overrides(plan); ov.pop("splits")
            ov.update(variant_overrides(v, plan, d))
            kb = plan_call(geometry_for(b, n, head_dim=d, **HEADS.get((b, n, d), {})), splits=plan.splits, **ov).kernel
            jobs.append((str(bld.kernel_path(bld.__file__, kb.source)), kb.options()))
    with ProcessPoolExecutor(12) as ex:
        list(ex.map(_compile, sorted(set(jobs))))
    log("compiled", len(set(jobs)), "builds in", round(time.time() - t0), "s")

    # ---- checks: every element against exact attention
    from tests.gpu.test_decode_gpu import _check, CASES
    from labkit.workloads.decode import make_inputs
    from labkit.errors import ArgumentError
    from labkit.workloads.decode import DecodeGeometry
    bad = 0
    cases = dict(CASES)
    cases["rows128_d256"] = (DecodeGeometry(3, 32, 2, 256, 32, 12, 40, max_q_len=8), [333, 8, 97])
    cases["rows128_d128"] = (DecodeGeometry(3, 32, 2, 128, 32, 12, 40, max_q_len=8), [333, 8, 97])
    cases["many_d256"] = (DecodeGeometry(24, 32, 8, 256, 64, 6, 24 * 6), [1 + (37 * i) % 380 for i in range(24)])
    cases["many_d128"] = (DecodeGeometry(24, 32, 8, 128, 16, 24, 24 * 24), [1 + (53 * i) % 380 for i in range(24)])
    for v in (() if os.environ.get("SKIP_CHECKS") else ("pers",)):
        set_variant(v)
        for name, (g, lens) in cases.items():
            q_lens = [8, 1, 5] if g.max_q_len == 8 else None
            x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=7)
            for sms in (3, 132):
                for kw in ([dict(stages=2)] if g.head_dim == 256 else [dict(stages=1, qk_chains=1), dict(stages=2)]):
                    STATE["sms"] = sms
                    try:
                        r = run_decode(x, splits=1, variant="mma", persistent=True, **kw)
                        e, ok = float(_check(x, r)), True
                    except Exception as exc:  # noqa
                        e, ok = repr(exc)[:300], False; bad += 1
                    finally:
                        STATE["sms"] = None
                    RES["checks"].append(dict(variant=v, case=name, build=str(kw), sms=sms, ok=ok, err=e))
    log("checks:", len(RES["checks"]), "failed:", bad, "max err", max([c["err"] for c in RES["checks"] if c["ok"]], default=None))
    for c in [c for c in RES["checks"] if not c["ok"]][:10]:
        log("  FAIL", c)
    save()
    if bad:
        return

    # ---- cold-timing floor: an empty kernel, 128 CTAs
    from labkit.cuda import cupy
    from labkit.timing import time_gpu, interleave
    cp = cupy()
    empty = cp.RawKernel('extern "C" __global__ void empty_kernel() {}', "empty_kernel")
    t = time_gpu(lambda: empty((128,), (128,), ()), name="empty", mode="cold", iterations=40)
    RES["floor"] = dict(p50_us=t.stats.p50_s * 1e6)
    log("empty kernel, cold: p50 %.2f us" % (t.stats.p50_s * 1e6))

    # ---- per point: one runner per variant on the same data, bitwise equal outputs, interleaved cold timing
    from labkit.workloads.decode.bench import _gpu_fill
    from labkit.workloads.decode.run import decode_runner
    import tempfile
    for (b, n, d) in POINTS:
        g = geometry_for(b, n, head_dim=d, **HEADS.get((b, n, d), {}))
        plan = plans[(b, n, d)]
        ov = plan_overrides(plan)
        runners, tmps = {}, []
        for v in VARIANTS:
            set_variant(v, plan.ctas_per_sm)
            tmp = tempfile.TemporaryDirectory(); tmps.append(tmp)
            cp.random.seed(b * 7 + n)  # every variant reads the same K/V: outputs compare bit for bit
            kw = {k: w for k, w in ov.items() if k != "splits"}
            kw.update(variant_overrides(v, plan, d))
            r, p = decode_runner(g, plan.splits, tmp.name, _gpu_fill(g, n, seed=b * 7 + n), **kw)
            assert p.splits == plan.splits and p.kernel.cluster_splits == plan.kernel.cluster_splits, (v, p, plan)
            RES["plans"][f"{b}x{n} d{d} {v}"] = describe_plan(p)
            r.run_once()
            r.first_out = cp.asnumpy(r.buffers["out"]).copy()
            runners[v] = r
        ref = runners["plan"].buffers["out"]
        same = {v: bool(cp.all(r.buffers["out"] == ref)) for v, r in runners.items()}
        nbytes = 2 * b * n * g.heads_kv * d * 2
        timing = interleave({v: (lambda r=r: r.launch_call(0)) for v, r in runners.items()},
                            iterations=30, warmup=2, mode="cold", order="shuffle", seed=b + n + d)
        from labkit.workloads.decode.inputs import bf16_to_f32
        drift = {v: float(np.nanmax(np.abs(bf16_to_f32(cp.asnumpy(r.buffers["out"])) - bf16_to_f32(r.first_out))))
                 for v, r in runners.items()}  # the timed calls against each runner's first call
        row = {"point": f"{b}x{n} d{d}", "plan": describe_plan(plan), "same_output": same, "drift_after_timing": drift,
               **{v: t.stats.p50_s * 1e6 for v, t in timing.items()}}
        RES["rows"].append(row)
        log(f"{b:4d}x{n:6d} d{d} {describe_plan(plan)[:60]:60s} " +
            " ".join(f"{v} {row[v]:8.2f}" for v in VARIANTS) +
            "  TB/s " + " ".join(f"{v} {nbytes / row[v] / 1e6:.3f}" for v in VARIANTS) +
            f"  same {same} drift {drift}")
        save()
        del runners, r, ref
        cp.get_default_memory_pool().free_all_blocks()

    log("elapsed", round(time.time() - t0), "s")


if __name__ == "__main__":
    main()

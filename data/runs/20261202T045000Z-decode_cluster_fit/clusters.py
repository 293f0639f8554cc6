"""How many thread-block clusters of the decode kernel's 1-CTA-per-SM builds the H200 holds at once
(cuOccupancyMaxActiveClusters), per cluster size; then the calls whose plan asks for more clustered CTAs than that:
the plan against the same splits without a cluster and against fewer splits; interleaved cold, shuffled, 40 rounds."""
import dataclasses, json, os
from contextlib import ExitStack
import numpy as np
from labkit.cuda import check, cupy, load_function
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.build import compile_kernel, occupancy
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.run import geometry_for
from cuda.bindings import driver as cu

R = os.environ["R"]
cp = cupy()
res = {"max_active_clusters": {}, "ab": {}}
for d, warps_kw in ((128, dict(warps=8, stages=2)), (256, dict(warps=8, dim_warps=2, stages=2)),
                    (256, dict(warps=8, dim_warps=2, stages=1))):
    g = geometry_for(8, 8192, head_dim=d)
    for size in (2, 4, 8):
        p = plan_call(g, splits=size, cluster=True, **warps_kw)
        kb = p.kernel
        func, module = load_function(compile_kernel(kb).image, "paged_decode", kb.dynamic_smem_bytes)
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = size, 8, 8
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = kb.threads, 1, 1
        cfg.sharedMemBytes = kb.dynamic_smem_bytes
        cfg.hStream = cu.CUstream(cp.cuda.get_current_stream().ptr)
        cfg.numAttrs = 0
        n = check(cu.cuOccupancyMaxActiveClusters(func, cfg), "cuOccupancyMaxActiveClusters")
        key = f"d{d} {kernel_label(kb)}"
        res["max_active_clusters"][key] = {"cluster": size, "clusters": int(n), "ctas": int(n) * size,
                                           "ctas_per_sm": occupancy(kb).ctas_per_sm, "smem": kb.dynamic_smem_bytes}
        print(f"clusters {key}: {n} of {size} = {int(n) * size} CTAs at once ({occupancy(kb).ctas_per_sm} per SM)",
              flush=True)
json.dump(res, open(f"{R}/clusters.json", "w"), indent=1)
POINTS = [((8, 8192, 256), dict(heads_q=24, heads_kv=4)), ((4, 8192, 256), {}), ((4, 1024, 256), {}),
          ((4, 32768, 256), {})]
for (b, n, d), heads in POINTS:
    g = geometry_for(b, n, head_dim=d, **heads)
    plan = plan_call(g)
    s = plan.splits
    variants = {"plan": {}, "nocluster": dict(splits=s, cluster=False), "half": dict(splits=max(1, s // 2)),
                "half_cl": dict(splits=max(2, s // 2), cluster=True)}
    with ExitStack() as st:
        rs, outs, labels = {}, {}, {}
        for name, kw in variants.items():
            try:
                r, pl, _ = st.enter_context(shape_runner(b, n, d, **heads, **kw))
            except Exception as exc:
                print(f"{b}x{n} d{d} {heads} {name}: {type(exc).__name__}: {exc}", flush=True); continue
            r.buffers["out"].fill(0xFFFF); r.run_once()
            outs[name], rs[name] = bf16_to_f32(cp.asnumpy(r.buffers["out"])), r
            labels[name] = f"{kernel_label(pl.kernel)} s{pl.splits} {pl.ctas_per_sm}/SM"
        ref = outs["plan"]; scale = float(np.abs(ref).max())
        for name in list(rs):
            if not (np.isfinite(outs[name]).all() and np.abs(outs[name] - ref).max() <= 2.0 ** -7 * scale):
                print(f"check {b}x{n} d{d} {name}: DROPPED", flush=True); rs.pop(name)
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan"].stats.p50_s
        for k, v in t.items():
            hq = heads.get("heads_q", 32); hk = heads.get("heads_kv", 8)
            print(f"AB {b}x{n} d{d} {hq}/{hk} {k:9s} {labels[k]:26s} p50 {v.stats.p50_s*1e6:8.2f} us "
                  f"{v.stats.p50_s/base-1:+.2%}", flush=True)
            res["ab"][f"{b}x{n}_d{d}_{hq}-{hk}/{k}"] = {"kernel": labels[k], "p50_us": v.stats.p50_s * 1e6}
        rs.clear()
    json.dump(res, open(f"{R}/clusters.json", "w"), indent=1)

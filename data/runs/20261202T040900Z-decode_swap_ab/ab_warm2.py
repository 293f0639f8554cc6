"""1 x 8k d128, hot (K/V warm in L2: the stage loop sets the time) and cold: the plan against swapped builds (its own
knobs, one Q K^T chain, 32 keys per warp) and the plan at 32 keys per warp; SASS of the plan's and the swap's cubins
(compiled here, by this machine's NVRTC)."""
import os, subprocess, glob
from contextlib import ExitStack
from labkit.timing import interleave
from labkit.workloads.decode.bench import shape_runner, kernel_label
from labkit.workloads.decode.build import compile_kernel
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.run import geometry_for

R = os.environ["R"]
cuobj = subprocess.run("command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump | head -1", shell=True,
                       capture_output=True, text=True).stdout.strip()
g = geometry_for(1, 8192)
for name, kw in {"plan": {}, "swap": dict(swap_ab=True)}.items():
    path = f"{R}/b1_8k_{name}.cubin"
    open(path, "wb").write(compile_kernel(plan_call(g, **kw).kernel).image)
    sass = subprocess.run([cuobj, "-sass", path], capture_output=True, text=True)
    open(f"{R}/sass_b1_8k_{name}.txt", "w").write(sass.stdout + sass.stderr)
    os.remove(path)
V = {"plan": {}, "swap": dict(swap_ab=True), "swap_c1": dict(swap_ab=True, qk_chains=1),
     "swap_k32s2": dict(swap_ab=True, keys_per_warp=32, stages=2), "plan_k32s2": dict(keys_per_warp=32, stages=2)}
for mode in ("hot", "cold"):
    with ExitStack() as st:
        rs, labels = {}, {}
        for name, kw in V.items():
            r, plan, _ = st.enter_context(shape_runner(1, 8192, 128, **kw)); r.run_once(); rs[name] = r
            labels[name] = f"{kernel_label(plan.kernel)} s{plan.splits} {plan.ctas_per_sm}/SM"
        t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in rs.items()}, iterations=40, warmup=1,
                       mode=mode, order="shuffle")
        base = t["plan"].stats.p50_s
        for k, v in t.items():
            print(f"{mode} 1x8k d128 {k:10s} {labels[k]:28s} p50 {v.stats.p50_s*1e6:8.2f} us {v.stats.p50_s/base-1:+.2%}",
                  flush=True)

"""Why the persistent build's steady state was slower (64 x 8k d256 +4.8 % with few unit changes): the plan's 2-stage
call against the same call asking for the persistent build's shared memory (225 KB: the L1 carve-out shrinks), and
the persistent build, interleaved cold on the same data; outputs checked against the plan's."""
import json, os, sys, tempfile
from contextlib import ExitStack
from pathlib import Path
import numpy as np
from labkit.cuda import cupy
from labkit.device import describe
from labkit.manifest import load
from labkit.manifest.runner import Runner
from labkit.timing import interleave
from labkit.workloads.decode.bench import _gpu_fill, kernel_label
from labkit.workloads.decode.build import build_plan
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.run import geometry_for

out = os.environ["R"]
cp = cupy()
dev = describe()
res = {}
for (b, n, d) in [(64, 8192, 256), (256, 1024, 256)]:
    g = geometry_for(b, n, head_dim=d)
    plans = {"plan s2": plan_call(g, sms=dev.sm_count, stages=2), "plan s3": plan_call(g, sms=dev.sm_count, stages=3),
             "pers s2": plan_call(g, sms=dev.sm_count, stages=2, persistent=True)}
    pers_smem = plans["pers s2"].kernel.dynamic_smem_bytes
    with tempfile.TemporaryDirectory() as tmp:
        runners = {}
        for name, extra in [("plan s2", 0), ("plan s2 +smem", 1), ("plan s3", 0), ("pers s2", 0)]:
            pl = plans[name.replace(" +smem", "")]
            d_ = Path(tmp) / name.replace(" ", "_").replace("+", "")
            path = build_plan(g, pl, d_)
            if extra:  # the same cubin and call, asking for as much shared memory as the persistent build
                doc = json.loads(path.read_text())
                doc["ops"]["decode"]["impl"]["launches"][0]["shared_mem"] = pers_smem
                path.write_text(json.dumps(doc))
            r = Runner(load(path), cubin_dirs=(d_,), fill=_gpu_fill(g, n, seed=b * 7 + n))
            r.buffers["out"].fill(0xFFFF); r.run_once()
            runners[name] = (r, bf16_to_f32(cp.asnumpy(r.buffers["out"])), kernel_label(pl.kernel))
        ref = runners["plan s2"][1]
        for name, (r, o, lab) in runners.items():
            print(f"check {b}x{n} d{d} {name}: max diff {float(np.abs(o - ref).max()):.3g} finite {np.isfinite(o).all()}", flush=True)
        t = interleave({k: (lambda r=v[0]: r.launch_call(0)) for k, v in runners.items()}, iterations=40, warmup=1,
                       mode="cold", order="shuffle")
        base = t["plan s2"].stats.p50_s
        for k, v in t.items():
            nbytes = 2 * b * n * 8 * d * 2
            print(f"AB {b}x{n} d{d} {k:14s} {runners[k][2]:18s} p50 {v.stats.p50_s*1e6:8.2f} us {nbytes/v.stats.p50_s/1e12:5.3f} TB/s "
                  f"{v.stats.p50_s/base-1:+.2%}", flush=True)
            res[f"{b}x{n}_d{d}/{k}"] = v.stats.p50_s * 1e6
        runners.clear()
    cp.get_default_memory_pool().free_all_blocks()
json.dump(res, open(f"{out}/ab2.json", "w"), indent=1)

"""Wave-quantization probe: the committed plan at batches around 256 x 1k d256 (3 CTAs per SM: 396 slots,
2048 units = 5.17 waves) and d128 (4 per SM: 528 slots). If the last partial wave costs what the CTA model says,
TB/s peaks where units / slots is just under a whole number."""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from labkit.workloads.decode.bench import bench_point
from labkit.workloads.decode.plan import plan_call, describe_plan
from labkit.workloads.decode.run import geometry_for
OUT = os.environ.get("OUT", "/tmp")
rows = []
pts = [(b, 1024, 256) for b in (148, 198, 232, 247, 256, 264, 272, 297)] + \
      [(b, 1024, 128) for b in (198, 256, 264, 330)] + [(b, 8192, 256) for b in (64, 66, 99)]
for rnd in range(2):
    for (b, n, d) in pts:
        plan = plan_call(geometry_for(b, n, head_dim=d))
        r = bench_point(b, n, d, iterations=30)
        units = b * 8
        r.update(round=rnd, plan=describe_plan(plan), waves=units * plan.splits / (132 * plan.ctas_per_sm))
        rows.append(r)
        print(f"{rnd} {b:4d}x{n:5d} d{d} waves {r['waves']:5.2f} {r['p50_us']:9.2f} us {r['TBps']:.3f} TB/s  {r['plan']}", flush=True)
        json.dump(rows, open(f"{OUT}/batch_probe.json", "w"), indent=1)

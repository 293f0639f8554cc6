"""A/B: the same calls over a plain pool [pages, Hkv, 64, D] (16/32 KB contiguous per page and head) and over the
seed's interleaved pool kv[pages, 2, 64, Hkv, 2, D] (a head's token rows strided by 2 x Hkv x D x 2 B), committed
kernel and plan; interleaved cold timing, 30 shuffled rounds."""
import json, os, sys, tempfile
sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy
from labkit.timing import interleave
from labkit.workloads.decode.bench import _gpu_fill
from labkit.workloads.decode.plan import describe_plan
from labkit.workloads.decode.run import decode_runner, geometry_for
cp = cupy()
OUT = os.environ.get("OUT", "/tmp")
res = []
for (b, n, d) in [(8, 8192, 128), (64, 1024, 128), (64, 8192, 128), (8, 32768, 256), (256, 1024, 256), (1, 8192, 128)]:
    runners, tmps = {}, []
    for layout in ("plain", "interleaved"):
        g = geometry_for(b, n, head_dim=d, layout=layout)
        tmp = tempfile.TemporaryDirectory(); tmps.append(tmp)
        r, plan = decode_runner(g, None, tmp.name, _gpu_fill(g, n, seed=b * 7 + n))
        r.run_once()
        runners[layout] = r
    t = interleave({k: (lambda r=r: r.launch_call(0)) for k, r in runners.items()}, iterations=30, warmup=2, mode="cold",
                   order="shuffle")
    nbytes = 2 * b * n * 8 * d * 2
    row = {"point": f"{b}x{n} d{d}", "plan": describe_plan(plan), **{k: v.stats.p50_s * 1e6 for k, v in t.items()}}
    res.append(row)
    print(row, {k: round(nbytes / row[k] / 1e6, 3) for k in runners}, flush=True)
    del runners, r
    cp.get_default_memory_pool().free_all_blocks()
json.dump(res, open(f"{OUT}/layout_ab.json", "w"), indent=1)

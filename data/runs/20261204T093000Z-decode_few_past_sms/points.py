"""The reach probe's calls: batch, kv_len, the plan's build without its tail as compare knobs, and its tail."""
import dataclasses, math
from labkit.workloads.decode.geometry import DecodeGeometry
from labkit.workloads.decode.plan import plan_call, describe_plan

def geom(b, n, p=64):
    pages = math.ceil(n / p)
    return DecodeGeometry(batch=b, heads_q=32, heads_kv=8, head_dim=128, page_size=p, max_pages=pages, num_pages=b * pages)

PTS = [(166, 8192), (168, 4096), (200, 2048), (204, 8192), (208, 2048), (210, 8192),
       (212, 8192), (218, 4096), (222, 2048), (268, 2048), (268, 4096),
       (228, 8192), (284, 4096), (292, 2048), (340, 4096), (346, 2048), (360, 4096), (400, 2048), (410, 4096),
       (470, 2048), (540, 2048), (600, 2048), (690, 2048)]
for b, n in PTS:
    g = geom(b, n)
    p = plan_call(g)
    k = p.kernel
    knobs = f"stages={k.stages},qk_chains={k.qk_chains},splits=1"
    q = plan_call(g, stages=k.stages, qk_chains=k.qk_chains, splits=1)
    same = dataclasses.replace(q.kernel, min_ctas=0) == dataclasses.replace(k, tail_splits=0, min_ctas=0)
    assert same and not q.tail_units, (b, n, q.kernel, k)
    print(b, n, knobs, p.tail_units, k.tail_splits, p.ctas_per_sm, round(b * n * 8 * 128 * 4 / 1e9, 2), describe_plan(p)[:60])

"""Every plan over a grid of geometries and knobs, as JSON lines: a refactor of plan.py must leave them equal."""
import itertools, json, sys
from labkit.errors import ArgumentError
from labkit.workloads.decode.geometry import DecodeGeometry
from labkit.workloads.decode.plan import plan_call

out = open(sys.argv[1], "w")
knobs = [{}, {"stages": 3}, {"cluster": False}, {"cluster": True}, {"splits": 4}, {"warps": 8}, {"page_prefetch": True},
         {"wide_boxes": True}, {"persistent": True}, {"timeline": True}, {"kv_evict_first": True}]
n = 0
for b, kv, d, p, (hq, hk), q in itertools.product((1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 64, 128, 256),
                                               (512, 1024, 2048, 4096, 8192, 16384, 32768), (128, 256),
                                               (16, 32, 64), ((32, 8), (24, 4), (8, 8), (64, 8)), (1, 2)):
    pages = kv // p
    g = DecodeGeometry(batch=b, heads_q=hq, heads_kv=hk, head_dim=d, page_size=p, max_pages=pages,
                       num_pages=b * pages, max_q_len=q)
    for k in (knobs if (d, p, (hq, hk), q) in {(128, 64, (32, 8), 1), (256, 64, (32, 8), 1), (128, 16, (32, 8), 1)}
              else knobs[:1]):
        try:
            r = plan_call(g, **k).to_dict()
        except ArgumentError as e:
            r = {"error": str(e)}
        out.write(json.dumps([b, kv, d, p, hq, hk, q, k, r]) + "\n")
        n += 1
print(n, "plans")

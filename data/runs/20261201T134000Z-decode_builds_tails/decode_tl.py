"""Per-CTA timelines (start/end, SM) of the large single-wave and many-wave d256 calls: how much SM time is idle."""
import json, os
import numpy as np
from labkit.workloads.decode.run import decode_timeline
out = os.environ.get("OUT", "/tmp")
res = {}
for key, (b, n, d, ov) in {"8x32768 d256": (8, 32768, 256, {}), "256x1024 d256": (256, 1024, 256, {}),
                           "64x8192 d128": (64, 8192, 128, {}), "256x8192 d128": (256, 8192, 128, {}),
                           "1x8192 d128": (1, 8192, 128, {})}.items():
    tl = decode_timeline(b, n, d, **ov)
    r = np.asarray(tl.records)
    res[key] = r[:, :6].tolist()
    t0, t1 = r[:, 2].min(), r[:, 3].max()
    busy = (r[:, 3] - r[:, 2]).sum()
    print(key, "ctas", len(r), "span us", (t1 - t0) / 1e3, "busy share of 132 SMs", busy / (132 * (t1 - t0)),
          "end spread us", np.percentile((r[:, 3] - t0) / 1e3, [0, 5, 50, 95, 100]).round(1), flush=True)
json.dump(res, open(f"{out}/decode_timelines.json", "w"))

"""A/B of decode kernel defines (KV_EVICT_FIRST: TMA loads of K/V with an L2 evict_first policy; SKIP_RESCALE:
a warp skips O's rescale when none of its rows' maxima moved) at the plan's build and splits, interleaved per
shape, 2 rounds; each variant is checked against the exact reference first."""
import json, os, time
import labkit.workloads.decode.geometry as geo
from labkit.workloads.decode.bench import bench_point, check_once

out = os.environ.get("OUT", "/tmp")
EXTRA = []
_orig = geo.KernelBuild.options
geo.KernelBuild.options = lambda self: _orig(self) + tuple(EXTRA)
VARIANTS = {"base": [], "ef": ["-DKV_EVICT_FIRST=1"], "sr": ["-DSKIP_RESCALE=1"],
            "ef_sr": ["-DKV_EVICT_FIRST=1", "-DSKIP_RESCALE=1"]}
for name, defs in VARIANTS.items():
    EXTRA[:] = defs
    print("check", name, check_once(), flush=True)
SHAPES = [(1, 8192, 128), (1, 1024, 128), (8, 1024, 128), (8, 8192, 128), (64, 1024, 128), (64, 8192, 128),
          (1, 32768, 128), (1, 8192, 256), (8, 1024, 256), (64, 1024, 256), (8, 32768, 256), (256, 1024, 256),
          (64, 8192, 256)]
SEED = dict(heads_q=24, heads_kv=4)
rows = []
t0 = time.time()
for rnd in range(2):
    names = list(VARIANTS)
    names = names[rnd % 4:] + names[:rnd % 4]
    for shape in SHAPES + [(2, 704, 256, "cold"), (2, 704, 256, "graph")]:
        b, n, d = shape[:3]
        mode = shape[3] if len(shape) > 3 else "cold"
        kw = SEED if len(shape) > 3 else {}
        for name in names:
            EXTRA[:] = VARIANTS[name]
            r = bench_point(b, n, d, mode=mode, **kw)
            r.update(round=rnd, variant=name)
            rows.append(r)
            print(f"r{rnd} {b:4d}x{n:6d} d{d} {mode:5s} {name:6s} {r['kernel']:12s} x{r['splits']:3d} "
                  f"{r['p50_us']:9.2f} us {r['TBps']:5.2f} TB/s", flush=True)
    print("elapsed", round(time.time() - t0), flush=True)
json.dump(rows, open(f"{out}/decode_ab2.json", "w"), indent=1)
import pandas as pd
df = pd.DataFrame(rows)
piv = df.groupby(["batch", "kv_len", "head_dim", "mode", "variant"])["p50_us"].min().unstack("variant")
piv["ef/base"] = piv["ef"] / piv["base"]
piv["sr/base"] = piv["sr"] / piv["base"]
piv["ef_sr/base"] = piv["ef_sr"] / piv["base"]
pd.set_option("display.width", 250)
print(piv.round(3).to_string())

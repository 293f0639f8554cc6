"""Does a single wave of 132 equal long CTAs (every SM) read faster than 128 (4 SMs idle)? d256, 1 CTA per SM."""
import os
from labkit.workloads.decode.bench import bench_point
for rnd in range(3):
    for (b, n, hq, hk, s) in [(11, 32768, 16, 4, 3), (8, 32768, 16, 4, 4), (8, 32768, 32, 8, 2), (33, 16384, 4, 1, 4), (32, 16384, 4, 1, 4)]:
        r = bench_point(b, n, 256, heads_q=hq, heads_kv=hk, splits=s, stages=2)
        ctas = b * hk * s
        print(f"r{rnd} {b}x{n} d256 {hq}/{hk} x{s} ctas {ctas} {r['kernel']} {r['p50_us']:.1f} us {r['TBps']:.3f} TB/s", flush=True)

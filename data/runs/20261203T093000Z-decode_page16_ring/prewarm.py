"""Compile every plan and build of points.txt in parallel, so the compares find their cubins cached."""
import sys
from concurrent.futures import ProcessPoolExecutor

def warm(line):
    from labkit.workloads.decode.run import geometry_for
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.compare import parse_build
    from labkit.workloads.decode.build import compile_kernel
    b, n, p, *builds = line.split()
    g = geometry_for(int(b), int(n), head_dim=128, heads_q=32, heads_kv=8, page_size=int(p))
    out = []
    for s in ("", *builds):
        plan = plan_call(g, **(parse_build(s) if s else {}))
        compile_kernel(plan.kernel)
        out.append(f"{b}x{n} p{p} {s or 'plan'}: ok")
    return out

if __name__ == "__main__":
    lines = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
    with ProcessPoolExecutor(int(sys.argv[2]) if len(sys.argv) > 2 else 12) as ex:
        for res in ex.map(warm, lines):
            print("\n".join(res))

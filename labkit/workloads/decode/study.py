"""Notebook 03's measurements, each one JSON-ready call: correctness over varied calls, the KV
bandwidth sweep (with peers and the copy ceiling), the split sweep, and the seed manifest's static
check beside labkit's own manifest for the same geometry."""

from pathlib import Path

import numpy as np

from .bench import bench_point, split_sweep
from .build import build
from .geometry import DecodeGeometry
from .inputs import make_inputs
from .reference import decode_reference
from .run import run_decode

CASES = {  # name: (geometry, seq_lens, q_lens)
    "G1 d128 page16, lengths 1 / 16 / 17": (DecodeGeometry(4, 4, 4, 128, 16, 12, 60), [1, 16, 17, 191], None),
    "G6 d256 page64 (seed geometry)": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22), [704, 65], None),
    "G6 d256 interleaved pool": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"), [63, 704], None),
    "G8 d128 page32": (DecodeGeometry(3, 32, 4, 128, 32, 40, 130), [1279, 32, 33], None),
    "G4 d128, 3 causal q tokens": (DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4), [300, 4, 97], [3, 3, 3]),
}


def correctness(splits: tuple[int, ...] = (1, 3)) -> list[dict]:
    """Every case and split count against exact float64 attention; every element checked."""
    rows = []
    for name, (g, lens, q_lens) in CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=len(rows))
        ref = decode_reference(x, g.head_dim ** -0.5)
        magnitude = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
        used = int(x.cu_seqlens_q[-1])
        for s in splits:
            run = run_decode(x, splits=s)
            err = np.abs(run.out[:used] - ref[:used])
            bound = 2.0 ** -8 * (np.abs(ref[:used]) + magnitude[:used]) + 1e-3
            rows.append({"case": name, "splits": s, "elements": int(err.size), "max_abs_err": float(err.max()),
                         "within_bound": bool((err <= bound).all()),
                         "unwritten_rows_untouched": bool(np.isnan(run.out[used:]).all())})
    return rows


def bandwidth(batches, kv_lens, *, head_dim: int = 128, page_size: int = 64, heads_q: int = 32, heads_kv: int = 8,
              peers: bool = True, iterations: int = 20, max_kv_bytes: float = 9e9) -> dict:
    """KV TB/s at every (batch, kv_len) up to ``max_kv_bytes``, the peers beside, and the copy ceiling."""
    from ...probes import copy_bandwidth

    copy = copy_bandwidth(1 << 30)
    rows = []
    for b in batches:
        for n in kv_lens:
            if 2 * b * n * heads_kv * head_dim * 2 > max_kv_bytes:
                continue
            row = bench_point(b, n, head_dim, heads_q=heads_q, heads_kv=heads_kv, page_size=page_size,
                              iterations=iterations)
            if peers:
                from .peers import peer_rates

                row.update(peer_rates(b, n, head_dim, heads_q=heads_q, heads_kv=heads_kv, iterations=iterations))
            rows.append(row)
    return {"copy_read_plus_write_TBps": copy["memcpy"]["GBps_read_plus_write"] / 1e3, "rows": rows}


def splits(batch: int, kv_len: int, *, head_dim: int = 128, page_size: int = 64, heads_q: int = 32, heads_kv: int = 8,
           iterations: int = 20) -> list[dict]:
    return split_sweep(batch, kv_len, head_dim, page_size=page_size, heads_q=heads_q, heads_kv=heads_kv,
                       iterations=iterations)


def manifest_comparison(seed_manifest: Path | str, directory: Path | str) -> list[dict]:
    """The seed's manifest and labkit's own for the seed's geometry, both checked statically."""
    from ...manifest import check, load

    seed = check(load(seed_manifest))
    g = DecodeGeometry(2, 24, 4, 256, 64, 11, 22)
    ours_path = build(g, 2, directory)
    ours = check(load(ours_path), cubin_dirs=(directory,))
    out = []
    for label, res in (("seed (trtllm-gen, sm_100f)", seed), ("labkit paged_decode (sm_90)", ours)):
        plan = res.plans[0] if res.plans else None
        out.append({"manifest": label, "entry": plan.entry[:48] if plan else "-",
                    "pack_bytes": plan.pack_size if plan else None, "grid": list(plan.grid) if plan else None,
                    "block": list(plan.block) if plan else None, "dynamic_smem": plan.shared_mem if plan else None,
                    "errors": len(res.errors), "warnings": sum(i.severity == "warning" for i in res.issues),
                    "static_check_ok": res.ok})
    return out

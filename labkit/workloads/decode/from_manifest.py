"""A trtllm-gen decode manifest's geometry, re-targeted at labkit's decode kernel.

``from_manifest(seed, directory)`` reads the seed manifest's call (its buffers: q, out, the kv pool,
page table, seq lens, cu_seqlens_q), derives the decode geometry, and writes labkit's cubin and a
schema_version 4 manifest over buffers of the same names and shapes, saying how it handles each of
the seed's known defects.
"""

import re
from pathlib import Path

from ...errors import ArgumentError
from ...manifest.families import K
from ...manifest.model import BufArg, I32Field, Launch, Manifest, ParamField, TensorMapField
from .build import build_plan
from .geometry import DecodeGeometry


def geometry_from_manifest(m: Manifest) -> tuple[DecodeGeometry, int, list[str]]:
    """(geometry, q buffer rows, notes) from the first call of the manifest's first program.

    The call's arguments follow trtllm-gen's decode signature: out, q, K view, V view, page table,
    seq lens, cu_seqlens_q, then the scalars.
    """
    if m.model == "labkit-paged-decode":  # already labkit's: there is nothing to re-target
        raise ArgumentError(f"{m.source}: a manifest labkit decode build wrote (model labkit-paged-decode); "
                            "from-manifest takes a trtllm-gen decode manifest (such as "
                            "data/trtllm_gen_decode_manifest_v4.json) and writes labkit's over its buffers; check or "
                            "run this one as it is: labkit manifest check|run")
    program = next(iter(m.programs.values()), None)
    if program is None or not program.calls:
        raise ArgumentError(f"{m.source}: no program call to take the geometry from")
    args = program.calls[0].args
    if len(args) < 7 or not all(isinstance(a, BufArg) for a in args[:7]):
        raise ArgumentError(f"{m.source}: the first call does not bind out, q, K, V, table, seq, cu_seqlens_q buffers")
    unknown = next((a.buf for a in args[:7] if a.buf not in m.buffers), None)
    if unknown is not None:
        raise ArgumentError(f"{m.source}: programs: the first call binds buffer {unknown!r}, which buffers does not "
                            "declare")
    out, q, k_view, v_view, table, seq, cuq = (m.buffers[a.buf] for a in args[:7])
    if q.shape != out.shape or len(q.shape) != 3:
        raise ArgumentError(f"{m.source}: q {list(q.shape)} and out {list(out.shape)} must both be "
                            "[tokens, heads, dim]")
    tokens, heads_q, head_dim = q.shape
    pool = k_view
    if k_view.name != v_view.name or len(pool.shape) != 6 or pool.shape[1] != 2 or pool.shape[4] != 2:
        raise ArgumentError(f"{m.source}: expected K and V as views of one interleaved kv[pages, 2, P, Hkv, 2, D] "
                            f"buffer (got {k_view.name} {list(k_view.shape)}, {v_view.name} {list(v_view.shape)})")
    pages, _, page_size, heads_kv, _, pool_dim = pool.shape
    if len(table.shape) != 2:
        raise ArgumentError(f"{m.source}: buffers.{table.name}.shape = {list(table.shape)}: expected the page table as "
                            "[batch, max_pages]")
    batch, max_pages = table.shape
    # labkit's kernel reads bf16 q, K/V and out and int32 indices: another dtype would be reinterpreted, not converted
    for buf, dtype in ((q, "bf16"), (out, "bf16"), (pool, "bf16"), (table, "i32"), (seq, "i32"), (cuq, "i32")):
        if buf.dtype != dtype:
            raise ArgumentError(f"{m.source}: buffers.{buf.name}.dtype = {buf.dtype!r}: expected {dtype!r} (labkit's "
                                f"decode kernel reads bf16 q, K/V and out, and i32 page table, seq lens and q offsets)")
    notes = [
        f"geometry: batch {batch}, {heads_q} q heads on {heads_kv} KV heads, head_dim {head_dim}, page {page_size}, "
        f"{max_pages} pages per sequence, a pool of {pages} pages ({pool.name}), q/out buffers of {tokens} rows",
        *_defect_notes(_first_launch(m), pages, cuq.name),
    ]
    if pool_dim != head_dim or seq.shape != (batch,) or cuq.shape != (batch + 1,):
        raise ArgumentError(f"{m.source}: pool head_dim {pool_dim}, seq {list(seq.shape)}, cu_seqlens_q "
                            f"{list(cuq.shape)} do not match q's head_dim {head_dim} and batch {batch}")
    try:
        g = DecodeGeometry(batch, heads_q, heads_kv, head_dim, page_size, max_pages, pages, 1, "interleaved")
    except ArgumentError as exc:  # name the manifest's values the geometry came from, where the user can change them
        where = {"batch": f"{table.name}.shape[0]", "heads_q": f"{q.name}.shape[1]", "head_dim": f"{q.name}.shape[2]",
                 "page_size": f"{pool.name}.shape[2]", "heads_kv": f"{pool.name}.shape[3]",
                 "max_pages": f"{table.name}.shape[1]", "num_pages": f"{pool.name}.shape[0]"}
        named = [f"buffers.{path}" for field, path in where.items() if re.search(rf"\b{field}\b", str(exc))]
        sources = f" (from {', '.join(named)})" if named else ""
        raise ArgumentError(f"{m.source}: {exc}{sources}") from None
    return g, tokens, notes


def _first_launch(m: Manifest) -> Launch | None:
    """The first launch of the op that the first program's first call runs (None: the op declares none)."""
    op = m.ops.get(next(iter(m.programs.values())).calls[0].op)
    return op.launches[0] if op is not None and op.launches else None


def _defect_notes(launch: Launch | None, pages: int, cuq: str) -> list[str]:
    """What the input's own parameter block (its first launch's) says about trtllm-gen's known defects: its K/V maps'
    page dim, the never-packed cu_seqlens_q, the q tokens per sequence; and how labkit's call handles each."""
    fields = {f.at: f for f in launch.args[0].fields} if launch is not None and launch.args else {}
    maps = [fields.get(K["tmaK"]), fields.get(K["tmaV"])]
    page_dims = sorted({f.dims[-1] for f in maps if isinstance(f, TensorMapField) and f.dims})
    in_pool = fields.get(K["mNumPagesInMemPool"])
    filled = f" (trtllm-gen fills mNumPagesInMemPool = {in_pool.value})" if isinstance(in_pool, I32Field) else ""
    said = (f"the input's K/V maps say {' and '.join(map(str, page_dims))} pages{filled}" if page_dims
            else "the input has no K/V tensor maps at offsets 128 and 384")
    packed = isinstance(fields.get(K["ptrCumSeqLensQ"]), ParamField)
    max_q = fields.get(K["mMaxSeqLenQ"])
    return [
        f"page dim: {said}; labkit's maps use the pool's real {pages} pages, so an id past them reads zeros; calls "
        f"are checked against {pages}",
        f"cu_seqlens_q: the input {'packs it at offset 936' if packed else 'never packs it (offset 936 stays null)'}; "
        f"labkit packs {cuq} and reads each sequence's q tokens through it",
        "q tokens per sequence: "
        + (f"{max_q.value} in the input (its mMaxSeqLenQ)" if isinstance(max_q, I32Field) else "the input sets none")
        + "; labkit's call here is built for 1 (its kernel takes up to 8 with a causal mask: labkit decode build "
        "--max-q-len)",
    ]


def from_manifest(seed: Manifest, directory: Path | str, *, splits: int | None = None) -> tuple[Path, list[str]]:
    """Write labkit's cubin and manifest for the seed's geometry into ``directory``; return (path, notes), the last
    note the input's own static check (its errors and warnings do not stop the re-targeting: only its geometry is
    taken)."""
    from ...manifest import check
    from .run import plan_here

    g, q_rows, notes = geometry_from_manifest(seed)
    plan, planned_for = plan_here(g, splits=splits)
    s = plan.splits
    path = build_plan(g, plan, directory, q_rows=q_rows, reads=(seed.source,))  # never the manifest it reads
    launch = _first_launch(seed)
    notes.append(f"splits: {s} per (sequence, KV head)"
                 + (f" (the input's grid.x = {launch.grid[0]})" if launch is not None else "")
                 + (f", combined in a thread-block cluster of {s} (distributed shared memory, no global partials)"
                    if plan.kernel.cluster_splits > 1 else "") + f"; {planned_for}")
    own = check(seed)
    errors = sum(i.severity == "error" for i in own.issues)
    warnings = sum(i.severity == "warning" for i in own.issues)
    notes.append(f"the input's own check: {errors} error(s), {warnings} warning(s)"
                 + (f" (labkit manifest check {seed.source} lists them)" if errors or warnings else ""))
    return path, notes

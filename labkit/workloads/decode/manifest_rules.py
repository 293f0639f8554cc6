"""What a labkit-paged-decode manifest must hold beyond the schema, checked before any launch.

The kernel indexes its page table, KV lengths, query offsets, q and out rows and split scratch with the i32
constants of its parameter block (``build.manifest_dict`` writes them and the buffers from one geometry). A manifest
whose constants and buffers disagree (edited by hand, or written by another tool) would have the kernel read or
write past a buffer, so each such disagreement is an error naming the field and both numbers; ``labkit manifest
check|run`` refuse it as they refuse a bad shape. The rule applies to the kernel's ABI (entry ``paged_decode``, one
384-byte block), whatever the manifest's ``model`` says. Where the manifest cannot say exactly what the kernel
writes (the rows of a split's partials, a tail build's split count), the bound is the least it could be: a manifest
under it is certainly wrong. Not checked: the dynamic shared memory the build needs, which the manifest does not
say (too little makes the launch fault; it cannot write outside the CTA's shared memory).
"""

import math

from ...manifest.issues import Issue
from ...manifest.model import BufArg, I32Field, ParamField, ScratchField, TensorMapField
from .build import (
    BATCH_AT,
    COUNTER_AT,
    CUQ_AT,
    ENTRY,
    GROUP_AT,
    HEAD_SPLITS_AT,
    HEADS_KV_AT,
    MAX_PAGES_AT,
    MAX_Q_LEN_AT,
    OUT_AT,
    PARAM_BYTES,
    PARTIAL_ML_AT,
    PARTIAL_O_AT,
    Q_AT,
    SEQ_AT,
    TABLE_AT,
    TIMELINE_AT,
)
from .geometry import PAGE_SIZES

CONSTANTS = {BATCH_AT: "batch", HEADS_KV_AT: "heads_kv", GROUP_AT: "group", MAX_PAGES_AT: "max_pages",
             MAX_Q_LEN_AT: "max_q_len"}
K_MAP_AT = 0  # the K tensor map: [.., page rows, .., KV heads, pages], head_dim x page size elements per (page, head)
TIMELINE_WORDS = 6  # u64 per CTA (kernels/paged_decode.cuh)


def applies(launch) -> bool:
    """The launch is labkit's decode kernel: its entry and its one parameter block."""
    return launch.entry == ENTRY and len(launch.args) == 1 and launch.args[0].size == PARAM_BYTES


def paged_decode(ctx) -> list[Issue]:
    """The family rule (``labkit.manifest.families``): errors where the kernel would index past a buffer."""
    lc, m = ctx.checked, ctx.manifest
    base = f"ops.{lc.op.name}.impl.launches[{lc.launch_index}]"
    by_at = {f.at: (i, f) for i, f in enumerate(lc.launch.args[0].fields)}
    issues: list[Issue] = []

    def path(at: int) -> str:
        return f"{base}.args[0].pack.fields[{by_at[at][0]}]" if at in by_at else f"{base}.args[0].pack"

    def error(where: str, message: str, severity: str = "error") -> None:
        issues.append(Issue(severity, where, message))

    c = {name: by_at[at][1].value for at, name in CONSTANTS.items()
         if at in by_at and isinstance(by_at[at][1], I32Field)}
    for at, name in CONSTANTS.items():
        if name not in c:
            error(path(at), f"the kernel reads {name} from byte {at} of the parameter block: no i32 there")
        elif c[name] < 1:
            error(path(at), f"{name} {c[name]}: expected 1 or more")
    if issues:
        return issues
    batch, hkv, group, max_pages, max_q_len = (c[n] for n in CONSTANTS.values())
    rows, heads_q = batch * max_q_len, hkv * group

    def bound(at: int):
        """(argument, buffer, bytes from the argument's offset on) of the pointer packed at ``at``, or None."""
        f = by_at.get(at, (None, None))[1]
        if not isinstance(f, ParamField) or f.param >= len(lc.bound) or not isinstance(lc.bound[f.param], BufArg):
            return None
        arg = lc.bound[f.param]
        buf = m.buffers.get(arg.buf)
        return None if buf is None else (arg, buf, buf.nbytes - arg.offset)

    def reach(at: int, need: int, verb: str, what: str) -> None:
        got = bound(at)
        if got is not None and got[2] < need:
            arg = got[0]
            error(path(at), f"the kernel {verb} {need} B ({what}) of {arg.buf} from byte {arg.offset}, which has "
                            f"{got[2]} B there")

    # q and out: [rows, heads_q, head_dim], one head_dim, the one the K/V maps hold
    dims = {}
    for at in (Q_AT, OUT_AT):
        got = bound(at)
        if got is None:
            continue
        arg, buf, _ = got
        if len(buf.shape) != 3 or buf.shape[0] < rows or buf.shape[1] != heads_q:
            error(path(at), f"{arg.buf} is {list(buf.shape)}; the kernel takes [rows >= batch x max_q_len = {rows}, "
                            f"heads_kv x group = {heads_q}, head_dim]")
            continue
        dims[at] = buf.shape[2]
        reach(at, rows * heads_q * buf.shape[2] * 2, "reads" if at == Q_AT else "writes",
              f"batch x max_q_len = {rows} rows of {heads_q} x {buf.shape[2]} bf16")
    head_dim = dims.get(Q_AT)
    if len(set(dims.values())) > 1:
        error(path(OUT_AT), f"out's head_dim {dims[OUT_AT]} is not q's {dims[Q_AT]}")
    elif head_dim is not None and (per_page := _elements_per_page(lc, by_at)) is not None:
        if per_page % head_dim or per_page // head_dim not in PAGE_SIZES:
            error(path(Q_AT), f"head_dim {head_dim} (q's last dim): the K map holds {per_page} elements per page and "
                              f"head, not head_dim x a page of {', '.join(map(str, PAGE_SIZES))}")
    # index buffers: the page table read as rows of max_pages, one length and one query offset per sequence (+ 1)
    reach(TABLE_AT, batch * max_pages * 4, "reads", f"batch {batch} x max_pages {max_pages} page ids, i32")
    table = bound(TABLE_AT)
    if table is not None and table[1].shape[-1] != max_pages:
        error(path(TABLE_AT), f"{table[0].buf} is {list(table[1].shape)}: the kernel reads its rows max_pages = "
                              f"{max_pages} ids apart, so the ids it takes for a sequence are not that row's",
              "warning")
    reach(SEQ_AT, batch * 4, "reads", f"batch {batch} KV lengths, i32")
    reach(CUQ_AT, (batch + 1) * 4, "reads", f"batch + 1 = {batch + 1} query offsets, i32")
    _grid_and_scratch(ctx, lc, by_at, base, path, error, batch, hkv, group * max_q_len, head_dim)
    return issues


def _elements_per_page(lc, by_at) -> int | None:
    """Elements of one (page, KV head) slice in the K map (its dims but the last two, KV heads and pages)."""
    i, f = by_at.get(K_MAP_AT, (None, None))
    dims = lc.tensormap_dims.get(i) if isinstance(f, TensorMapField) else None
    return math.prod(dims[:-2]) if dims and len(dims) > 2 else None


def _grid_and_scratch(ctx, lc, by_at, base, path, error, batch, hkv, unit_rows, head_dim) -> None:
    """The grid's sequences against the table; the split scratch (counters, partials) and the timeline's records
    against what the kernel writes there."""
    grid, (gx, gy, gz) = lc.launch.grid, lc.grid
    splits = groups = None
    if isinstance(grid[2], str) or gy > 1 or gz > 1:  # the split builds' [splits, heads_kv x row blocks, sequences]
        if gz > batch:
            error(f"{base}.grid[2]", f"{grid[2]} = {gz} sequences, but the page table and lengths hold batch {batch}"
                  if isinstance(grid[2], str) else f"{gz} sequences, but the page table and lengths hold batch {batch}")
        if gy % hkv:
            error(f"{base}.grid[1]", f"{gy}: expected heads_kv {hkv} x row blocks")
        else:  # the rows of one split's partial: at least a row block's share of the unit's rows
            splits, groups, block_rows = gx, batch * gy, -(-unit_rows // (gy // hkv))
    elif HEAD_SPLITS_AT in by_at and isinstance(by_at[HEAD_SPLITS_AT][1], I32Field):  # a tail build's 1-D grid
        # its tail units take more splits than the others (at least one more); a row block holds at least one row
        splits, groups, block_rows = by_at[HEAD_SPLITS_AT][1].value + 1, batch * hkv, 1
    if splits is not None and splits > 1 and head_dim is not None and _clustered(ctx, lc.launch) is False:
        rows = groups * splits * block_rows
        for at, need, what in ((COUNTER_AT, groups * 4, f"a u32 per unit, {groups} at least"),
                               (PARTIAL_ML_AT, rows * 2 * 4, "(max, sum) f32 per split and row"),
                               (PARTIAL_O_AT, rows * head_dim * 4, f"{head_dim} f32 per split and row")):
            _scratch_at_least(lc, by_at, at, need, f"{splits} splits meet through it: the kernel writes at least "
                                                   f"{need} B ({what})", error)
    _scratch_at_least(lc, by_at, TIMELINE_AT, gx * gy * gz * TIMELINE_WORDS * 8,
                      f"the kernel records {TIMELINE_WORDS} u64 per CTA, {gx * gy * gz * TIMELINE_WORDS * 8} B for "
                      f"{gx * gy * gz} CTAs", error)


def _scratch_at_least(lc, by_at, at: int, need: int, why: str, error) -> None:
    f = by_at.get(at, (None, None))[1]
    s = lc.op.scratch.get(f.scratch) if isinstance(f, ScratchField) else None
    if s is not None and s.nbytes < need:
        error(f"ops.{lc.op.name}.impl.scratch.{s.name}", f"{s.nbytes} B; {why}")


def _clustered(ctx, launch) -> bool | None:
    """Whether the cubin's entry was compiled with a cluster (its splits then meet in shared memory); None where the
    cubin was not found (nothing is launched then: the module's own error stops it)."""
    lm = (ctx.modules or {}).get(launch.module)
    entry = lm.info.entries.get(launch.entry) if lm is not None else None
    return None if entry is None else entry.cluster_dims is not None and entry.cluster_dims != (1, 1, 1)

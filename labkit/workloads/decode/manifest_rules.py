"""What a labkit-paged-decode manifest must hold beyond the schema, checked before any launch.

The kernel indexes its page table, KV lengths, query offsets, q and out rows and split scratch with the i32
constants of its parameter block (``build.manifest_dict`` writes them and the buffers from one geometry). A manifest
whose constants and buffers disagree (edited by hand, or written by another tool) would have the kernel read or
write past a buffer, so each disagreement is an error naming the field and both numbers; ``labkit manifest
check|run`` refuse it as they refuse a bad shape. Not checked: the dynamic shared memory the build needs, which
the manifest does not say (too little makes the launch fault; it cannot write outside the CTA's shared memory).
"""

from ...manifest.issues import Issue
from ...manifest.model import BufArg, I32Field, ParamField, ScratchField
from .build import (
    BATCH_AT,
    COUNTER_AT,
    CUQ_AT,
    ENTRY,
    GROUP_AT,
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
)

CONSTANTS = {BATCH_AT: "batch", HEADS_KV_AT: "heads_kv", GROUP_AT: "group", MAX_PAGES_AT: "max_pages",
             MAX_Q_LEN_AT: "max_q_len"}


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

    def error(where: str, message: str) -> None:
        issues.append(Issue("error", where, message))

    c = {name: by_at[at][1].value for at, name in CONSTANTS.items()
         if at in by_at and isinstance(by_at[at][1], I32Field)}
    for at, name in CONSTANTS.items():
        if name not in c:
            error(path(at), f"the kernel reads {name} from byte {at} of the parameter block: no i32 there")
    for name, v in c.items():
        if v < 1:
            error(path(next(at for at, n in CONSTANTS.items() if n == name)), f"{name} {v}: expected 1 or more")
    if issues:
        return issues
    batch, hkv, group, max_pages, max_q_len = (c[n] for n in CONSTANTS.values())

    def buffer(at: int):
        """(argument, buffer, bytes from the argument's offset on) of the pointer packed at ``at``, or None."""
        f = by_at.get(at, (None, None))[1]
        if not isinstance(f, ParamField) or f.param >= len(lc.bound) or not isinstance(lc.bound[f.param], BufArg):
            return None
        arg = lc.bound[f.param]
        buf = m.buffers.get(arg.buf)
        return None if buf is None else (arg, buf, buf.nbytes - arg.offset)

    # index buffers: the page table is read as [batch, max_pages], so its row length must be max_pages exactly
    table = buffer(TABLE_AT)
    if table is not None and table[1].shape != (batch, max_pages):
        error(path(TABLE_AT), f"{table[0].buf} is {list(table[1].shape)}; the kernel reads it as [batch, max_pages] "
                              f"= [{batch}, {max_pages}] (the constants at bytes {BATCH_AT} and {MAX_PAGES_AT})")
    for at, need, what in ((SEQ_AT, batch * 4, f"batch {batch} KV lengths"),
                           (CUQ_AT, (batch + 1) * 4, f"batch + 1 = {batch + 1} query offsets")):
        got = buffer(at)
        if got is not None and got[2] < need:
            error(path(at), f"the kernel reads {need} B ({what}, i32) of {got[0].buf}, which has {got[2]} B")
    # q and out: [rows, heads_q, head_dim], max_q_len rows per sequence, heads_kv x group heads
    rows, heads_q, head_dim = batch * max_q_len, hkv * group, None
    for at in (Q_AT, OUT_AT):
        got = buffer(at)
        if got is None:
            continue
        arg, buf, _ = got
        if len(buf.shape) != 3 or buf.shape[0] < rows or buf.shape[1] != heads_q:
            error(path(at), f"{arg.buf} is {list(buf.shape)}; the kernel takes [rows >= batch x max_q_len = {rows}, "
                            f"heads_kv x group = {heads_q}, head_dim]")
        elif head_dim is None:
            head_dim = buf.shape[2]
    # split partials: written through global memory where a 3-D grid has several splits and no cluster meets them
    grid, clustered = lc.launch.grid, _clustered(ctx, lc.launch)
    if len(grid) == 3 and isinstance(grid[2], str):  # the split builds' [splits, heads_kv x row blocks, seqs]
        seqs = ctx.values.get(grid[2], 0)
        if seqs > batch:
            error(f"{base}.grid[2]", f"{grid[2]} = {seqs} sequences, but the page table and lengths hold batch "
                                     f"{batch}")
        splits, gy = lc.grid[0], lc.grid[1]
        if gy % hkv:
            error(f"{base}.grid[1]", f"{gy}: expected heads_kv {hkv} x row blocks")
        elif splits > 1 and clustered is False and head_dim is not None:
            blocks = gy // hkv
            partial_rows = batch * gy * splits * -(-(group * max_q_len) // blocks)  # at least: rows per block
            for at, need, what in ((COUNTER_AT, batch * gy * 4, f"one u32 per unit ({batch * gy})"),
                                   (PARTIAL_ML_AT, partial_rows * 2 * 4, "(max, sum) f32 per split and row"),
                                   (PARTIAL_O_AT, partial_rows * head_dim * 4, f"{head_dim} f32 per split and row")):
                f = by_at.get(at, (None, None))[1]
                s = lc.op.scratch.get(f.scratch) if isinstance(f, ScratchField) else None
                if s is not None and s.nbytes < need:
                    error(f"ops.{lc.op.name}.impl.scratch.{s.name}",
                          f"{s.nbytes} B; {splits} splits meet through it: the kernel writes at least {need} B "
                          f"({what})")
    return issues


def _clustered(ctx, launch) -> bool | None:
    """Whether the cubin's entry was compiled with a cluster (its splits then meet in shared memory); None where the
    cubin was not found."""
    lm = (ctx.modules or {}).get(launch.module)
    entry = lm.info.entries.get(launch.entry) if lm is not None else None
    return None if entry is None else entry.cluster_dims is not None and entry.cluster_dims != (1, 1, 1)

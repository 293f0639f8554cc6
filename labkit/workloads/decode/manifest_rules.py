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

from ..._text import with_article
from ...manifest.families import PackView
from ...manifest.issues import Issue
from ...manifest.model import ScratchField, TensorMapField
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
    SCALE_LOG2_AT,
    SEQ_AT,
    TABLE_AT,
    TIMELINE_AT,
)
from .geometry import PAGE_SIZES

CONSTANTS = {BATCH_AT: "batch", HEADS_KV_AT: "heads_kv", GROUP_AT: "group", MAX_PAGES_AT: "max_pages",
             MAX_Q_LEN_AT: "max_q_len"}
# what every build reads, by kind: a field left out is 0 in the zero-filled block (a null pointer, an all-zero tensor
# map), where the generic check had only warned that a param is never packed
READ = {0: ("k_map", "tensormap"), 128: ("v_map", "tensormap"), Q_AT: ("q", "param"), OUT_AT: ("out", "param"),
        TABLE_AT: ("page_table", "param"), SEQ_AT: ("seq_lens", "param"), CUQ_AT: ("cu_seqlens_q", "param"),
        PARTIAL_O_AT: ("partial_o", "scratch"), PARTIAL_ML_AT: ("partial_ml", "scratch"),
        COUNTER_AT: ("counter", "scratch"), SCALE_LOG2_AT: ("scale_log2", "i32")}
POINTEE = {Q_AT: ("bf16", "q"), OUT_AT: ("bf16", "O"), TABLE_AT: ("i32", "page ids"), SEQ_AT: ("i32", "KV lengths"),
           CUQ_AT: ("i32", "query offsets")}  # what the kernel reads or writes through each pointer, by element type
K_MAP_AT = 0  # the K tensor map: [.., page rows, .., KV heads, pages], head_dim x page size elements per (page, head)
TIMELINE_WORDS = 6  # u64 per CTA (kernels/paged_decode.cuh)


def applies(launch) -> bool:
    """The launch is labkit's decode kernel: its entry and its one parameter block."""
    return launch.entry == ENTRY and len(launch.args) == 1 and launch.args[0].size == PARAM_BYTES


def paged_decode(ctx) -> list[Issue]:
    """The family rule (``labkit.manifest.families``): errors where the kernel would index past a buffer."""
    return _Rule(ctx).issues


class _Rule:
    """The checks of one launch, in order; ``issues`` holds what they found."""

    def __init__(self, ctx):
        self.ctx, self.view, self.lc, self.issues = ctx, PackView(ctx), ctx.checked, []
        self.fields_read()
        self.kv_maps()
        c = {name: self.view.i32(at) for at, name in CONSTANTS.items()}
        for at, name in CONSTANTS.items():
            if c[name] is None:
                self.error(self.view.path(at), f"the kernel reads {name} from byte {at} of the parameter block: no "
                                               "i32 there")
            elif c[name] < 1:
                self.error(self.view.path(at), f"{name} {c[name]}: expected 1 or more")
        if self.issues:
            return
        self.batch, self.hkv, self.group, self.max_pages, self.max_q_len = c.values()
        head_dim = self.q_and_out()
        self.index_buffers()
        self.grid_and_scratch(head_dim)

    def fields_read(self) -> None:
        """Each field every build reads, packed and of its kind; the softmax scale not 0 (every score would be)."""
        for at, (name, kind) in READ.items():
            f = self.view.field(at)
            if f is None:
                self.issues.append(self.view.unpacked(at, name))
            elif f.kind != kind:
                self.error(self.view.path(at), f"{name}: {with_article(f.kind)} field where the kernel reads a {kind}")
            elif at in POINTEE:
                self.issues += self.view.of_dtype(at, name, *POINTEE[at])
        self.issues += self.view.same_buffer({at: READ[at][0] for at in POINTEE})
        if (scale := self.view.i32(SCALE_LOG2_AT)) is not None and not 0 < scale < 0x7F800000:  # f32 bits: 0 < x < inf
            self.error(self.view.path(SCALE_LOG2_AT), f"scale_log2 bits {scale}: expected a positive finite f32 "
                                                      "(head_dim^-0.5 x log2(e))", "warning")

    def kv_maps(self) -> None:
        """The K and V maps as every build reads them: one layout (only the base differs), 128B-swizzled boxes of 64
        dims (128 B), the page rows inside a page, one KV head and one page per box, 4-D (head_dim, rows, heads,
        pages) or 5-D with head_dim in 64-dim parts; or (padded rows) 4-D unswizzled boxes of head_dim + 8 dims, the
        8 past the map's head_dim zero-filled. The rows per box are the build's own (its stage), which the manifest
        does not say."""
        maps = {at: f for at in (0, 128) if isinstance(f := self.view.field(at), TensorMapField)}
        for at, f in maps.items():
            where = f"{self.view.path(at)}.tensormap"
            dims = self.lc.tensormap_dims.get(self.view.by_at[at][0], f.dims)
            tiled = 0 if f.swizzle else 1  # the dims boxes tile whole: a padded box's dim 0 is head_dim and its pad
            if len(f.dims) not in (4, 5):
                self.error(f"{where}.dims", f"{list(f.dims)}: the kernel loads 4-D or 5-D boxes")
            elif tuple(f.box[-2:]) != (1, 1) or (f.box[0], f.swizzle) not in ((64, 128), (dims[0] + 8, 0)) or (
                    f.swizzle == 0 and len(f.dims) != 4):
                self.error(f"{where}.box", f"{list(f.box)}, swizzle {f.swizzle}: the kernel reads 128B-swizzled "
                                           "boxes of 64 dims, or 4-D unswizzled ones of head_dim + 8 (padded rows), "
                                           "one KV head and one page each")
            elif any(d % b for b, d in zip(f.box[tiled:-2], dims[tiled:-2])):  # a page's rows (and head_dim's parts)
                self.error(f"{where}.box", f"{list(f.box)}: the map's {list(dims)} in whole boxes (a page's rows "
                                           "a whole number of the box's)")
        if len(maps) == 2 and (maps[0].box, maps[0].dims, maps[0].swizzle) != (maps[128].box, maps[128].dims,
                                                                                maps[128].swizzle):
            self.error(f"{self.view.path(128)}.tensormap", "V's map differs from K's in its box, dims or swizzle: "
                                                          "the kernel loads both one way")

    def error(self, where: str, message: str, severity: str = "error") -> None:
        self.issues.append(Issue(severity, where, message))

    def reach(self, at: int, need: int, verb: str, what: str) -> None:
        got = self.view.bound(at)
        if got is not None and got[2] < need:
            self.error(self.view.path(at), f"the kernel {verb} {need} B ({what}) of {got[0].buf} from byte "
                                           f"{got[0].offset}, which has {got[2]} B there")

    def q_and_out(self) -> int | None:
        """q and out: [rows, heads_q, head_dim], one head_dim, the one the K/V maps hold; q's head_dim, or None."""
        rows, heads_q, dims = self.batch * self.max_q_len, self.hkv * self.group, {}
        for at in (Q_AT, OUT_AT):
            got = self.view.bound(at)
            if got is None:
                continue
            arg, buf, _ = got
            if len(buf.shape) != 3 or buf.shape[0] < rows or buf.shape[1] != heads_q:
                self.error(self.view.path(at), f"{arg.buf} is {list(buf.shape)}; the kernel takes [rows >= batch x "
                                               f"max_q_len = {rows}, heads_kv x group = {heads_q}, head_dim]")
                continue
            dims[at] = buf.shape[2]
            self.reach(at, rows * heads_q * buf.shape[2] * 2, "reads" if at == Q_AT else "writes",
                       f"batch x max_q_len = {rows} rows of {heads_q} x {buf.shape[2]} bf16")
        head_dim = dims.get(Q_AT)
        if len(set(dims.values())) > 1:
            self.error(self.view.path(OUT_AT), f"out's head_dim {dims[OUT_AT]} is not q's {dims[Q_AT]}")
        elif head_dim is not None and (per_page := self.elements_per_page()) is not None:
            if per_page % head_dim or per_page // head_dim not in PAGE_SIZES:
                self.error(self.view.path(Q_AT), f"head_dim {head_dim} (q's last dim): the K map holds {per_page} "
                                                 "elements per page and head, not head_dim x a page of "
                                                 f"{', '.join(map(str, PAGE_SIZES))}")
        return head_dim

    def elements_per_page(self) -> int | None:
        """Elements of one (page, KV head) slice in the K map (its dims but the last two, KV heads and pages)."""
        i = self.view.by_at.get(K_MAP_AT, (None, None))[0]
        dims = self.lc.tensormap_dims.get(i) if isinstance(self.view.field(K_MAP_AT), TensorMapField) else None
        return math.prod(dims[:-2]) if dims and len(dims) > 2 else None

    def index_buffers(self) -> None:
        """The page table read as rows of max_pages, one length and one query offset per sequence (+ 1)."""
        batch, max_pages = self.batch, self.max_pages
        self.reach(TABLE_AT, batch * max_pages * 4, "reads", f"batch {batch} x max_pages {max_pages} page ids, i32")
        table = self.view.bound(TABLE_AT)
        if table is not None and table[1].shape[-1] != max_pages:
            self.error(self.view.path(TABLE_AT), f"{table[0].buf} is {list(table[1].shape)}: the kernel reads its "
                                                 f"rows max_pages = {max_pages} ids apart, so the ids it takes for a "
                                                 "sequence are not that row's", "warning")
        self.reach(SEQ_AT, batch * 4, "reads", f"batch {batch} KV lengths, i32")
        self.reach(CUQ_AT, (batch + 1) * 4, "reads", f"batch + 1 = {batch + 1} query offsets, i32")

    def grid_and_scratch(self, head_dim: int | None) -> None:
        """The grid's sequences against the table; the split scratch (counters, partials) and the timeline's
        records against what the kernel writes there."""
        base, batch, hkv = self.view.base, self.batch, self.hkv
        grid, (gx, gy, gz) = self.lc.launch.grid, self.lc.grid
        splits = None
        if isinstance(grid[2], str) or gy > 1 or gz > 1:  # the split builds' [splits, heads_kv x row blocks, seqs]
            if gz > batch:
                named = f"{grid[2]} = " if isinstance(grid[2], str) else ""
                self.error(f"{base}.grid[2]", f"{named}{gz} sequences, but the page table and lengths hold batch "
                                              f"{batch}")
            if gy % hkv:
                self.error(f"{base}.grid[1]", f"{gy}: expected heads_kv {hkv} x row blocks")
            else:  # the grid's sequences' units; a split's partial: at least a row block's share of a unit's rows
                splits, groups, block_rows = gx, min(gz, batch) * gy, -(-(self.group * self.max_q_len) // (gy // hkv))
        elif (head_splits := self.view.i32(HEAD_SPLITS_AT)) is not None:  # a tail build's 1-D grid
            # its tail units take more splits than the others (at least one more); a row block holds at least a row
            splits, groups, block_rows = head_splits + 1, batch * hkv, 1
            self.tail_grid(gx, head_splits)
        if (cluster := self.cluster_x()) and gx != cluster:  # its splits are the cluster's CTAs, split = blockIdx.x
            self.error(f"{base}.grid[0]", f"{gx}: the cubin combines a unit's splits in a cluster of {cluster} CTAs, "
                                          f"so the grid has {cluster} (more would index past the cluster and out)")
        if splits is not None and splits > 1 and head_dim is not None and self.clustered() is False:
            rows = groups * splits * block_rows
            for at, need, what in ((COUNTER_AT, groups * 4, f"a u32 per unit, {groups} at least"),
                                   (PARTIAL_ML_AT, rows * 2 * 4, "(max, sum) f32 per split and row"),
                                   (PARTIAL_O_AT, rows * head_dim * 4, f"{head_dim} f32 per split and row")):
                self.scratch_at_least(at, need, f"{splits} splits meet through it: the kernel writes at least "
                                                f"{need} B ({what})")
        ctas = gx * gy * gz
        self.scratch_at_least(TIMELINE_AT, ctas * TIMELINE_WORDS * 8, f"the kernel records {TIMELINE_WORDS} u64 per "
                                                                     f"CTA, {ctas * TIMELINE_WORDS * 8} B for {ctas} "
                                                                     "CTAs")

    def scratch_at_least(self, at: int, need: int, why: str) -> None:
        f = self.view.field(at)
        s = self.lc.op.scratch.get(f.scratch) if isinstance(f, ScratchField) else None
        if s is not None and s.nbytes < need:
            self.error(f"ops.{self.lc.op.name}.impl.scratch.{s.name}", f"{s.nbytes} B; {why}")

    def clustered(self) -> bool | None:
        """Whether the cubin's entry was compiled with a cluster (its splits then meet in shared memory); None where
        the cubin was not found (nothing is launched then: the module's own error stops it)."""
        launch = self.lc.launch
        lm = (self.ctx.modules or {}).get(launch.module)
        entry = lm.info.entries.get(launch.entry) if lm is not None else None
        return None if entry is None else entry.cluster_dims is not None and entry.cluster_dims != (1, 1, 1)

    def cluster_x(self) -> int | None:
        """The CTAs of the cubin's cluster along x, where it was compiled with one."""
        if not self.clustered():
            return None
        lm = self.ctx.modules[self.lc.launch.module]
        return lm.info.entries[self.lc.launch.entry].cluster_dims[0]

    def tail_grid(self, ctas: int, head_splits: int) -> None:
        """A tail build's CTAs: (units - u) x head_splits + u x its tail's splits, as the kernel's tail_unit() reads
        them back (another count makes some CTAs' units negative or past the last); units and the tail's splits as
        its partial_o scratch is shaped, [units, tail splits, rows, head_dim]."""
        f = self.view.field(PARTIAL_O_AT)
        s = self.lc.op.scratch.get(f.scratch) if isinstance(f, ScratchField) else None
        if s is None or len(s.shape) != 4:
            return
        units, tail = s.shape[0], s.shape[1]
        if not any((units - u) * head_splits + u * tail == ctas for u in range(1, units + 1)) or tail <= head_splits:
            self.error(f"{self.view.base}.grid[0]", f"{ctas} CTAs: {units} units (partial_o's shape) in {head_splits} "
                                                    f"splits, the last u of them in {tail}, are (units - u) x "
                                                    f"{head_splits} + u x {tail} CTAs for a u in 1..{units}, as the "
                                                    "kernel's tail_unit() reads them back")

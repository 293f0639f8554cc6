"""Kernel-family rules: what a manifest must satisfy for one known kernel ABI.

trtllm-gen FMHA (FlashInfer v0.6.12-0.6.17 KernelParams, 1280 B, artifact 158f6fa): field
offsets and rules from the project's trtllm-gen manifest brief (sections 3, 4 and 7). These
come out as warnings with the field they concern: the manifest is still packable, but the
kernel would compute something other than what the manifest claims. A call that would make the
kernel read or write past a buffer it indexes by sequence (page table, KV lengths, O) is an error.
"""

import math
from dataclasses import dataclass, field

from .._text import with_article
from .issues import Issue
from .model import BufArg, I32Field, Manifest, ParamField, ScratchField, TensorMapField
from .pack import f32_bits

# KernelParams offsets (v0.6.13 layout)
K = dict(tmaQ=0, tmaK=128, tmaV=384, tmaO=512, ptrO=912, ptrCumSeqLensQ=936, ptrMultiCtasKvCounter=984,
         ptrPageIdxKv=1000, ptrPartialO=1008, ptrPartialStats=1016, ptrSeqLensKv=1080, mAttentionWindowSize=1112,
         mBatchSize=1116, mMaxSeqLenQ=1144, mMaxSeqLenKv=1148, mMaxNumCtasQ=1152, mMaxNumCtasKv=1156,
         mMaxNumPagesPerSeqKv=1160, mNumHeadsKv=1164, mNumHeadsQ=1168, mNumHeadsQPerKv=1172, divisor=1176, divM=1180,
         divAdd=1184, divShift=1188, mNumHiddenEltsO=1192, mNumPagesInMemPool=1200, mNumTokensPerCtaQ=1204,
         mNumTokensPerPageLog2=1208, mReshapeFactorKv=1212, mOutputScale=1216, mScaleSoftmaxLog2=1220, mScaleSfKv=1224,
         mScaleSfO=1228, mSumOfSeqLensQ=1244,
         mUseBlockSparseAttention=1252)  # 1252: two bools, mUsesSharedPagedKvIdx in byte 1253
HEAD_DIM = 256
# what the kernel always reads: a field left out is 0 in the zero-filled block (a null pointer it dereferences, a
# count it divides by), so it is an error, not a rule skipped for want of a value
REQUIRED = ("tmaQ", "tmaK", "tmaV", "ptrO", "ptrMultiCtasKvCounter", "ptrPageIdxKv", "ptrPartialO", "ptrPartialStats",
            "ptrSeqLensKv", "mBatchSize", "mMaxSeqLenQ", "mMaxNumCtasQ", "mMaxNumCtasKv", "mMaxNumPagesPerSeqKv",
            "mNumHeadsKv", "mNumHeadsQ", "mNumHeadsQPerKv", "mNumTokensPerCtaQ", "mScaleSoftmaxLog2", "mSumOfSeqLensQ")
# what the kernel reads or writes through each buffer pointer, by element type
POINTEE = (("ptrO", "bf16", "O"), ("ptrPageIdxKv", "i32", "page ids"), ("ptrSeqLensKv", "i32", "KV lengths"),
           ("ptrCumSeqLensQ", "i32", "query offsets"))
SPLIT_SCRATCH = ("ptrMultiCtasKvCounter", "ptrPartialO", "ptrPartialStats")
AT_LEAST_ONE = ("mBatchSize", "mMaxSeqLenQ", "mMaxNumCtasQ", "mMaxNumCtasKv", "mMaxNumPagesPerSeqKv", "mNumHeadsKv",
                "mNumHeadsQ", "mNumHeadsQPerKv", "mNumTokensPerCtaQ", "mSumOfSeqLensQ")
# K's short keys for the words of mNumHeadsQPerKvDivisor (a fast_mod_div) and the i32 over its two bools, as the
# parameter-block map names them
_MEMBER = dict(divisor="mNumHeadsQPerKvDivisor.mDivisor", divM="mNumHeadsQPerKvDivisor.mMultiplier",
               divAdd="mNumHeadsQPerKvDivisor.mAdd", divShift="mNumHeadsQPerKvDivisor.mShift",
               mUseBlockSparseAttention="mUseBlockSparseAttention, mUsesSharedPagedKvIdx")
TRTLLM_GEN_MEMBERS = {at: _MEMBER.get(name, name) for name, at in K.items()}


@dataclass(frozen=True)
class FamilyContext:
    """What a family rule sees of one error-free launch (``validate.LaunchCheck`` is ``checked``)."""

    manifest: Manifest
    program: str
    values: dict[str, int]  # var values
    checked: object  # validate.LaunchCheck (not imported: validate imports this module)
    modules: dict = field(default_factory=dict)  # module name -> modules.LoadedModule, those found


class PackView:
    """One checked launch's parameter block as a family rule reads it: the field at each byte offset, the JSON path
    that names it, and the buffer a pointer field is bound to."""

    def __init__(self, ctx: FamilyContext):
        lc = ctx.checked
        self.ctx, self.lc = ctx, lc
        self.base = f"ops.{lc.op.name}.impl.launches[{lc.launch_index}]"
        self.by_at = {f.at: (i, f) for i, f in enumerate(lc.launch.args[0].fields)}

    def field(self, at: int):
        return self.by_at.get(at, (None, None))[1]

    def path(self, at: int) -> str:
        """The field's JSON path, or the block's where no field is there."""
        return f"{self.base}.args[0].pack.fields[{self.by_at[at][0]}]" if at in self.by_at else \
            f"{self.base}.args[0].pack"

    def unpacked(self, at: int, name: str) -> Issue:
        """The error for a field the kernel always reads left out: the zero-filled block holds 0 there (a null
        pointer, an all-zero tensor map, a count it divides by)."""
        return Issue("error", self.path(at), f"{name} (byte {at}) is not packed: the kernel reads 0 there")

    def of_dtype(self, at: int, name: str, dtype: str, what: str) -> list[Issue]:
        """The error for a pointer bound to a buffer or scratch of another element type than the kernel reads there
        (the page table's param on ``out``: bf16 read as page ids; or on an f32 scratch), as a list of 0 or 1."""
        f, got = self.field(at), self.bound(at)
        if isinstance(f, ScratchField) and (s := self.lc.op.scratch.get(f.scratch)) is not None:
            got_name, got_dtype = f"scratch {f.scratch}", s.dtype
        elif got is not None:
            got_name, got_dtype = got[0].buf, got[1].dtype
        else:
            return []
        return [] if got_dtype == dtype else [Issue("error", self.path(at), f"{name} is bound to {got_name}, "
                                                    f"{with_article(got_dtype)} buffer: the kernel reads {what} there "
                                                    f"({dtype})")]

    def same_buffer(self, names: dict[int, str]) -> list[Issue]:
        """Errors for pointers (byte offset -> name) the kernel reads as different tensors bound to one address (out
        on q: the kernel would write its output over its input). One buffer at different offsets is allowed (a
        buffer of page ids, lengths and offsets one after another); its reach is checked elsewhere."""
        issues, seen = [], {}
        for at, name in names.items():
            got = self.bound(at)
            if got is None:
                continue
            where = (got[0].buf, got[0].offset)
            if where in seen:
                issues.append(Issue("error", self.path(at), f"{name} and {seen[where]} are both bound to {where[0]} "
                                                            f"at byte {where[1]}: the kernel takes them as different "
                                                            "tensors"))
            seen.setdefault(where, name)
        return issues

    def i32(self, at: int) -> int | None:
        f = self.field(at)
        return f.value if isinstance(f, I32Field) else None

    def bound(self, at: int):
        """(argument, buffer, bytes from the argument's offset on) of the pointer packed at ``at``, or None."""
        f = self.field(at)
        if not isinstance(f, ParamField) or f.param >= len(self.lc.bound) or not isinstance(self.lc.bound[f.param],
                                                                                             BufArg):
            return None
        arg = self.lc.bound[f.param]
        buf = self.ctx.manifest.buffers.get(arg.buf)
        return None if buf is None else (arg, buf, buf.nbytes - arg.offset)


def trtllm_gen_fmha(ctx: FamilyContext) -> list[Issue]:
    issues = []
    lc = ctx.checked
    op, launch, call, values, tm_dims = lc.op, lc.launch, lc.call, ctx.values, lc.tensormap_dims
    view = PackView(ctx)
    base, by_at, path = view.base, view.by_at, view.path

    def val(at):
        """The 32-bit value a field writes at ``at`` (vars resolved), or None."""
        if at not in by_at:
            return None
        f = by_at[at][1]
        if isinstance(f, I32Field):
            return f.value
        if isinstance(f, ParamField) and f.param < len(call.args) and hasattr(call.args[f.param], "var"):
            return values.get(call.args[f.param].var)
        return None

    def warn(at, msg, sev="warning"):
        issues.append(Issue(sev, path(at), msg))

    multi_cta = "MultiCtasKv" in launch.entry  # only those builds read the split's counter and partials
    for name in REQUIRED:
        if name in SPLIT_SCRATCH and not multi_cta:
            continue
        f = view.field(K[name])
        if f is None:
            issues.append(view.unpacked(K[name], name))
        elif name.startswith("ptr") and not (isinstance(f, ScratchField) or view.bound(K[name])):
            warn(K[name], f"{name}: {with_article(f.kind)} field where the kernel reads a pointer: expected a buffer "
                          "param or a scratch buffer", "error")
        elif name.startswith("tma") and not isinstance(f, TensorMapField):
            warn(K[name], f"{name}: {with_article(f.kind)} field where the kernel reads a tensor map", "error")
        elif name in AT_LEAST_ONE and (v := val(K[name])) is not None and v < 1:  # -1 had passed, and made the
            # bounds below negative
            warn(K[name], f"{name} = {v}: expected >= 1 (the kernel counts, indexes or divides by it)", "error")
    for name, dtype, what in POINTEE:
        issues += view.of_dtype(K[name], name, dtype, what)
    issues += view.same_buffer({K[n]: n for n, _, _ in POINTEE})
    o_map, o_ptr = view.field(K["tmaO"]), view.bound(K["ptrO"])  # one O, written through both: one address
    o_arg = lc.bound[o_map.param] if isinstance(o_map, TensorMapField) else None
    if o_ptr is not None and isinstance(o_arg, BufArg) and (o_arg.buf, o_arg.offset) != (o_ptr[0].buf, o_ptr[0].offset):
        issues.append(Issue("error", path(K["ptrO"]), f"ptrO is bound to {o_ptr[0].buf}, tmaO to {o_arg.buf}: the "
                                                      "kernel writes O through both"))
    issues += _constants(view, launch, val)
    hq, hkv, g = val(K["mNumHeadsQ"]), val(K["mNumHeadsKv"]), val(K["mNumHeadsQPerKv"])
    issues += _tensor_maps(view, g, val(K["mNumTokensPerCtaQ"]), hq)
    grid_y = launch.grid[1] if isinstance(launch.grid[1], int) else values.get(launch.grid[1])  # used by two rules
    if tuple(launch.block) != (512, 1, 1):
        issues.append(Issue("warning", f"{base}.block", f"{list(launch.block)}: this kernel runs 512 threads"))
    if None not in (hq, hkv, g):
        if hq != hkv * g or g > 8:
            warn(K["mNumHeadsQPerKv"], f"mNumHeadsQ {hq} must equal mNumHeadsKv {hkv} x mNumHeadsQPerKv {g}, G <= 8")
        tpc = val(K["mNumTokensPerCtaQ"])
        if g and tpc != max(1, 8 // g):
            warn(K["mNumTokensPerCtaQ"], f"mNumTokensPerCtaQ = {tpc}; floor(8 / G={g}) = {8 // g}")
        if g and g > 1:
            s = math.ceil(math.log2(g)) - 1
            want = (g, math.ceil(2 ** (32 + s) / g) & 0xFFFFFFFF, 0, s)
            got = (val(K["divisor"]), (val(K["divM"]) or 0) & 0xFFFFFFFF, val(K["divAdd"]) or 0, val(K["divShift"]))
            if got != want:
                warn(K["divisor"], f"fast-mod divisor {got} != {want} (cuda::fast_mod_div of G={g})")
        hidden = val(K["mNumHiddenEltsO"])
        if hidden is not None and hidden != hq * HEAD_DIM:
            warn(K["mNumHiddenEltsO"], f"mNumHiddenEltsO = {hidden}; mNumHeadsQ x 256 = {hq * HEAD_DIM}")
        if g and grid_y != hq // min(g, 8):
            issues.append(Issue("warning", f"{base}.grid[1]", f"{grid_y}; mNumHeadsQ / min(G, 8) = {hq // min(g, 8)}"))
    if K["mNumHiddenEltsO"] in by_at and K["mNumHiddenEltsO"] + 4 not in by_at:
        warn(K["mNumHiddenEltsO"], "mNumHiddenEltsO is an int64 written as i32: right only because the block is "
                                   "zero-filled (the high word stays 0)", "note")
    scale = val(K["mScaleSoftmaxLog2"])
    want_scale = f32_bits(math.log2(math.e) / math.sqrt(HEAD_DIM))
    if scale is not None and scale != want_scale:
        warn(K["mScaleSoftmaxLog2"], f"mScaleSoftmaxLog2 bits {scale}; (1/sqrt(256)) log2(e) is {want_scale}")
    cq, ck = val(K["mMaxNumCtasQ"]), val(K["mMaxNumCtasKv"])
    grid_x = launch.grid[0] if isinstance(launch.grid[0], int) else values.get(launch.grid[0])
    if cq and ck and grid_x != cq * ck:
        issues.append(Issue("warning", f"{base}.grid[0]", f"{grid_x}; mMaxNumCtasQ x mMaxNumCtasKv = {cq * ck}"))
    batch = val(K["mBatchSize"])
    grid_z = launch.grid[2] if isinstance(launch.grid[2], int) else values.get(launch.grid[2])
    if batch is not None and grid_z != batch:
        issues.append(Issue("warning", f"{base}.grid[2]", f"{grid_z} but mBatchSize = {batch}"))
    # cu_seqlens_q: declared as a buffer param of the op, but nothing at offset 936
    if K["ptrCumSeqLensQ"] not in by_at:
        maxq, total = val(K["mMaxSeqLenQ"]), val(K["mSumOfSeqLensQ"])
        cu_params = [i for i, a in enumerate(call.args) if hasattr(a, "buf") and a.buf in ("cuq", "cu_seqlens_q")]
        what = f"ops.{op.name}.params[{cu_params[0]}]" if cu_params else path(K["ptrCumSeqLensQ"])
        msg = ("cu_seqlens_q is declared but never packed (ptrCumSeqLensQ at 936 stays null): the kernel assumes "
               f"every sequence has mMaxSeqLenQ = {maxq} query token(s)")
        if None not in (maxq, total, batch) and total > batch * maxq:
            msg += (f"; mSumOfSeqLensQ = {total} but mBatchSize x mMaxSeqLenQ = {batch * maxq}: query rows "
                    f"{batch * maxq}..{total - 1} of out stay unwritten (pass --var so they agree, or pack a pointer "
                    "at 936 with mMaxSeqLenQ = max q_len)")
        elif None not in (maxq, total, batch) and total < batch * maxq:  # rows 2..0 had been named unwritten
            msg += (f"; mSumOfSeqLensQ = {total} but mBatchSize x mMaxSeqLenQ = {batch * maxq}: the kernel writes "
                    f"query rows {total}..{batch * maxq - 1}, which the call's {total} query token(s) do not own "
                    "(pass --var so they agree)")
        issues.append(Issue("warning", what, msg))
    # the buffers the kernel indexes by sequence and query row: past their ends it reads or writes other memory
    pages, maxq, total = val(K["mMaxNumPagesPerSeqKv"]), val(K["mMaxSeqLenQ"]), val(K["mSumOfSeqLensQ"])
    shared = ((val(K["mUseBlockSparseAttention"]) or 0) >> 8) & 0xFF  # byte 1253: K and V share one page-id row
    tables = 1 if shared else 2
    # query rows written: mMaxSeqLenQ per sequence, or mSumOfSeqLensQ in all where cu_seqlens_q is packed
    varlen = K["ptrCumSeqLensQ"] in by_at
    rows, rows_what = ((total, f"mSumOfSeqLensQ {total} query rows") if varlen else
                       (None if None in (batch, maxq) else batch * maxq,
                        f"mBatchSize {batch} x mMaxSeqLenQ {maxq} query rows"))
    if batch is not None:
        reach = {"ptrPageIdxKv": (None if pages is None else batch * tables * pages * 4, "reads",
                                  f"mBatchSize {batch} x {'' if shared else '2 (K, V) x '}mMaxNumPagesPerSeqKv {pages} "
                                  "page ids"),
                 "ptrSeqLensKv": (batch * 4, "reads", f"mBatchSize {batch} KV lengths"),
                 "ptrO": (None if None in (rows, hq) else rows * hq * HEAD_DIM * 2, "writes",
                          f"{rows_what} of mNumHeadsQ {hq} x {HEAD_DIM} bf16")}
        for name, (need, verb, what) in reach.items():
            got = view.bound(K[name])
            if need is None or got is None:
                continue
            arg, _, there = got
            if need > there:
                warn(K[name], f"{name}: the kernel {verb} {need} B ({what}) of {arg.buf} from byte {arg.offset}, "
                              f"but {arg.buf} has {there} B there", "error")
    pool = val(K["mNumPagesInMemPool"])
    for at in (K["tmaK"], K["tmaV"]):
        if at in by_at and isinstance(by_at[at][1], TensorMapField):
            fi, f = by_at[at]
            dims = tm_dims.get(fi)
            if f.dims[-1] == 0 and dims and pool and pool > dims[-1]:
                warn(at, f"page dim 0: FlashInfer fills mNumPagesInMemPool = {pool}, but the buffer holds only "
                         f"{dims[-1]} page slabs: page ids >= {dims[-1]} would read past it (validate the page "
                         f"table, or encode {dims[-1]} so TMA zero-fills)")
    # scratch sizes (rules 22, 23)
    if None not in (cq, ck, batch, grid_y) and grid_y:
        need = {"counter": batch * grid_y * cq * 4, "partial": batch * grid_y * cq * ck * 8 * HEAD_DIM * 2,
                "stats": batch * grid_y * cq * ck * 8 * 8}
        for name, nbytes in need.items():
            s = op.scratch.get(name)
            if s is None:
                continue
            if s.nbytes < nbytes:  # the kernel writes past it: as an index buffer too short, an error
                issues.append(Issue("error", f"ops.{op.name}.impl.scratch.{name}",
                                    f"{s.nbytes} B < {nbytes} B the kernel writes"))
            if name == "partial" and s.dtype == "f32":
                issues.append(Issue("note", f"ops.{op.name}.impl.scratch.partial",
                                    f"declared f32 but the kernel writes 16-bit partial O: {nbytes} B needed, "
                                    f"{s.nbytes} B allocated (safe, mislabelled)"))
    return issues


SMEM_BYTES = 144992  # the cubin's dynamic shared memory (its metainfo; the brief's launch rules 2 and 4)


def _constants(view: PackView, launch, val) -> list[Issue]:
    """The constants the brief gives one value for this kernel (section 3) and the launch's shared memory: a page of
    another size than the entry's ``P64``, a window of 0 keys, a reshape factor or output scale of 0 each make the
    kernel compute something else, and less shared memory than the cubin's faults the launch."""
    import re

    issues = []
    page = re.search(r"P(\d+)", launch.entry.removeprefix("fmhaSm100"))
    log2 = val(K["mNumTokensPerPageLog2"]) or 0  # not packed: 0 in the zero-filled block
    if page and 2 ** log2 != int(page[1]):
        issues.append(Issue("error", view.path(K["mNumTokensPerPageLog2"]),
                            f"mNumTokensPerPageLog2 = {log2}: the entry's pages hold {page[1]} tokens, log2 "
                            f"{int(page[1]).bit_length() - 1} (the kernel finds a token's page by this shift)"))
    for name, want, why in (("mAttentionWindowSize", "2147483647 (no sliding window)", "keys before a query's last "
                             "window are masked"), ("mReshapeFactorKv", "1", "K/V rows are regrouped by it"),
                            ("mOutputScale", "f32 1.0 (bits 1065353216)", "O is multiplied by it")):
        if (val(K[name]) or 0) <= 0:  # a window or factor of 0 (or unpacked), or an f32 scale of 0 or negative
            issues.append(Issue("warning", view.path(K[name]), f"{name} = {val(K[name]) or 0}: expected {want}; "
                                                               f"{why}"))
    if isinstance(launch.shared_mem, int) and launch.shared_mem < SMEM_BYTES:
        issues.append(Issue("error", f"{view.base}.shared_mem", f"{launch.shared_mem} B: the cubin takes "
                                                                f"{SMEM_BYTES} B of dynamic shared memory"))
    return issues


def _tensor_maps(view: PackView, g: int | None, tokens_per_cta: int | None, hq: int | None) -> list[Issue]:
    """Rules 12-14 of the brief: bf16 maps; Q's box exactly the rows the kernel's barrier counts, Q's strides the
    [D, G, Hq] layout; K and V one layout (box [64, 64, 1, 1], 128B swizzle), different bases only."""
    issues = []
    maps = {name: f for name in ("tmaQ", "tmaK", "tmaV", "tmaO")
            if isinstance(f := view.field(K[name]), TensorMapField)}

    def say(name, sub, msg, sev="error"):
        issues.append(Issue(sev, f"{view.path(K[name])}.tensormap.{sub}", msg))

    for name, f in maps.items():
        if f.dtype != "bf16":
            say(name, "dtype", f"{f.dtype}: the kernel's {name[3:]} tiles are bf16")
    q = maps.get("tmaQ")
    if q is not None and g and tokens_per_cta:
        want = (64, g, 1, tokens_per_cta)
        if tuple(q.box) != want:  # each load waits for the box's bytes: more or fewer than the kernel counts hangs
            say("tmaQ", "box", f"{list(q.box)}: expected [64, G={g}, 1, mNumTokensPerCtaQ={tokens_per_cta}], the "
                               "rows the kernel's barrier counts per load")
        if hq and tuple(q.strides) != (want_strides := (HEAD_DIM * 2, g * HEAD_DIM * 2, hq * HEAD_DIM * 2)):
            say("tmaQ", "strides", f"{list(q.strides)}: Q as [tokens, Hq, {HEAD_DIM}] bf16 has {list(want_strides)}",
                "warning")
    for name in ("tmaK", "tmaV"):
        f = maps.get(name)
        if f is not None and tuple(f.box) != (64, 64, 1, 1):
            say(name, "box", f"{list(f.box)}: expected [64, 64, 1, 1], the page slice the kernel's barrier counts")
    for name, f in maps.items():  # all four are 128B-swizzled (section 5); Q's had gone unchecked
        if f.swizzle != 128:
            say(name, "swizzle", f"{f.swizzle}: the kernel reads its {name[3:]} tiles 128B-swizzled", "warning")
    if "tmaK" in maps and "tmaV" in maps:
        k, v = maps["tmaK"], maps["tmaV"]
        dims = {name: view.lc.tensormap_dims.get(view.by_at[K[name]][0], maps[name].dims) for name in ("tmaK", "tmaV")}
        differ = [a for a in ("dtype", "dims", "strides", "box", "swizzle", "l2_promotion", "element_strides")
                  if (tuple(dims["tmaK"]) != tuple(dims["tmaV"]) if a == "dims" else getattr(k, a) != getattr(v, a))]
        if differ:
            say("tmaV", differ[0], f"V's map differs from K's in {', '.join(differ)}: the kernel reads both pages "
                                   "one way (only the base differs)", "warning")
    return issues


def matching(launch):
    """The family checkers that apply to ``launch``: trtllm-gen's FMHA here, labkit's own decode kernel's beside
    the code that writes its manifests."""
    from ..workloads.decode import manifest_rules

    out = []
    if launch.entry.startswith("fmhaSm100") and len(launch.args) == 1 and launch.args[0].size == 1280:
        out.append(trtllm_gen_fmha)
    if manifest_rules.applies(launch):
        out.append(manifest_rules.paged_decode)
    return out


def member_names(launch) -> dict[int, str]:
    """The parameter block's member names by byte offset where a family knows ``launch``'s ABI (trtllm-gen's FMHA,
    labkit's own decode kernel), else none: what the parameter-block map shows beside each field."""
    from ..workloads.decode import manifest_rules
    from ..workloads.decode.build import MEMBERS

    if trtllm_gen_fmha in matching(launch):
        return dict(TRTLLM_GEN_MEMBERS)
    return dict(MEMBERS) if manifest_rules.applies(launch) else {}

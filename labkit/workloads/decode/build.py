"""labkit's decode kernel as the manifest runner takes it: a cubin and its schema_version 4 manifest.

``build(geometry, splits, directory)`` compiles ``kernels/paged_decode.cu`` with NVRTC (no GPU
needed) for the geometry's head_dim, page size and row blocking, and writes a manifest whose one
call packs the 384-byte parameter block: the K and V tensor maps over the pool (plain, or the
seed's interleaved kv buffer at byte offsets), pointers, scratch and i32 constants.
"""

import hashlib
import math
from pathlib import Path

from ..._write import dumps
from ...errors import ArgumentError
from ...kernels import compile_cubin, kernel_path
from ...manifest.pack import f32_bits
from ...values import OutputPath, not_an_input
from .geometry import DecodeGeometry, KernelBuild, kernel_build

ENTRY = "paged_decode"
PARAM_BYTES = 384  # sizeof(Params): 352 B of fields (head_splits at 348: tail-split builds only), padded to 64 B
MAX_SPLITS = 256  # MAX_SPLITS in kernels/paged_decode.cuh (the reduction's weights in shared memory)
# Params' offsets (kernels/paged_decode.cuh): pointers, then the split scratch, then i32 constants
Q_AT, OUT_AT, TABLE_AT, SEQ_AT, CUQ_AT = 256, 264, 272, 280, 288
PARTIAL_O_AT, PARTIAL_ML_AT, COUNTER_AT = 296, 304, 312
BATCH_AT, HEADS_KV_AT, GROUP_AT, MAX_PAGES_AT, MAX_Q_LEN_AT, NUM_PAGES_AT = 320, 324, 328, 332, 336, 340
SCALE_LOG2_AT = 344  # softmax scale x log2(e), as f32 bits
HEAD_SPLITS_AT, TIMELINE_AT = 348, 352  # a tail-split build's splits of the other units; the timeline build's records
# Params' member names by offset: the parameter-block map (labkit manifest check, notebook 01) shows them
MEMBERS = {0: "k_map", 128: "v_map", Q_AT: "q", OUT_AT: "out", TABLE_AT: "page_table", SEQ_AT: "seq_lens",
           CUQ_AT: "cu_seqlens_q", PARTIAL_O_AT: "partial_o", PARTIAL_ML_AT: "partial_ml", COUNTER_AT: "counter",
           BATCH_AT: "batch", HEADS_KV_AT: "heads_kv", GROUP_AT: "group", MAX_PAGES_AT: "max_pages",
           MAX_Q_LEN_AT: "max_q_len", NUM_PAGES_AT: "num_pages", SCALE_LOG2_AT: "scale_log2_bits",
           HEAD_SPLITS_AT: "head_splits", TIMELINE_AT: "timeline"}


def _maps(g: DecodeGeometry, wide_boxes: bool = False, row_boxes: bool = False) -> tuple[dict, list, list]:
    """(pool buffers, K/V call args, per-map dims+strides) for the geometry's layout; ``wide_boxes``: head_dim as
    (64, head_dim / 64) with the parts 128 B apart, so that one box takes a page slice's every part; ``row_boxes``:
    the same with the parts before the page rows, so that a box reads each token row whole and the rows in order."""
    d2 = g.head_dim * 2
    if g.layout == "plain":
        buffers = {n: {"dtype": "bf16", "shape": list(g.pool_shape()), "kind": "input"} for n in ("k_pool", "v_pool")}
        args = [{"buf": "k_pool"}, {"buf": "v_pool"}]
        strides = [d2, g.page_size * d2, g.heads_kv * g.page_size * d2]
    else:  # kv[pages, 2, P, Hkv, 2, D]: K = kv[:, 1, :, :, 0], V = kv[:, 1, :, :, 1]
        buffers = {"kv": {"dtype": "bf16", "shape": list(g.pool_shape()), "kind": "input"}}
        half = g.page_size * g.heads_kv * 2 * d2
        args = [{"buf": "kv", "offset": half}, {"buf": "kv", "offset": half + d2}]
        strides = [g.heads_kv * 2 * d2, 2 * d2, 2 * half]
    dims = [g.head_dim, g.page_size, g.heads_kv, g.num_pages]
    if wide_boxes:
        dims = [64, g.page_size, g.head_dim // 64, g.heads_kv, g.num_pages]
        strides = [strides[0], 128, *strides[1:]]
    if row_boxes:
        dims = [64, g.head_dim // 64, g.page_size, g.heads_kv, g.num_pages]
        strides = [128, *strides]
    return buffers, args, [dims, strides]


def _grid_y_blocks(g: DecodeGeometry, kb: KernelBuild) -> int:
    """Row blocks per KV head, checked against grid y (heads_kv x row blocks <= 65535)."""
    blocks = kb.row_blocks(g)
    if g.heads_kv * blocks > 65535:
        raise ArgumentError(f"decode geometry: heads_kv {g.heads_kv} x {blocks} row blocks = {g.heads_kv * blocks} "
                            "CTAs along grid y; it takes at most 65535")
    return blocks


def _check_splits(g: DecodeGeometry, splits: int, kb: KernelBuild) -> None:
    """``splits`` per (sequence, KV head): 1..one per page (and MAX_SPLITS); a cluster build's exact count."""
    top = min(g.max_pages, MAX_SPLITS)
    if isinstance(splits, bool) or not isinstance(splits, int) or not 1 <= splits <= top:
        raise ArgumentError(f"splits {splits!r}: expected 1..{top} (at most one per page of the "
                            f"{g.max_pages}, and at most {MAX_SPLITS})")
    if kb.persistent_ctas and splits != 1:
        raise ArgumentError(f"a persistent build takes whole units: 1 split, not {splits}")
    if kb.cluster_splits > 1 and kb.cluster_splits != splits:
        raise ArgumentError(f"a build whose clusters combine {kb.cluster_splits} splits launches with exactly "
                            f"that many, not {splits}")


def _tail_grid(g: DecodeGeometry, splits: int, kb: KernelBuild, tail_units: int) -> int | None:
    """CTAs of a build with split tails (a 1-D grid: the other units x ``splits``, then ``tail_units`` x its tail
    splits), else None."""
    units = g.batch * g.heads_kv * kb.row_blocks(g)
    if not kb.tail_splits:
        if tail_units:
            raise ArgumentError(f"tail_units {tail_units}: this build has no tail splits (KernelBuild.tail_splits)")
        return None
    if splits >= kb.tail_splits or not 1 <= tail_units <= units:
        raise ArgumentError(f"a build with {kb.tail_splits} tail splits launches 1..{units} tail units and fewer "
                            f"splits for the others, not splits {splits}, tail_units {tail_units}")
    return (units - tail_units) * splits + tail_units * kb.tail_splits


def launch_ctas(g: DecodeGeometry, splits: int, kb: KernelBuild, tail_units: int = 0) -> int:
    """CTAs of the call's one launch: its persistent CTAs, else the units in their splits (a tail's units in its)."""
    return (_tail_grid(g, splits, kb, tail_units) or kb.persistent_ctas
            or splits * g.heads_kv * _grid_y_blocks(g, kb) * g.batch)


def describe_grid(g: DecodeGeometry, plan, sms: int) -> str:
    """One line for the CLI: the CTAs a ``CallPlan`` launches, what they are made of, and the waves they take on
    ``sms`` SMs (``labkit.sched.waves``; a clustered call over the CTAs the GPU holds in whole clusters)."""
    from ..._text import counted
    from ...sched import waves

    kb = plan.kernel
    blocks = kb.row_blocks(g)
    units = g.batch * g.heads_kv * blocks
    made = f"{counted(g.batch, 'sequence')} x {counted(g.heads_kv, 'KV head')}" + (
        f" x {blocks} row blocks" if blocks > 1 else "")
    if kb.persistent_ctas:
        made = f"persistent: they claim the {units} units, {made}, one at a time"
    elif plan.tail_units:
        made = (f"{made}: {units - plan.tail_units} units x {counted(plan.splits, 'split')}, the last "
                f"{plan.tail_units} x {kb.tail_splits}")
    else:
        made += f" x {counted(plan.splits, 'split')}"
    ctas = launch_ctas(g, plan.splits, kb, plan.tail_units)
    resident = plan.cluster_resident_ctas or None
    w = waves(ctas, sms, plan.ctas_per_sm, resident=resident)
    over = f"{w.slots} slots ({sms} SMs x {plan.ctas_per_sm})"
    if resident:
        over = f"the {resident} of {over} that clusters of {kb.cluster_splits} fill at once"
    return f"grid: {counted(ctas, 'CTA')} ({made}) over {over}: {w.waves:.2f} waves"


def manifest_dict(g: DecodeGeometry, splits: int, cubin_name: str, sha256: str, *, sm_scale: float | None = None,
                  kernel: KernelBuild | None = None, q_rows: int | None = None, pdl: bool = False,
                  tail_units: int = 0) -> dict:
    """The manifest of one decode call with ``splits`` KV splits per (sequence, KV head); ``q_rows``: rows of
    the q and out buffers (default batch x max_q_len; more, e.g. to match another manifest's buffers);
    ``pdl``: launch with programmatic stream serialization (``CallPlan.pdl``); ``tail_units``: the last units
    that run in the build's tail splits (``CallPlan.tail_units``; the grid is then 1-D and has no ``seqs``)."""
    kb = kernel or kernel_build(g)
    _check_splits(g, splits, kb)
    tail_ctas = _tail_grid(g, splits, kb, tail_units)
    scale = g.head_dim ** -0.5 if sm_scale is None else sm_scale
    pool, kv_args, (dims, strides) = _maps(g, kb.wide_boxes, kb.row_boxes)
    if q_rows is not None and (isinstance(q_rows, bool) or not isinstance(q_rows, int) or q_rows < g.q_tokens):
        raise ArgumentError(f"q_rows {q_rows!r}: expected an integer >= {g.q_tokens} (batch x max_q_len)")
    q_shape = [g.q_tokens if q_rows is None else q_rows, g.heads_q, g.head_dim]
    blocks = _grid_y_blocks(g, kb)
    groups = g.batch * g.heads_kv * blocks
    parts = [g.head_dim // 64]
    box = [64, *(parts if kb.row_boxes else []), kb.box_rows, *(parts if kb.wide_boxes else []), 1, 1]
    swizzle = 128
    if kb.padded_rows:  # one box takes a page slice's rows whole, with 8 dims of zeros past the map's head_dim
        box, swizzle = [kb.row_dims, kb.box_rows, 1, 1], 0
    tmap = lambda param: {"tensormap": {"param": param, "dtype": "bf16", "dims": dims, "strides": strides,  # noqa
                                        "box": box, "swizzle": swizzle, "l2_promotion": 128}}
    fields = [{"at": 0, **tmap(2)}, {"at": 128, **tmap(3)},
              {"at": Q_AT, "param": 1}, {"at": OUT_AT, "param": 0}, {"at": TABLE_AT, "param": 4},
              {"at": SEQ_AT, "param": 5}, {"at": CUQ_AT, "param": 6},
              {"at": PARTIAL_O_AT, "scratch": "partial_o"}, {"at": PARTIAL_ML_AT, "scratch": "partial_ml"},
              {"at": COUNTER_AT, "scratch": "counter"},
              {"at": BATCH_AT, "i32": g.batch}, {"at": HEADS_KV_AT, "i32": g.heads_kv},
              {"at": GROUP_AT, "i32": g.group},
              {"at": MAX_PAGES_AT, "i32": g.max_pages}, {"at": MAX_Q_LEN_AT, "i32": g.max_q_len},
              {"at": NUM_PAGES_AT, "i32": g.num_pages},
              {"at": SCALE_LOG2_AT, "i32": f32_bits(scale * math.log2(math.e))},
              *([{"at": HEAD_SPLITS_AT, "i32": splits}] if tail_ctas else []),
              *([{"at": TIMELINE_AT, "scratch": "timeline"}] if kb.timeline else [])]
    ctas = launch_ctas(g, splits, kb, tail_units)
    one_d = tail_ctas or kb.persistent_ctas  # a 1-D grid: no "seqs" dimension
    stored_splits = kb.tail_splits or splits  # partials per unit
    # split partials, their counters: only where splits meet through global memory (a cluster's meet in shared memory;
    # persistent CTAs claim units from counter[0])
    through_global = stored_splits > 1 and kb.cluster_splits <= 1
    timeline = {"timeline": {"dtype": "u64", "shape": [ctas, 6]}} if kb.timeline else {}
    return {
        "schema_version": 4,
        "model": "labkit-paged-decode",
        "vars": {} if one_d else {"seqs": {"max": g.batch}},
        "buffers": {
            "q": {"dtype": "bf16", "shape": q_shape, "kind": "input"},
            "out": {"dtype": "bf16", "shape": q_shape, "kind": "output"},
            **pool,
            "table": {"dtype": "i32", "shape": [g.batch, g.max_pages], "kind": "input"},
            "seq": {"dtype": "i32", "shape": [g.batch], "kind": "input"},
            "cuq": {"dtype": "i32", "shape": [g.batch + 1], "kind": "input"},
        },
        "modules": {"decode": {"source": cubin_name, "sha256": sha256}},
        "ops": {"decode": {
            "params": ["out buffer<bf16>", "in buffer<bf16>", "in buffer<bf16>", "in buffer<bf16>",
                       "in buffer<i32>", "in buffer<i32>", "in buffer<i32>"],
            "impl": {
                "scratch": {  # one element each where nothing goes through global memory (the ABI keeps the pointers)
                    "counter": {"dtype": "u32", "shape": [groups] if through_global else [1]},
                    "partial_o": {"dtype": "f32", "shape": [groups, stored_splits, kb.max_rows, g.head_dim]
                                  if through_global else [1]},
                    "partial_ml": {"dtype": "f32", "shape": [groups, stored_splits, kb.max_rows, 2]
                                   if through_global else [1]},
                    **timeline,
                },
                "launches": [{
                    "module": "decode", "entry": ENTRY, "params": [f"bytes<{PARAM_BYTES}>"],
                    "block": [kb.threads, 1, 1],
                    "grid": [one_d, 1, 1] if one_d else [splits, g.heads_kv * blocks, "seqs"],
                    "shared_mem": kb.dynamic_smem_bytes, "pdl": pdl,
                    "args": [{"pack": {"size": PARAM_BYTES, "fields": fields}}],
                }],
            },
        }},
        "programs": {"decode": {"calls": [{"label": "decode/paged", "op": "decode", "args": [
            {"buf": "out"}, {"buf": "q"}, *kv_args, {"buf": "table"}, {"buf": "seq"}, {"buf": "cuq"}]}]}},
    }


def manifest_inputs(manifest, seed: int = 0) -> tuple[dict, str]:
    """``(index arrays, note)`` for running a labkit-paged-decode manifest with no inputs of its own (``labkit manifest
    run``): every sequence as long as its page-table row (the pages it can hold), page ids drawn from the pool and
    ``max_q_len`` query tokens each; q and K/V take the Runner's random data. Generic random integers would make
    seq_lens 0..15 and cu_seqlens_q non-monotonic: a degenerate call that reads and writes past its q and out rows."""
    import numpy as np

    from ...manifest.model import I32Field

    fields = {f.at: f.value for launch in manifest.ops["decode"].launches for f in launch.args[0].fields
              if isinstance(f, I32Field)}
    batch, max_pages, max_q_len = fields[BATCH_AT], fields[MAX_PAGES_AT], fields[MAX_Q_LEN_AT]
    pool = manifest.buffers["k_pool" if "k_pool" in manifest.buffers else "kv"]
    pages, page_size = pool.shape[0], pool.shape[2]
    rng = np.random.default_rng(seed)
    arrays = {"table": rng.integers(0, pages, (batch, max_pages), dtype=np.int32),
              "seq": np.full(batch, max_pages * page_size, dtype=np.int32),
              "cuq": (np.arange(batch + 1) * max_q_len).astype(np.int32)}
    note = (f"inputs ({manifest.model}): {batch} sequences of {max_pages * page_size} tokens (full page-table rows), "
            f"page ids drawn from the pool's {pages}, {max_q_len} query token(s) each, random q and K/V (seed {seed})")
    return arrays, note


def compile_kernel(kb: KernelBuild, arch: str = "sm_90"):
    """NVRTC's cubin for a kernel build (cached by source and options)."""
    return compile_cubin(kernel_path(__file__, kb.source), arch=arch, options=kb.options())


def occupancy(kb: KernelBuild, arch: str = "sm_90"):
    """This build's ``labkit.sched.Occupancy`` (CTAs per SM and what limits them), from its cubin."""
    from ...sched import cubin_occupancy

    return cubin_occupancy(compile_kernel(kb, arch).image, kernel=ENTRY, threads_per_cta=kb.threads,
                           dynamic_smem_bytes=kb.dynamic_smem_bytes)


def build(g: DecodeGeometry, splits: int, directory: Path | str, *, arch: str = "sm_90",
          kernel: KernelBuild | None = None, q_rows: int | None = None, pdl: bool = False, tail_units: int = 0,
          reads: tuple = ()) -> Path:
    """Compile the kernel for ``g`` into ``directory`` and write its manifest there; returns the manifest path.
    ``reads``: the files the command read, which no output may be (a manifest of labkit's own file name given to
    ``decode from-manifest`` with its own folder as ``--out`` was replaced by the manifest built from it)."""
    kb = kernel or kernel_build(g)
    _grid_y_blocks(g, kb)  # before NVRTC and before any file
    _check_splits(g, splits, kb)
    _tail_grid(g, splits, kb, tail_units)
    _buffers_fit(manifest_dict(g, splits, "", "0" * 64, kernel=kb, q_rows=q_rows, pdl=pdl, tail_units=tail_units))
    d = Path(directory)
    name = (f"{ENTRY}_{kb.variant}_d{g.head_dim}_p{g.page_size}_r{kb.rows_per_warp}x{kb.row_warps}"
            f"_k{kb.keys_per_warp}_w{kb.warps}{f'd{kb.dim_warps}' if kb.dim_warps > 1 else ''}_s{kb.stages}"
            f"{'_ef' if kb.kv_evict_first else ''}"
            f"{f'_c{kb.cluster_splits}' if kb.cluster_splits > 1 else ''}"
            f"{f'_t{kb.tail_splits}' if kb.tail_splits > 1 else ''}{'_persistent' if kb.persistent_ctas else ''}"
            f"{'_wide' if kb.wide_boxes else ''}{'_rows' if kb.row_boxes else ''}{'_pp' if kb.page_prefetch else ''}"
            f"{'_pad' if kb.padded_rows else ''}"
            f"{'_timeline' if kb.timeline else ''}"
            f"_{arch}.cubin")
    pool = "" if g.num_pages == g.batch * g.max_pages else f"_pool{g.num_pages}"  # else two pools share one name
    path = d / (f"decode_b{g.batch}_h{g.heads_q}-{g.heads_kv}_d{g.head_dim}_p{g.page_size}x{g.max_pages}{pool}"
                f"_q{g.max_q_len}_{g.layout}_s{splits}{f'_t{tail_units}x{kb.tail_splits}' if tail_units else ''}.json")
    for out, kind, words in ((d / name, "cubin", "the build's cubin"), (path, "json:a launch manifest",
                                                                          "the build's manifest")):
        OutputPath.parse(out, words, writes=kind)  # an earlier build's file is replaced, no other
        not_an_input(out, [r for r in reads if r], words)
    cubin = compile_kernel(kb, arch)
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(cubin.image)
    sha = hashlib.sha256(cubin.image).hexdigest()
    path.write_text(dumps(manifest_dict(g, splits, name, sha, kernel=kb, q_rows=q_rows, pdl=pdl,
                                             tail_units=tail_units), indent=2) + "\n")
    return path


def _buffers_fit(doc: dict) -> None:
    """Every buffer and scratch of the manifest within what its reader takes (a 2 TB partial_o of 256 splits over a
    small pool had been written, and manifest check then refused it)."""
    from ...manifest.model import dtype_bytes
    from ...manifest.parse import MAX_BUFFER_BYTES

    sized = {**{f"buffers.{k}": v for k, v in doc["buffers"].items()},
             **{f"scratch.{k}": v for op in doc["ops"].values() for k, v in op["impl"].get("scratch", {}).items()}}
    for where, b in sized.items():
        if (n := math.prod(b["shape"]) * dtype_bytes(b["dtype"])) > MAX_BUFFER_BYTES:
            raise ArgumentError(f"decode build: {where} of {b['shape']} {b['dtype']} is {n / 1e12:.1f} TB, over the "
                                f"{MAX_BUFFER_BYTES / 1e12:.1f} TB a manifest buffer may hold: fewer sequences, "
                                "heads or splits")


def build_plan(g: DecodeGeometry, plan, directory: Path | str, *, arch: str = "sm_90",
               q_rows: int | None = None, reads: tuple = ()) -> Path:
    """``build`` for a ``CallPlan``: its kernel build, split count, PDL choice and tail units, which always go
    together."""
    return build(g, plan.splits, directory, arch=arch, kernel=plan.kernel, q_rows=q_rows, pdl=plan.pdl,
                 tail_units=plan.tail_units, reads=reads)

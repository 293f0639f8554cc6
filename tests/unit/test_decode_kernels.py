"""The decode kernels' compile-time switches: without the timeline switch the machine code is the kernel without
the recorder (with it, per-CTA records at byte 352 of the same 384-byte parameter block); without tail splits
and a CTAs-per-SM bound, persistent CTAs, wide boxes, row boxes or page ids ahead, the kernel without that code."""

import re

import pytest

import labkit.workloads.decode as decode_package
from labkit.errors import CompileError
from labkit.kernels import compile_cubin, kernel_path
from labkit.manifest.elf import _sections, read_cubin
from labkit.workloads.decode import DecodeGeometry, kernel_build

SEED_LIKE = DecodeGeometry(batch=2, heads_q=24, heads_kv=4, head_dim=256, page_size=64, max_pages=11, num_pages=22)
WIDE = DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8)


def _text(image: bytes) -> bytes:
    _, off, size, _ = _sections(image)[".text.paged_decode"]
    return image[off:off + size]


def _without_recorder(source_text: str, header_text: str) -> str:
    """The kernel as it would read with no recorder at all: the header inlined, every LABKIT_TIMELINE
    block and the macros gone, CTA_RETURN spelled ``return``."""
    header = re.sub(r"#ifdef LABKIT_TIMELINE\n.*?#endif\n", "", header_text, flags=re.S)
    header = re.sub(r"#ifndef LABKIT_TIMELINE\n.*?#endif\n", "", header, flags=re.S)
    text = source_text.replace('#include "paged_decode.cuh"', header)
    text = re.sub(r"^\s*TIMELINE_START\(\);\n", "", text, flags=re.M)
    out = text.replace("CTA_RETURN", "return")
    assert "TIMELINE" not in re.sub(r"//.*", "", out)
    return out


@pytest.mark.parametrize(("geometry", "knobs"), [(SEED_LIKE, {}), (SEED_LIKE, dict(warps=8, dim_warps=2)), (WIDE, {})],
                         ids=["mma", "mma-pairs", "fma"])
def test_uninstrumented_decode_kernel_is_the_code_without_the_recorder(geometry, knobs):
    kb = kernel_build(geometry, **knobs)
    src = kernel_path(decode_package.__file__, kb.source)
    header = src.with_name("paged_decode.cuh").read_text()
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    bare = compile_cubin(src, arch="sm_90", options=kb.options(), code=_without_recorder(src.read_text(), header))
    assert _text(now.image) == _text(bare.image)
    timed = read_cubin(compile_cubin(src, arch="sm_90",
                                     options=kernel_build(geometry, timeline=True, **knobs).options()).image)
    plain = read_cubin(now.image)
    assert timed.entries["paged_decode"].param_bytes == plain.entries["paged_decode"].param_bytes == 384
    assert _text(now.image) != _text(compile_cubin(src, arch="sm_90", options=(*kb.options(),
                                                                                 "-DLABKIT_TIMELINE")).image)


def _without_switch(source_text: str, switch: str) -> str:
    """The source with a compile-time switch off: each ``#if SWITCH`` block replaced by its ``#else`` part (or
    nothing), each ``#if !SWITCH`` block by its body (the kernels' switch blocks nest no other conditionals)."""
    text = re.sub(rf"#if {switch}\b[^\n]*\n(?:(?!#else|#endif).)*?(?:#else\n((?:(?!#endif).)*?))?#endif\n",
                  lambda m: m.group(1) or "", source_text, flags=re.S)
    return re.sub(rf"#if !{switch}\n((?:(?!#else|#endif).)*?)#endif\n", lambda m: m.group(1), text, flags=re.S)


def _without_tail_splits(source_text: str) -> str:
    """The tensor-core kernel as it would read with no tail splits and no MIN_CTAS bound, ``LAUNCH_BOUNDS`` spelled
    ``__launch_bounds__(THREADS)``."""
    text = re.sub(r"#ifdef MIN_CTAS[^\n]*\n.*?#endif\n", "", _without_switch(source_text, "TAIL_SPLITS"), flags=re.S)
    out = text.replace("CLUSTER_ATTR LAUNCH_BOUNDS", "CLUSTER_ATTR __launch_bounds__(THREADS)")
    assert "tail_unit" not in out and "MIN_CTAS" not in out and "LAUNCH_BOUNDS" not in out
    return out


@pytest.mark.parametrize("knobs", [dict(stages=1, qk_chains=1), dict(warps=8, dim_warps=2, stages=3),
                                   dict(stages=2, cluster_splits=4)], ids=["one-stage", "pairs", "cluster"])
def test_tensor_core_kernel_without_tail_splits_is_the_code_without_them(knobs):
    g = DecodeGeometry(64, 32, 8, 256 if knobs.get("warps") == 8 else 128, 64, 16, 1024)
    cluster = knobs.pop("cluster_splits", 0)
    kb = kernel_build(g, variant="mma", **knobs)
    if cluster:
        import dataclasses

        kb = dataclasses.replace(kb, cluster_splits=cluster)
    src = kernel_path(decode_package.__file__, kb.source)
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    bare = compile_cubin(src, arch="sm_90", options=kb.options(), code=_without_tail_splits(src.read_text()))
    assert _text(now.image) == _text(bare.image)
    if cluster:  # a cluster combines a unit's fixed splits: no tails there
        with pytest.raises(CompileError, match="tail splits: 2..16, without split clusters"):
            compile_cubin(src, arch="sm_90", options=(*kb.options(), "-DTAIL_SPLITS=4"))
    else:
        tailed = compile_cubin(src, arch="sm_90", options=(*kb.options(), "-DTAIL_SPLITS=4"))
        assert _text(tailed.image) != _text(now.image)


def _without_persistent(source_text: str) -> str:
    """The tensor-core kernel as it would read without persistent CTAs."""
    out = _without_switch(source_text, "PERSISTENT").replace("#if !TAIL_SPLITS && !PERSISTENT", "#if !TAIL_SPLITS")
    assert "claim_unit" not in out and "unit_queue" not in out and "row_limit" not in out
    return out


@pytest.mark.parametrize("knobs", [dict(stages=1, qk_chains=1), dict(warps=8, dim_warps=2, stages=3),
                                   dict(stages=2, cluster_splits=4)], ids=["one-stage", "pairs", "cluster"])
def test_tensor_core_kernel_without_persistent_ctas_is_the_code_without_them(knobs):
    """The persistent path lives in preprocessor blocks: builds without it compile to the machine code of the source
    with those blocks taken out (measured builds keep their timings), and with it to other code."""
    import dataclasses

    g = DecodeGeometry(64, 32, 8, 256 if knobs.get("warps") == 8 else 128, 64, 16, 1024)
    cluster = knobs.pop("cluster_splits", 0)
    kb = dataclasses.replace(kernel_build(g, variant="mma", **knobs), cluster_splits=cluster)
    src = kernel_path(decode_package.__file__, kb.source)
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    bare = compile_cubin(src, arch="sm_90", options=kb.options(), code=_without_persistent(src.read_text()))
    assert _text(now.image) == _text(bare.image)
    if not cluster:
        persistent = compile_cubin(src, arch="sm_90", options=(*kb.options(), "-DPERSISTENT=1"))
        assert _text(persistent.image) != _text(now.image)


def test_timeline_build_keeps_the_plans_ctas_per_sm_without_spills(tmp_path, monkeypatch):
    """The stamps cost registers: at 64 x 1k d128 the one-stage plan (128 registers, 4 CTAs per SM) went to 158
    registers and 3 CTAs per SM once instrumented, so its timeline showed 1.3 waves where the plan runs one. The
    timeline build is bounded to the plan's CTAs per SM, and ptxas spills nothing for it."""
    import dataclasses

    from labkit.sched import cubin_occupancy
    from labkit.workloads.decode.plan import plan_call
    from labkit.workloads.decode.run import geometry_for

    g = geometry_for(64, 1024, head_dim=128)
    plan, traced = plan_call(g, sms=132), plan_call(g, sms=132, timeline=True)
    assert plan.ctas_per_sm == traced.ctas_per_sm == 4 and traced.kernel.min_ctas == 4
    assert dataclasses.replace(traced.kernel, timeline=False, min_ctas=0) == plan.kernel
    src = kernel_path(decode_package.__file__, traced.kernel.source)
    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path))  # a cached cubin keeps no ptxas log
    for kb, per_sm in ((dataclasses.replace(traced.kernel, min_ctas=0), 3), (traced.kernel, 4)):
        cubin = compile_cubin(src, arch="sm_90", options=(*kb.options(), "--ptxas-options=-v"))
        assert cubin_occupancy(cubin.image, dynamic_smem_bytes=kb.dynamic_smem_bytes).ctas_per_sm == per_sm
        assert "0 bytes spill stores, 0 bytes spill loads" in cubin.log, cubin.log


def _switch_is_its_blocks(knobs: dict, field: str, without) -> tuple:
    """The mma build of ``knobs`` (``cluster_splits``, ``page_size`` popped) compiles to the machine code of its source
    with ``without(source, header)`` applied, and with ``field`` on to other code; returns (the build with it on, the
    source's path)."""
    import dataclasses

    page = knobs.pop("page_size", 64)
    g = DecodeGeometry(64, 32, 8, 256 if knobs.get("dim_warps") == 2 else 128, page, 16 * 64 // page, 1024)
    cluster = knobs.pop("cluster_splits", 0)
    kb = dataclasses.replace(kernel_build(g, variant="mma", **knobs), cluster_splits=cluster)
    src = kernel_path(decode_package.__file__, kb.source)
    header = src.with_name("paged_decode.cuh").read_text()
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    bare = compile_cubin(src, arch="sm_90", options=kb.options(), code=without(src.read_text(), header))
    assert _text(now.image) == _text(bare.image)
    on = dataclasses.replace(kb, **{field: True})
    assert f"-D{field.upper()}=1" in on.options()
    assert _text(compile_cubin(src, arch="sm_90", options=on.options()).image) != _text(now.image)
    return on, src


def _without_wide_boxes(source_text: str, header_text: str) -> str:
    """The tensor-core kernel with its header inlined and the wide-box (5-D tensor map) blocks taken out, and with them
    the page-ids-ahead blocks (off in the builds compared; their refill loop takes 5-D boxes by an ``if constexpr``)."""
    text = _without_switch(source_text.replace('#include "paged_decode.cuh"', header_text), "WIDE_BOXES")
    text = _without_switch(text, "PAGE_PREFETCH")
    assert "load_box5(stage" not in text and "t / BOX_ROWS" not in text
    return text


@pytest.mark.parametrize("knobs", [dict(stages=1, qk_chains=1), dict(warps=8, dim_warps=2, stages=3),
                                   dict(warps=8, stages=3, cluster_splits=8)], ids=["one-stage", "pairs", "cluster"])
def test_tensor_core_kernel_without_wide_boxes_is_the_code_without_them(knobs):
    """Wide boxes live in preprocessor blocks: builds without them compile to the machine code of the source without
    those blocks (measured builds keep their timings), and with them to other code."""
    _switch_is_its_blocks(knobs, "wide_boxes", _without_wide_boxes)


def test_wide_boxes_refuse_warp_pairs_over_pages_shorter_than_a_stage():
    """Warp pairs address their half of head_dim as whole [part][token] rows of a stage: with wide boxes that holds
    only where a stage is one page slice."""
    kb = kernel_build(DecodeGeometry(2, 32, 8, 256, 16, 9, 30), variant="mma", warps=8, dim_warps=2, stages=2)
    src = kernel_path(decode_package.__file__, kb.source)
    with pytest.raises(CompileError, match="wide boxes: dim pairs only where a stage is one box"):
        compile_cubin(src, arch="sm_90", options=(*kb.options(), "-DWIDE_BOXES=1"))


def _without_row_boxes(source_text: str, header_text: str) -> str:
    """The tensor-core kernel with its header inlined and row boxes taken out: the tile rows, the 5-D box coordinates
    and the 5-D load paths as they read without them."""
    text = source_text.replace('#include "paged_decode.cuh"', header_text)
    for with_, without in (("ROW_BOXES ? (unsigned)(t * PARTS + part) : (unsigned)(part * TOKENS_PER_STAGE + t)",
                            "(unsigned)(part * TOKENS_PER_STAGE + t)"),
                           ('"r"(ROW_BOXES ? 0 : row),\n          "r"(ROW_BOXES ? row : 0)', '"r"(row), "r"(0)'),
                           ("ROW_BOXES ? (int)(row & 7u) : (t & 7)", "(t & 7)"),
                           ("#if WIDE_BOXES || ROW_BOXES", "#if WIDE_BOXES"),
                           ("WIDE_BOXES != 0 || ROW_BOXES != 0", "WIDE_BOXES != 0")):
        assert with_ in text, with_
        text = text.replace(with_, without)
    text = re.sub(r"static_assert\(!ROW_BOXES[^\n]*\n", "", text)
    assert "ROW_BOXES ?" not in text and "|| ROW_BOXES" not in text and "!ROW_BOXES" not in text
    return text


@pytest.mark.parametrize("knobs", [dict(stages=3), dict(stages=1, qk_chains=1),
                                   dict(warps=8, stages=3, cluster_splits=8), dict(stages=3, page_size=16)],
                         ids=["pipelined", "one-stage", "cluster", "page16"])
def test_tensor_core_kernel_without_row_boxes_is_the_code_without_them(knobs):
    """Row boxes change only constants folded at compile time and which 5-D path loads: builds without them compile to
    the machine code of the source without them (the measured builds keep their timings), and with them to other
    code; they refuse wide boxes and warp pairs."""
    on, src = _switch_is_its_blocks(knobs, "row_boxes", _without_row_boxes)
    with pytest.raises(CompileError, match="row boxes: not with wide boxes or dim pairs"):
        compile_cubin(src, arch="sm_90", options=(*on.options(), "-DWIDE_BOXES=1"))


def _without_page_prefetch(source_text: str, header_text: str) -> str:
    """The tensor-core kernel with its header inlined and the page-ids-ahead blocks taken out."""
    text = _without_switch(source_text.replace('#include "paged_decode.cuh"', header_text), "PAGE_PREFETCH")
    assert "load_stage_pages" not in text and "next_pages" not in text
    return text


@pytest.mark.parametrize("knobs", [dict(stages=1, qk_chains=1), dict(warps=8, stages=3, cluster_splits=8),
                                   dict(warps=8, dim_warps=2, stages=3), dict(stages=3, page_size=16)],
                         ids=["one-stage", "cluster", "pairs", "page16"])
def test_tensor_core_kernel_without_page_prefetch_is_the_code_without_it(knobs):
    """Page ids a stage ahead live in preprocessor blocks: builds without them compile to the machine code of the
    source without those blocks (the measured builds keep their timings), and with them to other code; they take
    per-unit CTAs only, and with wide boxes load 5-D boxes (other code again)."""
    ahead, src = _switch_is_its_blocks(knobs, "page_prefetch", _without_page_prefetch)
    with pytest.raises(CompileError, match="page prefetch: per-unit CTAs"):
        compile_cubin(src, arch="sm_90", options=(*ahead.options(), "-DPERSISTENT=1"))
    if ahead.dim_warps == 1 or ahead.tokens_per_stage == ahead.box_rows:
        both = compile_cubin(src, arch="sm_90", options=(*ahead.options(), "-DWIDE_BOXES=1"))
        assert _text(both.image) != _text(compile_cubin(src, arch="sm_90", options=ahead.options()).image)


def _without_padded_rows(source_text: str, header_text: str) -> str:
    """The tensor-core kernel with its header inlined and padded rows taken out: their preprocessor blocks (tile bytes,
    the warps' dims, the 4-D loads) and the two ``if constexpr`` branches (tile_offset, the page-ids-ahead loads)."""
    text = _without_switch(source_text.replace('#include "paged_decode.cuh"', header_text), "PADDED_ROWS")
    text, n = re.subn(r"    if constexpr \(PADDED_ROWS != 0\) return [^\n]*\n", "", text)
    assert n == 1
    text, n = re.subn(r"\} else if constexpr \(PADDED_ROWS != 0\) \{\n.*?(?=\} else \{)", "", text, flags=re.S)
    assert n == 1
    assert "PADDED_ROWS != 0" not in text and "ROW_PITCH +" not in text and "TILE_BYTES =" in text
    return text


@pytest.mark.parametrize("knobs", [dict(stages=3), dict(stages=1, qk_chains=1),
                                   dict(warps=8, stages=3, cluster_splits=8), dict(stages=2, page_size=16)],
                         ids=["pipelined", "one-stage", "cluster", "page16"])
def test_tensor_core_kernel_without_padded_rows_is_the_code_without_them(knobs):
    """Padded rows live in preprocessor blocks and two ``if constexpr`` branches: builds without them compile to the
    machine code of the source without those (the measured builds keep their timings), and with them to other code,
    with page ids ahead too; they take head_dim 128 and 4-D boxes only."""
    on, src = _switch_is_its_blocks(knobs, "padded_rows", _without_padded_rows)
    ahead = compile_cubin(src, arch="sm_90", options=(*on.options(), "-DPAGE_PREFETCH=1"))
    assert _text(ahead.image) != _text(compile_cubin(src, arch="sm_90", options=on.options()).image)
    for other in ("-DWIDE_BOXES=1", "-DROW_BOXES=1"):
        with pytest.raises(CompileError, match="padded rows: a 136-dim box"):
            compile_cubin(src, arch="sm_90", options=(*on.options(), other))
    with pytest.raises(CompileError, match="padded rows: a 136-dim box"):
        compile_cubin(src, arch="sm_90", options=(*(o for o in on.options() if not o.startswith("-DHEAD_DIM")),
                                                  "-DHEAD_DIM=256"))

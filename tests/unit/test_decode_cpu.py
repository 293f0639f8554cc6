"""Decode workload without a GPU: geometry and call checks, NVRTC builds, manifests that validate, the reference."""

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from labkit import manifest
from labkit.errors import ArgumentError
from labkit.workloads.decode import (
    DecodeGeometry,
    build,
    check_call,
    decode_reference,
    default_splits,
    geometry_for,
    kernel_build,
    make_inputs,
    run_decode,
)
from labkit.workloads.decode.build import MAX_SPLITS, build_plan
from labkit.workloads.decode.geometry import kernel_label
from labkit.workloads.decode.inputs import _bf16, bf16_to_f32
from labkit.workloads.decode.loads import short_page_bound
from labkit.workloads.decode.plan import describe_plan, occupancy, plan_call, wave_fill

from ..conftest import ROOT

SEED_LIKE = dict(batch=2, heads_q=24, heads_kv=4, head_dim=256, page_size=64, max_pages=11, num_pages=22)
# d128 calls the load knobs' plan tests share: one 4-warp 3-stage CTA per unit, the 4-per-SM one-stage build, and
# pages of 16
D128_16X4K = dict(batch=16, heads_q=32, heads_kv=8, head_dim=128, page_size=64, max_pages=64, num_pages=1024)
D128_64X1K = dict(batch=64, heads_q=32, heads_kv=8, head_dim=128, page_size=64, max_pages=16, num_pages=1024)
D128_PAGE16 = dict(batch=3, heads_q=16, heads_kv=2, head_dim=128, page_size=16, max_pages=9, num_pages=30)


@pytest.mark.parametrize("change, message", [
    ({"head_dim": 100}, "head_dim 100: the decode kernel takes 128, 256"),
    ({"page_size": 48}, "page_size 48: expected one of 16, 32, 64"),
    ({"heads_q": 25}, "heads_q 25 is not a multiple of heads_kv 4"),
    ({"heads_q": 68}, "17 query heads per KV head: expected 1..16"),
    ({"max_q_len": 9}, "max_q_len 9: expected 1..8"),
    ({"heads_kv": 65536, "heads_q": 65536}, "heads_kv 65536: grid y and z take at most 65535"),
    ({"batch": 65536}, "batch 65536, heads_kv 4: grid y and z take at most 65535"),
    ({"batch": 0}, "batch = 0: expected an integer >= 1"),
    ({"layout": "nhd"}, "layout 'nhd': expected one of plain, interleaved"),
    # found by a review: 128.0 passed "in (128, 256)" and reached NVRTC as -DHEAD_DIM=128.0
    ({"head_dim": 128.0}, "head_dim = 128.0: expected an integer >= 1"),
    ({"page_size": 64.0}, "page_size = 64.0: expected an integer >= 1"),
])
def test_geometry_refuses_what_the_kernel_cannot_do(change, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DecodeGeometry(**{**SEED_LIKE, **change})


def test_calls_are_checked_before_anything_is_built():
    g = DecodeGeometry(**SEED_LIKE)
    x = make_inputs(g, seq_lens=[704, 65], seed=1)
    table = x.page_table.copy()
    table[1, 1] = 50  # past the 22-page pool
    with pytest.raises(ArgumentError, match=r"page_table\[1\]\[1\] = 50: expected a page id in 0..21"):
        check_call(g, table, x.seq_lens, x.cu_seqlens_q)
    with pytest.raises(ArgumentError, match=r"seq_lens\[0\] = 705: expected 1..704"):
        check_call(g, x.page_table, np.array([705, 65], np.int32), x.cu_seqlens_q)
    with pytest.raises(ArgumentError, match=r"cu_seqlens_q\[0\] = 1"):
        check_call(g, x.page_table, x.seq_lens, np.array([1, 2, 3], np.int32))
    bad = x.__class__(**{**x.__dict__, "page_table": table})
    with pytest.raises(ArgumentError, match="page_table"):  # run_decode checks before it asks for a GPU
        run_decode(bad)
    for page in (22, -1):  # the pool's edge: one past its last page, and below its first
        table[1, 1] = page
        with pytest.raises(ArgumentError, match=rf"page_table\[1\]\[1\] = {page}: expected a page id in 0..21"):
            check_call(g, table, x.seq_lens, x.cu_seqlens_q)
    table[1, 1] = 21
    check_call(g, table, x.seq_lens, x.cu_seqlens_q)


def test_inputs_use_shuffled_shared_pages_and_ragged_lengths():
    g = DecodeGeometry(batch=4, heads_q=8, heads_kv=2, head_dim=128, page_size=16, max_pages=8, num_pages=40,
                       max_q_len=3)
    x = make_inputs(g, q_lens=[1, 3, 2, 1], seed=3)
    assert list(np.diff(x.cu_seqlens_q)) == [1, 3, 2, 1]
    assert x.page_table[1, 0] == x.page_table[0, 0]  # a shared prefix page
    used = x.page_table[0, : -(-int(x.seq_lens[0]) // 16)]
    assert not np.array_equal(used, np.sort(used))  # not the identity order


@pytest.mark.parametrize(("seq_lens", "q_lens", "expected"), [
    ([333, 8, 97], [1, 3, 2], "seq_lens[0] = 333: expected 1..320 (q_len..max_pages x page_size = 10 x 32)"),
    ([300, 8], [1, 3, 2], "seq_lens shape [2] / q_lens shape [3]: expected [3] each"),
    ([300, 8, 9], [1, 5, 2], "cu_seqlens_q[2] - cu_seqlens_q[1] = 5: expected 1..4 query tokens"),
    ([0, 8, 9], [1, 3, 2], "seq_lens[0] = 0: expected 1..2147483647"),
    ([2 ** 32 + 5, 8, 9], [1, 3, 2], "seq_lens[0] = 4294967301: expected 1..2147483647"),
    ([100.7, 8, 9], [1, 3, 2], "seq_lens [100.7, 8.0, 9.0]: expected integers"),
    ([100, 8, 9], [1.5, 1.5, 1], "q_lens [1.5, 1.5, 1.0]: expected integers"),
    (["100", "8", "9"], [1, 3, 2], "seq_lens ['100', '8', '9']: expected integers")])
def test_inputs_refuse_lengths_the_table_cannot_hold(seq_lens, q_lens, expected):
    """Lengths are checked before the page table is filled: one line naming the value, not a NumPy broadcast error."""
    g = DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4)
    with pytest.raises(ArgumentError) as err:
        make_inputs(g, seq_lens=seq_lens, q_lens=q_lens)
    assert expected in str(err.value)


def test_a_call_that_gives_a_sequence_no_query_token_is_refused():
    """cu_seqlens_q that repeat a value give that sequence no query row: the kernel would write nothing for it and the
    caller read another sequence's rows as its own (found by a mutation audit: q_len 0 passed check_call)."""
    from labkit.workloads.decode.inputs import check_call

    g = DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4)
    x = make_inputs(g, seq_lens=[300, 8, 9], q_lens=[1, 3, 2], seed=1)
    check_call(g, x.page_table, x.seq_lens, x.cu_seqlens_q)
    with pytest.raises(ArgumentError, match=r"^cu_seqlens_q\[1\] - cu_seqlens_q\[0\] = 0: expected 1..4 query tokens$"):
        check_call(g, x.page_table, x.seq_lens, np.array([0, 0, 3, 5], np.int32))


def test_a_call_longer_than_the_kernels_stage_count_can_hold_is_refused():
    """The kernels count a sequence's stages as (seq_len + tokens_per_stage - 1) / tokens_per_stage in 32-bit ints: a
    sequence within 256 tokens of 2**31 would wrap it negative and write every row as 0, so the call is refused (the
    table is a broadcast view: no memory for 2**27 entries). No build's stage takes more than those 256 tokens."""
    from itertools import product

    from labkit.workloads.decode.inputs import MAX_SEQ_LEN

    g = DecodeGeometry(1, 8, 1, 128, 16, (1 << 31) // 16 - 1, 4)
    table = np.broadcast_to(np.int32(0), (1, g.max_pages))
    cu = np.array([0, 1], np.int32)
    with pytest.raises(ArgumentError, match=r"seq_lens\[0\] = 2147483632: expected 1..2147483392 \(q_len..2\*\*31 - "
                                            r"256: the kernels count a sequence's stages in 32-bit ints\)"):
        check_call(g, table, np.array([g.max_kv_len], np.int32), cu)
    edge = DecodeGeometry(1, 8, 1, 128, 64, MAX_SEQ_LEN // 64, 4)  # the longest call the kernels count right
    check_call(edge, np.broadcast_to(np.int32(3), (1, edge.max_pages)), np.array([MAX_SEQ_LEN], np.int32), cu)
    stages = set()
    for page, d, rows in product((16, 32, 64), (128, 256), (1, 8, 64)):
        small = DecodeGeometry(1, rows, 1, d, page, 4, 4) if rows <= 16 else DecodeGeometry(1, 16, 1, d, page, 4, 4,
                                                                                             max_q_len=rows // 16)
        stages.add(kernel_build(small).tokens_per_stage)
        if small.rows <= 16:
            for warps, keys in product((4, 8), (16, 32)):
                try:
                    stages.add(kernel_build(small, warps=warps, keys_per_warp=keys, stages=1).tokens_per_stage)
                except ArgumentError:  # more shared memory than a CTA gets: not a build
                    assert d == 256 and warps * keys == 256
    assert max(stages) == 256 and (1 << 31) - MAX_SEQ_LEN == max(stages)


def test_the_error_bound_takes_a_bf16_rounded_answer_and_refuses_a_scaled_or_shifted_one():
    """``reference_and_bound``: exact attention rounded to bf16 (what a right kernel writes at best) is within the
    bound at every element; the same answer 2 % off in scale, or with one key's weight dropped, is not."""
    from labkit.workloads.decode.inputs import _bf16
    from labkit.workloads.decode.reference import reference_and_bound

    g = DecodeGeometry(2, 16, 4, 128, 32, 8, 20, max_q_len=2)
    x = make_inputs(g, seq_lens=[200, 33], q_lens=[2, 1], seed=9)
    ref, bound = reference_and_bound(x)
    used = int(x.cu_seqlens_q[-1])
    assert np.isnan(ref[used:]).all() and np.isfinite(bound[:used]).all()
    rounded = bf16_to_f32(_bf16(ref[:used].astype(np.float32)))
    assert (np.abs(rounded - ref[:used]) <= bound[:used]).all()
    assert not (np.abs(1.02 * ref[:used] - ref[:used]) <= bound[:used]).all()
    short = x.__class__(**{**x.__dict__, "seq_lens": x.seq_lens - np.array([1, 1], np.int32)})  # one key fewer
    assert not (np.abs(decode_reference(short, g.head_dim ** -0.5)[:used] - ref[:used]) <= bound[:used]).all()


def test_the_reference_scales_scores_and_masks_causally_as_dense_attention_does():
    """The float64 reference every GPU test trusts, against attention written out densely: two keys in closed form
    (softmax of the scaled scores, natural exp), and q_len 3 where query token i sees the first n - 3 + i + 1 keys."""
    g = DecodeGeometry(1, 2, 1, 128, 16, 4, 8, max_q_len=3)
    x = make_inputs(g, seq_lens=[2], q_lens=[1], seed=4)
    scale = 0.37  # not head_dim ** -0.5: a dropped or doubled scale shows
    q = bf16_to_f32(x.q[0]).astype(np.float64)  # [Hq, D]
    page = x.page_table[0, 0]
    k = bf16_to_f32(x.k[page, 0, :2]).astype(np.float64)
    v = bf16_to_f32(x.v[page, 0, :2]).astype(np.float64)
    s = q @ k.T * scale  # [Hq, 2]
    w = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)
    assert np.allclose(decode_reference(x, scale)[0], w @ v, rtol=1e-12, atol=1e-12)

    x = make_inputs(g, seq_lens=[40], q_lens=[3], seed=5)
    pages = x.page_table[0, :3]
    k = bf16_to_f32(x.k[pages, 0]).reshape(-1, 128)[:40].astype(np.float64)
    v = bf16_to_f32(x.v[pages, 0]).reshape(-1, 128)[:40].astype(np.float64)
    ref = decode_reference(x, scale)
    for i in range(3):
        visible = 40 - 3 + i + 1
        s = bf16_to_f32(x.q[i]).astype(np.float64) @ k[:visible].T * scale
        w = np.exp(s - s.max(axis=1, keepdims=True))
        assert np.allclose(ref[i], (w / w.sum(axis=1, keepdims=True)) @ v[:visible], rtol=1e-12, atol=1e-12), i
    assert not np.allclose(ref[0], ref[2])  # the rows see different keys


def test_the_reference_and_its_bound_match_grouped_attention_written_out_per_query_head():
    """Query head h reads KV head h // G (G = 3 here, 2 KV heads, q_len 2 over shuffled pages), and each element's bound
    is the documented 2^-8 (|ref| + M) + 1e-3 with M = sum_k p_k |v_k| (found by a mutation audit: h % Hkv, a bound
    twice as loose, or M taken as |ref| passed every CPU test)."""
    from labkit.workloads.decode.reference import reference_and_bound

    g = DecodeGeometry(2, 6, 2, 128, 16, 5, 12, max_q_len=2)
    x = make_inputs(g, seq_lens=[70, 19], q_lens=[2, 1], seed=17)
    ref, bound = reference_and_bound(x)
    scale = g.head_dim ** -0.5
    for b in range(g.batch):
        n, lo, hi = int(x.seq_lens[b]), int(x.cu_seqlens_q[b]), int(x.cu_seqlens_q[b + 1])
        pages = x.page_table[b, : -(-n // g.page_size)]
        for t in range(lo, hi):
            visible = n - (hi - lo) + (t - lo) + 1
            for h in range(g.heads_q):
                kv = h // 3
                k = bf16_to_f32(x.k[pages, kv]).reshape(-1, 128)[:visible].astype(np.float64)
                v = bf16_to_f32(x.v[pages, kv]).reshape(-1, 128)[:visible].astype(np.float64)
                s = k @ bf16_to_f32(x.q[t, h]).astype(np.float64) * scale
                p = np.exp(s - s.max())
                p /= p.sum()
                assert np.allclose(ref[t, h], p @ v, rtol=1e-12, atol=1e-12), (b, t, h)
                assert np.allclose(bound[t, h], 2.0 ** -8 * (np.abs(p @ v) + p @ np.abs(v)) + 1e-3, rtol=1e-12), (
                    b, t, h)


def test_reference_on_cases_with_known_answers():
    g = DecodeGeometry(batch=2, heads_q=4, heads_kv=2, head_dim=128, page_size=16, max_pages=4, num_pages=8)
    x = make_inputs(g, seq_lens=[1, 40], seed=2)
    ref = decode_reference(x, g.head_dim ** -0.5)
    page0 = x.page_table[0, 0]
    one_key_v = bf16_to_f32(x.v[page0, :, 0, :])  # one key: softmax weight 1 on its V row
    assert np.allclose(ref[0].reshape(2, 2, 128), one_key_v[:, None, :])
    same_k = x.__class__(**{**x.__dict__, "k": np.broadcast_to(x.k[:1, :, :1, :], x.k.shape)})
    uniform = decode_reference(same_k, g.head_dim ** -0.5)  # every key alike: the mean of the V rows
    pages = x.page_table[1, :3]
    v = bf16_to_f32(x.v[pages]).transpose(1, 0, 2, 3).reshape(2, -1, 128)[:, :40]
    assert np.allclose(uniform[1].reshape(2, 2, 128), v.mean(axis=1)[:, None, :])


def test_bf16_rounding_is_nearest_even():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5], np.float32)
    assert list(bf16_to_f32(_bf16(x))) == [1.0, 1.0, 1 + 2 ** -6, -2.5]


@pytest.mark.parametrize("layout", ["plain", "interleaved"])
@pytest.mark.parametrize("geometry", [dict(SEED_LIKE), dict(batch=64, heads_q=32, heads_kv=8, head_dim=128,
                                                            page_size=64, max_pages=128, num_pages=8192),
                                      dict(batch=3, heads_q=16, heads_kv=2, head_dim=128, page_size=16,
                                           max_pages=9, num_pages=30, max_q_len=8),
                                      dict(batch=2, heads_q=32, heads_kv=2, head_dim=256, page_size=32,
                                           max_pages=9, num_pages=30, max_q_len=8)])  # 128 rows: 4 blocks
def test_builds_compile_and_their_manifests_validate_offline(geometry, layout, tmp_path):
    g = DecodeGeometry(**geometry, layout=layout)
    kb = kernel_build(g)
    splits = default_splits(g)
    path = build(g, splits, tmp_path)
    res = manifest.check(manifest.load(path), cubin_dirs=(tmp_path,))
    assert res.ok, [str(i) for i in res.issues]
    plan = res.plans[0]
    assert plan.pack_size == 384 and plan.grid == (splits, g.heads_kv * kb.row_blocks(g), g.batch)
    assert kb.row_blocks(g) == -(-g.rows // kb.max_rows) and kb.row_blocks(g) * kb.max_rows >= g.rows
    assert plan.shared_mem == kb.dynamic_smem_bytes


@pytest.mark.parametrize("layout", ["plain", "interleaved"])
def test_manifest_run_fills_a_valid_call_for_labkits_decode_manifests(layout, tmp_path):
    """Generic random integers (0..15) would give seq_lens of a few tokens and a non-monotonic cu_seqlens_q, which
    reads and writes past q and out: a decode manifest run on its own gets full sequences over pool pages instead."""
    from labkit.manifest.runner import model_inputs
    from labkit.workloads.decode.inputs import check_call

    g = DecodeGeometry(3, 16, 2, 128, 32, 9, 20, max_q_len=4, layout=layout)
    path = build(g, 2, tmp_path)
    got, note = model_inputs(manifest.load(path), seed=5)
    assert set(got) == {"table", "seq", "cuq"}  # q and K/V take the Runner's random data
    for name, values in got.items():
        assert values.shape == manifest.load(path).buffers[name].shape, name
    assert (got["seq"] == 9 * 32).all() and list(got["cuq"]) == [0, 4, 8, 12]
    assert got["table"].min() >= 0 and got["table"].max() < 20 and len(np.unique(got["table"])) > 5
    check_call(g, got["table"], got["seq"], got["cuq"])
    assert "3 sequences of 288 tokens" in note and "4 query token(s)" in note
    seed = manifest.load(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json")
    assert model_inputs(seed, seed=0) == ({}, "inputs: seeded random data (seed 0; integers 0..15)")


def test_rows_beyond_one_cta_take_row_blocks():
    g = DecodeGeometry(2, 32, 2, 256, 32, 9, 30, 8)  # 16 heads x 8 tokens = 128 rows
    assert (kernel_build(g).variant, kernel_build(g).max_rows, kernel_build(g).row_blocks(g)) == ("fma", 32, 4)
    assert kernel_build(g, variant="mma").row_blocks(g) == 8
    g128 = dataclasses.replace(g, head_dim=128)
    assert (kernel_build(g128).max_rows, kernel_build(g128).row_blocks(g128)) == (64, 2)
    seed = DecodeGeometry(**SEED_LIKE)  # 6 rows: one block
    assert kernel_build(seed).row_blocks(seed) == 1


def test_timeline_build_adds_the_records_pointer_and_scratch(tmp_path):
    g = DecodeGeometry(**SEED_LIKE)
    kb = kernel_build(g, timeline=True)
    assert "-DLABKIT_TIMELINE" in kb.options() and "-DLABKIT_TIMELINE" not in kernel_build(g).options()
    path = build(g, 2, tmp_path, kernel=kb)
    doc = manifest.load(path)
    res = manifest.check(doc, cubin_dirs=(tmp_path,))
    assert res.ok, [str(i) for i in res.issues]
    raw = json.loads(path.read_text())
    impl = raw["ops"]["decode"]["impl"]
    assert impl["scratch"]["timeline"] == {"dtype": "u64", "shape": [2 * 4 * 2, 6]}
    assert {"at": 352, "scratch": "timeline"} in impl["launches"][0]["args"][0]["pack"]["fields"]


def test_tail_splits_launch_whole_units_then_split_ones(tmp_path):
    """An A/B knob: the call's last units run in n splits each after the others started whole (a 1-D grid)."""
    g = geometry_for(256, 1024, head_dim=256)  # 2048 units, one CTA per SM
    plan = plan_call(g, sms=132, tail_units=68, tail_splits=4)
    assert (plan.splits, plan.tail_units, plan.kernel.tail_splits, plan.ctas_per_sm) == (1, 68, 4, 1)
    # the build of the plan without persistent CTAs (which take whole units: the plan's own here)
    assert plan.kernel.stages == plan_call(g, sms=132, persistent=False).kernel.stages
    assert "-DTAIL_SPLITS=4" in plan.kernel.options()
    assert "the last 68 units in 4 splits each" in describe_plan(plan)
    assert plan.to_dict()["tail_units"] == 68 and "tail_units" not in plan_call(g, sms=132).to_dict()
    path = build_plan(g, plan, tmp_path)
    res = manifest.check(manifest.load(path), cubin_dirs=(tmp_path,))
    assert res.ok, [str(i) for i in res.issues]
    assert res.plans[0].grid == (2048 - 68 + 68 * 4, 1, 1)
    scratch = json.loads(path.read_text())["ops"]["decode"]["impl"]["scratch"]
    assert scratch["partial_o"]["shape"] == [2048, 4, 16, 256] and scratch["counter"]["shape"] == [2048]
    # a split plan keeps its splits before the tail; the kernel reads them at byte 348
    g8 = geometry_for(8, 8192, head_dim=128)  # 64 units in 4 splits, two CTAs per SM
    split = plan_call(g8, sms=132, tail_units=16, tail_splits=8)
    assert (split.splits, split.ctas_per_sm, split.kernel.min_ctas) == (4, 2, 2)
    path = build_plan(g8, split, tmp_path / "split")
    res = manifest.check(manifest.load(path), cubin_dirs=(tmp_path / "split",))
    assert res.ok and res.plans[0].grid == (48 * 4 + 16 * 8, 1, 1)
    impl = json.loads(path.read_text())["ops"]["decode"]["impl"]
    assert {"at": 348, "i32": 4} in impl["launches"][0]["args"][0]["pack"]["fields"]
    assert impl["scratch"]["partial_o"]["shape"] == [64, 8, 16, 128]
    # the one-stage d128 build keeps its 4 CTAs per SM (registers bounded by __launch_bounds__)
    small = geometry_for(64, 1024, head_dim=128)
    tailed = plan_call(small, sms=132, tail_units=116, tail_splits=2)
    assert tailed.ctas_per_sm == plan_call(small, sms=132).ctas_per_sm == 4 and tailed.kernel.min_ctas == 4


def test_tail_candidates_follow_the_last_wave():
    from labkit.workloads.decode.bench import tail_candidates

    g = geometry_for(256, 1024, head_dim=256)  # 2048 units on 132 slots: 15 waves and 68 units
    assert tail_candidates(g, plan_call(g, sms=132), 132) == [(u, s) for u in (68, 200, 512) for s in (2, 4)]
    one_wave = geometry_for(64, 1024, head_dim=128)  # 512 units on 4 x 132 slots
    assert tail_candidates(one_wave, plan_call(one_wave, sms=132), 132) == [(u, s) for u in (128, 512) for s in (2, 4)]
    split = geometry_for(8, 4096, head_dim=128)  # 64 units in 4 splits: a quarter and a half, in 8 and 16
    four_warps = plan_call(split, sms=132, cluster=False)  # tails are the 4-warp build's (the plan's pair is clustered)
    assert tail_candidates(split, four_warps, 132) == [(u, s) for u in (16, 32) for s in (8, 16)]


@pytest.mark.parametrize("batch, kv_len", [(16, 4096), (16, 1024), (72, 8192), (17, 4096)])
def test_tail_sweep_times_each_tail_beside_the_plans_own_split_count(monkeypatch, batch, kv_len):
    """Every build a tail sweep times plans with the plan's split count and build, only its last units split further:
    given alone, the tail knobs took a caller's build's count (2 splits at 16 x 4k, where the plan runs 1), refused a
    tail of 2 splits there and skipped the whole sweep."""
    from labkit.workloads.decode import bench

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)
    timed = {}

    def fake_time_builds(b, n, d, knobs, shape, iterations, check, *, what, mode="cold"):
        g = geometry_for(b, n, head_dim=d, **shape)
        plans = {name: plan_call(g, sms=132, **kw) for name, kw in knobs.items()}  # raises where a build cannot run
        timed.update(plans)
        raise StopIteration  # nothing to time on a CPU

    monkeypatch.setattr(bench, "time_builds", fake_time_builds)
    with pytest.raises(StopIteration):
        bench.tail_sweep(batch, kv_len, 128, iterations=1)
    plan = timed.pop("plan")
    assert len(timed) >= 2 and plan.splits == 1
    for name, p in timed.items():
        assert (p.splits, p.kernel.warps, p.kernel.stages, p.ctas_per_sm) == (
            plan.splits, plan.kernel.warps, plan.kernel.stages, plan.ctas_per_sm), name
        assert name == f"tail {p.tail_units}/{p.kernel.tail_splits}" and p.kernel.tail_splits > plan.splits


@pytest.mark.parametrize("knobs, message", [
    (dict(tail_units=5), "tail_units and tail_splits go together"),
    (dict(tail_units=0, tail_splits=2), "tail_units 0: expected a positive count"),
    (dict(tail_units=2049, tail_splits=2), "tail_units 2049: expected 1..2048"),
    (dict(tail_units=5, tail_splits=1), "tail_splits 1: expected 2..16"),
    (dict(tail_units=5, tail_splits=17), "tail_splits 17: expected 2..16"),
    (dict(tail_units=5, tail_splits=4, splits=4), "tail_splits 4: expected more than the other units' 4 splits"),
    (dict(tail_units=5, tail_splits=4, cluster=True), "a cluster combines a fixed number of splits per unit"),
    (dict(tail_units=5, tail_splits=4, variant="fma"), "a tensor-core .* this call builds fma"),
])
def test_tail_split_knobs_are_checked(knobs, message):
    with pytest.raises(ArgumentError, match=message):
        plan_call(geometry_for(256, 1024, head_dim=256), sms=132, **knobs)


def test_tail_units_count_the_row_blocks_of_the_build_that_runs():
    """q_len 8 x 16 heads per KV head: the tensor-core build takes 8 row blocks of 16 rows (48 units here), not the
    default build's 2 (an H200 run refused 20 tail units as past 12)."""
    g = DecodeGeometry(3, 32, 2, 128, 32, 12, 40, max_q_len=8)
    assert plan_call(g, sms=132, variant="mma", splits=2, tail_units=48, tail_splits=4).tail_units == 48
    with pytest.raises(ArgumentError, match="tail_units 49: expected 1..48"):
        plan_call(g, sms=132, variant="mma", splits=2, tail_units=49, tail_splits=4)


def test_kernel_build_and_split_heuristic():
    seed_kb = kernel_build(DecodeGeometry(**SEED_LIKE), variant="fma")
    assert seed_kb.max_rows == 8 and seed_kb.row_warps == 2
    kb = kernel_build(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8))  # 64 rows: 4 row warps of 16
    assert (kb.rows_per_warp, kb.row_warps) == (16, 4)
    g1 = geometry_for(1, 8192)  # 8 units: many splits, >= 4 pages (256 tokens) each
    assert default_splits(g1) == 16  # one wave would be 33 CTAs per unit; capped at 512 tokens per split
    assert default_splits(geometry_for(1, 32768), ctas_per_sm=2) == 16  # 2048 tokens per split at least
    assert default_splits(geometry_for(8, 32768), ctas_per_sm=2) == 4  # 64 units: one wave of 2 CTAs per SM
    assert default_splits(DecodeGeometry(**SEED_LIKE)) == 11  # 704 tokens: one page per split
    assert default_splits(geometry_for(256, 8192)) == 1  # 2048 units already fill the GPU
    assert default_splits(geometry_for(1, 64)) == 1
    # one unit of 2M tokens on a GPU of 1000 SMs would want 2000 splits of 2048 tokens: the kernel's reduction holds
    # MAX_SPLITS = 256 weights (found by a mutation audit: a cap of 512 passed every test)
    long_one = DecodeGeometry(1, 1, 1, 128, 64, 32768, 32768)
    assert default_splits(long_one, sms=1000, ctas_per_sm=2) == 256 == MAX_SPLITS


def test_the_cuda_core_build_by_hand_and_its_label():
    # 64 rows (8 query heads per KV head x 8 tokens) at d128: 64 // 16 = 4 row warps of 16 rows; a stage is 32 keys x
    # (4 warps // 4 row warps) = 32 tokens, 2 x 32 x 128 x 2 B = 16 KB: 96 KB // 16 KB = 6 stages, capped at 4
    kb = kernel_build(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8))
    assert (kb.variant, kb.row_warps, kb.tokens_per_stage, kb.stage_bytes, kb.stages) == ("fma", 4, 32, 16384, 4)
    assert kernel_label(kb) == "fma r4s4"
    # one row warp, asked for: 16 rows (16 query heads per KV head, one token), at most 16 per warp at d128; a stage of
    # 32 x 4 = 128 tokens is 64 KB, so 2 stages
    g16 = DecodeGeometry(1, 16, 1, 128, 16, 4, 4)
    one = kernel_build(g16, row_warps=1)
    assert (one.variant, one.rows_per_warp, one.row_warps, one.stages) == ("fma", 16, 1, 2)
    assert kernel_label(one) == "fma r1s2"
    with pytest.raises(ArgumentError, match="row_warps 3: expected 1, 2 or 4 with at most 16 rows per warp"):
        kernel_build(g16, row_warps=3)


def test_the_split_heuristic_counts_ctas_per_sm_from_shared_memory_and_13_kb_of_static_per_cta():
    # batch 8 x 8k d128 (64 units) on the one-stage build: 1 KB + its merge buffer (4 warps x 16 rows x 130 x 4 B =
    # 33280, over one 32 KB stage) of dynamic shared memory and ~13 KB static per CTA: 233472 // (34304 + 13312) = 4
    # CTAs per SM, so 528 slots over 64 units = 8 splits (its pages allow 16)
    g = geometry_for(8, 8192)
    kb = kernel_build(g, stages=1)
    assert kb.dynamic_smem_bytes == 1024 + 4 * 16 * 130 * 4
    assert default_splits(g, kernel=kb) == 8
    # a split count is an integer, also where the pages bound it (batch 1 x 8k: 512 tokens per split at least)
    assert [type(default_splits(x, kernel=kb)) for x in (g, geometry_for(1, 8192))] == [int, int]


@pytest.mark.parametrize(("batch", "kv_len", "head_dim", "stages", "chains", "splits", "per_sm"), [
    (64, 1024, 128, 1, 1, 1, 4),   # 512 units on 528 slots
    (256, 8192, 128, 1, 1, 1, 4),
    (8, 4096, 128, 3, 2, 4, 2),    # 64 units: split them, long CTAs want stages
    (16, 8192, 128, 3, 2, 1, 2),   # 128 units: a CTA on nearly every SM already (2 splits ran 1.7 % slower)
    (1, 8192, 128, 3, 2, 16, 2),   # (without its cluster of 8)
    (1, 32768, 128, 3, 2, 16, 2),  # 2048 tokens per split: one CTA per SM
    (66, 1024, 128, 1, 1, 1, 4),   # 528 units: exactly one full wave of 528 slots
    (132, 1024, 128, 1, 1, 1, 4),  # 1056 units: exactly two
])
def test_call_plan_picks_one_stage_when_units_fill_the_gpu(batch, kv_len, head_dim, stages, chains, splits, per_sm):
    # without clusters: batch 1 runs 8 splits in a cluster, 8 x 4k 2 (the tests below)
    plan = plan_call(geometry_for(batch, kv_len, head_dim=head_dim), sms=132, cluster=False)
    assert (plan.kernel.variant, plan.kernel.warps, plan.kernel.dim_warps) == ("mma", 4, 1)
    assert (plan.kernel.stages, plan.kernel.qk_chains, plan.splits, plan.ctas_per_sm) == (stages, chains, splits,
                                                                                            per_sm)


@pytest.mark.parametrize(("batch", "kv_len", "head_dim", "heads_kv", "label"), [
    (1, 1024, 128, 8, "mma w8s1ef cl8 pp"),  # short: one 128-token stage per CTA (two 4-warp CTAs per SM kept it out)
    (1, 2048, 128, 8, "mma w8s2ef cl8 pp"),  # a stage per 128 tokens of a split, up to 3; page ids a stage ahead
    (1, 8192, 128, 8, "mma w8s3ef cl8 pp"),
    (1, 32768, 128, 8, "mma w8s3ef cl8 pp"),
    (1, 1024, 256, 8, "mma w8d2s2ef cl8 wide"),  # short at head_dim 256: warp pairs, the split's two stages at once
    (1, 8192, 256, 8, "mma w8d2s3ef cl8 wide"),  # at head_dim 256 up to 8k tokens (with the partials pushed)
    (1, 32768, 256, 8, "mma w8d2s2 wide"),  # longer: 16 splits without a cluster (1 x 32k lost 3.5-5 %)
    (1, 8192, 128, 4, "mma w4s3ef"),        # 4 units: 32 CTAs in clusters would leave three quarters of the SMs idle
    (2, 8192, 128, 8, "mma w8s2ef pp"),     # 16 units: 128 clustered CTAs, more than the 120 the H200 holds
])
def test_call_plan_runs_a_few_units_as_clusters_of_8(batch, kv_len, head_dim, heads_kv, label):
    """A call that would take more than 8 splits runs 8 one-per-SM CTAs of 8 warps per unit as a cluster, when its
    clusters all fit at once and, past 1024 tokens (head_dim 128, and 256 up to 8k tokens), fill more than half of
    them."""
    g = geometry_for(batch, kv_len, head_dim=head_dim, heads_q=4 * heads_kv, heads_kv=heads_kv)
    plan = plan_call(g, sms=132)
    assert kernel_label(plan.kernel) == label
    if "cl8" in label:
        assert (plan.splits, plan.ctas_per_sm, plan.cluster_resident_ctas) == (8, 1, 120)
        assert describe_plan(plan).endswith("splits combined in a cluster of 8, K/V L2 evict_first, PDL, "
                                            + ("one TMA load per page slice (wide boxes)" if head_dim == 256
                                               else "page ids a stage ahead"))
    assert plan_call(g, sms=132, splits=16).kernel.cluster_splits == 0  # a count given keeps its default build
    if batch == 2:  # a GPU that holds all 128 clustered CTAs at once takes them
        assert kernel_label(plan_call(g, sms=132, cluster_fit={2: 132, 4: 128, 8: 128}).kernel) == "mma w8s3ef cl8 pp"


def test_the_clusters_of_8_stand_aside_for_build_knobs_and_longer_queries():
    """Found by a review: with keys_per_warp=32 the cluster rule's 3 stages of 256 tokens did not fit a CTA, so the
    knob was refused at batch 1. A build knob keeps the 4-warp plan (as every plan choice stands aside for one), more
    than one query token too (unmeasured); asking for a cluster without a count takes the plan's 8."""
    g = geometry_for(1, 8192)
    assert kernel_label(plan_call(g, keys_per_warp=32).kernel) == "mma w4s2k32ef"
    assert kernel_label(plan_call(g, qk_chains=1).kernel) == "mma w4s3c1ef"
    assert plan_call(geometry_for(1, 8192, max_q_len=4)).kernel.cluster_splits == 0
    assert plan_call(geometry_for(1, 1024, max_q_len=4)).kernel.cluster_splits == 0
    asked = plan_call(g, cluster=True)
    assert (kernel_label(asked.kernel), asked.splits) == ("mma w8s3ef cl8 pp", 8)
    with pytest.raises(ArgumentError, match=r"this call has 16 split\(s\) \(variant mma\); give it 2, 4 or 8"):
        plan_call(g, cluster=True, splits=16)


@pytest.mark.parametrize(("batch", "kv_len", "four_warps", "stages", "chains", "splits"), [
    (256, 1024, (1, 1, 3), 3, 1, 1),  # the 4-warp plan: one stage x 3 CTAs per SM (2048 units, 86 % of 6 waves)
    (64, 1024, (1, 2, 2), 2, 2, 1),   # one stage x 2 CTAs per SM (two chains' registers)
    (64, 32768, (1, 2, 2), 2, 2, 1),
    (8, 32768, (2, 2, 1), 2, 2, 2),   # two stages, one CTA per SM
    (1, 32768, (2, 2, 1), 2, 2, 16),
])
def test_call_plan_runs_warp_pairs_at_head_dim_256(batch, kv_len, four_warps, stages, chains, splits):
    g = geometry_for(batch, kv_len, head_dim=256)
    old = plan_call(g, warps=4)  # what the 4-warp build would take: its K/V bytes in flight per SM carry over
    assert (old.kernel.stages, old.kernel.qk_chains, old.ctas_per_sm) == four_warps
    plan = plan_call(g, persistent=False)  # 1k tokens per unit, one split: the plan itself runs persistent CTAs
    k = plan.kernel
    assert (k.warps, k.dim_warps, k.keys_per_warp, k.tokens_per_stage) == (8, 2, 16, 64)
    assert (k.stages, k.qk_chains, plan.splits, plan.ctas_per_sm) == (stages, chains, splits, 1)
    assert "-DDIM_WARPS=2" in k.options() and "pairs split head_dim" in describe_plan(plan)
    # the warps' merge holds one (max, sum, O) per pair: 4 x 16 rows, no more than the stages
    assert k.dynamic_smem_bytes == 1024 + max(stages * 65536, 4 * 16 * 258 * 4)
    assert plan_call(geometry_for(batch, kv_len, head_dim=128)).kernel.dim_warps == 1  # pairs lost 1-4 % there


def test_warp_pairs_take_row_blocks_too():
    tall = DecodeGeometry(3, 32, 2, 256, 32, 12, 40, max_q_len=8)  # 16 q heads per KV head x 8 tokens = 128 rows
    plan = plan_call(tall, variant="mma", splits=4)
    assert (plan.kernel.variant, plan.kernel.dim_warps, plan.kernel.row_blocks(tall)) == ("mma", 2, 8)
    assert plan_call(tall).kernel.variant == "fma"  # left to itself, 128 rows take the CUDA-core kernel


def test_dim_warps_needs_the_eight_warp_tensor_core_build():
    g = geometry_for(8, 1024, head_dim=256)
    for bad, given in ((dict(dim_warps=2), "warps not given: 4"), (dict(dim_warps=2, warps=4), "warps=4"),
                       (dict(dim_warps=2, warps=8, keys_per_warp=32), "warps=8, keys_per_warp=32")):
        with pytest.raises(ArgumentError, match=rf"dim_warps 2: needs warps=8 and 16 keys per warp \({given}\)"):
            plan_call(g, **bad)
    with pytest.raises(ArgumentError, match="dim_warps 3: the tensor-core .* takes 1 or 2"):
        plan_call(g, dim_warps=3, warps=8)
    wide = DecodeGeometry(2, 32, 2, 256, 32, 9, 30, 8)  # 128 rows: the CUDA-core kernel
    # found by a CLI review: the message blamed the mma kernel and printed "warps None, keys_per_warp None"
    with pytest.raises(ArgumentError, match=r"dim_warps 2: only the tensor-core \(mma\) kernel takes dim_warps; this "
                                            r"build is the CUDA-core \(fma\) one$"):
        plan_call(wide, dim_warps=2)


@pytest.mark.parametrize(("batch", "kv_len", "head_dim", "knobs", "persistent"), [
    (256, 1024, 256, {}, True), (64, 1024, 256, {}, True), (128, 2048, 256, {}, True),
    (64, 8192, 256, {}, False),  # long units: level on the H200, so the hardware's CTA scheduling stays
    (8, 1024, 256, {}, False),  # split calls: the splits combine in a cluster
    (256, 1024, 128, {}, False), (64, 1024, 128, {}, False),  # head_dim 128: 4 CTAs per SM already overlap
    (256, 1024, 256, dict(timeline=True), False),  # a timeline shows one record per CTA: per-unit CTAs there
    (256, 1024, 256, dict(stages=3), False), (256, 1024, 256, dict(persistent=False), False),
    (256, 1024, 256, dict(splits=1), False)])
def test_call_plan_runs_persistent_ctas_for_short_units_at_head_dim_256(batch, kv_len, head_dim, knobs, persistent,
                                                                         tmp_path):
    g = DecodeGeometry(batch, 32, 8, head_dim, 64, -(-kv_len // 64), batch * -(-kv_len // 64))
    plan = plan_call(g, **knobs)
    assert bool(plan.kernel.persistent_ctas) == persistent, describe_plan(plan)
    if persistent:
        k = plan.kernel
        assert (k.persistent_ctas, plan.ctas_per_sm, plan.splits, k.stages, k.dim_warps, plan.pdl) == (132, 1, 1, 2, 2,
                                                                                                      True)
        assert "132 persistent CTAs claim the units" in describe_plan(plan) and plan.to_dict()["persistent_ctas"] == 132
        from labkit.workloads.decode.bench import kernel_label

        assert kernel_label(k) == "mma w8d2s2 P wide"  # the bench's and the reports' label
        path = build_plan(g, plan, tmp_path)
        res = manifest.check(manifest.load(path), cubin_dirs=(tmp_path,))
        assert res.ok and res.plans[0].grid == (132, 1, 1) and res.plans[0].shared_mem == k.dynamic_smem_bytes


def test_persistent_knob_is_checked():
    g = DecodeGeometry(64, 32, 8, 256, 64, 16, 1024)
    with pytest.raises(ArgumentError, match="persistent: CTAs claim whole units, so one split .*; drop splits=2$"):
        plan_call(g, persistent=True, splits=2)
    with pytest.raises(ArgumentError, match="q in registers"):
        plan_call(g, persistent=True, warps=4)  # head_dim 256 in 4 warps stages q in shared memory


def _map_offsets(dims, strides) -> set[int]:
    """Byte offsets of every element a tensor map addresses (2-byte elements; strides of dims 1.. in bytes)."""
    grids = np.meshgrid(*(np.arange(d) for d in dims), indexing="ij")
    return set((sum(g * s for g, s in zip(grids, (2, *strides)))).ravel().tolist())


def _built_tensor_maps(g: DecodeGeometry, plan, directory) -> tuple[dict, dict]:
    """The K and V tensor maps of ``plan``'s built manifest, which validates offline."""
    path = build_plan(g, plan, directory)
    res = manifest.check(manifest.load(path), cubin_dirs=(directory,))
    assert res.ok, [str(i) for i in res.issues]
    fields = json.loads(path.read_text())["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]
    return fields[0]["tensormap"], fields[1]["tensormap"]


@pytest.mark.parametrize("layout", ["plain", "interleaved"])
@pytest.mark.parametrize(("geometry", "label"), [
    (dict(batch=1, heads_q=32, heads_kv=8, head_dim=128, page_size=64, max_pages=128, num_pages=128),
     "mma w8s3ef cl8 wide pp"),
    (SEED_LIKE, "mma w8d2s2ef cl8 wide"),
    (D128_64X1K, "mma w4s1c1 wide"),
    (D128_PAGE16, None)],
    ids=["1x8k-d128", "seed", "64x1k-d128", "page16"])
def test_wide_boxes_keep_the_plans_build_and_map_the_same_bytes_in_5_dims(geometry, label, layout, tmp_path):
    """wide_boxes=1 takes whatever build the plan picks, with 5-D tensor maps (64 dims, page rows, head_dim / 64
    parts 128 B apart, heads, pages) whose boxes hold a page slice's every part: the maps address the pool's bytes
    exactly as the 4-D ones do, and the manifest validates offline."""
    from labkit.workloads.decode.build import _maps
    from labkit.workloads.decode.compare import parse_build

    g = DecodeGeometry(**geometry, layout=layout)
    plain, wide = plan_call(g, wide_boxes=False), plan_call(g, wide_boxes=True)
    # the plan's own choice: wide at head_dim 256 and with pages of 16 (this one-split 4-warp build)
    assert plan_call(g) == (wide if g.head_dim == 256 or g.page_size == 16 else plain)
    # the same build, its loads aside (page ids ahead, where the plan takes them, with either)
    assert dataclasses.replace(wide.kernel, wide_boxes=False) == plain.kernel
    assert (wide.splits, wide.ctas_per_sm, wide.pdl) == (plain.splits, plain.ctas_per_sm, plain.pdl)
    assert kernel_label(wide.kernel) == (label or kernel_label(plain.kernel).replace(" pp", "") + " wide pp")
    assert "wide boxes" in describe_plan(wide) and "wide" not in describe_plan(plain)
    assert wide.to_dict()["wide_boxes"] is True and "wide_boxes" not in plain.to_dict()
    parts = g.head_dim // 64
    for tm in _built_tensor_maps(g, wide, tmp_path):
        assert tm["dims"] == [64, g.page_size, parts, g.heads_kv, g.num_pages]
        assert tm["box"] == [64, wide.kernel.box_rows, parts, 1, 1] and tm["strides"][1] == 128
    _, _, (dims4, strides4) = _maps(g)
    _, _, (dims5, strides5) = _maps(g, wide_boxes=True)
    assert _map_offsets(dims5[:3], strides5[:2]) == _map_offsets(dims4[:2], strides4[:1])  # a page slice's rows
    assert strides5[2:] == strides4[1:] and dims5[3:] == dims4[2:]  # heads and pages as before
    assert "_wide_" in " ".join(p.name for p in tmp_path.glob("*.cubin"))
    assert parse_build("wide_boxes=1") == {"wide_boxes": True}


def _loads_knob_keeps_the_plan(g: DecodeGeometry, on, off, knob: str, words: str) -> None:
    """``on`` (the plan with load knob ``knob``, which no plan takes by default) is ``off``'s build, splits, CTAs per SM
    and PDL with that one knob set, and says so in ``describe_plan`` (``words``) and ``to_dict``."""
    assert not getattr(plan_call(g).kernel, knob)
    assert dataclasses.replace(on.kernel, **{knob: False}) == off.kernel
    assert (on.splits, on.ctas_per_sm, on.pdl) == (off.splits, off.ctas_per_sm, off.pdl)
    assert words in describe_plan(on) and words not in describe_plan(off)
    assert on.to_dict()[knob] is True and knob not in off.to_dict()


@pytest.mark.parametrize("layout", ["plain", "interleaved"])
@pytest.mark.parametrize(("geometry", "label"), [
    (D128_16X4K, "mma w4s3 rows"),
    (D128_64X1K, "mma w4s1c1 rows"),
    (dict(batch=1, heads_q=32, heads_kv=8, head_dim=128, page_size=64, max_pages=128, num_pages=128),
     "mma w8s3ef cl8 rows pp"),
    (D128_PAGE16, None)],
    ids=["16x4k-d128", "64x1k-d128", "1x8k-d128", "page16"])
def test_row_boxes_keep_the_plans_build_and_read_each_token_row_whole(geometry, label, layout, tmp_path):
    """row_boxes=1 takes the plan's build (no plan takes them by default: not measured yet) with 5-D tensor maps whose
    head_dim parts come before the page rows: the maps address the pool's bytes exactly as the 4-D ones do, a box of
    the plain pool walks its page slice front to back (dim 0 fastest, as TMA walks a box), and the manifest validates
    offline."""
    from labkit.workloads.decode.build import _maps
    from labkit.workloads.decode.compare import parse_build

    g = DecodeGeometry(**geometry, layout=layout)
    four_d, rows = plan_call(g, wide_boxes=False), plan_call(g, row_boxes=True)
    _loads_knob_keeps_the_plan(g, rows, four_d, "row_boxes", "row boxes")
    assert kernel_label(rows.kernel) == (label or kernel_label(four_d.kernel).replace(" pp", "") + " rows pp")
    parts, box_rows = g.head_dim // 64, rows.kernel.box_rows
    for tm in _built_tensor_maps(g, rows, tmp_path):
        assert tm["dims"] == [64, parts, g.page_size, g.heads_kv, g.num_pages]
        assert tm["box"] == [64, parts, box_rows, 1, 1] and tm["strides"][0] == 128
    _, _, (dims4, strides4) = _maps(g)
    _, _, (dims5, strides5) = _maps(g, row_boxes=True)
    assert _map_offsets(dims5[:3], strides5[:2]) == _map_offsets(dims4[:2], strides4[:1])  # a page slice's rows
    assert strides5[2:] == strides4[1:] and dims5[3:] == dims4[2:]  # heads and pages as before
    walk = [2 * d + part * strides5[0] + row * strides5[1]
            for row in range(box_rows) for part in range(parts) for d in range(64)]
    assert (walk == list(range(0, 2 * g.head_dim * box_rows, 2))) == (layout == "plain")
    assert "_rows_" in " ".join(p.name for p in tmp_path.glob("*.cubin"))
    assert parse_build("row_boxes=1") == {"row_boxes": True}


def test_row_boxes_refuse_the_cuda_core_build_warp_pairs_and_wide_boxes():
    with pytest.raises(ArgumentError, match=r"^row_boxes: the tensor-core \(mma\) kernel's loads where each warp takes "
                                            r"all of head_dim; this call builds fma$"):
        plan_call(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8), row_boxes=True)  # 8 heads x 8 tokens: CUDA cores
    with pytest.raises(ArgumentError, match="this call builds warp pairs that split head_dim$"):
        plan_call(DecodeGeometry(**SEED_LIKE), row_boxes=True)  # the seed's plan: warp pairs
    with pytest.raises(ArgumentError, match="^row_boxes and wide_boxes: two orders of the same 5-D boxes; give one$"):
        plan_call(DecodeGeometry(8, 32, 8, 128, 64, 16, 128), row_boxes=True, wide_boxes=True)


@pytest.mark.parametrize("layout", ["plain", "interleaved"])
@pytest.mark.parametrize(("geometry", "label"), [
    (D128_16X4K, "mma w4s3 pad"),
    (D128_64X1K, "mma w4s1c1 pad"),
    (dict(batch=8, heads_q=32, heads_kv=8, head_dim=128, page_size=64, max_pages=128, num_pages=1024),
     "mma w8s2 cl2 pp pad"),
    (D128_PAGE16, None)],
    ids=["16x4k-d128", "64x1k-d128", "8x8k-d128", "page16"])
def test_padded_rows_keep_the_plans_build_and_load_a_page_slice_in_one_unswizzled_box(geometry, label, layout,
                                                                                         tmp_path):
    """padded_rows=1 takes the plan's build (no plan takes them by default: an A/B's knob) with the 4-D maps of the
    same dims and strides, whose one unswizzled box of head_dim + 8 dims takes a page slice's rows whole; the stage
    grows by those 8 dims a row, and the manifest validates offline."""
    from labkit.workloads.decode.compare import parse_build

    g = DecodeGeometry(**geometry, layout=layout)
    four_d, padded = plan_call(g, wide_boxes=False), plan_call(g, padded_rows=True)
    _loads_knob_keeps_the_plan(g, padded, four_d, "padded_rows", "rows padded to 136 dims")
    assert "padded" not in describe_plan(four_d)
    assert kernel_label(padded.kernel) == (label or kernel_label(four_d.kernel) + " pad")
    assert padded.kernel.stage_bytes == four_d.kernel.stage_bytes * 136 // 128
    assert "-DPADDED_ROWS=1" in padded.kernel.options() and "-DPADDED_ROWS=1" not in four_d.kernel.options()
    plain_maps = _built_tensor_maps(g, four_d, tmp_path / "4d")
    for tm, before in zip(_built_tensor_maps(g, padded, tmp_path), plain_maps):
        assert (tm["dims"], tm["strides"]) == (before["dims"], before["strides"]) and tm["dims"][0] == 128
        assert tm["box"] == [136, padded.kernel.box_rows, 1, 1] and tm["swizzle"] == 0
    assert "_pad_" in " ".join(p.name for p in tmp_path.glob("*.cubin"))
    assert parse_build("padded_rows=1") == {"padded_rows": True}


def test_padded_rows_refuse_head_dim_256_the_cuda_core_build_5d_boxes_and_too_much_shared_memory():
    with pytest.raises(ArgumentError, match=r"^padded_rows: the tensor-core \(mma\) kernel's loads at head_dim 128 "
                                            r"\(a TMA box takes at most 256 dims; a row and its pad are 136\); "
                                            r"this call builds head_dim 256$"):
        plan_call(DecodeGeometry(**SEED_LIKE), padded_rows=True)
    with pytest.raises(ArgumentError, match="this call builds fma$"):
        plan_call(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8), padded_rows=True)  # 8 heads x 8 tokens: CUDA cores
    for other in ("wide_boxes", "row_boxes"):
        with pytest.raises(ArgumentError, match="^padded_rows: one 4-D box per page slice, unswizzled; not with "
                                                "wide_boxes or row_boxes$"):
            plan_call(DecodeGeometry(16, 32, 8, 128, 64, 64, 1024), padded_rows=True, **{other: True})
    # the clustered 8-warp 3-stage build of 1 x 8k: 3 x 68 KB of padded stages, past the 200 KB labkit's builds take
    with pytest.raises(ArgumentError, match=r"^padded_rows: 3 stages of 69632 B: 209920 B of shared memory, more "
                                            r"than a CTA gets from labkit's decode builds \(204800 B\)$"):
        plan_call(DecodeGeometry(1, 32, 8, 128, 64, 128, 128), padded_rows=True)


def test_wide_boxes_refuse_the_cuda_core_build_and_pairs_over_short_pages():
    with pytest.raises(ArgumentError,
                       match=r"^wide_boxes: the tensor-core \(mma\) kernel's loads; this call builds fma$"):
        plan_call(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8), wide_boxes=True)  # 8 heads x 8 tokens: CUDA cores
    with pytest.raises(ArgumentError, match="^wide_boxes: warp pairs that split head_dim need a stage of one page "
                                            "slice; this build's 64-token stages take 16-token pages$"):
        plan_call(DecodeGeometry(2, 32, 8, 256, 16, 9, 30), wide_boxes=True)


@pytest.mark.parametrize(("geometry", "knobs"), [
    (DecodeGeometry(2, 32, 8, 256, 16, 9, 30), {}),  # warp pairs over 16-token pages: a stage is 4 page slices
    (DecodeGeometry(2, 32, 8, 256, 32, 9, 30), {}),  # and 2
    (DecodeGeometry(8, 32, 8, 256, 64, 16, 128), dict(warps=4)),  # the 4-warp build: not what was measured
    (DecodeGeometry(3, 16, 2, 256, 16, 9, 30, 8), {}),  # 8 heads x 8 tokens: CUDA cores
    (DecodeGeometry(8, 32, 8, 128, 64, 16, 128), {})])  # head_dim 128: level to +2 % on the H200
def test_the_plan_leaves_wide_boxes_off_where_they_were_not_measured_faster(geometry, knobs):
    plan = plan_call(geometry, **knobs)
    assert not plan.kernel.wide_boxes and "wide" not in kernel_label(plan.kernel), describe_plan(plan)


@pytest.mark.parametrize(("batch", "kv_len", "head_dim", "label"), [
    (1, 8192, 128, "mma w8s3ef cl8 pp"), (8, 1024, 128, "mma w8s2ef cl2 pp"), (8, 32768, 128, "mma w8s2 cl2 pp"),
    (64, 1024, 128, "mma w4s1c1"),  # 4 one-stage CTAs per SM: page ids ahead would cost one (128 -> 154 registers)
    (16, 4096, 128, "mma w4s3"),  # 4-warp builds: not measured with it
    (4, 16384, 128, "mma w8s2 pp"),  # the split calls of one 8-warp CTA per SM
    (1, 8192, 256, "mma w8d2s3ef cl8 wide"), (64, 1024, 256, "mma w8d2s2 P wide")])  # wide boxes; persistent CTAs
def test_the_plan_loads_page_ids_a_stage_ahead_in_its_8_warp_head_dim_128_builds(batch, kv_len, head_dim, label,
                                                                                   tmp_path):
    """Where the plan runs one 8-warp CTA per SM at head_dim 128, thread 0 loads each refill's page ids a stage ahead;
    page_prefetch=0 gives the same build without (for an A/B), and the manifest validates offline."""
    g = geometry_for(batch, kv_len, head_dim=head_dim)
    plan = plan_call(g)
    assert kernel_label(plan.kernel) == label
    if not plan.kernel.page_prefetch:
        assert "page_prefetch" not in plan.to_dict() and "page ids" not in describe_plan(plan)
        if label == "mma w4s1c1":
            assert occupancy(dataclasses.replace(plan.kernel, page_prefetch=True)) < plan.ctas_per_sm
        return
    plain = plan_call(g, page_prefetch=False)
    assert dataclasses.replace(plan.kernel, page_prefetch=False) == plain.kernel
    assert (plan.splits, plan.ctas_per_sm, plan.pdl) == (plain.splits, plain.ctas_per_sm, plain.pdl)
    assert plan.to_dict()["page_prefetch"] is True and describe_plan(plan).endswith("page ids a stage ahead")
    path = build_plan(g, plan, tmp_path)
    res = manifest.check(manifest.load(path), cubin_dirs=(tmp_path,))
    assert res.ok, [str(i) for i in res.issues]
    assert "_pp_" in " ".join(p.name for p in tmp_path.glob("*.cubin"))
    from labkit.workloads.decode.compare import parse_build

    assert parse_build("page_prefetch=0") == {"page_prefetch": False}


def test_page_prefetch_refuses_persistent_ctas_and_the_cuda_core_build_and_takes_wide_boxes():
    with pytest.raises(ArgumentError, match=r"^page_prefetch: the per-unit tensor-core \(mma\) build's loads; this "
                                            r"call runs persistent CTAs$"):
        plan_call(geometry_for(64, 1024, head_dim=256), page_prefetch=True, wide_boxes=False)
    with pytest.raises(ArgumentError, match="this call builds fma$"):
        plan_call(DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8), page_prefetch=True)
    four_d = plan_call(geometry_for(1, 8192, head_dim=256), page_prefetch=True, wide_boxes=False)  # on request
    assert kernel_label(four_d.kernel) == "mma w8d2s3ef cl8 pp"
    both = plan_call(geometry_for(1, 8192, head_dim=256), page_prefetch=True)  # the plan's wide boxes, ids ahead
    assert kernel_label(both.kernel) == "mma w8d2s3ef cl8 wide pp" and both.to_dict()["wide_boxes"] is True


def test_call_plan_keeps_what_the_caller_gives():
    g = geometry_for(256, 1024, head_dim=256)
    assert plan_call(g, stages=2, splits=3).kernel.stages == 2 and plan_call(g, stages=2, splits=3).splits == 3
    eight = plan_call(geometry_for(1, 8192), warps=8)
    assert eight.kernel.warps == 8 and eight.kernel.tokens_per_stage == 128 and eight.kernel.threads == 256
    wide = DecodeGeometry(64, 64, 4, 128, 16, 64, 64 * 64, 8)  # 128 rows: the CUDA-core kernel's stages stay
    assert plan_call(wide, kv_evict_first=False).kernel == kernel_build(wide)
    with pytest.raises(ArgumentError, match="stages 5: expected 1..4"):
        plan_call(g, stages=5)
    # the cap is labkit's: the message had said "more than a CTA gets (204800)", where an sm_90 CTA gets 232448
    with pytest.raises(ArgumentError, match=r"2 stages of 131072 B .*: 263168 B of shared memory, more than a "
                       r"CTA gets from labkit's decode builds \(204800 B of sm_90's 232448\)$"):
        plan_call(geometry_for(1, 8192, head_dim=256), warps=8, stages=2)
    with pytest.raises(ArgumentError, match="warps 8: only the tensor-core .* this build is the CUDA-core"):
        plan_call(wide, warps=8)
    with pytest.raises(ArgumentError, match="qk_chains 3: the tensor-core"):
        plan_call(g, qk_chains=3)
    assert plan_call(g, qk_chains=2).kernel.qk_chains == 2  # a given chain count limits the one-stage candidates


def test_pdl_where_one_cta_fills_an_sm(tmp_path):
    seed_sized = plan_call(DecodeGeometry(**SEED_LIKE))  # d256, two stages: one CTA per SM
    assert seed_sized.ctas_per_sm == 1 and seed_sized.pdl
    eight_by_512 = plan_call(geometry_for(8, 512))  # two CTAs per SM: the next call's would land beside them
    assert eight_by_512.ctas_per_sm == 2 and not eight_by_512.pdl
    g = DecodeGeometry(**SEED_LIKE)
    for pdl in (True, False):
        path = build(g, seed_sized.splits, tmp_path / str(pdl), kernel=seed_sized.kernel, pdl=pdl)
        assert json.loads(path.read_text())["ops"]["decode"]["impl"]["launches"][0]["pdl"] is pdl
        assert manifest.load(path).ops["decode"].launches[0].pdl is pdl


def test_wave_fill():
    assert wave_fill(512, 528) == pytest.approx(512 / 528)
    assert wave_fill(2048, 396) == pytest.approx(2048 / (6 * 396))
    assert wave_fill(396, 396) == 1.0


def test_kernel_variant_follows_head_dim_and_rows():
    assert kernel_build(geometry_for(8, 8192)).variant == "mma"  # d128, 4 rows: tensor cores
    assert kernel_build(DecodeGeometry(**SEED_LIKE)).variant == "mma"  # d256, 6 rows
    wide = DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8)  # 64 rows: CUDA cores
    assert kernel_build(wide).variant == "fma"
    assert kernel_build(wide, variant="mma").row_blocks(wide) == 4  # forced: 16-row blocks
    with pytest.raises(ArgumentError, match="kernel variant 'wgmma': expected one of mma, fma"):
        kernel_build(wide, variant="wgmma")


def test_reference_magnitude_bounds_the_output():
    g = DecodeGeometry(batch=2, heads_q=4, heads_kv=2, head_dim=128, page_size=16, max_pages=4, num_pages=8)
    x = make_inputs(g, seq_lens=[50, 9], seed=4)
    ref = decode_reference(x, g.head_dim ** -0.5)
    mag = decode_reference(x, g.head_dim ** -0.5, magnitude=True)
    assert (mag >= np.abs(ref) - 1e-12).all() and (mag > 0).all()


@pytest.mark.parametrize("name,l2_mib,evict_first", [("NVIDIA H200", 60, True), ("NVIDIA H100 80GB HBM3", 50, False)])
def test_decode_build_plans_for_the_gpu_at_hand_and_says_so(monkeypatch, tmp_path, capsys, name, l2_mib, evict_first):
    """Found on the first H100 run's review: decode build and from-manifest planned for the H200 on any host, so on an
    H100 a 168 MB call's cubin took the evict-first build the bench, planning for the GPU, did not launch."""
    import dataclasses
    import json

    import labkit.cuda
    import labkit.device
    import labkit.sched.clusters
    from labkit import cli
    from labkit.workloads.decode.plan import H200_CLUSTER_CTAS

    h200 = sorted((ROOT / "data" / "runs").glob("*-00_device_and_timing"))[0] / "data" / "device.json"
    dev = dataclasses.replace(labkit.device.DeviceInfo.from_dict(json.loads(h200.read_text())), name=name,
                              l2_bytes=l2_mib << 20)
    monkeypatch.setattr(labkit.cuda, "gpu_status", lambda: (True, "faked"))
    monkeypatch.setattr(labkit.device, "describe", lambda *a, **k: dev)
    monkeypatch.setattr(labkit.sched.clusters, "resident_cluster_ctas", lambda index=0: dict(H200_CLUSTER_CTAS))
    assert cli.main(["decode", "build", "--batch", "5", "--kv-len", "8192", "--out", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert f"planned for this GPU, {name}; check it with" in line
    assert ("K/V L2 evict_first" in line) is evict_first


def test_decode_build_says_when_kv_len_rounds_up_to_whole_pages(tmp_path, capsys):
    """Found by a CLI review: --kv-len 100 built a manifest of 2 pages of 64, whose run reads 128 tokens, unsaid."""
    from labkit import cli

    assert cli.main(["decode", "build", "--batch", "2", "--kv-len", "100", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[3] == (
        "  --kv-len 100: 2 pages of 64 per sequence (128 tokens); a call's seq_lens say how many of them it reads "
        "(manifest run reads them all)")
    assert cli.main(["decode", "build", "--batch", "2", "--kv-len", "128", "--out", str(tmp_path)]) == 0
    assert "--kv-len" not in capsys.readouterr().out  # whole pages: nothing to say


def test_decode_build_takes_kv_len_in_1024s_as_point_and_plans_do(tmp_path, capsys):
    """Found by a CLI review: `--point 64x8k` and `decode plans --kv-len 8k` took 8k, `decode build --kv-len 8k` and
    `decode compare` refused it. 8k builds what 8192 builds."""
    from labkit import cli

    outs = []
    for kv_len in ("8k", "8192"):
        assert cli.main(["decode", "build", "--batch", "1", "--kv-len", kv_len, "--out", str(tmp_path / kv_len)]) == 0
        outs.append(capsys.readouterr().out.replace(kv_len, "N"))
        assert [p.name for p in (tmp_path / kv_len).glob("*.json")] == ["decode_b1_h32-8_d128_p64x128_q1_plain_s8.json"]
    assert outs[0] == outs[1]
    assert cli.main(["decode", "build", "--batch", "1", "--kv-len", "8kk", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err == ("labkit: error: labkit decode build: --kv-len '8kk': expected an integer, or "
                                       "whole 1024s such as 8k\n")


def test_from_manifest_retargets_the_seed_geometry(tmp_path, capsys):
    from labkit import cli

    assert cli.main(["decode", "from-manifest", str(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"),
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "24 q heads on 4 KV heads, head_dim 256, page 64" in out and "a pool of 22 pages" in out
    assert "page dim: the input's K/V maps say 0 pages (trtllm-gen fills mNumPagesInMemPool = 44)" in out
    assert "cu_seqlens_q: the input never packs it (offset 936 stays null)" in out
    assert "q tokens per sequence: 1 in the input (its mMaxSeqLenQ)" in out
    assert ("splits: 8 per (sequence, KV head) (the input's grid.x = 38), combined in a thread-block cluster of 8 "
            "(distributed shared memory, no global partials); planned for the H200 (sm_90, 132 SMs, 60 MiB L2): no "
            "GPU here") in out
    assert "the input's own check: 0 error(s), 5 warning(s) (labkit manifest check " in out
    path = next(tmp_path.glob("decode_*.json"))
    assert f"check it with: labkit manifest check {path}\n" in out
    res = manifest.check(manifest.load(path))  # the cubin beside the manifest is found with no --cubin-dir
    assert res.ok, [str(i) for i in res.issues]
    assert cli.main(["manifest", "check", str(path), "--no-device"]) == 0 and "can run" in capsys.readouterr().out
    m = manifest.load(path)
    assert m.buffers["kv"].shape == (22, 2, 64, 4, 2, 256) and m.buffers["q"].shape == (64, 24, 256)
    assert cli.main(["decode", "from-manifest", str(ROOT / "data" / "sage2_report_seed.json"), "--out",
                     str(tmp_path)]) == 2
    capsys.readouterr()
    # its own output again (a fresh-user review: "expected K and V as views of one interleaved kv" said nothing of it)
    assert cli.main(["decode", "from-manifest", str(path), "--out", str(tmp_path / "again")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "a manifest labkit decode build wrote (model labkit-paged-decode); from-manifest takes a trtllm-gen" in err


@pytest.mark.parametrize("change, message", [
    (lambda b: b["table"].update(shape=[22]),
     "buffers.table.shape = [22]: expected the page table as [batch, max_pages]"),
    (lambda b: b["kv"].update(dtype="f32"), "buffers.kv.dtype = 'f32': expected 'bf16'"),
    (lambda b: b["seq"].update(dtype="bf16"), "buffers.seq.dtype = 'bf16': expected 'i32'"),
    # the geometry's refusal names the manifest value it came from (found by a CLI review)
    (lambda b: b["kv"]["shape"].__setitem__(2, 48),
     "decode geometry: page_size 48: expected one of 16, 32, 64 (from buffers.kv.shape[2])"),
])
def test_from_manifest_refuses_a_table_or_dtype_its_kernel_cannot_read(change, message, tmp_path, capsys):
    """Found by a CLI review: a 1-D page table was a ValueError traceback, and f32 K/V built a bf16 kernel."""
    from labkit import cli

    doc = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
    change(doc["buffers"])
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert cli.main(["decode", "from-manifest", str(tmp_path / "m.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "out").exists()


def test_from_manifest_names_a_call_buffer_that_is_not_declared(tmp_path, capsys):
    """Found by the mutated-manifest property: a call binding an undeclared buffer is one line, not a KeyError."""
    from labkit import cli

    doc = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
    next(iter(doc["programs"].values()))["calls"][0]["args"][1]["buf"] = "q_typo"
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert cli.main(["decode", "from-manifest", str(tmp_path / "m.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "binds buffer 'q_typo', which buffers does not declare" in err[0]
    assert not (tmp_path / "out").exists()


def test_the_check_it_with_hint_is_a_command_a_shell_takes_whole(tmp_path, capsys):
    """A CLI review: under a folder with a space, the printed `labkit manifest check PATH` was two words there."""
    import shlex

    from labkit import cli

    out_dir = tmp_path / "sp ace" / "ü"
    assert cli.main(["decode", "from-manifest", str(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"), "--out",
                     str(out_dir)]) == 0
    (hint,) = [ln for ln in capsys.readouterr().out.splitlines() if "check it with: " in ln]
    command = shlex.split(hint.split("check it with: ")[1])
    assert command[:3] == ["labkit", "manifest", "check"] and command[3:] == [str(next(out_dir.glob("*.json")))]


def test_from_manifest_never_replaces_the_manifest_it_reads(tmp_path, capsys):
    """A CLI review: a seed manifest saved under the name labkit's own build takes, given with its folder as --out, was
    replaced by the manifest built from it (exit 0, the input gone). Refused before NVRTC, the input unchanged."""
    from labkit import cli

    seed = (ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_bytes()
    assert cli.main(["decode", "from-manifest", str(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"), "--out",
                     str(tmp_path / "first")]) == 0
    own = next((tmp_path / "first").glob("decode_*.json")).name  # the name labkit's build of the seed takes
    capsys.readouterr()
    (tmp_path / own).write_bytes(seed)
    assert cli.main(["decode", "from-manifest", str(tmp_path / own), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is the input file" in err[0] and "would overwrite the input" in err[0], err
    assert (tmp_path / own).read_bytes() == seed and not list(tmp_path.glob("*.cubin"))


def test_split_sweep_rows_mark_the_heuristic():
    from labkit.workloads.decode import study

    assert study.split_counts(8, 8192) == [0, 1, 2, 4, 8, 16, 32, 64, 128]
    assert study.split_counts(2, 704) == [0, 1, 2, 4, 8]  # 11 pages
    assert study.split_counts(64, 32768) == [0, 1, 2, 4, 8, 16]  # 8.6 GB: one split already fills the GPU
    assert study.split_counts(8, 32768, head_dim=256) == [0, 1, 2, 4, 8, 16]  # 2.1 GB
    assert study.split_counts(8, 16384)[-1] == 256  # 0.54 GB, 256 pages: up to MAX_SPLITS
    pts = [{"splits": s, "splits_used": s or 11, "p50_us": 20.0 + s} for s in (0, 1, 2, 4, 8)]
    rows = study.split_rows(pts)
    assert [r["splits"] for r in rows] == [1, 2, 4, 8, 11] and [r["heuristic"] for r in rows] == [0, 0, 0, 0, 1]
    pts[0]["splits_used"] = 4  # the heuristic matched a power of two: both points stay (the plan may run another build)
    rows = study.split_rows(pts)
    assert [(r["splits"], r["heuristic"]) for r in rows] == [(1, 0), (2, 0), (4, 0), (4, 1), (8, 0)]
    assert [r["p50_us"] for r in rows if r["splits"] == 4] == [24.0, 20.0]  # the line's own point, then the plan's
    with pytest.raises(ValueError, match="2 heuristic points"):
        study.split_rows([*pts, pts[0]])


def test_decode_point_skips_what_is_over_the_byte_cap_without_a_gpu():
    from labkit.sweep.workloads import get

    out = get("decode.point")(batch=256, kv_len=32768, head_dim=256, max_kv_bytes=9e9)
    assert out == {"skipped": "68.7 GB of K+V is over 9 GB"}  # 2 x 256 x 32768 x 8 x 256 x 2 B


def test_shape_runner_builds_in_a_folder_that_lives_while_the_block_runs(monkeypatch):
    """The GPU-free half of bench_point / decode_timeline: the runner, its split count, the folder with the
    cubin during the block, the folder gone and the memory pool emptied after it."""
    from labkit.workloads.decode import bench

    seen, freed = {}, []

    def fake_runner(g, splits, directory, fill, **kw):
        (Path(directory) / "k.cubin").write_bytes(b"x")
        seen.update(g=g, splits=splits, kw=kw)
        return object(), "plan"

    class Pool:
        def free_all_blocks(self):
            freed.append(True)

    monkeypatch.setattr(bench, "decode_runner", fake_runner)
    monkeypatch.setattr(bench, "cupy", lambda: type("cp", (), {"get_default_memory_pool": staticmethod(Pool)}))
    with bench.shape_runner(2, 704, 256, heads_q=24, heads_kv=4, timeline=True) as (runner, plan, folder):
        assert plan == "plan" and (folder / "k.cubin").is_file() and not freed
    assert not folder.exists() and freed == [True]
    assert seen["g"] == geometry_for(2, 704, heads_q=24, heads_kv=4, head_dim=256) and seen["kw"]["timeline"]


def test_row_blocks_count_against_grid_y(tmp_path):
    assert DecodeGeometry(1, 8192, 8192, 128, 64, 1, 1).heads_kv == 8192  # one row block: fine
    g = DecodeGeometry(1, 16 * 8192, 8192, 128, 64, 1, 1, max_q_len=8)  # 128 rows
    assert kernel_build(g).row_blocks(g) == 2  # 64 rows per CTA: 16384 CTAs along y, fine
    with pytest.raises(ArgumentError, match="heads_kv 8192 x 8 row blocks = 65536 CTAs along grid y"):
        build(g, 1, tmp_path, kernel=kernel_build(g, variant="mma"))  # 16 rows per CTA


@pytest.mark.parametrize(("batch", "kv_len", "head_dim", "evict_first"), [
    (1, 8192, 128, True),     # 34 MB: up to three L2 sizes of K/V enter L2 as evict_first
    (8, 1024, 256, True),     # 67 MB
    (1, 32768, 128, True),    # 134 MB: 2.1 x 60 MiB
    (8, 8192, 128, False),    # 268 MB: above 3 x 60 MiB
    (64, 8192, 128, False),
])
def test_call_plan_marks_small_calls_evict_first(tmp_path, batch, kv_len, head_dim, evict_first):
    """The plan sets KV_EVICT_FIRST from the call's K/V bytes and the GPU's L2; the build compiles it in (the
    TMA loads carry an L2 cache hint) and names the cubin for it; an override wins."""
    from labkit.workloads.decode.build import build_plan, compile_kernel

    g = geometry_for(batch, kv_len, head_dim=head_dim)
    plan = plan_call(g, sms=132, l2_bytes=60 * 1024 * 1024)
    assert plan.kernel.kv_evict_first is evict_first and plan.to_dict()["kv_evict_first"] is evict_first
    assert ("-DKV_EVICT_FIRST=1" in plan.kernel.options()) is evict_first
    assert plan_call(g, kv_evict_first=not evict_first).kernel.kv_evict_first is (not evict_first)
    assert plan_call(g, l2_bytes=1 << 40).kernel.kv_evict_first  # a big enough L2 takes every call
    if evict_first:
        doc = json.loads(build_plan(g, plan, tmp_path).read_text())
        assert "_ef_" in doc["modules"]["decode"]["source"]
        assert doc["ops"]["decode"]["impl"]["launches"][0]["pdl"] is plan.pdl  # the plan's launch choice too
        assert compile_kernel(plan.kernel).image != compile_kernel(plan_call(g, kv_evict_first=False).kernel).image


@pytest.mark.parametrize(("geometry", "shape", "splits", "cluster"), [
    # 704 tokens would take 11 splits: 8 8-warp CTAs, each with its split's two 64-token stages at once
    (DecodeGeometry(**SEED_LIKE), (8, 2), 8, 8),
    (geometry_for(1, 1024, head_dim=256), (8, 2), 8, 8),
    (geometry_for(1, 1024), (8, 1), 8, 8),  # head_dim 128: a split is one 128-token stage
    (geometry_for(8, 1024, head_dim=256), (8, 2), 2, 2),  # one CTA per SM, 2 splits: a cluster of 2
    (geometry_for(1, 8192, head_dim=256), (8, 3), 8, 8),  # 8 one-per-SM CTAs of 3 stages (pushed partials)
    (geometry_for(1, 32768, head_dim=256), (8, 2), 16, 0),  # 16 splits: its clusters of 8 measured slower
    (geometry_for(8, 1024), (8, 2), 2, 2),               # 2 splits of one 8-warp CTA per SM, from 1k tokens a unit
    (geometry_for(8, 8192), (8, 2), 2, 2),   # long units: 2 splits of one 8-warp CTA per SM fill a wave, as a cluster
    (geometry_for(8, 32768), (8, 2), 2, 2),
    (geometry_for(7, 8192), (8, 2), 2, 2),   # 112 CTAs: under the pair's 85 % of a wave, but units of 8k tokens
    (geometry_for(7, 4096), (8, 2), 2, 2),   # ... of 4k: 56 units, too many for clusters of 4 (120 CTAs)
    (geometry_for(8, 4096), (8, 2), 2, 2),
    (geometry_for(8, 512), (4, 3), 4, 0),    # shorter units: not measured that way
    (geometry_for(256, 1024, head_dim=256), (8, 2), 1, 0),  # one split: persistent CTAs, no cluster
    (geometry_for(8, 1024, head_dim=256, page_size=16), (8, 2), 2, 2),
    # 4 splits of 32 units: 128 CTAs in clusters of 4, but the H200 holds 30 such clusters (120 CTAs): no cluster
    (geometry_for(4, 8192, head_dim=256), (8, 2), 4, 0),
    (geometry_for(4, 1024, head_dim=256), (8, 2), 4, 0),
    (geometry_for(8, 8192, head_dim=256, heads_q=24, heads_kv=4), (8, 2), 4, 0),
    (geometry_for(2, 1024, head_dim=256), (8, 2), 8, 0),  # 16 units x 8 one-stage CTAs = 128 > 15 clusters of 8
])
def test_call_plan_combines_splits_in_a_cluster_where_one_cta_fills_an_sm(tmp_path, geometry, shape, splits, cluster):
    plan = plan_call(geometry, sms=132)
    k = plan.kernel
    assert ((k.warps, k.stages), plan.splits, k.cluster_splits) == (shape, splits, cluster)
    assert (f"-DCLUSTER_SPLITS={cluster}" in k.options()) is (cluster > 1)
    if cluster:
        assert plan.ctas_per_sm == 1 and plan.to_dict()["cluster_splits"] == cluster
        path = build(geometry, plan.splits, tmp_path, kernel=k)
        doc = json.loads(path.read_text())
        assert f"_c{cluster}_" in doc["modules"]["decode"]["source"]
        assert doc["ops"]["decode"]["impl"]["launches"][0]["grid"][0] == cluster
        with pytest.raises(ArgumentError, match=f"combine {cluster} splits launches with exactly that many, not 3"):
            build(geometry, 3, tmp_path / "bad", kernel=k)
        assert not (tmp_path / "bad").exists()  # refused before NVRTC and before any file
        from labkit.workloads.decode.build import manifest_dict
        with pytest.raises(ArgumentError, match="exactly that many, not 3"):
            manifest_dict(geometry, 3, "x.cubin", "0" * 64, kernel=k)


def test_clustered_pair_of_splits_yields_to_the_callers_knobs():
    """8 x 8k d128: the plan's own call is 2 splits of 8 warps in a cluster; cluster=True asks for the same; any build
    knob or split count of the caller's keeps the 4-warp build (the call the caller described)."""
    g = geometry_for(8, 8192)
    label = lambda p: (p.kernel.warps, p.kernel.stages, p.splits, p.kernel.cluster_splits, p.ctas_per_sm)  # noqa: E731
    assert label(plan_call(g)) == label(plan_call(g, cluster=True)) == (8, 2, 2, 2, 1)
    assert label(plan_call(g, cluster=False)) == (4, 3, 4, 0, 2)
    assert label(plan_call(g, splits=2)) == (4, 3, 2, 0, 2)
    assert label(plan_call(g, stages=2)) == (4, 2, 6, 0, 3)
    ef = plan_call(g, kv_evict_first=True)
    assert label(ef) == (4, 3, 4, 0, 2) and ef.kernel.kv_evict_first
    assert label(plan_call(g, kv_evict_first=False)) == (4, 3, 4, 0, 2)
    # 128 CTAs would not fit one wave of 100 SMs, and 64 units take more than half of them: one 8-warp CTA per unit
    assert label(plan_call(g, sms=100)) == (8, 2, 1, 0, 1)


def test_cluster_overrides():
    g = DecodeGeometry(**SEED_LIKE)
    assert plan_call(g, cluster=False).kernel.cluster_splits == 0 and plan_call(g, cluster=False).splits == 11
    assert plan_call(g, splits=11).kernel.cluster_splits == 0  # given splits: no cluster of its own choosing
    assert plan_call(g, splits=4, cluster=True).kernel.cluster_splits == 4
    with pytest.raises(ArgumentError, match="cluster of 2, 4, 8 tensor-core CTAs; this call has 11 split"):
        plan_call(g, splits=11, cluster=True)
    with pytest.raises(ArgumentError, match="variant fma"):
        plan_call(DecodeGeometry(64, 64, 4, 128, 16, 64, 64 * 64, 8), splits=4, cluster=True)


def test_decode_build_cli_says_how_the_call_runs(tmp_path, capsys):
    """`labkit decode build` prints the plan's choices (splits, build, CTAs per SM, cluster, evict_first, PDL)
    and refuses a bad head_dim in one line, before anything is built."""
    from labkit import cli

    args = ["decode", "build", "--batch", "2", "--kv-len", "704", "--heads-q", "24", "--heads-kv", "4"]
    assert cli.main([*args, "--head-dim", "256", "--out", str(tmp_path / "seed")]) == 0
    out = capsys.readouterr().out
    assert ("8 splits, 8 warps (pairs split head_dim) x 2 stages, 1 CTA per SM, splits combined in a cluster of 8, "
            "K/V L2 evict_first, PDL" in out)
    assert cli.main(["decode", "build", "--batch", "64", "--kv-len", "8192", "--out", str(tmp_path / "big")]) == 0
    assert ("1 split, 4 warps x 1 stage, 4 CTAs per SM, planned for the H200 (sm_90, 132 SMs, 60 MiB L2): no GPU here; "
            "check it") in capsys.readouterr().out
    assert cli.main([*args, "--head-dim", "100", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "head_dim 100: the decode kernel takes 128, 256" in err and "Traceback" not in err
    assert not (tmp_path / "bad").exists()


def test_bandwidth_table_keeps_numbers_numeric():
    """A peer that did not run holds its reason as text; the table keeps its TB/s column numeric and says why
    elsewhere, and split counts stay integers though skipped points (NaN) were in the sweep."""
    import pandas as pd

    from labkit.workloads.decode.study import bandwidth_table, skipped

    points = pd.DataFrame([
        {"batch": 1, "kv_len": 8192, "head_dim": 128, "splits": 16.0, "splits_used": 16.0, "TBps": 0.4,
         "sdpa_cudnn": 0.38, "flex_paged": "InductorError: out of resources", "skipped": None},
        {"batch": 64, "kv_len": 8192, "head_dim": 128, "splits": 1.0, "splits_used": 1.0, "TBps": 4.4,
         "sdpa_cudnn": 4.45, "flex_paged": 4.19, "skipped": None},
        {"batch": 64, "kv_len": 1024, "head_dim": 128, "splits": 1.0, "splits_used": 1.0, "TBps": 3.5,
         "sdpa_cudnn": 3.59, "flex_paged": None, "skipped": None},  # not a point Flex is compiled for
        {"batch": 512, "kv_len": 32768, "head_dim": 128, "splits": None, "splits_used": None, "TBps": None,
         "sdpa_cudnn": None, "flex_paged": None, "skipped": "34.4 GB of K+V is over 9 GB"}])
    t = bandwidth_table(points)
    assert list(t["splits"]) == [16, 1, 1] and str(t["splits"].dtype) == "Int64" and "skipped" not in t
    assert t["flex_paged"].dtype == float and pd.isna(t["flex_paged"].iloc[0]) and t["flex_paged"].iloc[1] == 4.19
    assert list(t["peers_not_run"]) == ["flex_paged: InductorError: out of resources", "",
                                        "flex_paged: run only at the 5 points the targets name (compiled per shape)"]
    assert skipped(points) == ["skipped: batch 512 x 32768: 34.4 GB of K+V is over 9 GB"]


def test_the_notebooks_bandwidth_view_leaves_out_what_every_row_repeats():
    """Found by a notebook review: notebook 03's table had 22 columns, elided, with head_dim, page_size, heads and
    iterations pushing out the kernel; the CSV keeps them."""
    import pandas as pd

    from labkit.workloads.decode import study

    table = pd.DataFrame({"batch": [1, 8], "kv_len": [8192, 8192], "head_dim": [128, 128], "splits": [16, 2],
                          "splits_used": [16, 2], "kernel": ["mma w4s3ef", "mma w8s2 cl2"],
                          "p50_us": [19.0561, 77.4881], "TBps": [1.76083, 3.46422], "sdpa_cudnn": [1.5912, 3.5061]})
    view = study.shown(table)
    assert list(view.columns) == ["batch", "kv_len", "splits", "kernel", "p50_us", "TBps", "sdpa_cudnn"]
    assert view["p50_us"].tolist() == [19.06, 77.49] and view["TBps"].tolist() == [1.761, 3.464]
    one = study.shown(table.iloc[:1])  # one row: every column holds one value, so only the call's settings go
    assert list(one.columns) == ["batch", "kv_len", "splits", "kernel", "p50_us", "TBps", "sdpa_cudnn"]
    assert "splits_used" in study.shown(table.assign(splits_used=[16, 4]))


def test_clusters_that_the_gpu_cannot_hold_at_once_are_left_out_and_modelled_as_a_second_wave():
    """A cluster sits whole in a GPC: the H200 holds 66 clusters of 2 but only 30 of 4 and 15 of 8 (one CTA per SM).
    The plan combines splits in a cluster only when all of them fit at once; a call that asks for more anyway takes
    its waves from those CTAs, so 128 CTAs in clusters of 4 take two, as the H200 ran them; the efficiency stays a
    share of all 132 slots, as a timeline measures it."""
    from labkit.sched import waves
    from labkit.sched.measure import _launch_model
    from labkit.workloads.decode.plan import cluster_ctas

    assert [cluster_ctas(n) for n in (2, 4, 8)] == [132, 120, 120]
    assert cluster_ctas(4, sms=100, arch="sm_90") == 100 and cluster_ctas(8, sms=100, arch="sm_90") == 96
    g = geometry_for(4, 8192, head_dim=256)
    asked = plan_call(g, splits=4, cluster=True)  # the caller's cluster: kept, and modelled as it runs
    assert asked.kernel.cluster_splits == 4 and asked.ctas_per_sm == 1
    model = _launch_model(g, asked, 8192, sms=132)
    assert (model.ctas, model.slots, model.full_waves, model.last_wave_ctas) == (128, 132, 2, 8)
    assert model.waves == pytest.approx(128 / 120) and model.wave_efficiency == pytest.approx(128 / 264)
    seed = plan_call(DecodeGeometry(**SEED_LIKE))  # 64 CTAs in clusters of 8: they fit, one wave of 132 slots
    fit8 = _launch_model(DecodeGeometry(**SEED_LIKE), seed, 704, sms=132)
    assert (fit8.full_waves, fit8.wave_efficiency) == (1, pytest.approx(64 / 132))
    fits = _launch_model(geometry_for(8, 8192), plan_call(geometry_for(8, 8192)), 8192, sms=132)
    assert (fits.ctas, fits.slots, fits.full_waves) == (128, 132, 1)  # clusters of 2: all 132 SMs
    assert waves(128, 132, 1, resident=120).full_waves == 2
    with pytest.raises(ArgumentError, match=r"resident \(of the sms x ctas_per_sm slots\) = 200: expected 1..132"):
        waves(128, 132, 1, resident=200)


def test_the_plan_takes_the_clusters_the_gpu_said_it_holds():
    """``plan_for_device`` asks the GPU how many clusters it holds (``cluster_fit``); a GPU whose GPCs hold fewer
    clusters of 8 than the seed-sized call's 64 CTAs gets no cluster, and a clustered call's resident CTAs (the wave
    model's) are the GPU's count, not the H200 table's."""
    from labkit.sched.measure import _launch_model
    from labkit.workloads.decode.plan import cluster_ctas

    seed = DecodeGeometry(**SEED_LIKE)
    h200 = plan_call(seed)
    assert h200.kernel.cluster_splits == 8 and h200.cluster_resident_ctas == 120
    same = plan_call(seed, cluster_fit={2: 132, 4: 120, 8: 120})
    assert same == h200  # the H200's answer is its table
    small = plan_call(seed, cluster_fit={2: 132, 4: 120, 8: 56})
    assert small.kernel.cluster_splits == 0 and small.cluster_resident_ctas == 0
    assert cluster_ctas(8, fit={8: 56}) == 56
    pair = plan_call(geometry_for(8, 8192), cluster_fit={2: 130, 4: 120, 8: 120})  # 128 CTAs in pairs still fit
    assert pair.kernel.cluster_splits == 2 and pair.cluster_resident_ctas == 130
    assert plan_call(geometry_for(8, 8192), cluster_fit={2: 120, 4: 120, 8: 120}).kernel.cluster_splits == 0
    asked = plan_call(geometry_for(4, 8192, head_dim=256), splits=4, cluster=True, cluster_fit={2: 132, 4: 64, 8: 64})
    model = _launch_model(geometry_for(4, 8192, head_dim=256), asked, 8192, sms=132)
    assert asked.cluster_resident_ctas == 64 and model.full_waves == 2 and model.waves == pytest.approx(2.0)


def test_plan_for_device_asks_the_gpu_for_its_clusters(monkeypatch):
    """plan_for_device hands the GPU's cluster answer (labkit.sched.clusters) to the plan, with its SMs, arch and L2."""
    from labkit import device
    from labkit.sched import clusters
    from labkit.workloads.decode import plan as plan_mod

    fake = dataclasses.replace(device.DeviceInfo.from_dict(json.loads(
        (ROOT / "data/runs/20261202T043700Z-decode_bench/bench.json").read_text())["provenance"]["device"]), index=0)
    monkeypatch.setattr(device, "describe", lambda index=0: fake)
    monkeypatch.setattr(clusters, "resident_cluster_ctas", lambda index=0: {2: 132, 4: 120, 8: 56})
    assert plan_mod.plan_for_device(DecodeGeometry(**SEED_LIKE)).kernel.cluster_splits == 0
    monkeypatch.setattr(clusters, "resident_cluster_ctas", lambda index=0: {2: 132, 4: 120, 8: 120})
    assert plan_mod.plan_for_device(DecodeGeometry(**SEED_LIKE)) == plan_call(DecodeGeometry(**SEED_LIKE))


def test_from_manifest_notes_say_what_the_input_holds(tmp_path, capsys):
    """Found by a review: the notes were the seed's facts whatever the input (grid.x = 38, 0 pages in the K/V maps),
    and an input its own check refuses went through without a word. They are read from the input's parameter block,
    and its own check is counted."""
    from labkit import cli

    seed = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
    launch = seed["ops"]["decode"]["impl"]["launches"][0]
    launch["grid"][0] = 20
    fields = launch["args"][0]["pack"]["fields"]
    for f in fields:
        if f["at"] in (128, 384):
            f["tensormap"]["dims"][3] = 22
    launch["args"][0]["pack"]["fields"] = [f for f in fields if f["at"] != 1144]  # no mMaxSeqLenQ
    seed["modules"][next(iter(seed["modules"]))]["sha256"] = "0" * 64
    (tmp_path / "in.json").write_text(json.dumps(seed))
    assert cli.main(["decode", "from-manifest", str(tmp_path / "in.json"), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "page dim: the input's K/V maps say 22 pages" in out and "(the input's grid.x = 20)" in out
    assert "q tokens per sequence: the input sets none" in out
    assert re.search(r"the input's own check: [1-9]\d* error\(s\), \d+ warning\(s\) \(labkit manifest check ", out), out


@pytest.mark.parametrize("geometry, through_global, clustered", [
    (SEED_LIKE, False, True),  # 8 splits in a cluster of 8: they meet in distributed shared memory
    (dict(batch=1, kv_len=8192, head_dim=128), False, True),
    (dict(batch=2, kv_len=8192, head_dim=128), True, False),  # 16 splits: partials, counters, the last CTA's reduce
    (dict(batch=64, kv_len=1024, head_dim=256), False, False),  # one split, persistent CTAs: counter[0], their claims
    (dict(batch=64, kv_len=1024, head_dim=128), False, False),  # one split
])
def test_a_call_declares_split_scratch_only_where_its_splits_meet_in_global_memory(tmp_path, geometry, through_global,
                                                                                    clustered):
    """Found by a review: the clustered seed-sized call declared (and the runner allocated and zeroed) 1 MiB of split
    partials it never touches; a call now declares them only where its splits meet through global memory."""
    g = DecodeGeometry(**geometry) if "heads_q" in geometry else geometry_for(**geometry)
    plan = plan_call(g)
    assert (plan.kernel.cluster_splits > 1) is clustered
    scratch = manifest.load(build_plan(g, plan, tmp_path)).ops["decode"].scratch
    groups = g.batch * g.heads_kv * plan.kernel.row_blocks(g)
    if through_global:
        assert scratch["counter"].shape == (groups,)
        assert scratch["partial_o"].shape == (groups, plan.splits, plan.kernel.max_rows, g.head_dim)
    else:
        assert {n: s.shape for n, s in scratch.items()} == {"counter": (1,), "partial_o": (1,), "partial_ml": (1,)}


@pytest.mark.parametrize(("batch", "kv_len", "heads_kv", "label", "splits"), [
    (16, 2048, 8, "mma w4s3ef", 1),  # 128 units on 132 SMs: one split (2 splits filled the second slot, 5.7 % slower)
    (16, 4096, 8, "mma w4s3", 1),
    (16, 8192, 8, "mma w4s3", 1),
    (32, 4096, 4, "mma w4s3", 1),     # the same 128 units with 4 KV heads
    (14, 4096, 8, "mma w8s2 pp", 1),  # 112 units, under 0.9 of the SMs: one 8-warp CTA per unit (below)
    (8, 8192, 8, "mma w8s2 cl2 pp", 2),  # 64 units: the clustered pair, as before
])
def test_call_plan_takes_one_split_when_the_units_already_take_nearly_every_sm(batch, kv_len, heads_kv, label, splits):
    g = geometry_for(batch, kv_len, head_dim=128, heads_q=4 * heads_kv, heads_kv=heads_kv)
    plan = plan_call(g, sms=132)
    assert (kernel_label(plan.kernel), plan.splits) == (label, splits)
    if label.startswith("mma w4s3"):
        assert plan.ctas_per_sm == 2
        assert plan_call(g, sms=132, splits=2).splits == 2  # a count given stands
    if (batch, kv_len) == (16, 4096):  # pages of 16: 2 stages, 3 CTAs per SM, splits that fill them; of 32: one split
        at = dict(head_dim=128, heads_q=4 * heads_kv, heads_kv=heads_kv)
        assert plan_call(geometry_for(batch, kv_len, page_size=16, **at), sms=132).splits == 3
        assert plan_call(geometry_for(batch, kv_len, page_size=32, **at), sms=132).splits == 1


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "label", "splits"), [
    (2, 8192, {}, "mma w8s2ef pp", 8), (3, 16384, {}, "mma w8s2 pp", 5), (4, 8192, {}, "mma w8s2ef pp", 4),
    (4, 16384, {}, "mma w8s2 pp", 4), (4, 32768, {}, "mma w8s2 pp", 4), (5, 16384, {}, "mma w8s2 pp", 3),
    (4, 4096, {}, "mma w8s2ef cl2 pp", 2),     # units under 8k tokens: clusters of 2 (the 16-56 unit clusters)
    (6, 16384, {}, "mma w8s2 cl2 pp", 2),      # 48 units: 2 splits, in a cluster of 2 (96 CTAs)
    (7, 32768, {}, "mma w8s2 cl2 pp", 2), (7, 4096, {}, "mma w8s2ef cl2 pp", 2),
    (1, 8192, {}, "mma w8s3ef cl8 pp", 8),     # 8 units: their clusters of 8 fit at once
    (4, 16384, dict(page_size=32), "mma w4s3", 8), (4, 16384, dict(max_q_len=2), "mma w4s3", 8),  # not measured
    (4, 16384, dict(stages=3), "mma w4s3", 8), (4, 16384, dict(cluster=False), "mma w4s3", 8),  # the caller's knobs
    (4, 16384, dict(splits=4), "mma w4s3", 4),
])
def test_call_plan_splits_16_to_55_long_units_over_one_8_warp_cta_per_sm(batch, kv_len, knobs, label, splits):
    """Between the clusters of 8 (up to 15 units) and the clustered pair: long units at pages of 64 run one 8-warp CTA
    of 2 stages per SM, 132 // units splits: 3..8 meet in global partials (such clusters would not all fit), 2 in a
    cluster of 2."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len") if k in knobs}
    plan = plan_call(geometry_for(batch, kv_len, head_dim=128, **at), sms=132, **knobs)
    assert (kernel_label(plan.kernel), plan.splits) == (label, splits), describe_plan(plan)
    if label.startswith("mma w8s2"):
        assert (plan.ctas_per_sm, plan.pdl, plan.kernel.cluster_splits) == (1, True, 2 if splits == 2 else 0)
        assert plan.splits * batch * 8 <= 132


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "label", "splits"), [
    (2, 1024, {}, "mma w8s2ef cl4 pp", 4), (3, 4096, {}, "mma w8s2ef cl4 pp", 4),  # 16-24 units: clusters of 4 fit
    (2, 512, {}, "mma w8s2ef cl4 pp", 4), (2, 1024, dict(page_size=32), "mma w8s2ef cl4 pp", 4),
    (4, 1024, {}, "mma w8s2ef cl2 pp", 2), (7, 2048, {}, "mma w8s2ef cl2 pp", 2),  # 32-56: 128+ CTAs in 4s do not
    (4, 1024, dict(cluster_fit={2: 132, 4: 128, 8: 120}), "mma w8s2ef cl4 pp", 4),  # a GPU that holds them: 4
    (4, 1024, dict(cluster=True), "mma w8s2ef cl2 pp", 2),    # a cluster asked for: the same
    (1, 1024, {}, "mma w8s1ef cl8 pp", 8),     # 8 units: clusters of 8 fit
    (8, 512, {}, "mma w4s3ef", 4),             # 64 units under 1k tokens: the clustered pair's range, not measured
    (2, 256, {}, "mma w4s3ef", 4),             # under 512 tokens: not measured
    (2, 8192, {}, "mma w8s2ef pp", 8),         # from 8k tokens: the 16-55 long unit splits
    (2, 1024, dict(page_size=16), "mma w4s2ef wide pp", 16), (2, 1024, dict(max_q_len=2), "mma w4s3ef", 16),
    (2, 1024, dict(stages=3), "mma w4s3ef", 16), (2, 1024, dict(cluster=False), "mma w4s3ef", 16),  # caller's knobs
    (2, 1024, dict(splits=4), "mma w4s3ef", 4),
])
def test_call_plan_runs_16_to_56_shorter_units_in_clusters_of_4_or_2(batch, kv_len, knobs, label, splits):
    """Units too many for clusters of 8 at once, too few for the clustered pair's wave, under 8k tokens: one 8-warp
    2-stage CTA per SM, 4 splits in a cluster of 4 where all such clusters fit, else 2 in a cluster of 2."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len") if k in knobs}
    plan = plan_call(geometry_for(batch, kv_len, head_dim=128, **at), sms=132, **knobs)
    assert (kernel_label(plan.kernel), plan.splits) == (label, splits), describe_plan(plan)
    if " cl" in label:
        assert (plan.ctas_per_sm, plan.pdl, plan.kernel.cluster_splits) == (1, True, splits)
        fit = knobs.get("cluster_fit", {2: 132, 4: 120, 8: 120})
        assert batch * 8 * splits <= fit[splits] and plan.cluster_resident_ctas >= batch * 8 * splits


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "label", "splits"), [
    (9, 8192, {}, "mma w8s2 pp", 1), (12, 1024, {}, "mma w8s2ef pp", 1), (12, 16384, {}, "mma w8s2 pp", 1),
    (10, 32768, {}, "mma w8s2 pp", 1), (14, 2048, {}, "mma w8s2ef pp", 1),  # 72-112 units
    (17, 4096, dict(heads_q=16, heads_kv=4), "mma w8s2ef pp", 1),   # 68 units: more than half the SMs
    (15, 4096, {}, "mma w4s3", 1),             # 120 units: the one-split rule's 4-warp build
    (8, 8192, {}, "mma w8s2 cl2 pp", 2),       # 64 units: the clustered pair's 2 splits fit a wave
    (12, 512, {}, "mma w4s3ef", 2),            # under 1k tokens: not measured
    (12, 8192, dict(page_size=16), "mma w4s2 wide pp", 4),  # pages of 16: one 8-warp CTA per unit ran +6 %
    (12, 8192, dict(page_size=32), "mma w8s2 pp", 1),  # pages of 32: measured -4.2 to -8.1 %
    (12, 8192, dict(max_q_len=2), "mma w4s3", 2),  # not measured
    (12, 8192, dict(stages=3), "mma w4s3", 2), (12, 8192, dict(cluster=False), "mma w4s3", 2),  # the caller's knobs
    (12, 8192, dict(splits=2), "mma w4s3", 2),
])
def test_call_plan_runs_67_to_118_units_as_one_8_warp_cta_per_unit(batch, kv_len, knobs, label, splits):
    """Units that the clustered pair's 2 splits would give more than a wave, yet under 0.9 of the SMs: 2-3 splits of the
    4-warp build at 2 per SM left some SMs two CTAs and some one, so each unit runs as one 8-warp CTA, one per SM."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len", "heads_q", "heads_kv") if k in knobs}
    g = geometry_for(batch, kv_len, head_dim=128, **at)
    plan = plan_call(g, sms=132, **knobs)
    assert (kernel_label(plan.kernel), plan.splits) == (label, splits), describe_plan(plan)
    if label.startswith("mma w8s2") and "cl2" not in label:
        units = batch * g.heads_kv
        assert 66 < units < 0.9 * 132 and (plan.ctas_per_sm, plan.pdl, plan.kernel.cluster_splits) == (1, True, 0)


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "label", "splits", "per_sm"), [
    (18, 2048, {}, "mma w4s1ef", 2, 3), (20, 8192, {}, "mma w4s1", 2, 3),  # 137-198 units: 2 splits fit 3 per SM
    (17, 8192, {}, "mma w4s3 tail/16", 1, 2),     # 4 units past the SMs: their own rule, below
    (24, 32768, {}, "mma w4s1", 2, 3), (24, 2048, {}, "mma w4s1", 2, 3),
    (24, 8192, dict(page_size=32), "mma w4s1", 2, 3),
    (48, 8192, dict(heads_q=16, heads_kv=4), "mma w4s1", 2, 3),  # the same 192 units with 4 KV heads
    (28, 8192, {}, "mma w4s1c1", 2, 4), (29, 32768, {}, "mma w4s1c1", 2, 4),  # 199-237 units: 4 per SM, from 8k
    (28, 4096, {}, "mma w4s3", 1, 2),             # 4 per SM under 8k tokens: 2k ran +1.0 to +2.4 %
    (24, 1024, {}, "mma w4s3ef", 1, 2),           # under 2k tokens: +0.2 to +4.9 %
    (16, 8192, {}, "mma w4s3", 1, 2), (32, 8192, {}, "mma w4s3", 1, 2),  # 128 and 256 units: every SM alike
    (24, 8192, dict(page_size=16), "mma w4s2 wide pp", 1, 3), (24, 8192, dict(max_q_len=2), "mma w4s3", 1, 2),
    (24, 8192, dict(stages=3), "mma w4s3", 1, 2), (24, 8192, dict(cluster=False), "mma w4s3", 1, 2),  # caller's knobs
    (24, 8192, dict(splits=1), "mma w4s3", 1, 2), (24, 8192, dict(qk_chains=2), "mma w4s3", 1, 2),
    (24, 8192, dict(page_prefetch=False), "mma w4s1", 2, 3),  # the loads' knobs change the loads, not the plan
    (24, 8192, dict(persistent=True), "mma w4s3 P", 1, 1),
    (24, 8192, dict(tail_units=8, tail_splits=2), "mma w4s3 tail/2", 1, 2),
    (28, 8192, dict(timeline=True), "mma w4s1c1", 2, 4),  # a timeline build: the plan's, bounded to its CTAs per SM
    (24, 8192, dict(head_dim=256), "mma w8d2s2 wide", 1, 1),  # head_dim 256: the warp pairs
])
def test_call_plan_runs_133_to_237_units_in_2_splits_of_a_one_stage_build(batch, kv_len, knobs, label, splits, per_sm):
    """One CTA per unit at 2 per SM would leave some SMs two and some one: 2 splits of the one-stage build whose one
    wave holds them, the very build the A/B timed (its knobs given to the plan)."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len", "heads_q", "heads_kv", "head_dim") if k in knobs}
    g = geometry_for(batch, kv_len, **{"head_dim": 128, **at})
    plan = plan_call(g, sms=132, **knobs)
    assert (kernel_label(plan.kernel), plan.splits, plan.ctas_per_sm) == (label, splits, per_sm), describe_plan(plan)
    if "timeline" in knobs:
        assert plan.kernel.min_ctas == per_sm and dataclasses.replace(plan.kernel, timeline=False, min_ctas=0) == \
            plan_call(g, sms=132).kernel
    if "w4s1" in label and not knobs:
        timed = dict(stages=1, splits=2, **(dict(qk_chains=1) if per_sm == 4 else {}))
        assert plan == plan_call(g, sms=132, **timed)
        assert 132 < g.batch * g.heads_kv < 0.9 * 2 * 132 and 2 * g.batch * g.heads_kv <= 132 * per_sm
        assert not plan.pdl and plan.kernel.cluster_splits == 0
        # the same units on a GPU of 2 x 0.9 x units SMs or fewer, or on as many SMs as units or more: not this rule
        assert "w4s1" not in kernel_label(plan_call(g, sms=math.floor(g.batch * g.heads_kv / 1.8)).kernel)
        assert "w4s1" not in kernel_label(plan_call(g, sms=g.batch * g.heads_kv).kernel)


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "label", "per_sm"), [
    (34, 2048, {}, "mma w4s1", 3), (37, 4096, {}, "mma w4s1", 3),  # 272-296 units: one wave at 3 per SM, not 1.1 at 2
    (41, 8192, {}, "mma w4s1", 3), (42, 32768, {}, "mma w4s1", 3),  # 64-72 past 264 (TAIL_PAST_WAVE_SHARE's bound)
    (50, 2048, {}, "mma w4s1c1", 4), (56, 32768, {}, "mma w4s1c1", 4),  # 400-448 units: past 396, 4 per SM
    (74, 4096, dict(heads_q=16, heads_kv=4), "mma w4s1", 3),  # the same 296 units with 4 KV heads
    (37, 4096, dict(heads_q=64), "mma w4s1", 3),  # 8 query heads a KV head: the same units
    (33, 8192, {}, "mma w4s3", 2),                # 264 units: one whole wave at 2 per SM
    (43, 8192, {}, "mma w4s1", 3), (57, 8192, {}, "mma w4s1c1", 4),  # filled to 0.85: ONE_STAGE_MIN_FILL's, as before
    (67, 8192, {}, "mma w4s3 tail/16", 2),        # 536 units: no one-stage build holds them in one wave
    (34, 1024, {}, "mma w4s1ef", 3), (56, 1024, {}, "mma w4s1c1", 4),  # from 1k tokens
    (34, 512, {}, "mma w4s3ef", 2),               # under 1k tokens: not measured
    (37, 4096, dict(page_size=32), "mma w4s1", 3), (50, 8192, dict(page_size=32), "mma w4s1c1", 4),  # pages of 32
    (37, 4096, dict(page_size=16), "mma w4s2 wide pp", 3),  # pages of 16: their own ring, 3 per SM
    (37, 4096, dict(max_q_len=2), "mma w4s3", 2), (37, 4096, dict(head_dim=256), "mma w8d2s2 wide", 1),
    (37, 4096, dict(stages=3), "mma w4s3", 2), (37, 4096, dict(qk_chains=2), "mma w4s3", 2),  # the caller's knobs
    (37, 4096, dict(splits=1), "mma w4s3", 2), (37, 4096, dict(cluster=False), "mma w4s3", 2),
    (37, 4096, dict(persistent=True), "mma w4s3 P", 1),
    (37, 4096, dict(tail_units=8, tail_splits=16), "mma w4s3 tail/16", 2),
    (37, 4096, dict(page_prefetch=False), "mma w4s1", 3),  # the loads' knobs change the loads, not the plan
    (50, 8192, dict(timeline=True), "mma w4s1c1", 4),  # a timeline build: the plan's, bounded to its CTAs per SM
])
def test_call_plan_holds_265_to_528_units_in_one_wave_of_a_one_stage_build(batch, kv_len, knobs, label, per_sm):
    """More units than a wave of the pipelined build at 2 per SM holds: not a second, part-filled wave of it but the
    one-stage build whose one wave holds them, 3 per SM first, the very build the A/B timed (its knobs given)."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len", "heads_q", "heads_kv", "head_dim") if k in knobs}
    g = geometry_for(batch, kv_len, **{"head_dim": 128, **at})
    plan = plan_call(g, sms=132, **knobs)
    assert (kernel_label(plan.kernel), plan.splits, plan.ctas_per_sm) == (label, 1, per_sm), describe_plan(plan)
    if "timeline" in knobs:
        assert plan.kernel.min_ctas == per_sm and dataclasses.replace(plan.kernel, timeline=False, min_ctas=0) == \
            plan_call(g, sms=132).kernel
    units = g.batch * g.heads_kv
    if "w4s1" in label and not knobs and units < 0.85 * 132 * per_sm:
        timed = dict(stages=1, splits=1, **(dict(qk_chains=1) if per_sm == 4 else {}))
        assert plan == plan_call(g, sms=132, **timed)
        assert 2 * 132 < units <= 132 * per_sm and not plan.pdl and plan.kernel.cluster_splits == 0
        # the same units where a wave at 2 per SM holds them, or no one-stage wave does: not this rule
        assert "w4s1" not in kernel_label(plan_call(g, sms=math.ceil(units / 2)).kernel)
        assert "w4s1" not in kernel_label(plan_call(g, sms=math.ceil(units / 4) - 1).kernel)


def _case_plan(batch: int, kv_len: int, knobs: dict):
    """A tail test case's plan: its geometry and ``sms`` taken out of ``knobs`` (what is left are plan_call's knobs);
    returns the geometry, the SM count, the plan and its tail (units, splits), None without one."""
    at = {k: knobs.pop(k) for k in ("page_size", "max_q_len", "heads_q", "heads_kv", "head_dim") if k in knobs}
    sms = knobs.pop("sms", 132)
    g = geometry_for(batch, kv_len, **{"head_dim": 128, **at})
    plan = plan_call(g, sms=sms, **knobs)
    return g, sms, plan, ((plan.tail_units, plan.kernel.tail_splits) if plan.tail_units else None)


def _check_planned_tail(g, plan, kv_len: int, sms: int, knobs: dict, tail, slots: int):
    """The CTA model counts the CTAs the tailed call launches; the plan's own tail (no knobs, or a timeline) is the
    very build the A/B timed, the units past ``slots`` in min(16, slots // them) splits. Returns the CTA model."""
    from labkit.sched.measure import _launch_model

    units = g.batch * g.heads_kv * plan.kernel.row_blocks(g)
    model = _launch_model(g, plan, kv_len, sms=sms)
    assert model.ctas == units - tail[0] + tail[0] * tail[1]
    if not knobs or "timeline" in knobs:
        timed = plan_call(g, sms=sms, stages=3, splits=1, tail_units=tail[0], tail_splits=tail[1],
                          timeline="timeline" in knobs)
        assert plan == timed and kernel_label(plan.kernel).startswith("mma w4s3")
        assert units % slots == tail[0] and tail[1] == min(16, slots // tail[0])
    return model


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "tail"), [
    (67, 8192, {}, (8, 16)), (72, 8192, {}, (48, 5)),  # 536 and 576 units: 2 whole waves of 264 slots, then the rest
    (76, 8192, {}, (80, 3)), (80, 8192, {}, (112, 2)), (76, 2048, {}, (80, 3)), (76, 32768, {}, (80, 3)),
    (100, 8192, {}, (8, 16)), (104, 4096, {}, (40, 6)), (110, 16384, {}, (88, 3)),  # 3 whole waves, then the rest
    (200, 8192, {}, (16, 16)),                                      # 1600 units: 6 whole waves
    (152, 8192, dict(heads_q=16, heads_kv=4), (80, 3)),              # the same 608 units with 4 KV heads
    (76, 8192, dict(heads_q=64), (80, 3)), (76, 8192, dict(page_size=32), (80, 3)),
    (76, 8192, dict(sms=100), (8, 16)),                              # 608 units on 200 slots: 3 waves and 8
    (76, 8192, dict(timeline=True), (80, 3)),                        # a timeline shows the call as it runs
    (84, 8192, {}, None),                                            # 144 left: more than half a wave's slots
    (66, 8192, {}, None), (132, 8192, {}, None), (96, 8192, {}, None),  # one-stage builds that fill their waves
    (76, 1024, {}, None),                                            # under 2k tokens: not measured
    (76, 8192, dict(page_size=16), None), (76, 8192, dict(max_q_len=2), None), (76, 8192, dict(head_dim=256), None),
    (76, 8192, dict(stages=3), None), (76, 8192, dict(splits=1), None), (76, 8192, dict(cluster=False), None),
    (76, 8192, dict(tail_units=8, tail_splits=16), (8, 16)),         # the caller's tail stands
    (76, 8192, dict(page_prefetch=True), (80, 3)),                   # the loads' knobs change the loads, not the plan
])
def test_call_plan_splits_the_units_of_a_part_filled_last_wave_across_a_waves_slots(batch, kv_len, knobs, tail):
    """A one-split call whose units take more than a wave of its CTAs: the units past the last whole wave run in as
    many splits as a wave's slots take (up to 16), the very build the A/B timed (its knobs given); and the CTA model
    counts the CTAs the call launches."""
    from labkit.sched import decode_launch

    g, sms, plan, got = _case_plan(batch, kv_len, knobs)
    assert got == tail, describe_plan(plan)
    if tail is None:
        return
    assert plan.splits == 1 and g.batch * g.heads_kv * plan.kernel.row_blocks(g) > sms * plan.ctas_per_sm
    model = _check_planned_tail(g, plan, kv_len, sms, knobs, tail, slots=sms * plan.ctas_per_sm)
    untailed = decode_launch(batch, kv_len, 1, heads_kv=g.heads_kv, sms=sms, ctas_per_sm=plan.ctas_per_sm,
                             tokens_per_stage=plan.kernel.tokens_per_stage)
    assert "tail_units" in knobs or model.wave_efficiency > untailed.wave_efficiency


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "tail"), [
    (17, 2048, {}, (4, 16)), (17, 8192, {}, (4, 16)), (17, 32768, {}, (4, 16)),  # 136 units: 4 past 132 SMs
    (34, 8192, dict(heads_q=16, heads_kv=4), (4, 16)),               # the same 136 units with 4 KV heads
    (17, 8192, dict(page_size=32), (4, 16)), (17, 8192, dict(heads_q=64), (4, 16)),
    (17, 8192, dict(sms=134), (2, 16)), (17, 8192, dict(sms=128), None),  # 2 past 134 SMs; 8 past 128: a 16th
    (17, 8192, dict(timeline=True), (4, 16)),                        # a timeline shows the call as it runs
    (18, 8192, {}, None), (20, 8192, {}, None),                      # 12 and 28 past: the 2 splits of 133-237 units
    (16, 8192, {}, None),                                            # 128 units: none past
    (17, 1024, {}, None),                                            # under 2k tokens: not measured
    (17, 8192, dict(page_size=16), None), (17, 8192, dict(max_q_len=2), None), (17, 8192, dict(head_dim=256), None),
    (17, 8192, dict(stages=3), None), (17, 8192, dict(splits=1), None), (17, 8192, dict(cluster=False), None),
    (17, 8192, dict(tail_units=2, tail_splits=8), (2, 8)),           # the caller's tail stands
])
def test_call_plan_splits_the_few_units_past_one_cta_per_sm_across_the_sms(batch, kv_len, knobs, tail):
    """A one-split call with at most a 32nd of the SMs in units past one pipelined CTA per SM: those units run in as
    many splits as the SMs' second slots take (up to 16), the very build the A/B timed, not the 133-237 unit rule's 2
    splits of a one-stage build; and the CTA model counts the CTAs the call launches."""
    g, sms, plan, got = _case_plan(batch, kv_len, knobs)
    assert got == tail, describe_plan(plan)
    if tail is None:
        return
    units = g.batch * g.heads_kv
    assert plan.splits == 1 and plan.ctas_per_sm == 2 and sms < units <= sms * 2
    _check_planned_tail(g, plan, kv_len, sms, knobs, tail, slots=sms)


@pytest.mark.parametrize(("batch", "kv_len", "knobs", "tail"), [
    (34, 8192, {}, (8, 16)), (34, 32768, {}, (8, 16)), (35, 8192, {}, (16, 16)),  # 272-280 units: 8-16 past 264 slots
    (36, 16384, {}, (24, 11)), (37, 8192, {}, (32, 8)), (39, 8192, {}, (48, 5)),  # up to 7/16 of the SMs past
    (68, 8192, dict(heads_q=16, heads_kv=4), (8, 16)),               # the same 272 units with 4 KV heads
    (34, 8192, dict(heads_q=64), (8, 16)), (34, 8192, dict(page_size=32), (8, 16)),
    (34, 8192, dict(sms=134), (4, 16)),                              # 272 units on 268 slots: 4 past
    (34, 8192, dict(sms=100), None),                                 # 72 past 200 slots: the one-wave rule's build
    (34, 8192, dict(timeline=True), (8, 16)),                        # a timeline shows the call as it runs
    (40, 8192, {}, (56, 4)), (40, 32768, {}, (56, 4)),               # up to 7/16 of the SMs past, from 8k tokens
    (41, 8192, {}, None), (33, 8192, {}, None),                      # 64 past: the one-wave rule; 264: none past
    (34, 4096, {}, (8, 16)), (36, 4096, {}, (24, 11)), (34, 6144, {}, (8, 16)),  # from 4k tokens, up to 3/16
    (37, 4096, {}, None), (38, 6144, {}, None),                      # 32-40 past under 8k: the one-wave rule
    (34, 2048, {}, None), (34, 4032, {}, None),                      # under 4k tokens: the one-wave rule
    (34, 4096, dict(sms=134), (4, 16)),                              # 4 past 268 slots, from 4k tokens
    (34, 8192, dict(page_size=16), None), (34, 8192, dict(max_q_len=2), None), (34, 8192, dict(head_dim=256), None),
    (34, 8192, dict(stages=3), None), (34, 8192, dict(splits=1), None), (34, 8192, dict(cluster=False), None),
    (34, 8192, dict(tail_units=4, tail_splits=8), (4, 8)),           # the caller's tail stands
])
def test_call_plan_runs_the_few_units_past_a_pipelined_wave_in_tail_splits(batch, kv_len, knobs, tail):
    """A one-split call with at most 7/16 of the SMs in units past two pipelined CTAs per SM from 8k tokens, 3/16 from
    4k: that build with those units in the tail-wave rule's splits, the very build the A/B timed, not the one-wave
    rule's one-stage build at 3 per SM; and the CTA model counts the CTAs the call launches."""
    g, sms, plan, got = _case_plan(batch, kv_len, knobs)
    assert got == tail, describe_plan(plan)
    units = g.batch * g.heads_kv
    if tail is None:
        if not knobs and g.page_size == 64 and g.max_q_len == 1 and g.head_dim == 128 and units > 2 * sms:
            assert (kernel_label(plan.kernel), plan.ctas_per_sm) == ("mma w4s1", 3), describe_plan(plan)
        return
    share = 7 / 16 if kv_len >= 8192 else 3 / 16
    assert plan.splits == 1 and plan.ctas_per_sm == 2 and 2 * sms < units <= 2 * sms + share * sms
    _check_planned_tail(g, plan, kv_len, sms, knobs, tail, slots=2 * sms)


def test_tail_past_wave_shares_grow_with_tokens():
    """plan_call takes the largest share whose token bound a call reaches: that is the longest bound's share only while
    longer calls get larger shares, as measured (longer units leave a tail more time to hide in)."""
    from labkit.workloads.decode.plan import TAIL_PAST_WAVE_SHARE

    shares = [TAIL_PAST_WAVE_SHARE[t] for t in sorted(TAIL_PAST_WAVE_SHARE)]
    assert shares == sorted(shares) and all(0 < s < 1 / 2 for s in shares)  # under 1/2: slots // past >= 2 splits


@pytest.mark.parametrize(("batch", "kv_len", "page_size", "label", "splits"), [
    # pages of 16: the long batch-1 calls in 16 splits of 4-warp CTAs (not clusters of 8), every build with wide boxes
    # and page ids ahead, but the short one-stage cluster of 8 as at pages of 64; the 4-warp pipelined build rings 2
    # stages at 3 CTAs per SM where its CTAs then fit one wave and outnumber the SMs, else 3 (64 x 1k: 512 CTAs; batch
    # 1: 128); the one-stage build, bounded to the 4 CTAs per SM it holds at pages of 64, where it fills them as there
    (1, 4096, 16, "mma w4s3ef wide pp", 16), (1, 8192, 16, "mma w4s3ef wide pp", 16),
    (1, 32768, 16, "mma w4s3ef wide pp", 16), (1, 1024, 16, "mma w8s1ef cl8 pp", 8),
    (2, 8192, 16, "mma w4s2ef wide pp", 16),
    (8, 8192, 16, "mma w8s2 cl2 wide pp", 2), (64, 1024, 16, "mma w4s1c1 wide pp", 1),
    (256, 1024, 16, "mma w4s1c1 wide pp", 1), (64, 8192, 16, "mma w4s1c1 wide pp", 1),
    (16, 4096, 16, "mma w4s2 wide pp", 3),
    (32, 4096, 16, "mma w4s2 wide pp", 1), (4, 16384, 16, "mma w4s2 wide pp", 12),
    # pages of 32: the long clusters of 8 with wide boxes; the rest with 4-D loads
    (1, 8192, 32, "mma w8s3ef cl8 wide pp", 8), (1, 32768, 32, "mma w8s3ef cl8 wide pp", 8),
    (1, 1024, 32, "mma w8s1ef cl8 pp", 8), (8, 8192, 32, "mma w8s2 cl2 pp", 2), (16, 4096, 32, "mma w4s3", 1),
    # pages of 64: as before
    (1, 8192, 64, "mma w8s3ef cl8 pp", 8), (8, 8192, 64, "mma w8s2 cl2 pp", 2), (64, 1024, 64, "mma w4s1c1", 1),
])
def test_call_plan_at_pages_of_16_and_32_takes_what_was_measured_faster_there(batch, kv_len, page_size, label, splits):
    plan = plan_call(geometry_for(batch, kv_len, head_dim=128, page_size=page_size), sms=132)
    assert (kernel_label(plan.kernel), plan.splits) == (label, splits), describe_plan(plan)
    if "w4s1" in label:  # at every page size 4 CTAs per SM: at pages of 16 by __launch_bounds__
        assert (plan.ctas_per_sm, plan.kernel.min_ctas) == (4, 4 if page_size == 16 else 0)


def test_the_bound_at_pages_of_16_gives_the_one_stage_build_its_page_64_ctas_per_sm_and_nothing_else():
    """Pages of 16 cost the 4-warp one-stage build registers (162 against 128): bounded, it holds the 4 CTAs per SM it
    holds at pages of 64. Builds that shared memory or one CTA per SM limit, and other page sizes, stay unbounded."""
    g16, g64 = (geometry_for(256, 1024, head_dim=128, page_size=p) for p in (16, 64))
    one = kernel_build(g16, variant="mma", stages=1, qk_chains=1)
    assert (occupancy(one), occupancy(kernel_build(g64, variant="mma", stages=1, qk_chains=1))) == (3, 4)
    bounded = short_page_bound(g16, one, occupancy)
    assert (bounded.min_ctas, occupancy(bounded)) == (4, 4)
    assert dataclasses.replace(bounded, min_ctas=0) == one
    for kb in (kernel_build(g16, variant="mma", stages=3), kernel_build(g16, variant="mma", stages=2),
               kernel_build(g16, variant="mma", warps=8, stages=1), kernel_build(g64, variant="mma", stages=1)):
        assert short_page_bound(g16 if kb.page_size == 16 else g64, kb, occupancy) == kb


def test_persistent_ctas_at_pages_of_16_drop_the_per_unit_bound():
    """The persistent knob rebuilds the plan's bounded one-stage build at pages of 16 as persistent CTAs, which shared
    memory holds to 3 per SM: they drop the per-unit CTA's ``min_ctas``, which would only spill registers there."""
    g = geometry_for(256, 1024, head_dim=128, page_size=16)
    assert plan_call(g).kernel.min_ctas == 4
    plan = plan_call(g, persistent=True)
    assert plan.kernel.persistent_ctas and plan.kernel.min_ctas == 0
    assert plan.ctas_per_sm == occupancy(dataclasses.replace(plan.kernel, persistent_ctas=1)) == 3
    assert plan.kernel.persistent_ctas == 132 * 3


@pytest.mark.parametrize("page_size", [16, 32])
@pytest.mark.parametrize("knobs", [dict(warps=8, dim_warps=2, stages=s) for s in (1, 2, 3)]
                         + [dict(warps=8, dim_warps=2, stages=2, cluster=True)])
def test_the_loads_default_never_picks_what_the_build_refuses(page_size, knobs):
    """Warp pairs at head_dim 128 over pages shorter than a stage cannot take wide boxes: the plan's default leaves them
    off there rather than refusing a build the caller may ask for (the GPU tests' pair builds over pages of 16)."""
    g = DecodeGeometry(4, 4, 4, 128, page_size, 12, 60)
    plan = plan_call(g, splits=2 if knobs.get("cluster") else None, **knobs)
    assert plan.kernel.dim_warps == 2 and not plan.kernel.wide_boxes


def test_the_pool_limit_counts_both_halves_of_the_interleaved_buffer():
    """K and V of the seed's layout live in one buffer: a pool whose K alone is at a manifest buffer's limit fits as two
    plain buffers but not as one interleaved one (a test audit: counting it as one buffer let a 2 TB buffer through)."""
    from labkit.workloads.decode.geometry import MAX_POOL_BYTES

    pages = MAX_POOL_BYTES // (8 * 64 * 128 * 2)  # 8 KV heads x 64 tokens x d128, bf16: K alone at the limit
    DecodeGeometry(1, 32, 8, 128, 64, 1, pages)
    with pytest.raises(ArgumentError, match=f"a pool of {pages} pages is a 2.2 TB buffer; at most 1.1 TB"):
        DecodeGeometry(1, 32, 8, 128, 64, 1, pages, layout="interleaved")


def test_clusters_of_8_that_fill_just_half_of_what_the_gpu_holds_are_left_out():
    """1 x 8k d128 is 8 units: 8 x 8 = 64 CTAs in clusters of 8. The H200 holds 120 such CTAs at once, and 64 is more
    than half of them (2 x 64 = 128 > 120): a cluster of 8 (above). A GPU that holds 128 would be exactly half full
    (2 x 64 = 128, not more): no cluster, the 4-warp build's 16 splits at 2 per SM."""
    g = geometry_for(1, 8192, head_dim=128)
    assert kernel_label(plan_call(g, sms=132).kernel) == "mma w8s3ef cl8 pp"
    plan = plan_call(g, sms=132, cluster_fit={2: 132, 4: 128, 8: 128})
    assert (kernel_label(plan.kernel), plan.splits, plan.ctas_per_sm) == ("mma w4s3ef", 16, 2), describe_plan(plan)


def test_a_one_stage_wave_that_holds_the_two_splits_exactly_takes_them():
    """24 x 8k: 24 x 8 = 192 units, 2 x 192 = 384 CTAs in 2 splits. On 132 SMs the one-stage build at 3 per SM holds
    them in one wave of 396 slots (above); on 128 SMs its wave is 128 x 3 = 384 slots: exactly full, still one wave."""
    g = geometry_for(24, 8192, head_dim=128)
    plan = plan_call(g, sms=128)
    assert (kernel_label(plan.kernel), plan.splits, plan.ctas_per_sm) == ("mma w4s1", 2, 3), describe_plan(plan)


def test_a_clustered_pair_of_splits_is_said_in_the_plans_line():
    """8 x 8k d128: 8 x 8 = 64 units, each 2 splits of one 8-warp CTA per SM combined in a cluster of 2 (the smallest
    cluster the plan takes): the line says so, as it does for clusters of 8."""
    plan = plan_call(geometry_for(8, 8192, head_dim=128), sms=132)
    assert (plan.splits, plan.kernel.cluster_splits) == (2, 2)
    assert "1 CTA per SM, splits combined in a cluster of 2, " in describe_plan(plan), describe_plan(plan)


def test_leaving_clusters_off_keeps_the_short_page_ring():
    """``cluster=False`` is no build knob: at pages of 16 the plan's own ring stands, as without the knob (24 x 8k:
    1 split of the 2-stage build at 3 per SM, above)."""
    plan = plan_call(geometry_for(24, 8192, head_dim=128, page_size=16), sms=132, cluster=False)
    assert (kernel_label(plan.kernel), plan.splits, plan.ctas_per_sm) == ("mma w4s2 wide pp", 1, 3), describe_plan(plan)


def test_a_call_whose_arrays_do_not_have_the_geometrys_shape_is_refused_naming_both_shapes():
    """A table with fewer columns than max_pages would be sliced short and pass the page checks, and a seq_lens of
    another batch would be read past its end by the kernel: check_call names the shape it got and the one expected."""
    g = DecodeGeometry(**SEED_LIKE)
    x = make_inputs(g, seq_lens=[704, 65], seed=1)
    with pytest.raises(ArgumentError, match=r"^page_table shape \[2, 10\]: expected \[2, 11\]$"):
        check_call(g, x.page_table[:, :10], x.seq_lens, x.cu_seqlens_q)
    with pytest.raises(ArgumentError, match=r"^seq_lens shape \[1\] / cu_seqlens_q shape \[3\]: expected "
                                            r"\[2\] / \[3\]$"):
        check_call(g, x.page_table, x.seq_lens[:1], x.cu_seqlens_q)
    with pytest.raises(ArgumentError, match=r"^seq_lens shape \[2\] / cu_seqlens_q shape \[2\]: expected "
                                            r"\[2\] / \[3\]$"):
        check_call(g, x.page_table, x.seq_lens, x.cu_seqlens_q[:2])


@pytest.mark.parametrize("change, message", [
    (lambda d: d["programs"]["decode"]["calls"][0]["args"].__setitem__(2, {"var": "seqs"}),
     "the first call does not bind out, q, K, V, table, seq, cu_seqlens_q buffers"),
    (lambda d: d["programs"]["decode"]["calls"][0].update(args=d["programs"]["decode"]["calls"][0]["args"][:6]),
     "the first call does not bind out, q, K, V, table, seq, cu_seqlens_q buffers"),
    (lambda d: d["buffers"]["out"].update(shape=[64, 24, 128]),
     "q [64, 24, 256] and out [64, 24, 128] must both be [tokens, heads, dim]"),
    (lambda d: (d["buffers"]["q"].update(shape=[64, 6144]), d["buffers"]["out"].update(shape=[64, 6144])),
     "q [64, 6144] and out [64, 6144] must both be [tokens, heads, dim]"),
    (lambda d: d["buffers"]["kv"].update(shape=[22, 3, 64, 4, 2, 256]),
     "expected K and V as views of one interleaved kv[pages, 2, P, Hkv, 2, D] buffer (got kv [22, 3, 64, 4, 2, 256], "
     "kv [22, 3, 64, 4, 2, 256])"),
    (lambda d: d["buffers"]["seq"].update(shape=[3]),  # one length too many: the pool and cu_seqlens_q agree
     "pool head_dim 256, seq [3], cu_seqlens_q [3] do not match q's head_dim 256 and batch 2"),
    # the geometry's refusal names the buffers it came from, and no "(from )" where it names no field
    (lambda d: (d["buffers"]["q"].update(shape=[64, 25, 256]), d["buffers"]["out"].update(shape=[64, 25, 256])),
     "decode geometry: heads_q 25 is not a multiple of heads_kv 4 (from buffers.q.shape[1], buffers.kv.shape[3])"),
    (lambda d: (d["buffers"]["q"].update(shape=[64, 68, 256]), d["buffers"]["out"].update(shape=[64, 68, 256])),
     "decode geometry: 17 query heads per KV head: expected 1..16"),
])
def test_from_manifest_refuses_a_call_that_is_not_trtllm_gens_decode_signature(change, message, tmp_path, capsys):
    """A first call that binds a scalar or too few buffers, or q and out that are not both [tokens, heads, dim], is one
    line naming what was expected, and nothing is written."""
    from labkit import cli

    doc = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
    change(doc)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert cli.main(["decode", "from-manifest", str(tmp_path / "m.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(f"m.json: {message}"), err
    assert not (tmp_path / "out").exists()


def test_from_manifest_builds_labkits_call_for_one_query_token(tmp_path):
    """The notes say labkit's call is built for 1 query token per sequence: the manifest's name and its packed
    max_q_len say the same."""
    from labkit.workloads.decode.build import MAX_Q_LEN_AT
    from labkit.workloads.decode.from_manifest import from_manifest

    path, _ = from_manifest(manifest.load(ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"), tmp_path)
    assert path.name == "decode_b2_h24-4_d256_p64x11_q1_interleaved_s8.json"
    fields = json.loads(path.read_text())["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]
    assert [f["i32"] for f in fields if f["at"] == MAX_Q_LEN_AT] == [1]


def test_decode_build_sizes_the_pool_at_every_sequences_pages_unless_told(tmp_path, capsys):
    """--pool-pages defaults to batch x pages per sequence (each sequence its own pages); given, it is the pool."""
    from labkit import cli

    args = ["decode", "build", "--batch", "3", "--kv-len", "1000"]  # 16 pages of 64 per sequence
    assert cli.main([*args, "--out", str(tmp_path / "own")]) == 0
    assert manifest.load(next((tmp_path / "own").glob("decode_*.json"))).buffers["k_pool"].shape == (48, 8, 64, 128)
    assert cli.main([*args, "--pool-pages", "20", "--out", str(tmp_path / "small")]) == 0
    assert manifest.load(next((tmp_path / "small").glob("decode_*.json"))).buffers["v_pool"].shape == (20, 8, 64, 128)
    capsys.readouterr()


def test_split_sweep_times_the_plan_at_its_own_count_and_each_other_count_as_given(monkeypatch):
    """At 8 x 8k d128 the plan runs 2 splits (in a cluster): the sweep's row at 2 is the plan's own call (splits None),
    every other power of two is timed at that count, and only the plan's row is marked."""
    from labkit.workloads.decode import bench

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)
    asked = []
    monkeypatch.setattr(bench, "bench_point", lambda b, n, d, *, splits=None, **kw: asked.append(splits) or {})
    rows = bench.split_sweep(8, 8192)
    assert asked == [1, None, 4, 8, 16, 32, 64, 128]
    assert [r["heuristic"] for r in rows] == [False, True, False, False, False, False, False, False]


def test_tail_candidates_stop_at_the_most_splits_a_tail_takes():
    """A tail takes at most TAIL_MAX_SPLITS (16) splits, whatever the pages allow: at 8 splits of a 128-page call only
    the 2x tail is a candidate (plan_call would refuse the 4x one, 32, and the sweep with it)."""
    from labkit.workloads.decode.bench import tail_candidates
    from labkit.workloads.decode.knobs import TAIL_MAX_SPLITS

    g = geometry_for(8, 8192, head_dim=128)  # 64 units, 128 pages
    eight = plan_call(g, sms=132, splits=8, cluster=False)
    assert TAIL_MAX_SPLITS == 16 and eight.splits == 8
    assert tail_candidates(g, eight, 132) == [(16, 16), (32, 16)]


def test_a_tail_sweep_of_a_clustered_plan_is_refused_naming_its_build(monkeypatch):
    """Tails split single units further; a plan whose splits meet in a cluster has none to give: one line naming the
    call and the plan's build, before anything is built or timed."""
    from labkit.workloads.decode import bench

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)
    monkeypatch.setattr(bench, "time_builds", lambda *a, **k: pytest.fail("a tail sweep of a clustered plan was timed"))
    with pytest.raises(ArgumentError, match=r"^tail sweep at batch 8 x 8192 d128: the plan runs mma w8s2 cl2 pp; tails "
                                            r"take tensor-core builds without clusters$"):
        bench.tail_sweep(8, 8192, 128, iterations=1)


def test_a_tail_variant_that_changes_a_unit_before_its_tail_is_refused_before_timing(monkeypatch):
    """Only a tail's own split reduction may round otherwise: a variant must give the plan's output bit for bit in the
    units before its tail. One such element off by 2^-12 (well within the tail's tolerance) is the finding, named,
    and nothing is timed."""
    from labkit.workloads.decode import bench

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)
    ref = np.random.default_rng(0).standard_normal((128, 4, 128)).astype(np.float32)  # 16 x 8 units of 4 q heads
    ref[0, 0, 0] = 1.0

    def fake_time_builds(b, n, d, knobs, shape, iterations, check, *, what, mode="cold"):
        outs = {name: ref.copy() for name in knobs}
        outs[list(knobs)[1]][0, 0, 0] += 2.0 ** -12  # the first unit: before any tail
        check(outs)
        raise StopIteration  # nothing to time on a CPU

    monkeypatch.setattr(bench, "time_builds", fake_time_builds)
    with pytest.raises(AssertionError, match=r"^tail sweep: tail \d+/\d+ does not give the plan's output \(max "
                                             r"difference 0\.000244\)$"):
        bench.tail_sweep(16, 4096, 128, iterations=1)


def test_a_tail_sweep_asked_for_timelines_records_the_plans_and_the_fastest_variants(monkeypatch):
    """--sweep-tails keeps one cold call's per-CTA timeline of the plan and of the fastest variant, each recorded with
    its own knobs; without timelines asked for, none is recorded."""
    from types import SimpleNamespace

    from labkit.workloads.decode import bench, run

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)

    def fake_time_builds(b, n, d, knobs, shape, iterations, check, *, what, mode="cold"):
        g = geometry_for(b, n, head_dim=d, **shape)
        return ({name: plan_call(g, sms=132, **kw) for name, kw in knobs.items()},  # the last variant the fastest
                {name: SimpleNamespace(stats=SimpleNamespace(p50_s=(50 - i) * 1e-6)) for i, name in enumerate(knobs)},
                {})

    recorded = []
    monkeypatch.setattr(bench, "time_builds", fake_time_builds)
    monkeypatch.setattr(run, "decode_timeline", lambda b, n, d, *, cold, **kw: recorded.append(kw) or len(recorded))
    assert bench.tail_sweep(16, 4096, 128, iterations=1).timelines == {} and recorded == []
    sweep = bench.tail_sweep(16, 4096, 128, iterations=1, timelines=True)
    fastest = sweep.rows[-1]
    assert list(sweep.timelines) == ["plan", f"tail {fastest['kernel'].split('(')[1].split()[0]}/"
                                     f"{recorded[1]['tail_splits']}"] and list(sweep.timelines.values()) == [1, 2]
    assert recorded[0] == {"heads_q": 32, "heads_kv": 8, "page_size": 64, "persistent": False}


def test_the_kv_maps_read_the_pool_at_the_strides_and_offsets_of_its_layout():
    """The K/V tensor maps a manifest packs address the pool's bytes: plain pools [pages, Hkv, P, D] with rows D, pages
    P x D and heads Hkv x P x D elements apart, and the seed's interleaved kv buffer at the seed's own offsets and
    strides (K = kv[:, 1, :, :, 0], V 512 B on): a wrong stride reads other tokens, which only a GPU run would show."""
    from labkit.workloads.decode import manifest_dict

    seed = json.loads((ROOT / "data" / "trtllm_gen_decode_manifest_v4.json").read_text())
    seed_maps = {f["at"]: f.get("tensormap") for f in seed["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"][
        "fields"]}

    def maps(g):
        m = manifest_dict(g, 1, "decode.cubin", "0" * 64)
        fields = {f["at"]: f for f in m["ops"]["decode"]["impl"]["launches"][0]["args"][0]["pack"]["fields"]}
        return [fields[at]["tensormap"] for at in (0, 128)], m["programs"]["decode"]["calls"][0]["args"][2:4]

    (k, v), args = maps(DecodeGeometry(2, 32, 8, 128, 64, 16, 40))
    assert args == [{"buf": "k_pool"}, {"buf": "v_pool"}]
    assert k["dims"] == v["dims"] == [128, 64, 8, 40] and k["strides"] == v["strides"] == [256, 64 * 256, 8 * 64 * 256]
    (k, v), args = maps(DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"))
    assert args == seed["programs"]["decode"]["calls"][0]["args"][2:4] == [{"buf": "kv", "offset": 262144},
                                                                            {"buf": "kv", "offset": 262656}]
    assert k["strides"] == v["strides"] == seed_maps[128]["strides"] == seed_maps[384]["strides"]
    assert k["strides"] == [4096, 1024, 524288]
    assert k["dims"] == [256, 64, 4, 22]  # the pool's real 22 pages (the seed's maps say 0)


def test_the_timeline_scratch_holds_a_record_for_every_cta_of_a_row_blocked_grid():
    """Each CTA writes its 6 u64 timeline words: with 4 row blocks per KV head the grid is splits x (Hkv x 4) x batch
    CTAs, and a scratch sized for fewer would be written past its end."""
    from labkit.workloads.decode import manifest_dict

    g = DecodeGeometry(2, 32, 2, 256, 32, 9, 30, 8)  # 128 rows of 32 for the CUDA-core build: 4 row blocks
    kb = kernel_build(g, timeline=True)
    assert kb.row_blocks(g) == 4
    impl = manifest_dict(g, 2, "decode.cubin", "0" * 64, kernel=kb)["ops"]["decode"]["impl"]
    assert impl["launches"][0]["grid"] == [2, 2 * 4, "seqs"]
    assert impl["scratch"]["timeline"] == {"dtype": "u64", "shape": [2 * 2 * 4 * 2, 6]}


@pytest.mark.parametrize("change, kwargs, message", [
    ({"persistent_ctas": 264}, {"splits": 2}, "a persistent build takes whole units: 1 split, not 2"),
    ({}, {"splits": 1, "tail_units": 5}, "tail_units 5: this build has no tail splits (KernelBuild.tail_splits)"),
    ({}, {"splits": 1, "q_rows": 1}, "q_rows 1: expected an integer >= 2 (batch x max_q_len)"),
    ({}, {"splits": 1, "q_rows": True}, "q_rows True: expected an integer >= 2 (batch x max_q_len)"),
])
def test_a_manifest_that_its_launch_would_get_wrong_is_refused_naming_the_value(change, kwargs, message):
    """manifest_dict by hand (not through a plan): persistent CTAs given splits, tail units for a build without tail
    splits, or q and out buffers of fewer rows than the call writes would launch a grid or write rows the build does
    not mean; each is one line naming the value."""
    from labkit.workloads.decode import manifest_dict

    g = DecodeGeometry(2, 32, 8, 128, 64, 16, 40)
    kb = dataclasses.replace(kernel_build(g), **change)
    with pytest.raises(ArgumentError) as err:
        manifest_dict(g, cubin_name="decode.cubin", sha256="0" * 64, kernel=kb, **kwargs)
    assert str(err.value) == message


def test_a_tail_variant_is_held_to_the_tolerance_inside_the_plans_own_tail(monkeypatch):
    """At 76 x 8k the plan splits its own last 80 units in 3: a variant with a shorter tail (8 units in 16 splits) runs
    those units in other splits than the plan, so there it may round otherwise; only the units before both tails are
    held to the plan's bits."""
    from labkit.workloads.decode import bench
    from labkit.workloads.decode.plan import plan_for_device

    from .test_sched_points import _fake_device

    _fake_device(monkeypatch)
    assert plan_for_device(geometry_for(76, 8192), persistent=False).tail_units == 80
    ref = np.random.default_rng(0).standard_normal((608, 4, 128)).astype(np.float32)  # 76 x 8 units of 4 q heads
    ref[528, 0, 0] = 1.0
    checked = []

    def fake_time_builds(b, n, d, knobs, shape, iterations, check, *, what, mode="cold"):
        outs = {name: ref.copy() for name in knobs}
        outs["tail 8/16"][528, 0, 0] += 2.0 ** -12  # the first unit of the plan's tail, before the variant's
        check(outs)
        checked.append(list(knobs))
        raise StopIteration  # nothing to time on a CPU

    monkeypatch.setattr(bench, "time_builds", fake_time_builds)
    with pytest.raises(StopIteration):
        bench.tail_sweep(76, 8192, 128, iterations=1, candidates=[(8, 16)])
    assert checked == [["plan", "tail 8/16"]]


def test_geometry_for_sizes_the_pool_for_every_sequence_in_whole_pages():
    """Found by mutation testing: the pool ``geometry_for`` sizes was not checked to hold every sequence (batch x
    pages, kv_len rounded up to whole pages); a pool of batch + pages passed every test."""
    g = geometry_for(8, 1000, page_size=64, head_dim=256, heads_q=16, heads_kv=2, max_q_len=4)
    assert (g.batch, g.max_pages, g.num_pages, g.page_size) == (8, 16, 128, 64)  # 1000 tokens: 16 pages of 64
    assert (g.heads_q, g.heads_kv, g.head_dim, g.max_q_len, g.layout) == (16, 2, 256, 4, "plain")
    assert (geometry_for(4, 8192).max_pages, geometry_for(4, 8192).num_pages) == (128, 512)


def test_a_calls_kv_bytes_are_one_read_of_each_tokens_k_and_v_rows():
    """Found by mutation testing: the K+V bytes a decode call reports (its TB/s divides them) were never checked:
    2 (K and V) x the sequences' tokens x heads_kv x head_dim x 2 bytes (bf16)."""
    from labkit.workloads.decode.run import kv_bytes

    g = DecodeGeometry(**SEED_LIKE)
    x = make_inputs(g, seq_lens=[704, 65], seed=1)
    assert kv_bytes(x) == 2 * (704 + 65) * 4 * 256 * 2


def test_decode_builds_of_two_pool_sizes_into_one_directory_keep_both_manifests(tmp_path, capsys):
    """Found by a CLI review: --pool-pages was not in the manifest's name, so a second build into the same --out
    replaced the first's manifest (a pool of 1 page became 512) without a word. The default pool keeps its name."""
    from labkit import cli

    args = ["decode", "build", "--batch", "8", "--kv-len", "4096", "--out", str(tmp_path)]
    assert cli.main([*args, "--pool-pages", "1"]) == 0
    assert cli.main(args) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.endswith(".json") and line[0] != " "]
    pools = {Path(p).name: manifest.load(p).buffers["k_pool"].shape[0] for p in printed}
    assert len(printed) == 2 and sorted(pools.values()) == [1, 512], pools
    assert any("_pool1_" in name for name in pools) and any("_pool" not in name for name in pools)


def test_a_page_count_past_2_31_names_which_count_and_its_value(tmp_path, capsys):
    """Found by a CLI review: --batch 60000 --kv-len 2147483392 said only 'page counts must stay below 2**31', not
    which (the pool's, batch x pages per sequence) nor how many; --kv-len 1 said '1 pages'."""
    from labkit import cli

    batch, kv_len = 60000, 2147483392
    pages = -(-kv_len // 64)
    assert cli.main(["decode", "build", "--batch", str(batch), "--kv-len", str(kv_len), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"labkit: error: labkit decode build: decode geometry: a pool of {batch * pages} pages (batch {batch} x "
        f"{pages} pages per "
        "sequence): the pool's page count must stay below 2**31"]
    assert not any(tmp_path.iterdir())
    with pytest.raises(ArgumentError, match=re.escape("a pool of 2147483648 pages: the pool's page count must stay")):
        DecodeGeometry(1, 8, 1, 128, 16, 4, 1 << 31)  # given, not batch x pages per sequence
    with pytest.raises(ArgumentError, match=re.escape(f"a sequence of {(1 << 31) // 16} pages x 16 tokens = "
                                                      f"{1 << 31} tokens: must stay below 2**31")):
        DecodeGeometry(1, 8, 1, 128, 16, (1 << 31) // 16, 4)
    assert cli.main(["decode", "build", "--batch", "1", "--kv-len", "1", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[3].startswith("  --kv-len 1: 1 page of 64 per sequence (64 tokens);")


def test_grid_lines_count_this_gpus_sms_and_a_cpu_box_the_h200s(monkeypatch):
    import types

    from labkit import cuda, device
    from labkit.workloads.decode.run import sms_here

    monkeypatch.setattr(cuda, "gpu_status", lambda: (False, "no driver"))
    assert sms_here() == 132
    monkeypatch.setattr(cuda, "gpu_status", lambda: (True, "ok"))
    monkeypatch.setattr(device, "describe", lambda: types.SimpleNamespace(sm_count=114, name="NVIDIA H100 PCIe"))
    assert sms_here() == 114


@pytest.mark.parametrize("kwargs, message", [
    (dict(splits=0), r"splits \(None: the plan's\) 0: expected 1\.\.256"),
    (dict(splits=1000), r"splits \(None: the plan's\) 1000: expected 1\.\.256"),
    (dict(splits="2"), r"splits \(None: the plan's\) '2': expected an integer"),
    (dict(splits=True), r"splits \(None: the plan's\) True: expected an integer"),
    (dict(sms=0), r"sms \(the GPU's SM count\) 0: expected >= 1"),
    (dict(arch="h200"), r"arch 'h200': expected a CUDA target such as sm_90"),
])
def test_plan_call_refuses_a_count_sms_or_arch_by_name(kwargs, message):
    """An API walk: splits 0, 1000 and '2' were planned and refused only when built, sms=0 divided by zero, and
    arch 'h200' reached NVRTC's multi-line error."""
    g = geometry_for(8, 8192)
    with pytest.raises(ArgumentError, match=message):
        plan_call(g, **kwargs)
    assert plan_call(g, splits=np.int64(4)).splits == 4  # a notebook's numpy integer is an integer


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="warm", iterations=5), r"mode 'warm': expected one of cold, cold_clean, hot, graph"),
    (dict(iterations=0), r"iterations \(None: no timing\) 0: expected >= 1"),
    (dict(splits=0), r"splits \(None: the plan's\) 0: expected 1\.\.256"),
])
def test_run_decode_refuses_its_timing_arguments_before_it_asks_for_the_gpu(kwargs, message, monkeypatch):
    """An API walk: a bad mode or count was said only after 'needs a CUDA GPU', so never on a machine without one."""
    from labkit import cuda

    monkeypatch.setattr(cuda, "require_gpu", lambda *a, **k: pytest.fail("the GPU was asked for"))
    x = make_inputs(geometry_for(2, 256), seed=0)
    with pytest.raises(ArgumentError, match=message):
        run_decode(x, **kwargs)


def test_run_decode_without_a_gpu_names_a_bad_knob_before_it_says_there_is_no_gpu(monkeypatch):
    """An API walk: run_decode(x, stages=9) said only "needs a CUDA GPU" on a machine without one, since the knobs are
    checked by the GPU's plan; with no GPU they are checked by the H200's plan first."""
    from labkit.errors import NoGPU
    from labkit.workloads.decode import run

    monkeypatch.setattr(run, "gpu_status", lambda: (False, "no GPU in this test"))
    monkeypatch.setattr(run, "require_gpu", lambda what="": (_ for _ in ()).throw(NoGPU(f"{what} needs a CUDA GPU")))
    x = make_inputs(geometry_for(2, 256), seed=0)
    with pytest.raises(ArgumentError, match=r"stages 9: expected 1\.\.4"):
        run_decode(x, stages=9)
    with pytest.raises(ArgumentError, match=r"warps 3: the tensor-core \(mma\) kernel takes 4 or 8"):
        run_decode(x, warps=3)
    with pytest.raises(NoGPU, match="the decode kernel needs a CUDA GPU"):  # good knobs: then the GPU is asked for
        run_decode(x, stages=np.int64(2))  # a notebook's numpy integer is a count ('stages np.int64(2)' had been said)
    # a review: any keyword had reached the plan (sms=64 passed, arch= compiled, foo= a TypeError)
    for knob in ("sms", "arch", "foo"):
        with pytest.raises(ArgumentError, match=f"^{knob}: not a build knob of the decode call; expected any of "
                                                "variant, row_warps, stages"):
            run_decode(x, **{knob: 1})


def test_a_geometry_takes_numpy_integers_and_names_a_bad_kv_len():
    """An API walk: np.int64(8) was refused as not an integer, '8k' failed in Python's floor division and -1 was
    said as 'max_pages = 0'."""
    g = geometry_for(np.int64(8), np.int64(8192))
    assert g == geometry_for(8, 8192) and type(g.batch) is int and type(g.max_pages) is int
    for kv_len, expected in (("8k", "an integer"), (-1, ">= 1"), (0, ">= 1")):
        with pytest.raises(ArgumentError, match=re.escape(f"kv_len (tokens per sequence) {kv_len!r}: expected "
                                                          f"{expected}")):
            geometry_for(8, kv_len)

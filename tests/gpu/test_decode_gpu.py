"""labkit's decode kernel on the GPU against exact attention, every element, fresh random inputs.

Error bound, per element: the output is rounded to bf16 (2^-9 relative); the tensor-core kernel also
rounds P to bf16 before P.V (2^-9 relative per term, and terms can cancel), so the bound scales with
the terms' magnitude M = sum_k p_k |v_k| / sum_k p_k, not with |ref|: |out - ref| <= 2^-8 (|ref| + M)
+ 1e-3 (the fp32 softmax adds ~1e-6).
"""

import numpy as np
import pytest

from labkit.errors import ArgumentError
from labkit.workloads.decode import DecodeGeometry, kernel_build, make_inputs, run_decode
from labkit.workloads.decode.inputs import bf16_to_f32
from labkit.workloads.decode.reference import reference_and_bound

pytestmark = pytest.mark.gpu

CASES = {
    # G = 1, 6, 8; d128 and d256; pages 16/32/64; seq lens 1 and page boundaries +-1; several splits
    "g1_d128_p16": (DecodeGeometry(4, 4, 4, 128, 16, 12, 60), [1, 16, 17, 191]),
    "g6_d256_p64_seed": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22), [704, 65]),
    "g6_d256_interleaved": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"), [63, 704]),
    "g8_d128_p32": (DecodeGeometry(3, 32, 4, 128, 32, 40, 130), [1279, 32, 33]),
    "g4_d128_p64_long": (DecodeGeometry(2, 32, 8, 128, 64, 128, 300), [8192, 4097]),
}


def _check(x, run):
    ref, bound = reference_and_bound(x)  # the bound above
    used = int(x.cu_seqlens_q[-1])
    out = run.out
    assert np.isfinite(out[:used]).all(), "unwritten or non-finite output rows"
    assert np.isnan(out[used:]).all(), "rows past the call's query tokens were written"
    err = np.abs(out[:used] - ref[:used])
    bound = bound[:used]
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert (err <= bound).all(), \
        f"max err {err.max():.3g} at {worst} (ref {ref[:used][worst]:.4g}), splits {run.splits}"
    # each (token, head) row as a whole: the element bound's 1e-3 floor is loose where |ref| ~ 0.01 (8k keys), so a
    # softmax scale 2 % off or a key short passed it; a CPU emulation of the bf16 P and output roundings gives at most
    # 2.8e-3 here, those wrong answers 1.8e-2 and more
    rows = np.linalg.norm(out[:used] - ref[:used], axis=-1) / np.linalg.norm(ref[:used], axis=-1)
    assert rows.max() <= 2.0 ** -7, f"row {np.unravel_index(rows.argmax(), rows.shape)}: relative error " \
                                    f"{rows.max():.3g}, splits {run.splits}"
    return err.max()


def _check_timed(x, **knobs):
    """The same call timed cold and replayed in a CUDA graph (3 iterations each) still matches exact attention: every
    unit's counter and the split partials reset themselves between calls."""
    for mode in ("cold", "graph"):
        _check(x, run_decode(x, iterations=3, mode=mode, **knobs))


@pytest.mark.parametrize("variant", ["mma", "fma"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_decode_matches_exact_attention(name, variant):
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=sorted(CASES).index(name))
    errs = [_check(x, run_decode(x, splits=s, variant=variant)) for s in sorted({1, 3, min(g.max_pages, 16)})]
    print(name, variant, "max err per splits:", errs)


@pytest.mark.parametrize(("warps", "stages", "keys", "chains", "dims"), [
    (8, 1, 16, 2, 1), (8, 2, 16, 2, 1), (4, 1, 16, 2, 1), (4, 2, 16, 2, 1), (4, 1, 32, 2, 1), (4, 2, 32, 2, 1),
    (4, 1, 16, 1, 1), (4, 3, 16, 1, 1), (8, 1, 16, 2, 2), (8, 2, 16, 1, 2), (8, 3, 16, 2, 2), (8, 3, 16, 1, 2)])
@pytest.mark.parametrize("name", ["g6_d256_p64_seed", "g1_d128_p16", "g4_d128_p64_long"])
def test_tensor_core_builds_match_exact_attention(name, warps, stages, keys, chains, dims):
    """The tuning knobs (8 warps or 32 keys per warp: 128-token stages; one stage: no overlap inside the CTA;
    one or two Q K^T accumulator chains; warp pairs that split head_dim) give the same answers."""
    g, lens = CASES[name]
    build = dict(variant="mma", warps=warps, stages=stages, keys_per_warp=keys, qk_chains=chains, dim_warps=dims)
    try:
        kernel_build(g, **build)
    except ArgumentError as e:  # d256: 128 KB stages, two do not fit a CTA; any other refusal is a failure
        if g.head_dim != 256 or "more than a CTA gets" not in str(e):
            raise
        pytest.skip(str(e))
    x = make_inputs(g, seq_lens=lens, seed=3)
    for s in sorted({1, 3, min(g.max_pages, 16)}):
        _check(x, run_decode(x, splits=s, **build))


@pytest.mark.parametrize("splits", [2, 4, 8])
@pytest.mark.parametrize(("name", "build"), [
    ("g6_d256_p64_seed", dict(warps=8, stages=1)), ("g6_d256_p64_seed", dict(warps=8, dim_warps=2, stages=1)),
    ("g6_d256_interleaved", {}), ("g1_d128_p16", {}), ("g1_d128_p16", dict(warps=8, dim_warps=2, stages=2)),
    ("g8_d128_p32", dict(stages=1, qk_chains=1)), ("g4_d128_p64_long", {}),
    ("g4_d128_p64_long", dict(warps=8, stages=2)), ("g1_d128_p16", dict(warps=8, stages=2))])  # the d128 plan's pair
def test_cluster_split_reduction_matches_exact_attention(name, build, splits):
    """Splits that combine in a thread-block cluster (distributed shared memory, no global partials) give
    the same answers, with short sequences whose splits hold no keys; cold and graph-replayed calls too."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=13)
    run = run_decode(x, splits=splits, cluster=True, **build)
    assert run.plan["cluster_splits"] == splits
    _check(x, run)
    if splits == 8:
        _check_timed(x, splits=splits, cluster=True, **build)


def test_the_plans_splits_of_one_8_warp_cta_per_sm_match_exact_attention():
    """2 sequences x 8 KV heads of up to 8k tokens: the plan's own call runs 8 splits of one 8-warp CTA per SM that meet
    in global partials (no cluster: 128 such CTAs do not all fit); cold and graph-replayed calls too, so every unit's
    counter resets itself."""
    g, lens = CASES["g4_d128_p64_long"]
    x = make_inputs(g, seq_lens=lens, seed=29)
    run = run_decode(x)
    assert (run.plan["warps"], run.plan["stages"], run.splits, run.plan["cluster_splits"]) == (8, 2, 8, 0)
    _check(x, run)
    _check_timed(x)


def test_the_plans_one_8_warp_cta_per_unit_at_72_units_matches_exact_attention():
    """9 sequences x 8 KV heads (72 units, more than half the SMs, under 0.9 of them) of ragged lengths up to 1k tokens,
    page boundaries +-1 and a sequence of 1: the plan's own call runs each unit as one 8-warp CTA of 2 stages, one per
    SM, with no split; cold and graph-replayed calls too."""
    g = DecodeGeometry(9, 32, 8, 128, 64, 16, 150)
    x = make_inputs(g, seq_lens=[1024, 1, 65, 63, 1000, 512, 777, 64, 129], seed=31)
    run = run_decode(x)
    assert (run.plan["warps"], run.plan["stages"], run.splits, run.plan["cluster_splits"]) == (8, 2, 1, 0)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize(("batch", "seq_lens", "cluster"), [
    (3, [2048, 1, 1025], 4),                           # 24 units: 4 splits in clusters of 4
    (5, [1024, 1, 65, 63, 1000], 2),                   # 40 units: 2 splits in clusters of 2
])
def test_the_plans_clusters_of_4_or_2_at_16_to_56_units_match_exact_attention(batch, seq_lens, cluster):
    """3 and 5 sequences x 8 KV heads of ragged lengths (a sequence of 1, page boundaries +-1): the plan's own call runs
    one 8-warp 2-stage CTA per SM, its splits combined in a cluster of 4 or 2; cold and graph-replayed calls too."""
    g = DecodeGeometry(batch, 32, 8, 128, 64, -(-max(seq_lens) // 64), 100)
    x = make_inputs(g, seq_lens=seq_lens, seed=37)
    run = run_decode(x)
    assert (run.plan["warps"], run.plan["stages"], run.splits, run.plan["cluster_splits"]) == (8, 2, cluster, cluster)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize(("batch", "max_pages", "chains", "per_sm"), [
    (20, 40, 2, 3),    # 160 units of up to 2.5k tokens: 2 splits at 3 per SM
    (28, 130, 1, 4),   # 224 units, a table of up to 8.3k tokens: 2 splits at 4 per SM
])
def test_the_plans_2_splits_of_a_one_stage_build_at_133_to_237_units_match_exact_attention(batch, max_pages, chains,
                                                                                           per_sm):
    """20 and 28 sequences x 8 KV heads of ragged lengths (sequences of 1, page boundaries +-1, the longest and shortest
    beside each other): the plan's own call runs 2 splits of the one-stage build that meet in global partials; cold
    and graph-replayed calls too, so every unit's counter resets itself."""
    rng = np.random.default_rng(41)
    lens = rng.integers(1, 64 * max_pages + 1, batch)
    lens[:8] = [64 * max_pages, 1, 65, 63, 64, 2049, 2047, 1]
    g = DecodeGeometry(batch, 32, 8, 128, 64, max_pages, int(sum(-(-lens // 64))) + 8)
    x = make_inputs(g, seq_lens=lens, seed=43)
    run = run_decode(x)
    assert (run.plan["warps"], run.plan["stages"], run.plan["qk_chains"], run.splits) == (4, 1, chains, 2)
    assert (run.plan["ctas_per_sm"], run.plan["cluster_splits"]) == (per_sm, 0)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize(("batch", "page_size", "max_pages", "chains", "per_sm"), [
    (34, 64, 40, 2, 3),    # 272 units of up to 2.5k tokens: one wave at 3 per SM
    (50, 64, 33, 1, 4),    # 400 units: one wave at 4 per SM
    (40, 32, 40, 2, 3),    # 320 units of up to 1.3k tokens in pages of 32
])
def test_the_plans_one_wave_of_a_one_stage_build_at_265_to_528_units_matches_exact_attention(
        batch, page_size, max_pages, chains, per_sm):
    """34-50 sequences x 8 KV heads of ragged lengths (sequences of 1, page boundaries +-1): the plan's own call runs
    one split of the one-stage build that holds every unit in one wave; cold and graph-replayed calls too."""
    rng = np.random.default_rng(47)
    p = page_size
    lens = rng.integers(1, p * max_pages + 1, batch)
    lens[:8] = [p * max_pages, 1, p + 1, p - 1, p, 16 * p + 1, 16 * p - 1, 1]
    g = DecodeGeometry(batch, 32, 8, 128, p, max_pages, int(sum(-(-lens // p))) + 8)
    x = make_inputs(g, seq_lens=lens, seed=49)
    run = run_decode(x)
    assert (run.plan["warps"], run.plan["stages"], run.plan["qk_chains"], run.splits) == (4, 1, chains, 1)
    assert (run.plan["ctas_per_sm"], run.plan["cluster_splits"]) == (per_sm, 0)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize(("batch", "page_size", "max_pages", "tail"), [
    (76, 64, 40, (80, 3)),     # 608 units of up to 2.5k tokens: 2 whole waves of 264, the last 80 in 3 splits each
    (67, 64, 36, (8, 16)),     # 536 units: the last 8 in 16 splits each
    (80, 32, 72, (112, 2)),    # 640 units of up to 2.3k tokens in pages of 32: the last 112 in 2 splits each
    (17, 64, 36, (4, 16)),     # 136 units: the 4 past one CTA per SM in 16 splits each
    (34, 64, 128, (8, 16)),    # 272 units of up to 8k tokens: the 8 past two pipelined CTAs per SM in 16 splits each
    (40, 64, 128, (56, 4)),    # 320 units of up to 8k tokens: the 56 past them in 4 splits each
    (36, 64, 64, (24, 11)),    # 288 units of up to 4k tokens: the 24 past them in 11 splits each
])
def test_the_plans_tail_splits_past_its_last_whole_wave_match_exact_attention(batch, page_size, max_pages, tail):
    """17-80 sequences x 8 KV heads of ragged lengths (sequences of 1, page boundaries +-1, among the tail's too): the
    plan's own call splits the units past its last whole wave (or past one CTA per SM); exact attention, the units
    before the tail bit for bit as the same call without it, and cold and graph-replayed calls."""
    rng = np.random.default_rng(59)
    p = page_size
    lens = rng.integers(1, p * max_pages + 1, batch)
    lens[:6] = [p * max_pages, 1, p + 1, p - 1, p, 16 * p + 1]
    lens[-5:] = [1, p + 1, p * max_pages, p - 1, 16 * p - 1]
    g = DecodeGeometry(batch, 32, 8, 128, p, max_pages, int(sum(-(-lens // p))) + 8)
    x = make_inputs(g, seq_lens=lens, seed=61)
    run = run_decode(x)
    assert (run.plan["tail_units"], run.plan["tail_splits"], run.splits) == (*tail, 1)
    assert (run.plan["warps"], run.plan["stages"], run.plan["ctas_per_sm"]) == (4, 3, 2)
    _check(x, run)
    plain = run_decode(x, stages=3, splits=1)
    assert "tail_units" not in plain.plan
    head = g.batch * g.heads_kv - tail[0]
    per_unit = (-1, g.group, g.head_dim)
    assert np.array_equal(run.out.reshape(per_unit)[:head], plain.out.reshape(per_unit)[:head])
    _check_timed(x)


@pytest.mark.parametrize(("name", "splits", "tail_units", "tail_splits", "build"), [
    ("g4_d128_p64_long", 1, 1, 2, {}), ("g4_d128_p64_long", 1, 7, 16, {}),
    ("g4_d128_p64_long", 1, 16, 3, dict(stages=1, qk_chains=1)),  # every unit split; the one-stage build, MIN_CTAS
    ("g4_d128_p64_long", 3, 5, 8, {}), ("g4_d128_p64_long", 2, 16, 16, {}),  # split plans: 3 / 2 splits, then more
    ("g6_d256_p64_seed", 1, 3, 4, dict(warps=8, dim_warps=2, stages=1)), ("g6_d256_p64_seed", 1, 5, 2, {}),
    ("g6_d256_p64_seed", 2, 3, 11, {}),
    ("g1_d128_p16", 1, 16, 3, {}), ("g1_d128_p16", 2, 9, 5, {}),  # sequences of 1 and 16 tokens: splits, no keys
    ("g8_d128_p32", 1, 5, 7, {})])
def test_tail_splits_match_exact_attention(name, splits, tail_units, tail_splits, build):
    """The last units in more splits (a 1-D grid: the other units in ``splits``, then the tail): exact attention
    within the bound, the units before the tail bit for bit as the same call without a tail, and timed calls
    (cold, graph) that write the same output, so every unit's counter resets itself."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=21)
    knobs = dict(variant="mma", splits=splits, tail_units=tail_units, tail_splits=tail_splits, **build)
    run = run_decode(x, **knobs)
    assert (run.plan["tail_units"], run.plan["tail_splits"], run.splits) == (tail_units, tail_splits, splits)
    _check(x, run)
    plain = run_decode(x, splits=splits, cluster=False, variant="mma", **build).out
    head = g.batch * g.heads_kv - tail_units  # unit = sequence x heads_kv + KV head (one row block)
    per_unit = (-1, g.group, g.head_dim)
    assert np.array_equal(run.out.reshape(per_unit)[:head], plain.reshape(per_unit)[:head])
    _check_timed(x, **knobs)


def test_tail_splits_over_row_blocks():
    """128 rows (16 heads x 8 tokens) take 8 row blocks per KV head; ragged q_lens leave some without rows.
    Two splits pinned: the heuristic picks 5 here, and a tail must take more than the others."""
    g = DecodeGeometry(3, 32, 2, 128, 32, 12, 40, max_q_len=8)
    x = make_inputs(g, seq_lens=[333, 8, 97], q_lens=[8, 1, 5], seed=17)
    for tail_units in (1, 20, 48):
        _check(x, run_decode(x, variant="mma", splits=2, tail_units=tail_units, tail_splits=4))


@pytest.mark.parametrize("mode", ["cold", "cold_clean"])
def test_tail_sweep_checks_times_and_records_the_drain(mode):
    from labkit.sched import Timeline
    from labkit.workloads.decode.bench import tail_sweep

    sweep = tail_sweep(16, 1024, 256, iterations=3, candidates=[(20, 2), (128, 4)], timelines=True, mode=mode)
    assert [r["heuristic"] for r in sweep.rows] == [True, False, False] and {r["mode"] for r in sweep.rows} == {mode}
    labels = [r["kernel"] for r in sweep.rows[1:]]
    # head_dim 256 plans load wide boxes: "... tail/2 wide (20 units)"
    assert " tail/2" in labels[0] and labels[0].endswith(" (20 units)"), labels
    assert " tail/4" in labels[1] and labels[1].endswith(" (128 units)"), labels
    assert all(r["p50_us"] > 0 and r["splits"] == 1 for r in sweep.rows)
    assert "plan" in sweep.timelines and all(isinstance(t, Timeline) for t in sweep.timelines.values())
    assert sweep.timelines["plan"].active_ctas(4).max() <= 132


def test_compare_builds_checks_then_times_each_build_beside_the_plan(tmp_path, capsys):
    """`labkit decode compare`: the plan (8 x 1k d128: a clustered pair of 8-warp CTAs) and two other builds (4
    splits of the 4-warp build, two CTAs per SM; the pair with 3 stages), outputs checked against the plan's, timed
    interleaved; the report reads back."""
    from labkit import cli
    from labkit.workloads.decode import report
    from labkit.workloads.decode.compare import compare_builds, parse_build

    rows = compare_builds(8, 1024, 128, (parse_build("splits=4"), parse_build("warps=8,stages=3")), iterations=3)
    assert [r["build"] for r in rows] == ["plan", "splits=4", "warps=8,stages=3"]
    plan, four, deep = rows
    assert plan["heuristic"] and plan["vs_plan"] == 0 and plan["max_diff"] == 0 and plan["bit_equal"]
    assert plan["kernel"].startswith("mma w8s2") and plan["splits"] == 2 and plan["ctas_per_sm"] == 1
    assert four["splits"] == 4 and four["kernel"].startswith("mma w4s3") and four["ctas_per_sm"] == 2
    assert deep["kernel"].startswith("mma w8s3") and deep["ctas_per_sm"] == 1
    assert all(r["p50_us"] > 0 for r in rows)  # each build's output: compare_builds refuses one off the plan's
    out = tmp_path / "compare.json"
    assert cli.main(["decode", "compare", "--batch", "8", "--kv-len", "1024", "--build", "stages=2",
                     "--iterations", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "compare, batch 8 x 1024, d128" in printed and "stages=2" in printed and "vs_plan" in printed
    sweep = report.load(out).split_sweeps["8x1024 d128 compare"]
    assert [p.heuristic for p in sweep] == [True, False] and sweep[1].kernel.startswith("mma w4s2")


def test_bench_times_named_points_at_their_geometry_beside_the_peers(tmp_path, capsys):
    """``labkit decode bench --point``: two calls at 16/4 heads, page 32, timed after the reference check, beside the
    peers on the same K/V (torch SDPA at least; FA3 where its wheel is installed); the report names the page size."""
    from labkit import cli
    from labkit.workloads.decode import report

    out = tmp_path / "points.json"
    assert cli.main(["decode", "bench", "--point", "4x1024", "--point", "2x3000", "--heads-q", "16", "--heads-kv", "4",
                     "--page-size", "32", "--iterations", "3", "--peers", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "check against the exact reference" in printed and "paged decode, page 32, cold L2" in printed
    points = report.load(out).points
    assert [(p.batch, p.kv_len, p.head_dim, p.heads, p.mode) for p in points] == [
        (4, 1024, 128, "16/4 page 32", "cold"), (2, 3000, 128, "16/4 page 32", "cold")]  # no seed-sized call
    for p in points:
        assert p.p50_us > 0 and p.kv_MB == pytest.approx(2 * p.batch * p.kv_len * 4 * 128 * 2 / 1e6)
        assert isinstance(p.peers["labkit_beside_peers"], float)
        assert isinstance(p.peers["sdpa_cudnn"], float) or isinstance(p.peers["sdpa_flash"], float), p.peers
        assert isinstance(p.x_best_peer, float) and p.x_best_peer > 0
        assert p.x_best_peer_low is None  # 3 rounds: too few for the interval
    clean = tmp_path / "clean.json"  # L2 left clean: the same call, its mode in the title and in the report
    assert cli.main(["decode", "bench", "--point", "2x3000", "--heads-q", "16", "--heads-kv", "4", "--page-size", "32",
                     "--iterations", "3", "--mode", "cold_clean", "--out", str(clean)]) == 0
    assert "paged decode, page 32, cold L2 (flushed, then left clean)" in capsys.readouterr().out
    assert [(p.batch, p.mode) for p in report.load(clean).points] == [(2, "cold_clean")]


@pytest.mark.parametrize(("g", "tail"), [
    (DecodeGeometry(3, 32, 8, 128, 64, 6, 24, max_q_len=2), None),  # 3 splits, two causal q tokens
    (DecodeGeometry(67, 32, 8, 128, 64, 36, 67 * 36), (8, 16)),     # the plan's own tail: a 1-D grid of 656 CTAs
])
def test_manifest_runner_on_a_built_decode_manifest_computes_attention(tmp_path, g, tail):
    """``labkit manifest run DIR/decode_*.json``: the Runner with no fill of its own gives labkit's decode manifest
    valid inputs (full page-table rows over pool pages), and the call it times computes exact attention on them."""
    from types import SimpleNamespace

    from labkit import manifest
    from labkit.cuda import cupy
    from labkit.manifest.runner import Runner
    from labkit.workloads.decode import build
    from labkit.workloads.decode.build import build_plan
    from labkit.workloads.decode.inputs import DecodeInputs, bf16_to_f32
    from labkit.workloads.decode.plan import plan_call

    if tail is None:
        path = build(g, 3, tmp_path)
    else:
        plan = plan_call(g)
        assert (plan.tail_units, plan.kernel.tail_splits) == tail
        path = build_plan(g, plan, tmp_path)
    r = Runner(manifest.load(path), cubin_dirs=(tmp_path,))
    assert f"sequences of {g.max_kv_len} tokens" in r.input_note
    r.run_once()
    host = {n: cupy().asnumpy(a) for n, a in r.buffers.items()}
    x = DecodeInputs(g, host["q"], host["k_pool"], host["v_pool"], {}, host["table"], host["seq"], host["cuq"])
    _check(x, SimpleNamespace(out=bf16_to_f32(host["out"]), splits=3 if tail is None else 1))

@pytest.mark.parametrize(("name", "build"), [
    ("g1_d128_p16", dict(stages=1)), ("g1_d128_p16", dict(stages=3)), ("g8_d128_p32", dict(stages=1, qk_chains=1)),
    ("g4_d128_p64_long", dict(stages=2)), ("g6_d256_p64_seed", dict(stages=2)),  # d256: warp pairs
    ("g6_d256_interleaved", dict(stages=1))])
def test_persistent_ctas_match_exact_attention(name, build):
    """Persistent CTAs that claim whole units: exact attention within the bound, bit for bit the one-split call of the
    same build (the same arithmetic per unit), and timed calls (cold, graph) that write the same output, so the claim
    counter resets itself. Here the units are fewer than the CTAs: most CTAs claim nothing."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=23)
    run = run_decode(x, variant="mma", persistent=True, **build)
    assert run.plan["persistent_ctas"] >= 132 and run.splits == 1
    _check(x, run)
    assert np.array_equal(run.out, run_decode(x, variant="mma", splits=1, **build).out, equal_nan=True)
    _check_timed(x, variant="mma", persistent=True, **build)


def _same_bits_with_the_knob(x, splits, build: dict, knob: str, without: dict):
    """The call built with load knob ``knob`` on: exact attention within the bound, the same bits as the build with
    ``without`` (its loads the other way), and timed calls (cold, graph) that write the same output; returns its run."""
    on = run_decode(x, splits=splits, **{knob: True}, **build)
    assert on.plan[knob] is True
    _check(x, on)
    off = run_decode(x, splits=splits, **without, **build)
    assert knob not in off.plan
    assert np.array_equal(on.out, off.out, equal_nan=True)
    for mode in ("cold", "graph"):
        assert np.array_equal(run_decode(x, splits=splits, iterations=3, mode=mode, **{knob: True}, **build).out,
                              on.out, equal_nan=True)
    return on


@pytest.mark.parametrize(("name", "splits", "build"), [
    ("g1_d128_p16", 3, dict(stages=3)),  # 4 page slices per stage
    ("g4_d128_p64_long", 8, dict(warps=8, stages=3, cluster=True)),  # the batch-1 plan's build: 2 slices per stage
    ("g6_d256_p64_seed", None, {}),  # the plan's own: warp pairs in a cluster of 8
    ("g6_d256_interleaved", 3, dict(stages=1)),  # the seed's pool through 5-D maps
    ("g8_d128_p32", None, dict(variant="mma", persistent=True, stages=2))])
def test_wide_boxes_match_exact_attention_and_the_4d_loads_bit_for_bit(name, splits, build):
    """One 5-D TMA load per page slice (wide_boxes) puts the same bytes in the same places as one load per 64-dim part:
    exact attention within the bound, the same bits as the build without it, and timed calls (cold, graph) that write
    the same output."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=31)
    # against 4-D loads asked for: head_dim 256 plans take wide boxes themselves
    _same_bits_with_the_knob(x, splits, build, "wide_boxes", dict(wide_boxes=False))


@pytest.mark.parametrize(("name", "splits", "build"), [
    ("g4_d128_p64_long", 1, dict(warps=4, stages=3)),  # the one-split calls' build: a stage is one page slice
    ("g4_d128_p64_long", 3, dict(warps=4, stages=1, qk_chains=1)),  # the large calls' one-stage build
    ("g1_d128_p16", 3, dict(stages=3)),  # 4 page slices per stage, ragged lengths 1 / 16 / 17 / 191
    ("g8_d128_p32", 8, dict(warps=8, stages=3, cluster=True, page_prefetch=True)),  # the batch-1 build, 4 slices
    ("g6_d256_interleaved", 3, dict(warps=4, stages=1)),  # the seed's pool, head_dim 256 (4 parts per row)
    ("g8_d128_p32", None, dict(variant="mma", persistent=True, stages=2))])
def test_row_boxes_match_exact_attention_and_the_4d_loads_bit_for_bit(name, splits, build):
    """5-D boxes with head_dim's parts before the page rows (row_boxes: each token row read whole) put every element
    where the kernel's tile_offset reads it: exact attention within the bound, the same bits as the 4-D loads, and
    timed calls (cold, graph) that write the same output."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=41)
    rows = _same_bits_with_the_knob(x, splits, build, "row_boxes", dict(wide_boxes=False))
    assert "wide_boxes" not in rows.plan


# head_dim 128 over an interleaved pool (the seed's layout): past a K row's 128 dims lies V's row, which the padded
# box's 8 dims past the map's head_dim must not read (TMA zero-fills them as out of bounds)
D128_INTERLEAVED = (DecodeGeometry(3, 32, 8, 128, 64, 6, 20, layout="interleaved"), [1, 64, 321])


@pytest.mark.parametrize(("name", "splits", "build"), [
    ("g4_d128_p64_long", 1, dict(warps=4, stages=3)),  # the one-split calls' build: a stage is one page slice
    ("g4_d128_p64_long", 3, dict(warps=4, stages=1, qk_chains=1)),  # the large calls' one-stage build
    ("g4_d128_p64_long", 1, dict(warps=8, stages=2, page_prefetch=True)),  # 8 warps, page ids ahead
    ("g1_d128_p16", 3, dict(stages=3)),  # 4 page slices per stage, ragged lengths 1 / 16 / 17 / 191
    ("g8_d128_p32", 2, dict(warps=8, stages=2, cluster=True)),  # the clustered pair, 4 slices per stage
    ("g8_d128_p32", None, dict(variant="mma", persistent=True, stages=2)),
    ("d128_interleaved", 2, dict(stages=3))])
def test_padded_rows_match_exact_attention_and_the_swizzled_loads_bit_for_bit(name, splits, build):
    """Unswizzled 4-D boxes of 136 dims (padded_rows) put every element where the kernel's tile_offset reads it and
    zeros in the pad: exact attention within the bound, the same bits as the swizzled 4-D loads (the same math on the
    same numbers), and timed calls (cold, graph) that write the same output."""
    g, lens = D128_INTERLEAVED if name == "d128_interleaved" else CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=43)
    padded = _same_bits_with_the_knob(x, splits, build, "padded_rows", dict(wide_boxes=False))
    assert "wide_boxes" not in padded.plan


@pytest.mark.parametrize(("name", "splits", "build"), [
    ("g1_d128_p16", 3, dict(stages=3)),  # 4 page slices per stage, ragged lengths 1 / 16 / 17 / 191
    ("g1_d128_p16", 1, dict(warps=8, stages=1)),  # a one-stage ring: every stage a refill
    ("g4_d128_p64_long", None, {}),  # 2 x 8k: the plan's 16 splits of the 4-warp build, 3 stages, on request
    ("g8_d128_p32", 2, dict(warps=8, stages=2, cluster=True)),  # the clustered pair
    ("g6_d256_interleaved", 3, dict(stages=3, wide_boxes=False)),  # the seed's pool, 4-D loads of warp pairs
    ("g1_d128_p16", 3, dict(stages=3, wide_boxes=True)),  # 5-D loads: 4 page slices per stage, each in one box
    ("g8_d128_p32", 8, dict(warps=8, stages=3, cluster=True, wide_boxes=True)),  # a cluster of 8, 4 slices per stage
    ("g6_d256_interleaved", None, {})])  # the plan's own wide boxes of warp pairs, over the seed's pool
def test_page_prefetch_matches_exact_attention_and_the_plain_refills_bit_for_bit(name, splits, build):
    """Thread 0 loading each refill's page ids a stage ahead puts the same pages in the same stages: exact attention
    within the bound, the same bits as the build without it, and timed calls (cold, graph) that write the same
    output."""
    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=37)
    _same_bits_with_the_knob(x, splits, build, "page_prefetch", dict(page_prefetch=False))


@pytest.mark.parametrize(("head_dim", "stages"), [(128, 1), (128, 3), (256, 2)])
def test_persistent_ctas_walk_many_short_units(head_dim, stages):
    """More units than CTAs, of 1 to 5 stages (sequences of 1, 63, 64, 65, 200, 300 tokens) and row blocks without
    rows (16 heads x 8 tokens, ragged q_lens): each CTA walks several units in one stage ring and claims as it goes."""
    g = DecodeGeometry(96, 64, 4, head_dim, 64, 5, 480, max_q_len=8)
    rng = np.random.default_rng(head_dim + stages)
    q_lens = rng.integers(1, 9, g.batch)
    lens = np.maximum(rng.choice([1, 63, 64, 65, 200, 300], g.batch), q_lens)
    x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=29)
    run = run_decode(x, variant="mma", persistent=True, stages=stages)
    units = g.batch * g.heads_kv * 8  # 8 row blocks of 16 rows
    assert units > run.plan["persistent_ctas"], (units, run.plan)
    _check(x, run)
    assert np.array_equal(run.out, run_decode(x, variant="mma", splits=1, stages=stages).out, equal_nan=True)
    _check(x, run_decode(x, variant="mma", persistent=True, stages=stages, iterations=3, mode="graph"))


def test_persistent_ctas_write_zero_rows_for_a_sequence_without_keys(tmp_path):
    """check_call refuses seq_len 0, but a manifest can carry one: the persistent build's thread 0 writes that
    sequence's zero rows itself (its units have no stages to queue), as the one-split build writes them."""
    import dataclasses

    from labkit.cuda import cupy
    from labkit.workloads.decode.inputs import bf16_to_f32
    from labkit.workloads.decode.run import decode_runner

    g, lens = CASES["g8_d128_p32"]
    x = make_inputs(g, seq_lens=lens, seed=31)
    x = dataclasses.replace(x, seq_lens=np.array([1279, 0, 33], dtype=np.int32))
    host = {"q": x.q, **x.pool, "table": x.page_table, "seq": x.seq_lens, "cuq": x.cu_seqlens_q}
    outs = []
    for i, knobs in enumerate([dict(persistent=True), dict(splits=1)]):
        runner, _ = decode_runner(g, knobs.pop("splits", None), tmp_path / str(i),
                                  lambda name, arr: arr.set(np.ascontiguousarray(host[name])), variant="mma", **knobs)
        runner.run_once()
        outs.append(bf16_to_f32(cupy().asnumpy(runner.buffers["out"])))
    rows = outs[0].reshape(g.batch, g.heads_q, g.head_dim)
    assert (rows[1] == 0).all() and np.isfinite(rows).all()
    assert np.array_equal(outs[0], outs[1])


def test_split_counts_agree_within_reduction_tolerance():
    g = DecodeGeometry(2, 32, 8, 128, 64, 128, 300)
    x = make_inputs(g, seq_lens=[8192, 5000], seed=7)
    one = run_decode(x, splits=1).out
    for s in (2, 7, 32, 128):
        many = run_decode(x, splits=s)
        assert np.abs(many.out - one).max() <= 2.0 ** -7 * np.abs(one).max(), s
        _check(x, many)  # the only counts past 16 in the suite: against exact attention too


@pytest.mark.parametrize("variant", ["mma", "fma"])
@pytest.mark.parametrize("q_lens", [[1, 4, 2], [3, 3, 3]])
def test_multi_token_queries_with_causal_mask(q_lens, variant):
    g = DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4)
    x = make_inputs(g, seq_lens=[300, 4, 97], q_lens=q_lens, seed=11)
    for s in (1, 4):
        _check(x, run_decode(x, splits=s, variant=variant))


NAN, INF = 0x7FC0, 0x7F80  # bf16 words


@pytest.mark.parametrize("q_lens", [[1, 1, 1], [1, 4, 2]])
@pytest.mark.parametrize(("layout", "head_dim", "variant", "build"), [
    ("plain", 128, "fma", {}), ("plain", 128, "mma", {}), ("plain", 128, "mma", dict(warps=8, stages=2)),
    ("plain", 256, "mma", dict(warps=8, dim_warps=2, stages=1)), ("interleaved", 256, "mma", {}),
    ("plain", 128, "mma", dict(persistent=True)), ("plain", 128, "mma", dict(cluster=True))])
def test_nan_and_inf_past_each_sequence_never_reach_the_output(layout, head_dim, variant, build, q_lens):
    """A real pool holds stale or garbage words past each sequence and in pages no sequence uses: the tokens past
    each sequence's end in its last page (NaN keys, Inf values), every unused page and the interleaved layout's
    other slot are poisoned, and every output element still matches exact attention over the clean pool (NaN x 0 is
    NaN: a masked key must be selected away, not multiplied by a zero weight). Splits past the keys get none."""
    g = DecodeGeometry(3, 16, 4, head_dim, 32, 12, 60, max_q_len=max(q_lens), layout=layout)  # 4 x 4 = 16 rows
    lens = [1 + max(q_lens), 33, 95]  # a page's first token, one past a page, the last token of a page
    clean = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=5, share_pages=False)
    x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=5, share_pages=False)
    used = set()
    for b, n in enumerate(lens):
        pages = x.page_table[b, : -(-n // g.page_size)]
        assert not used & set(pages.tolist()), "a poisoned tail would land on another sequence's page"
        used |= set(pages.tolist())
        x.k[pages[-1], :, n % g.page_size or g.page_size:] = NAN
        x.v[pages[-1], :, n % g.page_size or g.page_size:] = INF
    unused = sorted(set(range(g.num_pages)) - used)
    x.k[unused], x.v[unused] = NAN, INF
    if layout == "interleaved":
        x.pool["kv"][:, 0] = NAN  # the slot the seed's layout keeps beside K and V
    assert np.isnan(bf16_to_f32(x.k)).any() and np.isinf(bf16_to_f32(x.v)).any()
    for s in (1,) if "persistent" in build else (2, 4, 8) if "cluster" in build else (1, 3, 12):
        _check(clean, run_decode(x, splits=s, variant=variant, **build))


@pytest.mark.parametrize("mode", ["cold", "cold_clean", "graph"])
@pytest.mark.parametrize("head_dim", [128, 256])
def test_timed_calls_write_the_same_output(mode, head_dim):
    """Graph replays hold the launches only (no scratch zeroing per call): the split counters must reset
    themselves, or the last CTAs would not reduce and the poisoned output would stay. head_dim 256 runs one
    CTA per SM, so its calls launch with PDL: each call overlaps the one before it. cold_clean zeroes the scratch
    inside the pad, before its read of clean data."""
    g = DecodeGeometry(8, 32, 8, head_dim, 64, 32, 256)
    x = make_inputs(g, seed=5)
    run = run_decode(x, iterations=5, splits=7, mode=mode)
    _check(x, run)
    assert run.timing.stats.count >= 5 and run.splits == 7
    if mode == "graph":
        assert run.timing.calls_per_sample >= 10


def test_a_counter_left_off_zero_is_caught():
    """run_decode reads the split counters back after its calls, since identical inputs would hide a misaligned one
    in the output; here a counter set to 1 before a launch without zeroing stays off 0, and the check says so."""
    import tempfile

    from labkit.cuda import cupy
    from labkit.workloads.decode.run import _check_counters_reset, decode_runner

    g = DecodeGeometry(2, 32, 8, 128, 64, 32, 64)
    x = make_inputs(g, seed=41)
    host = {"q": x.q, **x.pool, "table": x.page_table, "seq": x.seq_lens, "cuq": x.cu_seqlens_q}
    with tempfile.TemporaryDirectory() as tmp:
        runner, plan = decode_runner(g, 5, tmp, lambda name, arr: arr.set(np.ascontiguousarray(host[name])),
                                     variant="mma", warps=4, stages=3, cluster=False)
        runner.run_once()
        _check_counters_reset(runner, "a clean call")
        counters = runner.scratch[("decode", "counter")].view(np.uint32)
        assert plan.splits == 5 and counters.size == 16, (plan.splits, counters.size)
        counters[3] = 1
        runner.launch_call(0)
        cupy().cuda.get_current_stream().synchronize()
        with pytest.raises(AssertionError, match=r"1 of 16 counters are not 0 \(first \[1\]\)"):
            _check_counters_reset(runner, "a call that found a counter at 1")


@pytest.mark.parametrize("variant", ["mma", "fma"])
@pytest.mark.parametrize("head_dim", [128, 256])
def test_128_rows_take_row_blocks(head_dim, variant):
    """16 query heads per KV head x 8 query tokens: 128 rows, more than one CTA holds; ragged q_lens
    leave some row blocks of a sequence with no rows (those CTAs leave at once)."""
    g = DecodeGeometry(3, 32, 2, head_dim, 32, 12, 40, max_q_len=8)
    x = make_inputs(g, seq_lens=[333, 8, 97], q_lens=[8, 1, 5], seed=13 + head_dim)
    for s in (1, 4):
        _check(x, run_decode(x, splits=s, variant=variant))


def test_timeline_records_every_cta_of_the_call():
    from labkit.workloads.decode.run import decode_timeline

    tl = decode_timeline(2, 4096, 128, heads_q=32, heads_kv=8, splits=5)
    assert len(tl.records) == 5 * 8 * 2 and sorted(tl.records[:, 0]) == list(range(80))
    assert (tl.records[:, 3] >= tl.records[:, 2]).all() and (tl.records[:, 5] > tl.records[:, 4]).all()
    stats = tl.stats()
    assert 0 < stats.slot_efficiency <= 1 and stats.ctas == 80


@pytest.mark.parametrize(("pages", "seq_lens"), [
    (128, [8192, 4097, 8191, 6000, 8129, 4160, 7777, 8000]),
    (16, [1024, 1, 1023, 640, 1000, 65, 513, 900])])  # 1k: the second split of 1, 65 and 513 tokens holds no key
def test_the_plans_clustered_splits_at_batch_8_match_exact_attention(pages, seq_lens):
    """Batch 8 d128 (64 units) of 8k and of 1k tokens: the plan's own call, 2 splits of one 8-warp CTA per SM in a
    cluster of 2, against exact attention on ragged lengths, every element checked; timed cold, the same output."""
    g = DecodeGeometry(8, 32, 8, 128, 64, pages, 8 * pages)
    x = make_inputs(g, seq_lens=seq_lens, seed=29 + pages)
    run = run_decode(x)
    assert (run.splits, run.plan["warps"], run.plan["cluster_splits"]) == (2, 8, 2)
    _check(x, run)
    _check(x, run_decode(x, iterations=3, mode="cold"))


def test_the_plans_clusters_of_8_at_batch_1_d256_match_exact_attention():
    """1 x 8k d256 (8 units): the plan's own call, 8 splits of one 8-warp warp-pair CTA per SM with 3 stages in a
    cluster of 8, against exact attention; a ragged length ending inside a split's last stage."""
    g = DecodeGeometry(1, 32, 8, 256, 64, 128, 128 + 7)
    x = make_inputs(g, seq_lens=[8000], seed=31)
    run = run_decode(x)
    assert (run.splits, run.plan["warps"], run.plan["dim_warps"], run.plan["stages"], run.plan["cluster_splits"]) == (
        8, 8, 2, 3, 8)
    _check(x, run)


@pytest.mark.parametrize(("batch", "heads_q", "heads_kv", "pages", "seq_lens"), [
    (2, 24, 4, 11, [704, 65]),   # the seed's geometry: 88 tokens a split; 65 tokens leave 6 of 8 splits no key
    (1, 32, 8, 16, [1024]), (1, 32, 8, 16, [961])])  # two 64-token stages a split; the last one's second partial
def test_the_plans_short_clusters_of_8_at_d256_hold_both_stages_and_match_exact_attention(batch, heads_q, heads_kv,
                                                                                          pages, seq_lens):
    """A short d256 call (at most 1k tokens, 8 units or fewer): the plan's own call, 8 splits of one 8-warp warp-pair
    CTA per SM in a cluster of 8, with 2 stages, so that a split's two 64-token stages load at once, against exact
    attention, every element checked; timed cold and in a graph, the same output."""
    g = DecodeGeometry(batch, heads_q, heads_kv, 256, 64, pages, batch * pages + 3)
    x = make_inputs(g, seq_lens=seq_lens, seed=37 + seq_lens[-1])
    run = run_decode(x)
    assert (run.splits, run.plan["warps"], run.plan["dim_warps"], run.plan["stages"], run.plan["cluster_splits"]) == (
        8, 8, 2, 2, 8)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize(("batch", "heads_kv", "page", "pages", "seq_lens", "stages"), [
    (1, 8, 64, 16, [1024], 1), (1, 8, 64, 16, [961], 1), (1, 8, 64, 128, [8192], 3), (1, 8, 64, 128, [8000], 3),
    (1, 8, 64, 512, [32768], 3),
    (1, 8, 32, 256, [8191], 3), (1, 8, 32, 32, [1000], 1),  # pages of 32 (pages of 16: the test below)
    (2, 4, 64, 128, [8192, 4097], 3), (1, 12, 64, 128, [7777], 3)])  # other head counts whose clusters fit
def test_the_plans_clusters_of_8_at_batch_1_match_exact_attention(batch, heads_kv, page, pages, seq_lens, stages):
    """A few d128 units (8 to 15): the plan's own call, 8 splits of one 8-warp CTA per SM in a cluster of 8 (one
    stage up to 1024 tokens, else three), against exact attention, every element checked; ragged lengths end inside a
    split's last stage; timed cold and in a graph, the same output."""
    g = DecodeGeometry(batch, 4 * heads_kv, heads_kv, 128, page, pages, batch * pages + 7)  # spare pages in the pool
    x = make_inputs(g, seq_lens=seq_lens, seed=pages + seq_lens[0])
    run = run_decode(x)
    assert (run.splits, run.plan["warps"], run.plan["stages"], run.plan["cluster_splits"]) == (8, 8, stages, 8)
    _check(x, run)
    _check_timed(x)


@pytest.mark.parametrize("seq_lens", [[8191], [4097]])
def test_the_plans_batch_1_long_calls_at_pages_of_16_take_16_splits_and_match_exact_attention(seq_lens):
    """1 x 8k d128 with pages of 16: the plan's own call is 16 splits of two 4-warp CTAs per SM, no cluster, with wide
    boxes and page ids a stage ahead (a 128-token stage of the clusters of 8 is 8 page slices for one thread); against
    exact attention, every element checked, ragged lengths ending inside a page; timed cold and in a graph."""
    g = DecodeGeometry(1, 32, 8, 128, 16, 512, 512 + 7)
    x = make_inputs(g, seq_lens=seq_lens, seed=41 + seq_lens[0])
    run = run_decode(x)
    p = run.plan
    assert (run.splits, p["warps"], p["cluster_splits"], p["wide_boxes"], p["page_prefetch"]) == (
        16, 4, 0, True, True)
    _check(x, run)
    _check_timed(x)


def test_the_plans_one_stage_build_at_pages_of_16_holds_4_ctas_per_sm_and_matches_exact_attention():
    """64 x 1k d128 with pages of 16: the plan's own call is the one-stage 4-warp build, which __launch_bounds__ hold
    to 4 CTAs per SM as at pages of 64 (unbounded, its registers allow 3), one split, wide boxes and page ids ahead;
    against exact attention, every element checked, over ragged lengths (1, page boundaries +-1, the full 1024);
    timed cold and in a graph."""
    g = DecodeGeometry(64, 32, 8, 128, 16, 64, 64 * 64 + 5)
    lens = [1024, 1, 16, 17, 1023, 15, 33, 1000] * 8
    x = make_inputs(g, seq_lens=lens, seed=53)
    run = run_decode(x)
    p = run.plan
    assert (run.splits, p["warps"], p["stages"], p["ctas_per_sm"], p["wide_boxes"], p["page_prefetch"]) == (
        1, 4, 1, 4, True, True)
    _check(x, run)
    _check_timed(x)


def test_cta_scheduling_point_runs_the_plans_own_cluster_call():
    """At batch 8 x 8k d128 the plan runs 2 splits of one 8-warp CTA per SM in a cluster of 2; the CTA-scheduling
    point at the heuristic's count times that call (a timeline build of the cluster), not 2 splits of the 4-warp
    build, and its timeline holds every CTA at one per SM."""
    from labkit.sched import measure as sched
    from labkit.workloads.decode.run import decode_timeline

    tl = decode_timeline(8, 8192, 128, heads_q=32, heads_kv=8)
    assert len(tl.records) == 2 * 8 * 8 and sorted(tl.records[:, 0]) == list(range(128))
    assert tl.stats().ctas == 128 and tl.ctas_per_sm == 1
    p = sched.decode_point(8, 8192, None, launches=1)
    assert p["splits"] == p["heuristic_splits"] == 2 and p["slots"] == 132 and p["ctas"] == 128
    assert abs(p["measured_slot_efficiency"] - p["wave_efficiency"]) < 0.25


def test_peers_run_on_labkits_own_kv_and_agree_with_its_output():
    """The bench's peers read labkit's K/V, gathered contiguous through its page table: torch SDPA (math, fp32)
    on them gives labkit's output within the kernel's bound, and ``peer_rates`` times labkit beside them, each peer's
    output checked against labkit's first."""
    torch = pytest.importorskip("torch")
    from labkit.cuda import cupy
    from labkit.workloads.decode.bench import shape_runner
    from labkit.workloads.decode.inputs import bf16_to_f32
    from labkit.workloads.decode.peers import gather_contiguous, peer_rates

    cp = cupy()
    batch, kv_len, hq, hk, d = 3, 1000, 32, 8, 128  # the last page partly used
    with shape_runner(batch, kv_len, d, heads_q=hq, heads_kv=hk) as (runner, _, _):
        runner.buffers["out"].fill(0xFFFF)  # poison: every row must be written
        runner.run_once()
        out = bf16_to_f32(cp.asnumpy(runner.buffers["out"]))
        f32 = {n: torch.from_dlpack(bf16_to_f32(a)) for n, a in
               (("q", runner.buffers["q"]), ("k", gather_contiguous(runner.buffers["k_pool"], runner.buffers["table"],
                                                                     batch, kv_len)),
                ("v", gather_contiguous(runner.buffers["v_pool"], runner.buffers["table"], batch, kv_len)))}
        del runner
    q = f32["q"].view(batch, 1, hq, d).transpose(1, 2)
    k, v = (f32[n].transpose(1, 2) for n in ("k", "v"))
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), enable_gqa=True)
    ref = ref.transpose(1, 2).reshape(batch, hq, d).cpu().numpy()
    mag = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double().abs(), enable_gqa=True)
    mag = mag.transpose(1, 2).reshape(batch, hq, d).cpu().numpy()
    assert np.isfinite(out).all()
    assert (np.abs(out - ref) <= 2.0 ** -8 * (np.abs(ref) + mag) + 1e-3).all(), np.abs(out - ref).max()
    # twice: the second visit finds cuDNN's graph cached, and its first call had read K/V still being gathered
    for visit in range(2):
        rates = peer_rates(8, 1024, 128, iterations=3)
        assert isinstance(rates["labkit_beside_peers"], float) and rates["labkit_beside_peers"] > 0
        for p in ("sdpa_cudnn", "sdpa_flash"):  # both run on the H200, and each output was checked against labkit's
            assert isinstance(rates[p], float), (visit, p, rates[p])
        assert isinstance(rates["fa3"], float) or rates["fa3"].startswith("not available"), rates["fa3"]
        assert "x_best_peer_low" not in rates  # 3 rounds are too few for a 95 % interval of the median
    rates = peer_rates(8, 1024, 128, iterations=8)  # 8 rounds: the 1st and 8th smallest ratios (99.2 %)
    x_best = rates["labkit_beside_peers"] / max(v for p, v in rates.items() if p in ("sdpa_cudnn", "sdpa_flash", "fa3")
                                                and isinstance(v, float))
    assert 0.2 < rates["x_best_peer_low"] <= rates["x_best_peer_high"] < 5, rates
    assert rates["x_best_peer_low"] <= x_best * 1.05 and rates["x_best_peer_high"] >= x_best * 0.95, (x_best, rates)


@pytest.mark.parametrize("order", ["climbing", "falling"])
@pytest.mark.parametrize("name", ["g4_d128_p64_long", "g6_d256_p64_seed", "g8_d128_p32"])
def test_softmax_rescales_when_scores_climb_and_holds_when_they_fall(name, order):
    """The stage loop moves a row's running max only when a stage's max passes it by more than 2^8 in P: keys scaled
    up page by page along each sequence (scores climbing to ~+-100, so the max moves many times, by more and by less
    than the threshold) and down (the first stage's max stands, later P far below it) give exact attention."""
    from labkit.workloads.decode.inputs import _bf16, bf16_to_f32

    g, lens = CASES[name]
    x = make_inputs(g, seq_lens=lens, seed=47, share_pages=False)
    k = bf16_to_f32(x.k)
    for b in range(g.batch):
        pages = x.page_table[b, :-(-int(x.seq_lens[b]) // g.page_size)]
        ramp = np.linspace(0.2, 30.0, len(pages)) if order == "climbing" else np.linspace(30.0, 0.2, len(pages))
        k[pages] *= ramp[:, None, None, None].astype(np.float32)
    x.k[...] = _bf16(k)
    for s in sorted({1, 3, min(g.max_pages, 16)}):
        _check(x, run_decode(x, splits=s))

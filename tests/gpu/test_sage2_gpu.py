"""Sage2 kernels on the GPU: each phase against its reference (exact for the quantizers),
end-to-end accuracy at odd shapes (the whole output's cos and rel-L1, and every output row's relative L2 error within
ref.ROW_REL_L2_BOUND), bitwise-equal call paths, no NaN."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def _plan(shape, layout="NHD", dtype="bf16", seed=0, k_bias=0.0, v_bias=0.0, pv_terms=1, schedule=None):
    from labkit.workloads.sage2.inputs import check_inputs, random_inputs
    from labkit.workloads.sage2.plan import Sage2Plan
    from labkit.workloads.sage2.schedule import Schedule

    b, nq, nk, hq, hk, d = shape
    q, k, v = random_inputs(b, nq, nk, hq, hk, d, layout=layout, dtype=dtype, seed=seed, k_bias=k_bias,
                            v_bias=v_bias)
    return Sage2Plan(check_inputs(q, k, v, layout=layout), schedule or Schedule(pv_terms=pv_terms))


def _poison(plan):
    for name in ("k_mean", "q_scale", "k_scale", "v_scale", "v_amax", "k_mean_partial", "v_amax_partial"):
        getattr(plan, name).fill(np.nan)
    for name in ("q8", "k8", "v8", "v8_lo", "out"):
        if getattr(plan, name) is not None:
            getattr(plan, name).view(np.uint8).fill(0xFF)


def _bhnd_f32(x, inp):
    from labkit.workloads.sage2.inputs import to_f32
    from labkit.workloads.sage2.reference import to_bhnd

    return to_bhnd(to_f32(x, inp.dtype), inp.layout).get().transpose(0, 2, 1, 3)  # [B, H, N, D]


SHAPES = [  # (batch, q_len, kv_len, heads_q, heads_kv, head_dim)
    (1, 1, 1, 2, 2, 128),
    (2, 129, 200, 4, 2, 96),
    (1, 333, 1000, 3, 3, 64),
    (1, 1000, 777, 8, 2, 128),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout, dtype, pv_terms", [("NHD", "bf16", 1), ("HND", "fp16", 1), ("NHD", "bf16", 2),
                                                     ("NHD", "bf16", "sm90"), ("HND", "fp16", "sm90")])
def test_each_phase_matches_its_reference(shape, layout, dtype, pv_terms):
    """Every prep phase exactly; "sm90": the sm90 schedule's groups (Q per 16 rows, K per 128 keys: two
    rows per thread in the K quantizer) and its 128-channel padding."""
    import cupy as cp

    from labkit.workloads.sage2 import reference as ref
    from labkit.workloads.sage2.schedule import Schedule

    sm90 = pv_terms == "sm90"
    p = _plan(shape, layout, dtype, seed=hash(shape) % 1000, pv_terms=1 if sm90 else pv_terms,
              schedule=Schedule.sm90() if sm90 else None)
    _poison(p)
    for _, fn in p.steps()[:-1]:
        fn()
    cp.cuda.Device().synchronize()
    x, s, hd = p.inputs, p.schedule, p.kernel_head_dim
    q32, k32, v32 = (_bhnd_f32(a, x) for a in (x.q, x.k, x.v))
    d = x.head_dim
    km = k32.astype(np.float64).mean(axis=2)  # [B, H, D]
    np.testing.assert_allclose(p.k_mean.get()[..., :d], km, rtol=1e-5, atol=1e-6)
    assert not p.k_mean.get()[..., d:].any()
    q8, qs = ref.int8_groups(q32, s.warp_q, p.padded_q_len, hd)
    np.testing.assert_array_equal(p.q8.get(), q8)
    np.testing.assert_array_equal(p.q_scale.get(), qs)
    kc = k32 - p.k_mean.get()[:, :, None, :d]  # the kernel's own fp32 mean, so the check is exact
    k8, ks = ref.int8_groups(kc.astype(np.float32), s.cta_k, p.padded_kv_len, hd)
    np.testing.assert_array_equal(p.k8.get(), k8)
    np.testing.assert_array_equal(p.k_scale.get(), ks)
    _, v8, v8_lo, vs = ref.v_prep_ref(v32, p.padded_kv_len, hd)
    np.testing.assert_array_equal(p.v_amax.get()[..., :d], np.abs(v32).max(axis=2))  # [B, H, D], every token
    assert not p.v_amax.get()[..., d:].any()
    np.testing.assert_array_equal(p.v_scale.get(), vs)
    np.testing.assert_array_equal(p.v8.get(), v8)
    if pv_terms == 2:
        np.testing.assert_array_equal(p.v8_lo.get(), v8_lo)


# rel-L1 bounds. Plain N(0, 1) inputs give near-uniform attention and tiny outputs, where the
# single-term FP8 P and V of Sage2 (pv_terms 1) cost ~3.9 % rel-L1: the public Sage2 kernels
# measure 0.0391 at the seed shape on an H200 (the user's Sage2 brief), so Sage2 on
# plain inputs is held to 1.1 x that. The two-term split (pv_terms 2) and Sage2 with a
# per-channel bias on K and V (video-DiT-like; the brief: 0.0008-0.0018) are held to 0.03.
RANDN_REL_L1 = 1.1 * 0.0391
INPUT_CASES = [  # layout, dtype, k_bias, v_bias, pv_terms, rel-L1 bound
    ("NHD", "bf16", 0.0, 0.0, 1, RANDN_REL_L1),
    ("HND", "fp16", 0.0, 0.0, 1, RANDN_REL_L1),
    ("NHD", "bf16", 8.0, 0.0, 1, RANDN_REL_L1),  # large K bias: smoothing must make it as good as none
    ("NHD", "bf16", 8.0, 4.0, 1, 0.03),
    ("NHD", "bf16", 0.0, 0.0, 2, 0.03),
    ("HND", "fp16", 0.0, 0.0, 2, 0.03),
    ("NHD", "bf16", 8.0, 0.0, 2, 0.03),
]


@pytest.mark.parametrize("shape", SHAPES + [(1, 4097, 4160, 4, 4, 128)])
@pytest.mark.parametrize("layout, dtype, k_bias, v_bias, pv_terms, bound", INPUT_CASES)
def test_end_to_end_accuracy(shape, layout, dtype, k_bias, v_bias, pv_terms, bound):
    import cupy as cp

    from labkit.workloads.sage2 import reference as ref
    from labkit.workloads.sage2.inputs import to_f32

    p = _plan(shape, layout, dtype, seed=7 + hash(shape) % 1000, k_bias=k_bias, v_bias=v_bias, pv_terms=pv_terms)
    _poison(p)
    out = p.run()
    x = p.inputs
    r = ref.attention_ref(*(to_f32(a, x.dtype) for a in (x.q, x.k, x.v)), sm_scale=p.sm_scale, layout=layout)
    o = ref.to_bhnd(to_f32(out, x.dtype), layout)
    acc = ref.accuracy(o, r)
    worst, at = ref.worst_row(o, r)
    print(shape, layout, dtype, k_bias, v_bias, pv_terms, acc, f"worst row {worst:.4f} at {at}")
    assert acc["nan"] == 0
    assert acc["cos"] >= 0.999 and acc["rel_l1"] <= bound, acc
    assert worst <= ref.ROW_REL_L2_BOUND, f"row (batch, token, head) {at}: relative L2 error {worst:.4g}"
    cp.cuda.Device().synchronize()


def test_two_term_split_cuts_the_fp8_error():
    """Same inputs, both P.V paths: the split must remove most of the fp8 rounding error
    (a residual term that were dropped or mis-scaled would leave the error where it was)."""
    from labkit.workloads.sage2 import reference as ref
    from labkit.workloads.sage2.inputs import to_f32

    shape = (1, 2000, 2000, 4, 4, 128)
    rel = {}
    for terms in (1, 2):
        p = _plan(shape, seed=11, pv_terms=terms)
        _poison(p)
        out = p.run()
        x = p.inputs
        r = ref.attention_ref(*(to_f32(a, x.dtype) for a in (x.q, x.k, x.v)), sm_scale=p.sm_scale)
        rel[terms] = ref.accuracy(to_f32(out, x.dtype), r)["rel_l1"]
    print(rel)
    assert rel[2] < 0.5 * rel[1], rel


@pytest.mark.parametrize("shape", [(1, 1000, 1000, 4, 4, 128), (2, 333, 257, 4, 2, 96)])
@pytest.mark.parametrize("pv_terms", [1, 2])
def test_one_shot_and_phase_by_phase_are_bitwise_equal(shape, pv_terms):
    import cupy as cp

    p = _plan(shape, seed=3, pv_terms=pv_terms)
    _poison(p)
    p.run()
    one = p.out.copy()
    p.out.view(cp.uint8).fill(0xFF)
    timing = p.run_phases(iterations=3, warmup=1)
    assert set(timing.phases) == {"k_mean_and_smoothing_preparation", "qk_int8_quantization", "q_int8_quantization",
                                  "k_int8_subtract_mean_quantization", "v_fp8_transpose_scale_quantization",
                                  "v_transpose_pad_permute", "v_scale_fp8_quantization", "fused_mainloop"}
    assert cp.array_equal(one.view(cp.uint16), p.out.view(cp.uint16))


def test_bad_inputs_raise_before_any_launch():
    import cupy as cp

    from labkit.workloads.sage2.inputs import check_inputs

    ok = cp.zeros((1, 16, 2, 128), cp.float16)
    cases = [
        ((ok.astype(cp.float32), ok, ok), "dtype float32"),
        ((ok[0], ok, ok), "rank 3"),
        ((ok, ok, ok), None),
        ((ok, cp.zeros((1, 16, 2, 64), cp.float16), cp.zeros((1, 16, 2, 64), cp.float16)), "must match"),
        ((ok, ok, cp.zeros((1, 8, 2, 128), cp.float16)), "differ"),
        ((ok[:, ::2], ok, ok), "not contiguous"),
        ((cp.zeros((1, 0, 2, 128), cp.float16), ok, ok), "N must be >= 1"),
        ((cp.zeros((1, 16, 2, 48), cp.float16),) * 3, "head_dim 48"),
        ((cp.zeros((1, 16, 3, 128), cp.float16), ok, ok), "not a multiple of 2 kv heads"),
        ((ok, ok, ok.astype(cp.uint16)), "dtypes differ"),
    ]
    for args, msg in cases:
        if msg is None:
            check_inputs(*args)
            continue
        with pytest.raises(ValueError, match=msg):
            check_inputs(*args)
    with pytest.raises(ValueError, match="layout"):
        check_inputs(ok, ok, ok, layout="NDH")


def test_profile_report_at_a_small_shape(tmp_path):
    """The full report path (phases, decomposition, checksums, accuracy, interleaved tail study)."""
    from labkit import report
    from labkit.workloads.sage2.profile import profile

    r = profile((1, 1000, 4, 96), warmup=1, iterations=3, tail_iterations=2, tail_dir=tmp_path / "tails")
    assert r.decomposition.equal and r.decomposition.max_abs == 0.0
    assert r.manual_checksum == r.reference_checksum
    assert [(t.sweep, t.q_len, t.kv_len) for t in r.tail_study] == [
        ("q_tail_fixed_kv", 896, 1000), ("q_tail_fixed_kv", 897, 1000), ("q_tail_fixed_kv", 1000, 1000),
        ("kv_tail_fixed_q", 1000, 960), ("kv_tail_fixed_q", 1000, 961), ("kv_tail_fixed_q", 1000, 1000)]
    full = [t for t in r.tail_study if t.q_len == t.kv_len == 1000]
    assert all(t.checksum == r.manual_checksum for t in full)  # same inputs, same kernels: same output
    assert r.accuracy["nan"] == 0 and r.accuracy["cos"] >= 0.999
    assert r.metadata["head_dim"] == 96 and r.metadata["kernel_head_dim"] == 128
    assert r.scheduler.q_ctas_per_head == 8 and r.scheduler.k_iterations_per_cta == 16
    path = report.save(r, tmp_path / "r.json")
    assert report.load(path) == r
    # the rounds are a finished sweep: the same study again measures nothing and folds the same points
    from labkit.workloads.sage2.tails import tail_study

    assert len(list((tmp_path / "tails" / "points").glob("*.json"))) == 2
    assert tail_study((1, 1000, 4, 96), iterations=2, directory=tmp_path / "tails") == list(r.tail_study)


def test_profile_refuses_to_time_a_kernel_whose_output_is_wrong(monkeypatch, tmp_path):
    """style.md: a failed check raises and nothing is timed (the profile had recorded the accuracy and timed on; a
    review against the briefs). The reference negated stands for a wrong output."""
    from labkit.errors import LabkitError
    from labkit.workloads.sage2 import profile as prof
    from labkit.workloads.sage2.plan import Sage2Plan

    real = prof.attention_ref
    monkeypatch.setattr(prof, "attention_ref", lambda *a, **kw: -real(*a, **kw))
    timed = []
    monkeypatch.setattr(Sage2Plan, "run_phases", lambda self, **kw: timed.append(kw))
    with pytest.raises(LabkitError, match=r"^Sage2 .* at \[1, 1000, 4, 96\]: check failed before timing \(expected no "
                                          r"NaN and cos >= 0.999\); accuracy against exact fp32 attention: cos -0\.99"):
        prof.profile((1, 1000, 4, 96), warmup=1, iterations=3, tail_iterations=2, tail_dir=tmp_path / "tails")
    assert not timed and not (tmp_path / "tails").exists()


def test_a_tail_round_whose_mainloop_leaves_output_unwritten_is_refused(monkeypatch):
    """The round poisons each output before its timed mainloop: one that writes only its first row is named, with the
    count of elements it left, and no checksum of NaN reaches a file."""
    import cupy as cp

    from labkit.errors import LabkitError
    from labkit.workloads.sage2.plan import Sage2Plan
    from labkit.workloads.sage2.tails import tail_round

    monkeypatch.setattr(Sage2Plan, "mainloop", lambda self, *a, **k: self.out[:, :1].view(cp.uint16).fill(0x3F80))
    with pytest.raises(LabkitError, match=r"tail study round 1: q_tail_fixed_kv/q896/kv1000: 343680 of 344064 output "
                                          r"elements are not finite"):
        tail_round((1, 1000, 4, 96), round_index=1)


def test_torch_inputs_give_the_same_bits_as_cupy_inputs():
    torch = pytest.importorskip("torch")
    import cupy as cp

    from labkit.workloads.sage2.inputs import check_inputs, random_inputs
    from labkit.workloads.sage2.plan import Sage2Plan

    q, k, v = random_inputs(1, 300, 300, 4, 2, 128, seed=5)
    ref = Sage2Plan(check_inputs(q, k, v)).run().copy()
    tq, tk, tv = (torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16) for a in (q, k, v))
    out = Sage2Plan(check_inputs(tq, tk, tv)).run()
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16 and tuple(out.shape) == (1, 300, 4, 128)
    assert cp.array_equal(cp.from_dlpack(out.view(torch.int16)).view(cp.uint16), ref)
    with pytest.raises(ValueError, match="not contiguous"):
        check_inputs(tq.transpose(1, 2), tk, tv)


@pytest.mark.parametrize("shape", SHAPES + [(1, 4097, 4160, 4, 4, 128)])
@pytest.mark.parametrize("layout, dtype, k_bias, v_bias, bound", [(c[0], c[1], c[2], c[3], c[5])
                                                                  for c in INPUT_CASES if c[4] == 1])
def test_sm90_mainloop_matches_the_seed_build(shape, layout, dtype, k_bias, v_bias, bound):
    """The wgmma + TMA build on the same inputs as the seed-schedule build: outputs poisoned first, every
    element checked against exact fp32 attention; its error within 3 % of the seed build's plus 5e-4
    (with K and V bias both sit near 0.0025 and sm90's 128-key K scales, vs 64, measured ~10 % above)."""
    from labkit.workloads.sage2 import reference as ref
    from labkit.workloads.sage2.inputs import to_f32
    from labkit.workloads.sage2.plan import Sage2Plan
    from labkit.workloads.sage2.schedule import Schedule

    seed_plan = _plan(shape, layout, dtype, seed=11 + hash(shape) % 1000, k_bias=k_bias, v_bias=v_bias)
    x = seed_plan.inputs
    r = ref.attention_ref(*(to_f32(a, x.dtype) for a in (x.q, x.k, x.v)), sm_scale=seed_plan.sm_scale, layout=layout)
    accs = {}
    for name, plan in (("seed", seed_plan), ("sm90", Sage2Plan(x, Schedule.sm90()))):
        _poison(plan)
        o = ref.to_bhnd(to_f32(plan.run(), x.dtype), layout)
        accs[name] = ref.accuracy(o, r)
        worst, at = ref.worst_row(o, r)
        accs[name]["worst_row"] = worst
        assert worst <= ref.ROW_REL_L2_BOUND, f"{name}: row (batch, token, head) {at}: relative L2 error {worst:.4g}"
    print(shape, layout, dtype, k_bias, v_bias, accs)
    a = accs["sm90"]
    assert a["nan"] == 0 and a["cos"] >= 0.999 and a["rel_l1"] <= bound, a
    assert a["rel_l1"] <= 1.03 * accs["seed"]["rel_l1"] + 5e-4, accs


def test_sm90_one_shot_and_phase_by_phase_are_bitwise_equal():
    import cupy as cp

    from labkit.workloads.sage2.schedule import Schedule

    p = _plan((2, 333, 257, 4, 2, 96), schedule=Schedule.sm90())
    one = p.run().copy()
    p.out.view(cp.uint8).fill(0xFF)
    p.run_phases(iterations=1, warmup=0)
    assert cp.array_equal(one.view(cp.uint16), p.out.view(cp.uint16))

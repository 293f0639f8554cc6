"""CTA timelines and occupancy on the GPU (written with issue 11's model; to run on the device)."""

import numpy as np
import pytest

from ..conftest import static_smem_kernel

pytestmark = pytest.mark.gpu


def test_sage2_timeline_records_every_cta_once_and_changes_no_output():
    from labkit.cuda import cupy
    from labkit.workloads.sage2.inputs import check_inputs, random_inputs, to_f32
    from labkit.workloads.sage2.plan import Sage2Plan

    cupy_isfinite = cupy().isfinite

    q, k, v = random_inputs(1, 4096, 4096, 8, 8, 128, layout="NHD", dtype="bf16", seed=3)
    plain = Sage2Plan(check_inputs(q, k, v, layout="NHD"))
    timed = Sage2Plan(check_inputs(q, k, v, layout="NHD"), timeline=True)
    for plan in (plain, timed):  # poisoned first (bf16 NaN words): each run must write every element
        plan.out.fill(0xFFFF)
        plan.run()
    assert bool(cupy_isfinite(to_f32(plain.out, "bf16")).all())
    assert np.array_equal(plain.out.get(), timed.out.get())
    tl = timed.read_timeline()
    df = tl.frame()
    assert sorted(df["cta"]) == list(range(32 * 8))  # ceil(4096 / 128) q tiles x 8 heads
    s = tl.stats()
    assert 0 < s.slot_efficiency <= 1 and s.makespan_ns > 0 and s.waves >= 1


def test_occupancy_model_matches_the_driver():
    import cupy as cp
    from cuda.bindings import driver

    from labkit.kernels import compile_cubin
    from labkit.sched import cubin_occupancy
    from labkit.workloads.sage2.plan import KERNELS, build_options
    from labkit.workloads.sage2.schedule import Schedule

    cubin = compile_cubin(KERNELS["attn_fwd"], arch="sm_90", options=build_options(128, "bf16", Schedule()))
    model = cubin_occupancy(cubin.image, threads_per_cta=128, dynamic_smem_bytes=32768)
    cp.cuda.Device().synchronize()
    err, module = driver.cuModuleLoadData(cubin.image)
    assert err == driver.CUresult.CUDA_SUCCESS
    err, func = driver.cuModuleGetFunction(module, b"attn_fwd")
    assert err == driver.CUresult.CUDA_SUCCESS
    err, n = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, 128, 32768)
    assert err == driver.CUresult.CUDA_SUCCESS
    assert n == model.ctas_per_sm, (n, model)


@pytest.mark.parametrize("static_bytes", [0, 8, 1000, 40000])
def test_occupancy_model_matches_the_driver_at_every_dynamic_size(static_bytes, tmp_path):
    """A kernel with ``static_bytes`` of static shared memory (on sm_90 the cubin's .nv.shared section also holds the
    1 KB system reserve): the model's count from the cubin equals cuOccupancy's at every dynamic size the driver
    accepts, in 128-byte steps, and the model refuses the first size the driver refuses."""
    from cuda.bindings import driver as cu

    from labkit.cuda import check, load_function
    from labkit.device import describe
    from labkit.errors import ArgumentError
    from labkit.kernels import compile_cubin
    from labkit.sched import cubin_occupancy

    dev = describe()
    cubin = compile_cubin(tmp_path / "smem.cu", arch=dev.arch, code=static_smem_kernel(static_bytes))
    func, _module = load_function(cubin.image, "k")
    accepts = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    lo, hi = 0, 1 << 20  # the largest dynamic size the driver accepts
    while lo < hi:
        mid = (lo + hi + 1) // 2
        taken = cu.cuFuncSetAttribute(func, accepts, mid)[0] == cu.CUresult.CUDA_SUCCESS
        lo, hi = (mid, hi) if taken else (lo, mid - 1)
    check(cu.cuFuncSetAttribute(func, accepts, lo), "cuFuncSetAttribute")
    wrong = []
    for dynamic in [*range(0, lo + 1, 128), lo]:
        driver = check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, 128, dynamic), "cuOccupancy")
        model = cubin_occupancy(cubin.image, kernel="k", arch=dev.arch, dynamic_smem_bytes=dynamic).ctas_per_sm
        if model != driver:
            wrong.append((dynamic, driver, model))
    assert not wrong, f"{len(wrong)} dynamic sizes (dynamic, driver, model), first {wrong[:4]}"
    with pytest.raises(ArgumentError):
        cubin_occupancy(cubin.image, kernel="k", arch=dev.arch, dynamic_smem_bytes=lo + 1)


@pytest.mark.parametrize("size", [2, 4, 8])
def test_the_cluster_probe_the_plan_asks_matches_the_decode_build_and_the_h200_table(size):
    """plan_for_device asks labkit.sched.clusters how many CTAs in clusters of ``size`` (one per SM) the GPU holds at
    once, with an empty probe kernel; the driver gives the 1-CTA-per-SM clustered decode build the same count, and on
    the H200 it is plan.cluster_ctas's table (what CPU plans take; the H100 of 2026-12-05 held the same counts)."""
    from labkit.cuda import load_function, max_active_clusters
    from labkit.device import describe
    from labkit.sched.clusters import resident_cluster_ctas
    from labkit.workloads.decode.build import compile_kernel
    from labkit.workloads.decode.plan import cluster_ctas, plan_call
    from labkit.workloads.decode.run import geometry_for

    dev = describe()
    kb = plan_call(geometry_for(8, 8192, head_dim=256), splits=size, cluster=True, sms=dev.sm_count,
                   arch=dev.arch).kernel
    func, _module = load_function(compile_kernel(kb, dev.arch).image, "paged_decode", kb.dynamic_smem_bytes)
    decode = size * max_active_clusters(func, size, kb.threads, kb.dynamic_smem_bytes, "paged_decode")
    assert resident_cluster_ctas(dev.index)[size] == decode
    if dev.arch == "sm_90" and dev.sm_count == 132:
        assert decode == cluster_ctas(size, dev.sm_count, dev.arch), (decode, size)


def test_a_call_whose_clusters_would_not_all_fit_runs_in_one_wave():
    """4 x 8k d256: 4 splits of 32 units are 128 CTAs, more than the 120 the H200 holds in clusters of 4; the plan
    leaves the cluster out, and the measured call takes one wave, as the model says (it had taken two)."""
    from labkit.sched import measure as sched

    p = sched.decode_point(4, 8192, None, head_dim=256, launches=1)
    assert "cl" not in p["kernel"] and p["ctas"] == 128
    assert p["full_waves"] == p["measured_waves"] == 1, p

"""CTA timelines and occupancy on the GPU (written with issue 11's model; to run on the device)."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_sage2_timeline_records_every_cta_once_and_changes_no_output():
    from labkit.workloads.sage2.inputs import check_inputs, random_inputs
    from labkit.workloads.sage2.plan import Sage2Plan

    q, k, v = random_inputs(1, 4096, 4096, 8, 8, 128, layout="NHD", dtype="bf16", seed=3)
    plain = Sage2Plan(check_inputs(q, k, v, layout="NHD"))
    timed = Sage2Plan(check_inputs(q, k, v, layout="NHD"), timeline=True)
    plain.run()
    timed.run()
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

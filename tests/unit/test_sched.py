"""CTA scheduling model against hand-computed cases and the facts measured on the H200."""

import re

import numpy as np
import pytest

from labkit import cli
from labkit.errors import ArgumentError
from labkit.kernels import compile_cubin
from labkit.sched import cubin_occupancy, occupancy, tile_efficiency, waves

from ..conftest import ROOT, static_smem_kernel

SEED_CUBIN = next((ROOT / "data" / "cubins").glob("*.cubin"))
SEED_ENTRY = "fmhaSm100fKernel_QkvBfloat16OBfloat16H256PagedKvCausalP64MultiCtasKvVarSeqQ8Kv128StaticSwapsAbForGen"


@pytest.mark.parametrize("kw, ctas, limiter", [
    # 255 registers -> 256 x 32 = 8192 per warp -> 8 warps per SM -> two 4-warp CTAs (the Sage2 mainloop, measured)
    (dict(threads_per_cta=128, registers_per_thread=255, static_smem_bytes=1024, dynamic_smem_bytes=32768), 2,
     "registers"),
    # 32 registers x 256 threads: 64 warps by registers and by threads -> 8 CTAs; 2048 threads -> 8
    (dict(threads_per_cta=256, registers_per_thread=32), 8, "registers, threads"),
    # 100 KB + 1 KB reserve: two fit the 228 KB carveout
    (dict(threads_per_cta=128, registers_per_thread=64, dynamic_smem_bytes=100 * 1024), 2, "shared_memory"),
    # tiny CTAs: the 32 CTA slots bind
    (dict(threads_per_cta=32, registers_per_thread=16), 32, "cta_slots"),
    # 166 registers round to 168: 168 x 32 = 5376 per warp (21 units of 256) -> 12 warps -> 3 CTAs of 4 warps
    (dict(threads_per_cta=128, registers_per_thread=166), 3, "registers"),
    # found by a review: registers sit in 4 sub-partitions of 16384; 40 x 32 = 1280 per warp -> 12 warps in each
    # (not 51 in one file of 65536) -> 48 warps -> 16 CTAs of 3 warps, not 17
    (dict(threads_per_cta=96, registers_per_thread=40), 16, "registers"),
    # 17 warps of 1280: 48 // 17 = 2 CTAs (51 // 17 = 3 in one file)
    (dict(threads_per_cta=544, registers_per_thread=40), 2, "registers"),
])
def test_occupancy_hand_computed_on_sm90(kw, ctas, limiter):
    occ = occupancy(arch="sm_90", **kw)
    assert (occ.ctas_per_sm, occ.limiter) == (ctas, limiter)


def test_architecture_limits_differ():
    ada = occupancy(arch="sm_89", threads_per_cta=128, registers_per_thread=32, dynamic_smem_bytes=48 * 1024)
    assert ada.ctas_per_sm == 2 and ada.limiter == "shared_memory"  # 100 KB per SM on sm_89
    assert occupancy(arch="sm_90a", threads_per_cta=128, registers_per_thread=32,
                     dynamic_smem_bytes=48 * 1024).ctas_per_sm == 4
    with pytest.raises(ArgumentError, match="labkit knows the limits of"):
        occupancy(arch="sm_75", threads_per_cta=128, registers_per_thread=32)
    with pytest.raises(ArgumentError, match="allows 232448 B per CTA"):
        occupancy(arch="sm_90", threads_per_cta=128, registers_per_thread=32, dynamic_smem_bytes=240 * 1024)


def test_waves_of_the_sage2_seed_grid():
    w = waves(16576, 132, 2)  # ncu: launch__waves_per_multiprocessor 62.79
    assert w.slots == 264 and round(w.waves, 2) == 62.79 and w.full_waves == 63
    assert w.efficiency == pytest.approx(16576 / (63 * 264)) and w.last_wave_fill == pytest.approx(208 / 264)
    assert waves(264, 132, 2).efficiency == 1.0 and waves(265, 132, 2).efficiency == pytest.approx(265 / 528)


def test_tile_efficiency_matches_the_seed_tail_points():
    assert tile_efficiency(37810, 128) == pytest.approx(0.9979413006756757)  # the seed's q_row_efficiency
    assert tile_efficiency(37761, 128) == pytest.approx(0.9966480152027027)
    assert tile_efficiency(37760, 64) == 1.0


@pytest.mark.parametrize("args, kw, said", [
    ((0, 132, 2), {}, "ctas = 0: expected >= 1"),
    ((True, 132, 2), {}, "ctas = True: expected an integer"),
    ((128, 132.0, 2), {}, "sms = 132.0: expected an integer"),
    ((128, 132, 0), {}, "ctas_per_sm = 0: expected >= 1"),
    ((128, 132, 2), {"resident": 0}, "resident (of the sms x ctas_per_sm slots) = 0: expected 1..264"),
    ((128, 132, 2), {"resident": 265}, "resident (of the sms x ctas_per_sm slots) = 265: expected 1..264"),
    ((128, 132, 2), {"resident": True}, "resident (of the sms x ctas_per_sm slots) = True: expected an integer"),
])
def test_waves_refuse_what_is_no_grid(args, kw, said):
    with pytest.raises(ArgumentError, match=re.escape(said)):
        waves(*args, **kw)


def test_waves_take_a_frames_numpy_integers():
    """An API walk: a count read from a DataFrame (np.int64) was refused as not an integer."""
    w = waves(np.int64(300), np.int32(132), np.int64(2), resident=np.int64(256))
    assert w == waves(300, 132, 2, resident=256) and type(w.ctas) is int and type(w.slots) is int


def test_waves_take_any_resident_count_from_one_to_every_slot():
    # resident 1: one CTA at a time, so 3 CTAs take 3 full waves; the efficiency stays a share of all 264 slots
    one = waves(3, 132, 2, resident=1)
    assert (one.waves, one.full_waves, one.last_wave_fill, one.efficiency) == (3.0, 3, 1.0, 3 / (3 * 264))
    assert waves(300, 132, 2, resident=264) == waves(300, 132, 2)


@pytest.mark.parametrize("length, tile, said", [(0, 64, "length = 0: expected >= 1"),
                                                (64, 0, "tile = 0: expected >= 1"),
                                                (True, 64, "length = True: expected an integer"),
                                                (64, 64.0, "tile = 64.0: expected an integer")])
def test_tile_efficiency_refuses_what_is_no_length_or_tile(length, tile, said):
    with pytest.raises(ArgumentError, match=re.escape(said)):
        tile_efficiency(length, tile)
    assert tile_efficiency(np.int64(100), np.int32(64)) == 100 / 128  # a frame's integers (a review)


def test_cubin_occupancy_reads_registers_and_smem_from_the_elf():
    occ = cubin_occupancy(SEED_CUBIN, kernel=SEED_ENTRY, dynamic_smem_bytes=144992)
    # the cubin's target as manifest check names it (a new-user review read sm_100 beside its sm_100f)
    assert occ.arch == "sm_100f" and occ.registers_per_thread == 128 and occ.threads_per_cta == 512
    assert occ.ctas_per_sm == 1 and occ.limiter == "registers, shared_memory"
    from labkit.workloads.sage2.plan import KERNELS, build_options
    from labkit.workloads.sage2.schedule import Schedule

    cubin = compile_cubin(KERNELS["attn_fwd"], arch="sm_90", options=build_options(128, "bf16", Schedule()))
    sage2 = cubin_occupancy(cubin.image, threads_per_cta=128, dynamic_smem_bytes=32768)
    assert sage2.registers_per_thread == 255 and sage2.ctas_per_sm == 2


def test_occupancy_takes_a_shape_at_each_limit_and_refuses_one_past_it():
    # 1024 threads of 32 registers: 32 warps of 1024 registers, 65536 / 1024 / 32 = 2 CTAs by registers, 2048 / 1024 = 2
    # by threads; 64 warps per SM
    big = occupancy(arch="sm_90", threads_per_cta=1024, registers_per_thread=32)
    assert (big.ctas_per_sm, big.warps_per_sm, big.limiter) == (2, 64, "registers, threads")
    # 232448 B, sm_90's opt-in maximum, + the 1 KB reserve = 233472, the whole carveout: one CTA
    whole = occupancy(arch="sm_90", threads_per_cta=128, registers_per_thread=32, static_smem_bytes=1024,
                      dynamic_smem_bytes=231424)
    assert (whole.smem_per_cta_bytes, whole.ctas_per_sm, whole.warps_per_sm, whole.limiter) == (
        233472, 1, 4, "shared_memory")
    for kw, said in ((dict(threads_per_cta=1025), "threads_per_cta 1025: a CTA has at most 1024 threads"),
                     (dict(threads_per_cta=0), "threads_per_cta = 0: expected >= 1"),
                     (dict(registers_per_thread=True), "registers_per_thread = True"),
                     (dict(static_smem_bytes=-1), "static_smem_bytes = -1"),
                     (dict(dynamic_smem_bytes=231425, static_smem_bytes=1024), "allows 232448 B per CTA"),
                     # 25 warps of 2560 registers are 64000, under 65536, but the launch counts 28 warps: 71680
                     (dict(threads_per_cta=800, registers_per_thread=80),
                      "80 registers x 800 threads: a CTA takes 71680 registers (2560 a warp, 28 warps"),
                     (dict(threads_per_cta=1024, registers_per_thread=255), "a CTA takes 262144 registers")):
        with pytest.raises(ArgumentError, match=re.escape(said)):
            occupancy(arch="sm_90", **{"threads_per_cta": 128, "registers_per_thread": 32, **kw})


def test_cubin_occupancy_refuses_an_entry_it_cannot_size(monkeypatch):
    # a cubin read as one entry 'k' of sm_90: one without a register count, one without __launch_bounds__ (its threads
    # then given or refused), and a kernel name the cubin lacks
    import labkit.manifest.elf as elf

    def cubin(**entry):
        e = elf.Entry("k", 0, (), 0, 0, **{"max_threads": None, "registers": 32, **entry})
        monkeypatch.setattr(elf, "read_cubin", lambda image: elf.CubinInfo(90, "sm_90", {"k": e}))

    cubin(registers=None)
    with pytest.raises(ArgumentError, match=re.escape("k: the cubin records no register count (EIATTR_REGCOUNT)")):
        cubin_occupancy(b"cubin", threads_per_cta=128)
    cubin()
    with pytest.raises(ArgumentError, match="k has no __launch_bounds__: give the threads per CTA"):
        cubin_occupancy(b"cubin")
    assert cubin_occupancy(b"cubin", threads_per_cta=128) == occupancy(arch="sm_90", threads_per_cta=128,
                                                                       registers_per_thread=32)
    with pytest.raises(ArgumentError, match="kernel 'other' is not in the cubin; it has: k"):
        cubin_occupancy(b"cubin", kernel="other", threads_per_cta=128)


def test_cli(capsys):
    assert cli.main(["sched", "waves", "--ctas", "16576", "--ctas-per-sm", "2"]) == 0
    out = capsys.readouterr().out
    # ceil(waves) under a name that says so: "full_waves 63" read as 63 whole waves of 62.79 (found by a review)
    assert "62.7879" in out and "waves_taken            63\n" in out and "full_waves" not in out
    assert cli.main(["sched", "occupancy", str(SEED_CUBIN), "--kernel", SEED_ENTRY, "--dynamic-smem", "144992",
                     "--ctas", "304", "--sms", "148"]) == 0
    out = capsys.readouterr().out
    assert "ctas_per_sm            1" in out and "waves                  2.0541" in out
    assert cli.main(["sched", "occupancy", str(SEED_CUBIN)]) == 2
    assert "pick one (--kernel NAME)" in capsys.readouterr().err
    # found by a CLI review: a launch over __launch_bounds__ gave 0 CTAs per SM, and another SM's limits were used
    assert cli.main(["sched", "occupancy", str(SEED_CUBIN), "--kernel", SEED_ENTRY, "--threads", "1024"]) == 2
    assert "1024 threads per CTA is over its __launch_bounds__ of 512" in capsys.readouterr().err
    assert cli.main(["sched", "occupancy", str(SEED_CUBIN), "--kernel", SEED_ENTRY, "--arch", "sm_90"]) == 2
    assert "--arch sm_90: the cubin is built for sm_100f, which does not run there" in capsys.readouterr().err


@pytest.mark.parametrize("ctas, per_sm, said", [
    # 16 x 4k decode: 128 CTAs at two per SM read as 48 % efficient, though 128 of the 132 SMs each run one
    (128, 2, "so 128 of 132 SMs hold one each (97% of the SMs busy); efficiency is the share of the 264 slots held"),
    (512, 4, "so 132 of 132 SMs hold 3-4 each (100% of the SMs busy)"),
    (264, 4, "so 132 of 132 SMs hold 2 each (100% of the SMs busy)"),  # as many on each: not '2-2 each'
    (528, 4, None), (600, 4, None)])  # a full wave; more than one
def test_sched_waves_says_how_a_part_filled_wave_spreads_over_the_sms(capsys, ctas, per_sm, said):
    assert cli.main(["sched", "waves", "--ctas", str(ctas), "--ctas-per-sm", str(per_sm)]) == 0
    out = capsys.readouterr().out
    if said is None:
        assert "part-filled wave" not in out
    else:
        assert out.splitlines()[-1].startswith("one part-filled wave: the CTAs spread over the SMs first, ")
        assert said in out


def test_notebook_04s_points_table_names_each_sweep_and_the_split_count_each_call_ran_with():
    import pandas as pd

    from labkit.sched import study

    splits = pd.DataFrame({"splits": [1, 4], "heuristic_splits": [2, 2], "measured_slot_efficiency": [0.9, 0.8],
                           "wave_efficiency": [0.95, 0.7]})
    batch = pd.DataFrame({"splits": [0, 0], "heuristic_splits": [3, 1], "measured_slot_efficiency": [0.5, 0.6],
                          "wave_efficiency": [0.5, 0.5]})
    t = study.measured_points(splits=splits, batch=batch)
    assert t["sweep"].tolist() == ["splits", "splits", "batch", "batch"]
    assert t["splits"].tolist() == [1, 4, 3, 1]  # asked 0 (the heuristic's): the count the call ran with
    assert t["measured_minus_model"].round(6).tolist() == [-0.05, 0.1, 0.0, 0.1]
    q_model, kv_model = study.sage2_dense_models((1, 4096, 8, 128), [1000], [4000], sms=132, ctas_per_sm=1)
    assert q_model["q_len"].max() <= 4096 and kv_model["kv_len"].max() <= 4096 and 1000 in q_model["q_len"].tolist()


def test_sched_gpu_commands_write_what_they_print(tmp_path, monkeypatch, capsys):
    """The commands' halves after the GPU work, with the measurements standing in: crosscheck writes crosscheck.csv
    (one row per shape, the difference column included) and asks for ncu unless --no-ncu; overhead --out holds its
    result; launches prints each shape's row; no --shape means the three default shapes."""
    import json

    import pandas as pd

    from labkit.sched import crosscheck as cc

    row = {"shape": "1x4352x10x128", "ctas": 340, "model_waves": 1.2879, "model_wave_efficiency": 0.6439,
           "slot_efficiency": 0.64, "sm_efficiency": 0.65, "timeline_ctas_per_sm_min": 2, "timeline_ctas_per_sm_max": 3}
    asked = []

    def crosscheck(shapes, out, ncu):  # as the real one, it makes the directory
        asked.append(([tuple(s) for s in shapes], out, ncu))
        out.mkdir()
        return cc.join([row])

    monkeypatch.setattr(cc, "crosscheck", crosscheck)
    monkeypatch.setattr(cc, "launches", lambda shapes, out: asked.append(([tuple(s) for s in shapes], out)) or [row])
    monkeypatch.setattr(cc, "overhead", lambda shape, iterations: asked.append((tuple(shape), iterations)) or {
        "shape": cc.label(shape), "iterations": iterations, "plain_p50_ms": 1.0, "timeline_p50_ms": 1.004,
        "overhead": 0.004, "target": 0.01})
    assert cli.main(["sched", "crosscheck", "--out", str(tmp_path / "cc"), "--no-ncu", "--shape", "1,4352,10,128"]) == 0
    assert asked[-1] == ([(1, 4352, 10, 128)], tmp_path / "cc", False)
    table = pd.read_csv(tmp_path / "cc" / "crosscheck.csv")
    assert list(table.columns) == [*row, "ncu_sm_active_ratio", "ncu_ctas_per_sm_min", "ncu_ctas_per_sm_max",
                                   "ncu_waves", "sm_efficiency_minus_ncu"]  # no index column
    assert table["shape"].tolist() == ["1x4352x10x128"] and table["sm_efficiency"].tolist() == [0.65]
    shown = capsys.readouterr().out.splitlines()
    assert shown[1].split()[:4] == ["1x4352x10x128", "340", "1.2879", "0.6439"]  # no index, 4 places
    assert shown[-1] == f"table: {tmp_path / 'cc'}/crosscheck.csv"
    assert cli.main(["sched", "crosscheck", "--out", str(tmp_path / "cc2")]) == 0
    assert asked[-1][0] == [(1, 37810, 56, 128), (1, 8448, 4, 128), (1, 4352, 10, 128)] and asked[-1][2] is True
    assert cli.main(["sched", "overhead", "--iterations", "1000", "--out", str(tmp_path / "o.json")]) == 0
    assert asked[-1] == ((1, 37810, 56, 128), 1000)  # the most rounds -h allows
    assert json.loads((tmp_path / "o.json").read_text())["overhead"] == 0.004
    assert "overhead               0.0040" in capsys.readouterr().out
    assert cli.main(["sched", "launches", "--out", str(tmp_path / "l.json"), "--shape", "1,4352,10,128"]) == 0
    assert asked[-1] == ([(1, 4352, 10, 128)], tmp_path / "l.json")
    assert "timeline_ctas_per_sm_max 3\n" in capsys.readouterr().out


def test_occupancy_notes_the_assumed_shared_memory_only_when_none_is_given(capsys):
    """A cubin does not record its launches' dynamic shared memory: the note says so when --dynamic-smem is left out,
    and is absent when the launch's bytes are given."""
    argv = ["sched", "occupancy", str(SEED_CUBIN), "--kernel", SEED_ENTRY]
    assert cli.main(argv) == 0
    assert "(no dynamic shared memory assumed: give a launch's --dynamic-smem" in capsys.readouterr().out
    assert cli.main([*argv, "--dynamic-smem", "144992"]) == 0
    assert "no dynamic shared memory assumed" not in capsys.readouterr().out


def test_an_ampere_or_ada_cubin_has_its_registers_and_runs_under_a_later_sms_limits(tmp_path, monkeypatch):
    """Found by a review: sm_75-sm_89 cubins keep a function's registers in the top byte of its .text section's
    sh_info, so the symbol lookup missed and every sm_80 / sm_89 cubin was refused ('no register count'); and --arch
    sm_89 was refused for an sm_80 cubin, which runs on an sm_89 GPU under that SM's limits."""
    from labkit.kernels import compile_cubin

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    code = 'extern "C" __global__ void __launch_bounds__(256) k(float* a, int n) { a[threadIdx.x] *= n; }'
    regs = {arch: cubin_occupancy(compile_cubin(tmp_path / "k.cu", arch=arch, code=code).image).registers_per_thread
            for arch in ("sm_80", "sm_89", "sm_90")}
    assert regs["sm_80"] == regs["sm_89"] == regs["sm_90"] and regs["sm_90"] >= 1
    ampere = compile_cubin(tmp_path / "k.cu", arch="sm_80", code=code).image
    assert cubin_occupancy(ampere, arch="sm_89").arch == "sm_89"  # 1536 threads, 24 CTAs per SM
    with pytest.raises(ArgumentError, match="the cubin is built for sm_80, which does not run there"):
        cubin_occupancy(ampere, arch="sm_100")  # another major: never


def test_a_parameter_block_over_4_kb_is_read_from_its_v2_record(tmp_path, monkeypatch):
    """Found by a review: above 4 KB NVRTC describes parameters with EIATTR_KPARAM_INFO_V2, which the reader ignored:
    a 4408-byte block read as 0 bytes, and manifest check then refused a correct pack."""
    from labkit.kernels import compile_cubin
    from labkit.manifest.elf import read_cubin

    monkeypatch.setenv("LABKIT_CACHE", str(tmp_path / "cache"))
    for ints in (1024, 1100):  # 4104 B (the old record) and 4408 B (the v2 one)
        code = (f"struct S {{ int v[{ints}]; }};\n"
                'extern "C" __global__ void k(S s, float* out) { out[threadIdx.x] = s.v[threadIdx.x]; }')
        e = read_cubin(compile_cubin(tmp_path / f"v{ints}.cu", arch="sm_90", code=code).image).entries["k"]
        assert (e.param_sizes, e.param_bytes) == ((4 * ints, 8), 4 * ints + 8)


# cuOccupancyMaxActiveBlocksPerMultiprocessor on an H100 (driver 580.159.04, 2026-12-05, 128 threads): sm_90 NVRTC
# kernels with ``declared`` bytes of static shared memory, at the first dynamic size where counting the 1 KB system
# reserve twice (once inside the cubin's .nv.shared, once as the reserve) had given one CTA fewer
@pytest.mark.parametrize(("declared", "dynamic", "driver_ctas"), [(8, 12544, 16), (1000, 11648, 16), (4096, 8576, 16),
                                                                   (40000, 4608, 5)])
def test_cubin_occupancy_counts_the_system_reserve_once_as_the_driver_does(declared, dynamic, driver_ctas, tmp_path):
    image = compile_cubin(tmp_path / "smem.cu", arch="sm_90", code=static_smem_kernel(declared)).image
    assert cubin_occupancy(image, dynamic_smem_bytes=dynamic).ctas_per_sm == driver_ctas
    # the driver took dynamic sizes up to the opt-in less the declared bytes, and refused the next
    assert cubin_occupancy(image, dynamic_smem_bytes=232448 - declared).ctas_per_sm == 1
    with pytest.raises(ArgumentError, match="allows 232448 B per CTA"):
        cubin_occupancy(image, dynamic_smem_bytes=232448 - declared + 1)

"""`labkit report diff`: every difference named before the table; other shapes compared by throughput."""

import dataclasses

import pytest

from labkit import cli, report


@pytest.fixture
def seed(seed_report_path):
    return report.load(seed_report_path)


def _other_shape(seed):
    from labkit.report.model import Scheduler
    from labkit.workloads.sage2.schedule import scheduler

    shape = (1, 8192, 8, 128)  # no tail study: the seed's points lie past this N; the scheduler's tiles of this shape
    tiles = Scheduler(**dataclasses.asdict(scheduler(1, 8192, 8192, 8, 128)))
    return dataclasses.replace(seed, q_shape=shape, k_shape=shape, v_shape=shape, tail_study=(), scheduler=tiles,
                               metadata={**seed.metadata, "dtype": "bf16", "layout": "NHD"},
                               provenance={"device": {"name": "NVIDIA H200"}, "clocks": {"sm_clock_hz": 1.98e9}})


def test_same_report_has_no_differences_and_unit_ratios(seed):
    text = report.diff_table(seed, seed)
    # a README walk-through: the seed's report beside itself had "matched" in traits it does not record
    assert text.splitlines()[0] == ("A and B match in shape and schedule; neither records its dtype, layout, device, "
                                    "GPU uuid and git")
    labkit_run = dataclasses.replace(seed, provenance={"device": {"name": "NVIDIA H200", "uuid": "GPU-5b587789"},
                                                       "git_sha": "9dc6c8f726c9"},
                                     metadata={**seed.metadata, "dtype": "bf16", "layout": "NHD"})
    assert report.diff_table(labkit_run, labkit_run).splitlines()[0] == ("A and B match in shape, dtype, layout, "
                                                                         "device, GPU uuid, git and schedule")
    assert "fused_mainloop" in text and "1.000x" in text
    # a review: which way B/A reads was left to guess (a ratio of times; the other shape's table is of rates)
    assert text.splitlines()[1] == "B/A: B's time over A's (under 1: B is faster)"
    lines = text.splitlines()  # as show lays it out: a group's members indented, then the total
    assert any(ln.startswith("  q_int8_quantization ") for ln in lines), text
    assert lines[-1].startswith("total (top-level p50)") and lines[-1].endswith("1.000x"), text


def test_different_shapes_compare_work_normalized_throughput(seed):
    other = _other_shape(seed)
    text = report.diff_table(seed, other)
    lines = text.splitlines()
    assert lines[0] == "A and B differ in:"
    assert "B/A: B's rate over A's (over 1: B is faster)" in lines
    assert "shape: A q [1, 37810, 56, 128]" in text and "| B q [1, 8192, 8, 128]" in text
    # found by a new-user review: a trait only B records read as a difference ("dtype: A not recorded | B bf16") beside
    # the user's seed report, which is bf16 NHD by its README; it is said as B's alone
    assert "not recorded" not in text and "dtype:" not in text
    assert "B alone records dtype bf16, layout NHD, device NVIDIA" in text
    # found by a notebook review: the clock read before a run (the idle 1980 MHz) was listed as a difference
    assert "clocks" not in text and "1980 MHz" not in text
    assert "shapes differ: raw times are not comparable" in text and "B p50 ms" not in text
    row = next(ln for ln in lines if ln.startswith("fused_mainloop"))
    cells = row.split()
    ops_a = 4 * 56 * 37810 * 37810 * 128 / seed.phase_timings["fused_mainloop"].p50_s / 1e12
    ops_b = 4 * 8 * 8192 * 8192 * 128 / other.phase_timings["fused_mainloop"].p50_s / 1e12
    assert cells[1] == "TOPS" and float(cells[2]) == pytest.approx(ops_a, abs=0.1)
    assert float(cells[3]) == pytest.approx(ops_b, abs=0.1)
    # the phase that only writes V's scales reads no 16-bit tensor: no rate (it had shown ~30x HBM's, found by a review)
    scales = next(ln for ln in lines if ln.strip().startswith("v_scale_fp8_quantization")).split()
    assert scales[1:] == ["-", "-", "-", "-"], scales


def test_a_group_of_phases_reads_what_its_members_read_and_a_phase_only_in_b_is_listed(seed):
    """Found by a review: across shapes, qk_int8_quantization was given Q's bytes only, so with K twice as long as
    before the group read 0.666x while both of its members ran at 1.000x; and B's phases A lacks were dropped."""
    def times(st, p50):
        return dataclasses.replace(st, p50_s=p50, p90_s=p50)

    k_shape = (1, 2 * 37810, 56, 128)
    t = dict(seed.phase_timings)
    q, k = t["q_int8_quantization"].p50_s, 2 * t["k_int8_subtract_mean_quantization"].p50_s
    t["k_int8_subtract_mean_quantization"] = times(t["k_int8_subtract_mean_quantization"], k)  # twice K, twice the time
    t["qk_int8_quantization"] = times(t["qk_int8_quantization"], q + k)  # the group: its members, one after the other
    t["extra_phase"] = t["q_int8_quantization"]
    longer = dataclasses.replace(seed, k_shape=k_shape, v_shape=k_shape, tail_study=(), phase_timings=t)
    lines = report.diff_table(seed, longer).splitlines()
    ratio = {ln.split()[0]: ln.split()[-1] for ln in lines if ln.split() and ln.split()[0] in t}
    assert ratio["q_int8_quantization"] == ratio["k_int8_subtract_mean_quantization"] == "1.000x"
    # Q and K read the same bytes in A: A's group rate is 2 Q / its time, B's 3 Q / (q + k)
    expected = (3 / (q + k)) / (2 / seed.phase_timings["qk_int8_quantization"].p50_s)
    assert ratio["qk_int8_quantization"] == f"{expected:.3f}x"
    assert next(ln for ln in lines if ln.startswith("extra_phase")).split()[1:] == [
        "GB/s", "-", f"{2 * 2 * 37810 * 56 * 128 / 1e9 / q:.4g}", "only", "in", "B"]  # not a q phase: K's bytes


def test_a_seed_report_lays_out_its_shapes_as_its_reader_does(seed, seed_report_path, tmp_path):
    """Found by a review: the reader took any layout but "HND" as NHD, the tables any but "NHD" as HND, so a seed
    report saying "nhd" passed as [B, N, H, D] and its tables swapped N and H."""
    import json

    from labkit.report.tables import phase_work

    doc = json.loads(seed_report_path.read_text())
    base = phase_work(seed)["fused_mainloop"][0]
    for layout in ("NHD", "nhd"):
        doc["metadata"]["layout"] = layout
        (tmp_path / "r.json").write_text(json.dumps(doc))
        assert phase_work(report.load(tmp_path / "r.json"))["fused_mainloop"][0] == base


def test_diff_names_the_gpu_git_and_mainloop_of_each_run(seed):
    def run(uuid, sha, mainloop):
        return dataclasses.replace(seed, metadata={**seed.metadata, "schedule": {"mainloop": mainloop}},
                                   provenance={"device": {"name": "NVIDIA H200", "uuid": uuid}, "git_sha": sha})

    a = run("GPU-5b587789-f713", "4364d8a" + "0" * 33, "sm90")
    b = run("GPU-f41f924e-2baa", "9dc6c8f" + "0" * 33, "seed")
    diffs = report.differences(a, b)
    assert "gpu: A GPU-5b587789 | B GPU-f41f924e" in diffs and "git: A 4364d8a00000 | B 9dc6c8f00000" in diffs
    assert any(d.startswith("schedule: A sm90 mainloop,") and "| B seed mainloop," in d for d in diffs)
    assert report.summary(a).splitlines()[1].startswith(
        "NVIDIA H200 (GPU-5b587789), clocks not recorded, git 4364d8a00000; sm90 mainloop, cta")
    assert report.summary(seed).splitlines()[1].startswith(
        "device not recorded, clocks not recorded, git not recorded; seed mainloop, cta")
    older = dataclasses.replace(a, metadata={**seed.metadata, "schedule": {}})  # before the sm90 build was recorded
    assert not [d for d in report.differences(older, run("GPU-5b587789-f713", "4364d8a" + "0" * 33, "seed"))
                if d.startswith("schedule")]


def test_cli_diff_names_the_shape_difference(seed, tmp_path, capsys, seed_report_path):
    mine = tmp_path / "mine.json"
    report.save(_other_shape(seed), mine)
    assert cli.main(["report", "diff", str(seed_report_path), str(mine)]) == 0
    out = capsys.readouterr().out
    assert "A and B differ in:" in out and "work-normalized" in out


def test_tail_table_is_in_ms_with_both_efficiencies(seed):
    df = report.tail_table(seed)
    assert not [c for c in df.columns if c.endswith("_s")]
    assert df["mainloop_p50_ms"].iloc[0] == pytest.approx(seed.tail_study[0].mainloop.p50_s * 1e3)
    kv = df[df["sweep"] == "kv_tail_fixed_q"].set_index("kv_len")["kv_tile_efficiency"]
    assert kv[37760] == pytest.approx(37760 / (590 * 64)) and kv[37761] == pytest.approx(37761 / (591 * 64))
    # each point against its sweep's full shape: the p50 difference, and whether the min..max ranges are apart
    for sweep, part in df.groupby("sweep"):
        full = part[(part["q_len"] == 37810) & (part["kv_len"] == 37810)].iloc[0]
        assert full["vs_full_pct"] == 0 and not full["beyond_noise"]
        for _, p in part.iterrows():
            assert p["vs_full_pct"] == pytest.approx(100 * (p["mainloop_p50_ms"] / full["mainloop_p50_ms"] - 1))
            apart = p["mainloop_min_ms"] > full["mainloop_max_ms"] or p["mainloop_max_ms"] < full["mainloop_min_ms"]
            assert p["beyond_noise"] == apart
    # a sweep without the full shape has nothing to compare with (a review: its longest tail point had been the base)
    import dataclasses

    no_full = dataclasses.replace(seed, tail_study=tuple(t for t in seed.tail_study if t.q_len != t.kv_len))
    part = report.tail_table(no_full)
    assert part["vs_full_pct"].isna().all() and not part["beyond_noise"].any() and len(part) == 4
    # in the seed only kv 37760 is apart from its full shape, faster by a hair (max 240.318 ms, the full's min 240.332)
    assert df.loc[df["beyond_noise"], ["sweep", "kv_len"]].values.tolist() == [["kv_tail_fixed_q", 37760]]


def test_small_rates_keep_their_digits_and_their_ratio(seed):
    """Found by a review: a rate of 0.035 TOPS printed as 0.0 and its ratio as '-' (the ratio came from the rounded
    text)."""
    slow = {k: dataclasses.replace(v, p50_s=v.p50_s * 1e4) for k, v in seed.phase_timings.items()}
    other = dataclasses.replace(_other_shape(seed), phase_timings=slow)
    row = next(ln for ln in report.diff_table(seed, other).splitlines() if ln.startswith("fused_mainloop")).split()
    assert row[3] != "0.0" and float(row[3]) > 0 and row[4].endswith("x")
    assert float(row[4][:-1]) == pytest.approx(float(row[3]) / float(row[2]), rel=2e-3)


def test_an_hnd_report_works_out_the_same_mainloop_rate_as_its_nhd_twin(seed):
    """Found by a review: sage2 profile wrote q_shape as B,N,H,D under layout HND, which the tables read as B,H,N,D,
    so an HND report's mainloop rate came out H/N times off (0.00215 against 0.2749 TOPS at 1 x 4096 x 32 x 128)."""
    from labkit.report.tables import phase_work
    from labkit.values import Shape
    from labkit.workloads.sage2.profile import tensor_shape

    rates = []
    for layout in ("NHD", "HND"):
        t = tensor_shape(Shape(1, 4096, 32, 128), layout)
        r = dataclasses.replace(seed, q_shape=t, k_shape=t, v_shape=t, metadata={**seed.metadata, "layout": layout})
        rates.append(phase_work(r)["fused_mainloop"])
    assert rates[0] == rates[1] == (4 * 32 * 4096 * 4096 * 128 / 1e12, "TOPS")
    assert tensor_shape(Shape(1, 4096, 32, 128), "HND") == (1, 32, 4096, 128)


def test_phases_labkit_splits_differently_are_starred_beside_another_implementation(seed):
    """labkit quantizes V in its transpose, so beside the seed its v_scale phase read "0.001x" as if 1000x faster (a
    review of notebook 02): those phases are starred, with a note, and only there."""
    from ..conftest import ROOT

    ours = report.load(sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1])
    text = report.diff_table(seed, ours)
    rows = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln.strip() and not ln.startswith(("A ", "* "))}
    for name in report.tables.MOVED_WORK:
        assert rows[name][-1].endswith("x*"), rows[name]
    assert rows["fused_mainloop"][-1].endswith("x") and rows["q_int8_quantization"][-1].endswith("x")
    assert rows["v_fp8_transpose_scale_quantization"][-1].endswith("x")  # the group as a whole compares
    assert text.splitlines()[-1] == report.tables.MOVED_NOTE
    for same in (report.diff_table(seed, seed), report.diff_table(ours, ours)):
        assert "*" not in same and report.tables.MOVED_NOTE not in same
    # shapes that differ compare rates: the same phases starred, the same note
    other = report.diff_table(seed, dataclasses.replace(ours, q_shape=(1, 8192, 56, 128), k_shape=(1, 8192, 56, 128),
                                                        v_shape=(1, 8192, 56, 128), tail_study=()))
    assert "shapes differ" in other and other.splitlines()[-1] == report.tables.MOVED_NOTE
    starred = [ln.split()[0] for ln in other.splitlines() if ln.rstrip().endswith("x*")]
    assert set(starred) == set(report.tables.MOVED_WORK) - {"v_scale_fp8_quantization"}  # no rate for that one


def test_phases_in_only_one_report_or_of_zero_time_have_no_ratio(seed):
    """Found by mutation testing: no test compared reports of different phase lists, or a phase that took no time."""
    mainloop = seed.phase_timings["fused_mainloop"]
    b = dataclasses.replace(seed, phase_timings={**{k: v for k, v in seed.phase_timings.items()
                                                    if k != "v_scale_fp8_quantization"}, "new_phase": mainloop})
    a = dataclasses.replace(seed, phase_timings={**seed.phase_timings, "q_int8_quantization": dataclasses.replace(
        seed.phase_timings["q_int8_quantization"], p50_s=0.0)})
    rows = {ln.split()[0]: ln.split() for ln in report.diff_table(a, b).splitlines()[1:]}
    v_scale_ms = f"{seed.phase_timings['v_scale_fp8_quantization'].p50_s * 1e3:.3f}"
    assert rows["v_scale_fp8_quantization"] == ["v_scale_fp8_quantization", v_scale_ms, "-", "only", "in", "A"]
    assert rows["new_phase"] == ["new_phase", "-", f"{mainloop.p50_s * 1e3:.3f}", "only", "in", "B"]
    assert rows["q_int8_quantization"][1] == "0.000" and rows["q_int8_quantization"][-1] == "-"


def test_the_other_phases_rates_divide_the_bytes_of_the_tensor_they_read(seed):
    """q phases read Q's 16-bit bytes, the others K's (or V's): with a KV twice Q's length the two differ."""
    q, kv = (2, 8192, 8, 128), (2, 16384, 8, 128)  # a batch of 2: bytes scale with it
    other = dataclasses.replace(_other_shape(seed), q_shape=q, k_shape=kv, v_shape=kv)
    rows = {ln.split()[0]: ln.split() for ln in report.diff_table(seed, other).splitlines()}
    for phase, (b, n, h, d) in (("q_int8_quantization", q),
                                ("k_int8_subtract_mean_quantization", kv)):
        gbs = 2 * b * n * h * d / 1e9 / other.phase_timings[phase].p50_s  # by hand: bytes of 16-bit values per second
        assert rows[phase][1] == "GB/s" and float(rows[phase][3]) == pytest.approx(gbs, rel=1e-3)
    where = report.summary(other).splitlines()[1]  # the clock NVML read before the run, in MHz
    assert where.startswith("NVIDIA H200, SM 1980 MHz before the run, git not recorded;")


def test_tail_table_keeps_the_sample_count_as_it_is(seed):
    df = report.tail_table(seed)
    assert df["mainloop_count"].tolist() == [t.mainloop.count for t in seed.tail_study]
    assert not [c for c in df.columns if c.endswith("_ms") and not c.startswith("mainloop_")]


def test_no_moved_work_note_without_the_phases_it_is_about(seed):
    only = dataclasses.replace(seed, phase_timings={"fused_mainloop": seed.phase_timings["fused_mainloop"]})
    ours = dataclasses.replace(only, provenance={"git_sha": "9dc6c8f" + "0" * 33})  # labkit's beside the seed's
    text = report.diff_table(only, ours)
    assert "B alone records git 9dc6c8f00000" in text and report.tables.MOVED_NOTE not in text and "*" not in text


def test_phases_of_zero_time_have_no_ratio_or_rate(seed):
    zero = dataclasses.replace(seed, phase_timings={k: dataclasses.replace(v, p50_s=0.0)
                                                    for k, v in seed.phase_timings.items()})
    same = report.diff_table(zero, zero).splitlines()
    assert same[-1].split() == ["total", "(top-level", "p50)", "0.000", "0.000", "-"]
    rows = [ln.split() for ln in report.diff_table(seed, _other_shape(zero)).splitlines() if ln.startswith("fused_")]
    assert rows == [["fused_mainloop", "TOPS", rows[0][2], "-", "-"]] and float(rows[0][2]) > 0


def _with_schedule(r, schedule):
    from labkit.report.model import Scheduler
    from labkit.workloads.sage2.schedule import scheduler

    b, n, h, d = r.q_shape
    tiles = Scheduler(**dataclasses.asdict(scheduler(b, n, n, h, d, schedule)))
    return dataclasses.replace(r, scheduler=tiles, metadata={**r.metadata, "schedule": schedule.to_dict()})


def test_the_title_label_names_the_mainloop_build_a_labkit_report_ran(seed):
    """Found by a notebook review: notebook 02 with ``-p schedule sm90`` titled its figures exactly as the seed build's
    run (only the numbers differed)."""
    from labkit.workloads.sage2.schedule import Schedule

    builds = {s.mainloop: _with_schedule(seed, s) for s in (Schedule(), Schedule.sm90())}
    labels = {name: report.label(r) for name, r in builds.items()}
    assert labels["seed"] != labels["sm90"]
    for name, r in builds.items():
        assert labels[name].endswith(f", {name} mainloop {r.scheduler.cta_q}x{r.scheduler.cta_k}")
    assert "mainloop" not in report.label(seed)  # the user's report records no build: none is claimed for it


def _moved(point, factor):
    st = point.mainloop
    return dataclasses.replace(point, mainloop=dataclasses.replace(
        st, **{f: getattr(st, f) * factor for f in ("mean_s", "p50_s", "p90_s", "p95_s", "p99_s", "min_s", "max_s")}))


def test_the_tail_note_comes_from_the_shown_report_and_names_its_build(seed):
    """Found by a notebook review: notebook 02's tail-study text named the seed build's "kv 37760 ... +0.5 %" under an
    sm90 run whose points were all within noise. The words now come from the report shown, named by its build."""
    from labkit.workloads.sage2.schedule import Schedule

    shown = _with_schedule(seed, Schedule())
    df = report.tail_table(shown)
    tails = df[~((df["q_len"] == 37810) & (df["kv_len"] == 37810))]
    apart = tails[tails["beyond_noise"]]
    assert len(apart)
    text = report.tail_note(shown).splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith(f"{report.build_label(shown)}: within its sweep"))
    assert text[head].startswith(f"{report.build_label(shown)}: within its sweep, {len(apart)} of {len(tails)} tail")
    assert len(text) == head + 1 + len(apart)
    for line, (_, p) in zip(text[head + 1:], apart.iterrows()):
        along = "q" if p["sweep"].startswith("q") else "kv"
        assert line.startswith(f"  {p['sweep']} {p[f'{along}_len']}: {p['vs_full_pct']:+.2f} % against {along} 37810")
    # the same points within noise (each moved to its full shape's time): nothing is claimed of them
    full = {t.sweep: t for t in shown.tail_study if t.q_len == t.kv_len}
    calm = dataclasses.replace(shown, tail_study=tuple(
        _moved(t, full[t.sweep].mainloop.p50_s / t.mainloop.p50_s) for t in shown.tail_study))
    assert not report.tail_table(calm)["beyond_noise"].any()
    assert report.tail_note(calm).splitlines()[-1] == (
        f"{report.build_label(calm)}: within its sweep, 0 of {len(tails)} tail points lie beyond noise (min..max apart "
        "from the full shape's).")
    # a point with fewer tiles that is slower beyond noise is one the tile model does not explain
    slow = dataclasses.replace(shown, tail_study=tuple(_moved(t, 1.5) if (t.sweep, t.kv_len) == ("kv_tail_fixed_q",
                                                                                                 37760) else t
                                                       for t in shown.tail_study))
    line = next(ln for ln in report.tail_note(slow).splitlines() if ln.startswith("  kv_tail_fixed_q 37760: +"))
    assert "with fewer tiles" in line and line.endswith("the tile model does not explain it")

"""Property tests for the readers added with the GPU runs: mutated decode reports, per-CTA timelines,
ncu summaries and sweep point files, each through the real CLI, in process. Same contract as
test_properties.py: exit 0 with a result, or exit 2 with one ``labkit: error:`` line, nothing else."""

import shutil

from hypothesis import given, settings

from ..conftest import ROOT
from .test_properties import CASES, assert_contract, mutated_json, run_cli, workdir  # noqa: F401 - fixture

RUNS = ROOT / "data" / "runs"
DECODE_REPORT = sorted(RUNS.glob("*-decode_bench/bench.json"))[-1]
TIMELINE = sorted(RUNS.glob("*-decode_timelines/timeline_2x704_d256_s2.json"))[-1]
NCU_SUMMARY = sorted(RUNS.glob("*-05_ncu_correlation/data/ncu_summary.json"))[-1]
SWEEP = sorted(RUNS.glob("*-sweep_dask_decode"))[-1]
EXAMPLES = settings(max_examples=150)


def _property(name: str, argv: list[str]) -> None:
    rc, out, err = run_cli(argv)
    assert_contract(rc, out, err)
    CASES[name] = CASES.get(name, 0) + 1
    CASES[f"{name}, exit {rc}"] = CASES.get(f"{name}, exit {rc}", 0) + 1


@EXAMPLES
@given(data=mutated_json(DECODE_REPORT.read_text()))
def test_mutated_decode_report(workdir, data):  # noqa: F811 - the fixture
    path = workdir / "bench.json"
    path.write_bytes(data)
    _property("decode report", ["report", "show", str(path)])


@EXAMPLES
@given(data=mutated_json(TIMELINE.read_text()))
def test_mutated_timeline(workdir, data):  # noqa: F811
    path = workdir / "timeline.json"
    path.write_bytes(data)
    _property("timeline", ["sched", "timeline", str(path), "--trace", str(workdir / "trace.json")])


@EXAMPLES
@given(data=mutated_json(NCU_SUMMARY.read_text()))
def test_mutated_ncu_summary(workdir, data):  # noqa: F811
    path = workdir / "ncu_summary.json"
    path.write_bytes(data)
    _property("ncu summary", ["ncu", "summary", str(path)])


POINT = sorted((SWEEP / "points").glob("*.json"))[0]


@EXAMPLES
@given(data=mutated_json(POINT.read_text()), manifest=mutated_json((SWEEP / "sweep.json").read_text()))
def test_mutated_sweep_files(workdir, data, manifest):  # noqa: F811
    d = workdir / "sweep"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(SWEEP, d)
    (d / "points" / POINT.name).write_bytes(data)
    _property("sweep point", ["sweep", "collect", str(d), "--csv"])
    (d / "sweep.json").write_bytes(manifest)
    _property("sweep manifest", ["sweep", "status", str(d)])


SEED_MANIFEST = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"


@EXAMPLES
@given(data=mutated_json(SEED_MANIFEST.read_text()))
def test_mutated_seed_manifest_through_decode_from_manifest(workdir, data):  # noqa: F811
    """The seed's geometry retargeted to labkit's kernel: a damaged manifest is one line, never a build of
    nonsense (exit 0 means a manifest that `labkit manifest check` accepts was written)."""
    path = workdir / "seed.json"
    path.write_bytes(data)
    out = workdir / "retarget"
    shutil.rmtree(out, ignore_errors=True)
    _property("decode from-manifest", ["decode", "from-manifest", str(path), "--out", str(out)])


def test_zz_reader_case_counts(capsys):
    """Each property must reach both outcomes, or it explores only the parser's front door."""
    names = ("decode report", "timeline", "ncu summary", "sweep point", "sweep manifest", "decode from-manifest")
    with capsys.disabled():
        print("\nreader property cases:", {k: v for k, v in CASES.items() if k.split(",")[0] in names})
    for name in names:  # each property printed is held to both outcomes (the sweep manifest's had been left out)
        assert CASES.get(f"{name}, exit 0", 0) > 0 and CASES.get(f"{name}, exit 2", 0) > 0, (name, CASES)

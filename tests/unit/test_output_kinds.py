"""An output replaces only a file of its own kind (or an empty one): a review found five ways a user's file was
replaced or deleted (a notebook by --trace, a hand-drawn SVG by --out FIG, a training log by ncu run, a NumPy array
by manifest pack, a foreign file at decode build's names), and control characters from files reaching the terminal."""

import json
import os
import shutil

import pytest

from labkit import cli
from labkit.output_kinds import json_kind, other_kind

from ..conftest import ROOT

SEED = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"
TIMELINE = ROOT / "data" / "runs" / "20261201T055700Z-decode_timelines" / "timeline_1x8192_d128_s16.json"
SPREAD_RUN = ROOT / "data" / "runs" / "20261206T020100Z-h200_bench_gpu_suite_83691f3"
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


def _run(argv, capsys) -> tuple[int, str]:
    rc = cli.main([str(a) for a in argv])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("path", [
    "data/runs/20261201T161800Z-sage2_bench_gpu_tests/bench.json",
    "data/runs/20261201T060230Z-sched_crosscheck/overhead_barrier_at_exit.json",
    "data/runs/20261203T145835Z-02_sage2_phases/data/precision.json",
    "data/runs/20261204T154500Z-decode_cold_clean/first/manifest_cold_clean.json"])
def test_each_json_output_recorded_from_a_real_run_is_told_as_its_kind(path):
    """The shapes that tell the outputs apart are checked against files those commands wrote on the GPU."""
    kind = json_kind(json.loads((ROOT / path).read_text()))
    assert kind is not None and "labkit " in kind, kind


def test_launches_as_the_code_writes_them_are_told_apart_and_other_json_is_not_an_output():
    row = {"shape": "1x37810x56x128", "ctas": 16576, "model_waves": 62.79, "model_wave_efficiency": 0.99,
           "slot_efficiency": 0.98, "sm_efficiency": 0.99, "timeline_ctas_per_sm_min": 125,
           "timeline_ctas_per_sm_max": 126}  # sched.crosscheck.launches' row
    assert json_kind([row]).startswith("instrumented launches")
    for other in (json.loads(NOTEBOOK), {"name": "x", "version": "1"}, [], {}, [1, 2], "text", None):
        assert json_kind(other) is None, other


def test_other_kind_replaces_only_the_kind_written_or_an_empty_file(tmp_path):
    f = tmp_path / "f"
    cases = [  # (content, writes, refused with)
        (b"", "json:a Chrome trace", None),
        (b'{"traceEvents": []}', "json:a Chrome trace", None),
        (NOTEBOOK.encode(), "json:a Chrome trace", "a JSON file that is not a Chrome trace"),
        (SEED.read_bytes(), "json:a Chrome trace", "a launch manifest (labkit manifest check)"),
        (SEED.read_bytes(), "json:a launch manifest", None),
        (b"x = 1\n", "json:a launch manifest", "not a JSON file"),
        (b"\x93NUMPY\x01\x00" + bytes(1272), "binary:1280", "a NumPy array (.npy)"),
        (bytes(1000), "binary:1280", "1000 bytes, not this 1280-byte parameter block"),
        (bytes(1280), "binary:1280", None),
        (b"plain text\n", "binary:1280", "a text file, not a parameter block"),
        # binary with no NUL (1000 random bytes, 2 % of the time: the CLI test below had failed so) is not text
        ((bytes(range(1, 256)) * 4)[:1000], "binary:1280", "1000 bytes, not this 1280-byte parameter block"),
        (b"==PROF== Connected to process 1\n", "ncu log", None),
        (b"important training log\n", "ncu log", "not a log that ncu wrote"),
        (b"\x7fELF\x02", "cubin", None),
        (b"my notes\n", "cubin", "not an ELF file (a cubin)"),
    ]
    for content, writes, said in cases:
        f.write_bytes(content)
        assert other_kind(f, writes) == said, (content[:20], writes)


def test_the_seeds_report_and_a_recorded_runs_files_are_never_replaced(tmp_path):
    """A CLI review: `sage2 profile --out data/sage2_report_seed.json` would have replaced the user's reference (a
    Sage2 report, its own kind), and `decode bench --out data/runs/RUN/sweep.json` a recorded run's report."""
    seed = tmp_path / "seed.json"
    shutil.copy(ROOT / "data" / "sage2_report_seed.json", seed)
    assert other_kind(seed, "json:a Sage2 report") == "a Sage2 report labkit did not write (no provenance: a reference)"
    ours = tmp_path / "ours.json"  # a report labkit wrote (its provenance) is replaced by the next one
    shutil.copy(sorted((ROOT / "data" / "runs").glob("*-02_sage2_phases/data/report.json"))[-1], ours)
    assert other_kind(ours, "json:a Sage2 report") is None
    recorded = SPREAD_RUN / "sweep.json"
    assert other_kind(recorded, "json:a decode report").startswith("a file of a recorded run (runs/ under ")
    shutil.copy(recorded, tmp_path / "sweep.json")
    assert other_kind(tmp_path / "sweep.json", "json:a decode report") is None  # the same report elsewhere: its own
    assert other_kind(SPREAD_RUN / "show.txt", "json:a decode report") == "not a JSON file"  # the kind said first


def test_a_figure_replaces_only_a_png_or_svg_that_labkit_drew(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from labkit import plot

    png, svg = plot.figure_paths(tmp_path / "fig")
    plot.save(plt.subplots()[0], tmp_path / "fig")
    assert other_kind(png, "figure") is None and other_kind(svg, "figure") is None
    plt.subplots()[0].savefig(tmp_path / "mpl.png")  # Matplotlib's own Software text: a figure too
    assert other_kind(tmp_path / "mpl.png", "figure") is None
    plt.subplots()[0].savefig(tmp_path / "bare.png", metadata={"Software": None})
    assert other_kind(tmp_path / "bare.png", "figure") == "a PNG image that labkit did not draw"
    (tmp_path / "mine.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><text>mine</text></svg>')
    assert other_kind(tmp_path / "mine.svg", "figure") == "not an SVG that labkit drew"
    (tmp_path / "notes.png").write_text("notes")
    assert other_kind(tmp_path / "notes.png", "figure") == "not a PNG image"


SVG = '<svg xmlns="http://www.w3.org/2000/svg"><text>mine</text></svg>'


@pytest.mark.parametrize("command, users_file, content, said", [
    (lambda out: ["sched", "timeline", TIMELINE, "--trace", out], "my.ipynb", NOTEBOOK.encode(),
     "exists and is a JSON file that is not a Chrome trace; refusing to overwrite it"),
    (lambda out: ["manifest", "pack", SEED, "--out", out], "weights.npy", b"\x93NUMPY\x01\x00" + bytes(4096),
     "exists and is a NumPy array (.npy)"),
    (lambda out: ["manifest", "pack", SEED, "--out", out], "rand.dat", os.urandom(1000),
     "exists and is 1000 bytes, not this 1280-byte parameter block"),
    (lambda out: ["report", "spread", "--point", "64x8k", "--out", out, SPREAD_RUN], "diagram.svg", SVG.encode(),
     "--out {path!r}: exists and is not an SVG that labkit drew; refusing to overwrite it (delete it, or name "
     "another file)\n"),
], ids=["trace over a notebook", "pack over a NumPy array", "pack over other data", "figure over a user's SVG"])
def test_the_cli_keeps_each_users_file_the_review_lost_and_replaces_its_own_output(command, users_file, content,
                                                                                   said, tmp_path, capsys):
    path = tmp_path / users_file
    path.write_bytes(content)
    rc, err = _run(command(path), capsys)
    assert rc == 2 and err.startswith("labkit: error: ") and said.format(path=str(path)) in err, err
    assert path.read_bytes() == content
    own = tmp_path / f"own{path.suffix}"
    for _ in range(2):  # written, then replaced: its own kind
        assert _run(command(own), capsys)[0] == 0 and own.is_file()


def test_ncu_run_keeps_a_users_log_at_its_log_path(tmp_path, capsys, monkeypatch):
    """`ncu run --out train` deleted the user's train.log before profiling, then pointed at it."""
    fake = tmp_path / "ncu"
    fake.write_text('#!/bin/sh\necho "NVIDIA (R) Nsight Compute Command Line Profiler"\n'
                    'echo "Version 2025.3.1.0 (build 1) (public-release)"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("LABKIT_NCU", str(fake))
    log = tmp_path / "train.log"
    log.write_text("important training log\n")
    rc, err = _run(["ncu", "run", "--out", tmp_path / "train", "--", "true"], capsys)
    assert rc == 2 and err == (f"labkit: error: labkit ncu run: {log}: exists and is not a log that ncu wrote; ncu "
                               f"writes its log "
                               "there (delete it, or name another report)\n")
    assert log.read_text() == "important training log\n"


def test_decode_build_replaces_its_own_files_only_and_says_so_before_compiling(tmp_path, capsys):
    out = tmp_path / "b"
    argv = ["decode", "build", "--batch", "2", "--kv-len", "1k", "--heads-q", "8", "--heads-kv", "2", "--out", out]
    assert _run(argv, capsys)[0] == 0
    manifest = next(out.glob("decode_*.json"))
    cubin = next(out.glob("*.cubin"))
    assert _run(argv, capsys)[0] == 0  # its own build, again
    shutil.copy(ROOT / "data" / "sage2_report_seed.json", manifest)
    rc, err = _run(argv, capsys)
    assert rc == 2 and err == (f"labkit: error: labkit decode build: the build's manifest {str(manifest)!r}: exists "
                               "and is a Sage2 report (labkit report show); refusing to overwrite it (delete it, or "
                               "name another file)\n")
    manifest.unlink()
    cubin.write_text("my notes\n")
    rc, err = _run(argv, capsys)
    assert rc == 2 and err == (f"labkit: error: labkit decode build: the build's cubin {str(cubin)!r}: exists and "
                               "is not an ELF file (a cubin); refusing to overwrite it (delete it, or name another "
                               "file)\n")
    assert cubin.read_text() == "my notes\n" and not manifest.exists()  # refused before anything was written


def test_control_characters_read_from_a_file_reach_the_terminal_escaped(tmp_path, capsys):
    """A report's kernel label holding ESC [31m, a NUL and a right-to-left override had been printed as they are."""
    doc = json.loads((SPREAD_RUN / "sweep.json").read_text())  # a decode report
    doc["rows"][0]["kernel"] = "mma\u202e\x1b[31mred\x00"
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(doc))
    rc = cli.main(["report", "show", str(bad)])
    out = capsys.readouterr().out
    assert rc == 0 and "mma\\u202e\\x1b[31mred\\x00" in out and "\x1b" not in out and "\u202e" not in out

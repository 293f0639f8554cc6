"""The notebook runner as a user meets it: executed notebooks with their figures, run directories,
what `labkit nb run` prints."""

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from labkit import cli, nb_params, nb_progress, notebooks
from labkit._text import TEXT_WIDTH
from labkit.errors import LabkitError
from labkit.rundirs import new_run_dir, point_latest, runs_root, write_run_json

from ..conftest import ROOT, as_read

OUTPUTS = {
    "00_device_and_timing": (("cold_l2_copies", "launch_overhead", "timing_overhead", "seed_phase_dots",
                              "seed_tail_study"),
                             ("device.json", "copy_bandwidth.json", "launch_overhead.json", "copy_bandwidth.csv",
                              "timing_overhead.json", "cold_l2_copies.json", "cold_l2_copies.csv")),
    "01_decode_manifest": (("param_block",), ("device_run.json", "proof_run.json", "param_block.csv")),
    "02_sage2_phases": (("phase_dots_vs_seed", "tail_study"), ("report.json", "checks.csv", "scheduler.csv",
                                                               "tail_study.csv", "precision.csv")),
    "03_decode": (("decode_bandwidth", "split_sweep", "spread"),
                  ("manifests.csv", "correctness.json", "copy_ceiling.json", "correctness.csv", "bandwidth.csv")),
    "04_cta_scheduling": (("sage2_gantt", "sage2_efficiency", "decode_gantt", "decode_activity", "decode_sm_speed",
                           "decode_sched_8192"),
                          ("device.json", "occupancy.json", "sage2_timeline.json", "decode_timeline.json",
                           "occupancy.csv", "sage2_points.csv", "decode_points.csv")),
    "05_ncu_correlation": (("event_vs_ncu", "time_vs_counters", "phases_sage2_seed", "stalls_sage2_seed",
                            "phases_decode_b64_kv8192", "stalls_decode_b64_kv8192"),
                           ("ncu_summary.json", "counters.csv", "event_vs_ncu.csv", "correlations.csv",
                            "efficiency.csv", "phases_sage2_seed.csv", "phases_decode_b64_kv8192.csv")),
}

# what a notebook's recorded render must say in its printed text or tables (findings of a review of the renders):
# regular expressions over its text read as one line, numbers left open, so a new recording keeps them true
SAYS = {"00_device_and_timing": ("the GPU waited for each launch",),  # the back-to-back bar was the host's pace
        # the headline phases come from the seed build; the sm90 build's 2.9x had been a table row with no sentence
        "02_sage2_phases": (r"fastest mainloop on NVIDIA H200: sm90 build, pv_terms 1, [\d.]+ ms \(\d+ TOPS\), "
                            r"[\d.]+x faster than the seed build \([\d.]+ ms\), whose phases and tail study this "
                            r"notebook shows",
                            # the comparison named neither run (a review)
                            r"A = seed report \(device not recorded\), B = labkit on NVIDIA H200 ",
                            r"B/A: B's time over A's \(under 1: B is faster\)"),
        # an r over 5 times within 1 % had read as a correlation
        "05_ncu_correlation": (r"5 points, times within [\d.]+ %", r"6 points, times \d+x apart")}


def test_every_notebook_has_expected_outputs_listed():
    assert set(OUTPUTS) == set(notebooks.list_notebooks())


def test_resolve():
    assert notebooks.resolve("00").name == "00_device_and_timing.py"
    with pytest.raises(LabkitError, match="not found"):
        notebooks.resolve("99")


def _printed_lines(nb: dict) -> list[str]:
    """Every line a notebook printed or showed as plain text (a stream, or a result with no HTML or image beside it),
    as JupyterLab's pane shows it: in a monospaced font, a line too long for the pane broken anywhere."""
    lines = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            data = o.get("data", {})
            text = o.get("text", "") if o["output_type"] == "stream" else (
                data.get("text/plain", "") if not {"text/html", "image/png"} & set(data) else "")
            lines += "".join(text).splitlines()
    return lines


def _no_line_wider_than_the_pane(nb: dict) -> None:
    """Found by a JupyterLab walkthrough: printed lines of 100-560 characters (the recorded-mode banner, the manifest's
    issues, the decode fit) broke mid-word in the pane; labkit.wrapped breaks them between words at TEXT_WIDTH. Only a
    line of one word may be longer (the seed's 100-character kernel name): broken, a copy of it was not the name."""
    wide = [line for line in _printed_lines(nb) if len(line) > TEXT_WIDTH and len(line.split()) > 1]
    assert not wide, "\n".join(wide)


PANE_PX = 900  # JupyterLab's output pane (9 in at 100 dpi), to whose width it scales a wider image down
SMALLEST_PT = 8  # the least text size a figure may show there, in points at 100 dpi


def _smallest_text_shown(svg: Path) -> tuple[float, float]:
    """A saved figure's width [in] and its smallest text [pt] as JupyterLab's pane shows it: the notebook embeds the
    PNG of savefig.dpi (labkit's style: 150), which the pane shows at its own pixels up to PANE_PX, so in points at 100
    dpi a text of s pt shows at s x dpi / 100 x min(1, PANE_PX / (width x dpi)). The sizes are read from the SVG that
    is saved beside it (svg.fonttype none: each text keeps its size); a text's size is its largest, since mathtext
    writes a power's exponent as a smaller part of the same text."""
    from labkit.plot import STYLE

    dpi = float(re.search(r"^savefig\.dpi:\s*([\d.]+)", STYLE.read_text(), re.M).group(1))
    text = svg.read_text()
    width = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', text).group(1)) / 72
    sizes = [max(float(v) for v in re.findall(r"font-size: ([\d.]+)px", t))
             for t in re.findall(r"<text\b.*?</text>", text, re.S)]
    return width, min(sizes) * dpi / 100 * min(1.0, PANE_PX / (width * dpi))


def _figures_readable_in_the_pane(run_dir: Path) -> None:
    """Found by a JupyterLab walkthrough: figures of 10-11 in (two panels side by side, four in a row) were scaled to
    the pane, their 6-7 pt legends and ticks to under 6; those are 9 in or less now, or a panel above another."""
    small = {svg.name: shown for svg in (run_dir / "figs").glob("*.svg")
             if (shown := _smallest_text_shown(svg))[1] < SMALLEST_PT}
    assert not small, "figure (width [in], smallest text shown [pt]): " + ", ".join(
        f"{name} ({w:.1f} in, {pt:.1f} pt)" for name, (w, pt) in small.items())


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_notebook_executes_in_recorded_mode_with_its_figures_embedded(name, tmp_path):
    res = notebooks.run(name, {"source": "recorded"}, out_root=tmp_path, timeout_s=600)
    assert res.ok, res.error
    assert res.mode == "recorded" and res.recorded_from.startswith("data/runs/")
    run = json.loads((res.run_dir / "run.json").read_text())
    assert run["run_json_version"] == 2 and run["session"]["mode"] == "recorded"
    assert run["parameters"]["source"] == "recorded" and run["overrides"] == {"source": "recorded"}
    nb = json.loads(res.notebook.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert "RECORDED mode" in "".join(outputs[0].get("text", "")) and res.recorded_from in "".join(outputs[0]["text"])
    assert not [o for o in outputs if o["output_type"] == "error"]
    _no_line_wider_than_the_pane(nb)
    shown = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "PosixPath(" not in shown  # a cell ending in save_figure had echoed the path under its figure
    tables = "".join("".join(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert "<th>...</th>" not in tables  # every column shown: pandas' 20 had hid two of 05's counters
    # a table's plain text (a view without HTML) keeps a row on one line: 80 characters had cut 03's spread into six
    # blocks of columns, each ending its lines in a backslash
    plain = [line for o in outputs if "text/html" in o.get("data", {}) for line in
             "".join(o["data"].get("text/plain", "")).splitlines()]
    assert plain and not [line for line in plain if line.endswith("\\")], "a table's columns in blocks"
    # found by a review: checks read Python's True / False beside yes / no elsewhere; every shown table says yes / no
    assert not [line for line in plain if re.search(r"\b(True|False)\b", line)], "True / False in a table"
    printed = "".join("".join(o.get("text", "")) for o in outputs)
    for words in SAYS.get(name, ()):
        assert re.search(words, as_read(printed + shown + tables)), words
    embedded = [base64.b64decode(o["data"]["image/png"]) for o in outputs if "image/png" in o.get("data", {})]
    figs, data = OUTPUTS[name]
    assert len(embedded) == len(figs)  # every saved figure is shown, once
    for fig in figs:
        png = (res.run_dir / "figs" / f"{fig}.png").read_bytes()
        assert png in embedded, f"{fig}.png is not the figure embedded in the notebook"
        assert (res.run_dir / "figs" / f"{fig}.svg").is_file()
        assert f"figs/{fig}.png" in res.figures
    _figures_readable_in_the_pane(res.run_dir)
    for d in data:
        assert (res.run_dir / "data" / d).is_file()
    for table in (res.run_dir / "data").glob("*.csv"):  # each reloads with its own columns, no row-number column
        assert not [c for c in pd.read_csv(table).columns if c.startswith("Unnamed")], table.name
    assert (tmp_path / "latest").resolve() == res.run_dir.resolve()


H100_RUNS = ROOT / "data" / "runs" / "20261205T053000Z-h100_first_run" / "notebooks"


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_every_notebook_shows_the_records_under_its_recorded_root_here_the_h100_s(name, tmp_path):
    """The first H100 run's records sit apart from data/runs (whose newest run each notebook shows by default, the
    H200's); recorded_root shows them, and the notebook says which GPU they are of. Found by a UX review: 02-04 said
    "on this GPU" (titles, markdown) above the recorded run's GPU's numbers on a machine with none; now no notebook
    does, and 01-04 print Session.measured_on's line naming the recorded run's GPU."""
    from labkit.recorded_runs import read_recorded_run

    res = notebooks.run(name, {"source": "recorded", "recorded_root": str(H100_RUNS)}, out_root=tmp_path,
                        timeout_s=600)
    assert res.ok, res.error
    assert res.recorded_from.startswith("data/runs/20261205T053000Z-h100_first_run/notebooks/")
    nb = json.loads(res.notebook.read_text())
    first = "".join(nb["cells"][next(i for i, c in enumerate(nb["cells"]) if c.get("outputs"))]["outputs"][0]["text"])
    assert "RECORDED mode" in first and "NVIDIA H100 80GB HBM3" in first, first
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "this GPU" not in markdown and "this GPU" not in printed
    _no_line_wider_than_the_pane(nb)  # the H100's names and paths are longer than the H200's
    _figures_readable_in_the_pane(res.run_dir)
    if name[:2] in ("01", "02", "03", "04"):
        recorded = read_recorded_run(ROOT / res.recorded_from)
        assert (f", recorded on {recorded.device} (run {res.recorded_from}, {recorded.created_utc[:10]}), not on this "
                "machine:") in as_read(printed)


def test_notebook_01_names_the_recorded_runs_gpu_not_this_one(tmp_path, monkeypatch):
    """Found by a UX review: 01's headings said "On this GPU" in recorded mode, above the recorded run's GPU's results
    (on a machine with no GPU at all); its text now says whose GPU, here the first H100's."""
    from labkit.recorded_runs import read_recorded_run

    res = notebooks.run("01", {"source": "recorded", "recorded_root": str(H100_RUNS)}, out_root=tmp_path,
                        timeout_s=600)
    assert res.ok, res.error
    recorded = read_recorded_run(ROOT / res.recorded_from)
    nb = json.loads(res.notebook.read_text())
    markdown = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "this GPU" not in markdown and "this GPU" not in printed
    assert (f"The seed manifest, recorded on {recorded.device} (run {res.recorded_from}, {recorded.created_utc[:10]}), "
            "not on this machine:") in as_read(printed)
    import labkit.device
    from labkit.session import Session

    monkeypatch.setattr(labkit.device, "describe", lambda: type("Device", (), {"name": "a faked GPU"}))
    live = Session("01_decode_manifest", "live", tmp_path, None, "test")
    assert live.measured_on() == "live on this GPU, a faked GPU"  # live, this machine's GPU is the one


def test_a_relative_recorded_root_in_jupyterlab_is_from_the_repo_root(tmp_path, monkeypatch, capsys):
    """JupyterLab's kernel runs in notebooks/: a relative recorded_root typed in the parameter cell is taken from the
    repo root, as File parameters are (a review found the README's path refused there)."""
    from labkit import notebooks as nbs
    from labkit.session import Session

    monkeypatch.chdir(tmp_path)
    defaults = {k: p.default for k, p in nbs.parameters("01").items() if k not in ("source", "out_dir",
                                                                                    "recorded_root")}
    s = Session.start("01_decode_manifest", source="recorded", out_dir=tmp_path / "out",
                      runs_root=str(H100_RUNS.relative_to(ROOT)), parameters=defaults)
    assert s.device_name == "NVIDIA H100 80GB HBM3" and "h100_first_run" in capsys.readouterr().out


def test_notebooks_use_only_public_labkit_api():
    for src in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"):
        text = src.read_text()
        for banned in ("labkit._", "__dict__", ".cli import", "import labkit.cli"):
            assert banned not in text, f"{src.name} uses {banned}"


def test_run_directories_never_collide_and_latest_moves(tmp_path):
    dirs = [new_run_dir(tmp_path, "nb") for _ in range(5)]  # most in the same second
    assert len({d.name for d in dirs}) == 5 and all(d.is_dir() for d in dirs)
    stamp = dirs[0].name.split("-")[0]
    same_second = [d.name for d in dirs if d.name.startswith(stamp)]
    assert same_second == [f"{stamp}-nb"] + [f"{stamp}.{i:03d}-nb" for i in range(2, len(same_second) + 1)]
    assert sorted(same_second) == same_second  # in the order they were made


def test_a_second_run_in_the_same_second_is_found_as_a_record_of_its_notebook(tmp_path):
    """Found by a review: named ``<stamp>-03_decode-2``, it matched no ``*-03_decode`` and no record check, so a
    recorded GPU run of that name was invisible, not even listed as skipped."""
    from labkit.recorded_runs import scan_recorded

    from .test_recorded import _record

    _record(tmp_path, "20260101T000000Z", "03_decode")
    _record(tmp_path, "20260101T000000Z.002", "03_decode")  # as new_run_dir names a second run in that second
    valid, problems = scan_recorded("03_decode", tmp_path)
    assert [r.path.name for r in valid] == ["20260101T000000Z-03_decode", "20260101T000000Z.002-03_decode"]
    assert problems == []


def test_output_root_that_is_a_file_is_one_line_error(tmp_path, monkeypatch, capsys):
    target = tmp_path / "afile"
    target.write_text("x")
    monkeypatch.setenv("LABKIT_OUT", str(target))
    with pytest.raises(LabkitError, match="LABKIT_OUT .*afile is not a directory"):
        runs_root()
    assert cli.main(["nb", "run", "00"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # one line: the "running 00_device_and_timing ..." progress line had come first (a new-user review)
    assert len(err) == 1 and err[0].startswith("labkit: error: labkit nb run: LABKIT_OUT")
    assert "Traceback" not in "".join(err)


def test_latest_follows_each_new_run_and_a_file_system_without_symlinks_is_no_error(tmp_path, monkeypatch):
    """Found by mutation testing: ``runs/latest`` was checked only by the slow whole-notebook runs, and a file system
    that refuses symlinks not at all."""
    first, second = new_run_dir(tmp_path, "nb"), new_run_dir(tmp_path, "nb")
    for run in (first, second):
        point_latest(tmp_path, run)
        assert (tmp_path / "latest").resolve() == run.resolve()
        assert os.readlink(tmp_path / "latest") == run.name  # relative: the runs folder can move
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name, "latest"])  # no .latest-*

    def refuse(self, target):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    third = new_run_dir(tmp_path, "nb")
    point_latest(tmp_path, third)  # the run itself is fine: latest stays where it was
    assert (tmp_path / "latest").resolve() == second.resolve() and not list(tmp_path.glob(".latest-*"))


def test_999_runs_in_one_second_take_suffixes_up_to_999_then_are_refused(tmp_path, monkeypatch):
    import datetime as dt
    import types

    from labkit import rundirs

    class Frozen(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    monkeypatch.setattr(rundirs, "_dt", types.SimpleNamespace(datetime=Frozen, timezone=dt.timezone))  # one second
    (tmp_path / "20260102T030405Z-nb").mkdir()
    for n in range(2, 999):  # the first and .002 .. .998 taken
        (tmp_path / f"20260102T030405Z.{n:03d}-nb").mkdir()
    assert new_run_dir(tmp_path, "nb").name == "20260102T030405Z.999-nb"
    with pytest.raises(LabkitError) as exc:
        new_run_dir(tmp_path, "nb")
    assert str(exc.value) == f"{tmp_path}: 999 runs of nb in one second; clean up {tmp_path}"
    assert len(list(tmp_path.iterdir())) == 999


def test_an_output_root_is_created_with_its_parents_or_refused_in_one_line(tmp_path):
    nested = tmp_path / "a" / "b" / "runs"
    assert runs_root(nested) == nested and nested.is_dir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(LabkitError) as exc:
        runs_root(tmp_path / "afile" / "runs")
    assert str(exc.value) == f"output directory {tmp_path / 'afile' / 'runs'}: cannot create it (Not a directory)"
    with pytest.raises(LabkitError) as exc:
        runs_root(tmp_path / "afile")
    assert str(exc.value).startswith(f"output directory {tmp_path / 'afile'} is not a directory; point it at")


def test_the_default_runs_directory_that_is_a_file_is_named_as_such(tmp_path, monkeypatch):
    from labkit import _env

    (tmp_path / "runs").write_text("x")
    monkeypatch.delenv("LABKIT_OUT", raising=False)
    monkeypatch.setattr(_env, "runs_dir", lambda: tmp_path / "runs")
    with pytest.raises(LabkitError) as exc:
        runs_root()
    assert str(exc.value) == (f"runs directory {tmp_path / 'runs'} is not a directory; point it at a directory (it is "
                              "created if missing)")


def test_run_json_says_whether_the_run_failed_and_its_time_in_ms(tmp_path):
    path = write_run_json(tmp_path, notebook="nb", parameters={"n": 1}, overrides={}, error="cell 3: boom",
                          elapsed_s=1.23456, session=None)
    doc = json.loads(path.read_text())
    assert path == tmp_path / "run.json" and path.read_text().endswith("}\n")
    assert (doc["ok"], doc["error"], doc["elapsed_s"], doc["run_json_version"]) == (False, "cell 3: boom", 1.235, 2)
    ok = json.loads(write_run_json(tmp_path, notebook="nb", parameters={}, overrides={}, error=None, elapsed_s=0.5,
                                   session=None).read_text())
    assert ok["ok"] is True and ok["error"] is None


@pytest.mark.parametrize("failure, said", [
    ("none", "the notebooks run on a Jupyter 'python3' kernel and this Python has none (pip install ipykernel, or "
             "make env)"),
    ("died", "the notebook's Jupyter kernel died before it ran a cell (Kernel died before replying to kernel_info); "
             "see why with: ")])
def test_a_kernel_that_is_missing_or_dies_at_start_is_one_line_and_leaves_no_run(failure, said, tmp_path, monkeypatch,
                                                                                 capsys):
    """An environment without ipykernel, or a kernel that dies before its first reply, had ended `labkit nb run` in a
    traceback and left an empty run directory behind."""
    import papermill
    from jupyter_client.kernelspec import NoSuchKernel

    def no_kernel(*args, **kwargs):
        if failure == "none":
            raise NoSuchKernel("python3")
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path))
    assert cli.main(["nb", "run", "01"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("labkit: error: labkit nb run: " + said)
    assert "Traceback" not in "".join(err) and not list(tmp_path.glob("*-01_decode_manifest"))


def test_a_kernel_that_dies_in_a_cell_fails_the_run_and_keeps_what_it_wrote(tmp_path, monkeypatch, capsys):
    """Found by a review of the start-up check: nbclient's DeadKernelError (a segfault or the OOM killer in a cell)
    says 'Kernel died' too, and the run directory with the data measured so far had been deleted as if the kernel
    had never started."""
    import papermill
    from nbclient.exceptions import DeadKernelError

    def dies_in_cell_4(*args, cwd, **kwargs):
        (Path(cwd) / "data").mkdir(exist_ok=True)
        (Path(cwd) / "data" / "measured.json").write_text("{}")
        raise DeadKernelError("Kernel died")

    monkeypatch.setattr(papermill, "execute_notebook", dies_in_cell_4)
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path))
    assert cli.main(["nb", "run", "01"]) == 1
    out, err = capsys.readouterr()
    run_dir = next(tmp_path.glob("*-01_decode_manifest"))
    assert (run_dir / "data" / "measured.json").is_file() and (run_dir / "run.json").is_file()
    assert "the kernel died in a cell (Kernel died)" in out + err and "Traceback" not in err


def test_cli_run_prints_progress_mode_and_files(tmp_path):
    """The real user path: a subprocess, as `make run` starts it."""
    env = {**os.environ, "LABKIT_OUT": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "labkit", "nb", "run", "00", "-p", "source", "recorded"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "00_device_and_timing: cell 1/" in out.stderr and "The Sage2 seed report" in out.stderr
    # counted as papermill runs it, with the injected parameters: a failure's "cell N" is the line numbered N
    assert re.search(r"cell 1/\d+ \[ *[\d.]+ s\] parameters\n.*cell 2/\d+ \[ *[\d.]+ s\] parameters given\n",
                     out.stderr), out.stderr
    assert "running over TCP" not in out.stderr and "Traceback" not in out.stderr
    assert "[IPKernelApp]" not in out.stderr  # the kernel's own log (an interrupt at shutdown) is not the user's
    lines = out.stdout.splitlines()
    assert lines[0].startswith("00_device_and_timing: ok; RECORDED, showing data/runs/")
    assert any(ln.strip().startswith("notebook: ") and ln.endswith("00_device_and_timing.ipynb") for ln in lines)
    assert any("figs/launch_overhead.png" in ln for ln in lines if ln.strip().startswith("figures:"))
    assert any("data/copy_bandwidth.json" in ln for ln in lines if ln.strip().startswith("data:"))


def test_cli_refuses_parameters_no_recorded_run_answers(tmp_path, monkeypatch, capsys):
    from labkit.cuda import gpu_status

    if gpu_status()[0]:
        pytest.skip("with a GPU the run is live")
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path))
    assert cli.main(["nb", "run", "02", "-p", "iterations", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    # older recordings predate the schedule parameter: the message names it as unrecorded there
    assert re.search(r"no recorded run of 02_sage2_phases was measured with .*\biterations=5", err), err
    assert "02_sage2_phases: iterations=10" in err and list(tmp_path.iterdir()) == []


def test_a_refusal_names_what_the_user_chose_and_a_missing_folder_or_file(tmp_path, monkeypatch, capsys):
    """Found by a review: `-p workload sage2` was refused as measured with workload='sage2', decode_head_dim='128',
    decode_heads=[32, 8], ... (defaults that older runs did not record), and a missing file or recorded_root was
    called a wrong format or an empty folder."""
    from labkit.cuda import gpu_status

    if gpu_status()[0]:
        pytest.skip("with a GPU the run is live")
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path))
    assert cli.main(["nb", "run", "04", "-p", "launches", "2"]) == 2  # (workload sage2 is now a run of both's half)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "was measured with launches=2; recorded: " in err, err
    assert cli.main(["nb", "run", "05", "-p", "recorded_root", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"recorded_root {tmp_path / 'nope'}: no such directory")
    assert cli.main(["nb", "run", "03", "-p", "seed_manifest", str(tmp_path / "nope.json")]) == 2
    assert (f"parameter seed_manifest = '{tmp_path / 'nope.json'}': no such file; expected a schema_version 4 launch "
            "manifest") in capsys.readouterr().err
    assert cli.main(["nb", "run", "03", "-p", "seed_manifest", "nope.json"]) == 2  # relative: where it was looked for
    assert f"= 'nope.json': no such file ({ROOT / 'nope.json'}); expected" in capsys.readouterr().err
    assert cli.main(["nb", "run", "03", "-p", "seed_manifest", "/dev/null"]) == 2
    assert "= '/dev/null': not a regular file; expected" in capsys.readouterr().err
    (tmp_path / "afile").write_text("x")
    assert cli.main(["nb", "run", "05", "-p", "recorded_root", str(tmp_path / "afile")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"recorded_root {tmp_path / 'afile'}: not a directory")
    (tmp_path / "afile").unlink()
    assert list(tmp_path.iterdir()) == []


def test_nb_params_lists_types_and_defaults(capsys):
    assert cli.main(["nb", "params", "00"]) == 0
    out = capsys.readouterr().out
    assert "copy_mib" in out and "an integer in 1..16384" in out and "default 1024" in out
    assert "a sweep's axis" not in out  # notebook 00 has none
    assert cli.main(["nb", "params", "03"]) == 0
    out = capsys.readouterr().out
    said = "a sweep's axis: recorded mode shows any subset of a recorded run's values"
    marked = re.findall(rf"^(\w+) .*\n.*\n {{23}}{said}$", out, re.M)
    assert marked == ["batch", "kv_lens"], out
    # each default as -p takes it (a review: {'tokens': 2} and [1, 8, 64, 256] were reprs)
    assert "default 1,8,64,256: sequences per call, swept" in out and "default '': recorded runs" in out
    assert cli.main(["nb", "params", "01"]) == 0
    assert "default tokens=2: var values" in capsys.readouterr().out


def test_nb_script_writes_a_plain_script_with_the_parameters_injected_that_runs_as_the_notebook(tmp_path, capsys):
    """``labkit nb script``: the notebook's cells as one Python file, the overrides in papermill's injected cell after
    the defaults (so they win), nothing of papermill's bookkeeping; run with plain python (what ncu should profile),
    it renders the notebook (recorded here) and saves its figures, as the notebook run does."""
    out = tmp_path / "s" / "00.py"
    assert cli.main(["nb", "script", "00", "-p", "launches", "500", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # found by a CLI review: the hint said `--out DIR`, which `ncu run` refuses (it writes NAME.ncu-rep)
    assert f"run it: python {out}   (under ncu: labkit ncu run --out NAME.ncu-rep -- python {out})" in printed
    text = out.read_text()
    defaults, _, injected = text.partition('# %% tags=["injected-parameters"]')
    assert "launches: Int(10, 1000000) = 2000" in defaults and injected.split("# %%")[0].strip().endswith(
        "launches = 500") and "papermill" not in text
    assert cli.main(["nb", "script", "00", "--out", str(out)]) == 0  # the defaults: what the recorded run measured
    env = {**os.environ, "LABKIT_OUT": str(tmp_path / "runs"), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(out)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert as_read(done.stdout).startswith("labkit 00_device_and_timing: RECORDED mode")
    (run,) = (tmp_path / "runs").glob("*-00_device_and_timing")
    assert {p.stem for p in (run / "figs").glob("*.png")} == set(OUTPUTS["00_device_and_timing"][0])
    # values no recorded run was measured with, on a machine without a GPU: one line and status 2, as `nb run` says
    # it (the script had died with a traceback, found by a new-user review); other errors keep their traceback
    from labkit.cuda import gpu_available

    if not gpu_available():
        assert cli.main(["nb", "script", "00", "-p", "launches", "500", "--out", str(out)]) == 0
        done = subprocess.run([sys.executable, str(out)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert done.stderr.startswith("labkit: error: recorded mode") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("argv, said", [
    (["-p", "launches", "abc"], "launches"),
    (["-p", "launches", "5"], "launches"),
    (["-p", "nope", "1"], "nope"),
    # a CLI review: nb run refuses these, and the script only did where it ran
    (["-p", "recorded_root", str(ROOT / "README.md")], f"recorded_root {ROOT / 'README.md'}: not a directory"),
    (["-p", "recorded_root", "/nonexistent/runs"], "recorded_root /nonexistent/runs: no such directory"),
])
def test_nb_script_refuses_bad_parameters_in_one_line_and_writes_nothing(argv, said, tmp_path, capsys):
    out = tmp_path / "00.py"
    assert cli.main(["nb", "script", "00", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_nb_script_will_not_overwrite_the_notebook_it_reads(capsys):
    source = ROOT / "notebooks" / "00_device_and_timing.py"
    before = source.read_bytes()
    assert cli.main(["nb", "script", "00", "--out", str(source)]) == 2
    assert "is the input file" in capsys.readouterr().err and source.read_bytes() == before


def test_nb_script_writes_only_a_py_file_and_overwrites_only_a_script_it_wrote(tmp_path, capsys):
    """Found by a CLI review: ``--out s.txt`` ended in jupytext's traceback, ``--out s.ipynb`` wrote a notebook, and
    ``--out labkit/cli.py`` replaced the file without a word."""
    for name in ("s.txt", "s.ipynb", "s"):
        assert cli.main(["nb", "script", "00", "--out", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err == (f"labkit: error: labkit nb script: --out {tmp_path / name}: expected a .py file (the script is "
                       "Python, in py:percent cells)\n") and not (tmp_path / name).exists()
    assert cli.main(["nb", "script", "00", "--out", str(tmp_path)]) == 2  # a directory: no .py name
    from labkit.errors import ArgumentError
    from labkit.notebook_script import write_script

    (tmp_path / "d.py").mkdir()
    with pytest.raises(ArgumentError, match="is a directory; expected a .py file"):
        write_script("00", None, tmp_path / "d.py")
    capsys.readouterr()
    other = tmp_path / "mine.py"
    other.write_text("print('my own code')\n")
    assert cli.main(["nb", "script", "00", "--out", str(other)]) == 2
    assert "exists and is not a script labkit nb script wrote; refusing to overwrite it" in capsys.readouterr().err
    assert other.read_text() == "print('my own code')\n"
    script = tmp_path / "00.py"  # make profile-NN writes build/NN.py again each time: a script it wrote is replaced
    assert cli.main(["nb", "script", "00", "--out", str(script)]) == 0
    assert cli.main(["nb", "script", "00", "-p", "launches", "500", "--out", str(script)]) == 0
    assert "launches = 500" in script.read_text()


def test_exit_in_one_line_keeps_other_errors_tracebacks(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import labkit.errors\nlabkit.errors.exit_in_one_line()\nraise ValueError('a bug')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1 and "Traceback" in done.stderr and "ValueError: a bug" in done.stderr


def test_exit_in_one_line_tells_no_gpu_from_bad_input(tmp_path):
    """1 for the wrong machine (no GPU, no usable ncu, a package missing), 2 for bad input, as the CLI exits."""
    for error, status in (("NoGPU('x needs a CUDA GPU: none')", 1), ("ArgumentError('--batch 0: expected 1..')", 2),
                          ("MissingDependency('papermill is not installed')", 1),
                          ("NcuUnavailable('Nsight Compute (ncu) not found')", 1),
                          ("NcuError('ncu wrote no report')", 2)):
        script = tmp_path / "s.py"
        script.write_text(f"import labkit.errors as e\ne.exit_in_one_line()\nraise e.{error}\n")
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == status and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("labkit: error: ") and "Traceback" not in done.stderr


def test_a_live_run_with_record_keeps_its_run_json_and_data_and_a_quiet_run_prints_nothing(tmp_path, monkeypatch,
                                                                                           capsys):
    """`--record` after a live run (here a faked GPU and kernel): run.json and data/ copied into data/runs/<run>;
    progress=None prints nothing, and print_result writes to the stream it is given."""
    import io

    import papermill

    import labkit._env
    import labkit.session

    def live_cells(*args, cwd, **kwargs):
        (Path(cwd) / "data").mkdir(exist_ok=True)
        (Path(cwd) / "data" / "session.json").write_text('{"mode": "live", "notebook": "01_decode_manifest"}')
        (Path(cwd) / "data" / "measured.json").write_text('{"p50_us": 4.5}')

    monkeypatch.setattr(papermill, "execute_notebook", live_cells)
    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (True, "a faked GPU (test)"))
    monkeypatch.setattr(labkit._env, "data_dir", lambda: tmp_path / "kept")
    res = notebooks.run("01", out_root=tmp_path / "out", record=True)
    assert capsys.readouterr().out == ""
    assert res.ok and res.mode == "live" and res.recorded_to == tmp_path / "kept" / "runs" / res.run_dir.name
    assert json.loads((res.recorded_to / "run.json").read_text()) == json.loads((res.run_dir / "run.json").read_text())
    assert (res.recorded_to / "data" / "measured.json").read_text() == '{"p50_us": 4.5}'
    out = io.StringIO()
    notebooks.print_result(res, out)
    assert out.getvalue().splitlines()[0] == "01_decode_manifest: ok; LIVE on this GPU"
    assert f"  recorded: {res.recorded_to}" in out.getvalue() and capsys.readouterr().out == ""


def test_run_all_exits_1_when_a_notebook_fails_and_says_all_ok_only_when_none_did(tmp_path, monkeypatch, capsys):
    """`labkit nb run-all` (here over two faked runs): its exit status is the one make and CI read."""
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path))
    monkeypatch.setattr(notebooks, "list_notebooks", lambda: ["00_a", "01_b"])
    for failing, status in ((set(), 0), ({"01_b"}, 1)):
        def fake_run(name, *, record, progress, failing=failing):
            bad = name in failing
            return notebooks.RunResult(tmp_path / name, tmp_path / name / f"{name}.ipynb", not bad,
                                       "cell 2: boom" if bad else None, "recorded", "data/runs/x", (), (), None)

        monkeypatch.setattr(notebooks, "run", fake_run)
        assert cli.main(["nb", "run-all"]) == status
        out = capsys.readouterr().out
        assert ("01_b: FAILED (cell 2: boom)" in out) is bool(failing)
        assert ("all notebooks ok; the newest run is " in out) == (not failing)
    # found by a review: one notebook refused (or a cell timed out, which had escaped run()) ended run-all there
    def refuse_first(name, *, record, progress):
        if name == "00_a":
            raise LabkitError("recorded mode: no recorded run of 00_a")
        return notebooks.RunResult(tmp_path / name, tmp_path / name / f"{name}.ipynb", True, None, "recorded",
                                   "data/runs/x", (), (), None)

    monkeypatch.setattr(notebooks, "run", refuse_first)
    assert cli.main(["nb", "run-all"]) == 1
    out = capsys.readouterr().out
    assert "00_a: not run: recorded mode: no recorded run of 00_a\n" in out and "01_b: ok" in out
    assert out.endswith("1 of 2 notebooks failed or did not run: 00_a\n")


def test_run_all_record_without_a_gpu_refuses_in_one_line_before_any_notebook(monkeypatch, capsys):
    """Found by a CLI review: each notebook was refused alone, seven lines, where `nb run --record` says it in one
    line; exit 1, as every GPU command on a machine without one."""
    from labkit import cuda

    monkeypatch.setattr(cuda, "gpu_status", lambda: (False, "no NVIDIA GPU or driver on this machine"))
    monkeypatch.setattr(notebooks, "run", lambda *a, **k: pytest.fail("a notebook ran"))
    assert cli.main(["nb", "run-all", "--record"]) == 1  # the machine, not the input
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("labkit: error: labkit nb run-all: --record keeps real GPU runs only, and no notebook "
                            "can run live here: "
                            "no NVIDIA GPU or driver on this machine\n")


def test_the_env_knobs_take_effect_and_an_unknown_one_is_refused_by_name(tmp_path, monkeypatch, capsys):
    """LABKIT_OUT moves the runs (else <repo>/runs), LABKIT_BATCH 1 (not 0 or empty) is batch mode, ``progress=``'s
    default is today's sys.stderr, and a knob not in the list is a KeyError listing them (found by a mutation audit:
    none of these was pinned)."""
    import io

    from labkit import _env

    monkeypatch.setattr(_env, "repo_root", lambda: tmp_path)
    monkeypatch.delenv("LABKIT_OUT", raising=False)
    assert _env.runs_dir() == tmp_path / "runs"
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path / "elsewhere"))
    assert _env.runs_dir() == tmp_path / "elsewhere"
    for value, batch in (("1", True), ("0", False), ("", False)):
        monkeypatch.setenv("LABKIT_BATCH", value)
        assert _env.batch_mode() is batch, value
    with pytest.raises(KeyError, match="unknown labkit knob LABKIT_BACTH; known: LABKIT_DEBUG, LABKIT_BATCH"):
        _env.getenv("LABKIT_BACTH")
    buf = io.StringIO()
    assert _env.stream("stderr") is sys.stderr and _env.stream(None) is None and _env.stream(buf) is buf


@pytest.mark.parametrize("batch, expected", [("1", "load 1/3\nload 2/3\nload 3/3\n"),
                                             ("0", "\rload 1/3\rload 2/3\rload 3/3\n")])
def test_progress_is_a_line_per_item_in_batch_mode_and_one_rewritten_line_interactively(batch, expected, monkeypatch,
                                                                                        capsys):
    """What papermill's log or a terminal shows: a generator is counted (or its ``total`` taken) and every item
    passes through (found by a mutation audit: labkit.progress was untested)."""
    from labkit import _env

    monkeypatch.setenv("LABKIT_BATCH", batch)
    assert list(_env.progress([10, 20, 30], desc="load")) == [10, 20, 30]
    assert capsys.readouterr().err == expected
    assert list(_env.progress((x for x in "abc"), desc="load")) == ["a", "b", "c"]
    assert capsys.readouterr().err == expected
    assert list(_env.progress((x for x in "abc"), total=3, desc="load")) == ["a", "b", "c"]
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize("debug, shown", [("1", ["I info", "W warn", "I again"]), ("0", ["W warn", "I again"])])
def test_setup_logging_prints_to_stdout_at_its_level_or_debug_under_labkit_debug(debug, shown):
    """A notebook's setup_logging("WARNING") hides info unless LABKIT_DEBUG is set; a second call (a cell run again)
    takes effect (found by a mutation audit: neither the knob nor the reconfiguration was tested)."""
    code = ("import logging; from labkit._env import setup_logging; log = logging.getLogger('labkit.t'); "
            "setup_logging('WARNING'); log.info('info'); log.warning('warn'); "
            "setup_logging('INFO'); log.info('again')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "LABKIT_DEBUG": debug}).stdout
    assert [f"{line.split()[3][0]} {line.split()[4]}" for line in out.splitlines()] == shown, out


def test_out_dir_is_the_runners_and_the_error_says_to_use_labkit_out(tmp_path, monkeypatch, capsys):
    """Found by a CLI review: the README said a notebook's out_dir parameter puts one run elsewhere, while -p out_dir
    was refused as 'has no parameter' (the notebook declares it; the runner sets it to the run's own directory)."""
    monkeypatch.setenv("LABKIT_OUT", str(tmp_path / "runs"))
    for argv in (["nb", "run", "02"], ["nb", "script", "02", "--out", str(tmp_path / "s.py")],
                 ["ncu", "run", "--out", str(tmp_path / "r"), "--notebook", "02"]):
        assert cli.main([*argv, "-p", "out_dir", "/tmp/x"]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err == [f"labkit: error: labkit {' '.join(argv[:2])}: notebook 02_sage2_phases: parameter out_dir = "
                       "'/tmp/x' is set by the runner (the run's own directory); to put runs elsewhere, set "
                       "LABKIT_OUT=DIR"], err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "s.py").exists()
    readme = (ROOT / "README.md").read_text()
    assert "`out_dir` parameter puts one run elsewhere" not in readme and "`LABKIT_OUT=DIR labkit nb" in readme


@pytest.mark.parametrize("name", ["00", "05"])
def test_the_progress_line_names_each_code_cell_apart(name, tmp_path):
    """Found by a notebook review: notebook 00's runner named cells 9 and 10 both "The Sage2 seed report" (the second
    sits under a markdown cell with no heading) and notebook 05's its first two cells after the parameters both by the
    notebook's title. A markdown cell without a heading names the cells under it by its first line, and a second code
    cell under the same markdown reads "(continued)"."""
    import nbformat

    nb = nbformat.read(notebooks.to_ipynb(notebooks.resolve(name), tmp_path / "nb.ipynb"), as_version=4)
    code, titles = nb_progress.cell_titles(nb.cells)
    shown = [titles[i] for i in code]
    assert len(set(shown)) == len(shown), shown
    markdown = [c.source.strip().splitlines()[0] for c in nb.cells if c.cell_type == "markdown"]
    for title in shown[1:]:  # each names the markdown cell above it: its heading, or its first line cut at a word
        base = title.removesuffix(" (continued)").removesuffix(" ...")
        assert any(m.lstrip("# ").startswith(base) for m in markdown), title
    if name == "00":
        assert shown[-1].startswith("Tail study: the mainloop's p50") and shown[-2] == "The Sage2 seed report"
    else:
        assert shown[1:3] == [markdown[0].lstrip("# "), markdown[0].lstrip("# ") + " (continued)"]


def test_notebooks_00_and_02_show_the_same_readable_tail_table(tmp_path):
    """Found by opening notebook 00 in JupyterLab: its tail table showed all 21 columns of tail_table (counts, mean,
    p90-p99, checksums) at six decimals, over two widths of the pane; 02 picked its own columns. Both show
    report.shown_tails now, and the CSV keeps every column."""
    from labkit.report.tables import SHOWN_TAIL_COLUMNS

    for name, csv in (("00_device_and_timing", "seed_tail_study.csv"), ("02_sage2_phases", "tail_study.csv")):
        res = notebooks.run(name, {"source": "recorded"}, out_root=tmp_path / name, timeout_s=600)
        assert res.ok, res.error
        nb = json.loads(res.notebook.read_text())
        tables = ["".join(o["data"]["text/html"]) for c in nb["cells"] for o in c.get("outputs", [])
                  if "vs_full_pct" in "".join(o.get("data", {}).get("text/html", ""))]
        assert len(tables) == 1, name
        header = re.findall(r"<th>([^<]*)</th>", tables[0].split("</thead>")[0])
        assert [h for h in header if h] == list(SHOWN_TAIL_COLUMNS), (name, header)
        cells = re.findall(r"<td>([^<]*)</td>", tables[0])
        assert cells and not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c)], cells  # rounded
        assert len(pd.read_csv(res.run_dir / "data" / csv).columns) > len(SHOWN_TAIL_COLUMNS)


def test_notebook_03_shows_the_recorded_spread_as_a_table_not_as_lines_wider_than_the_pane(tmp_path):
    """Found by opening notebook 03 in JupyterLab: the spread's 44 rows were printed as text of about 150 characters
    (a run's path, GPU, commit, build, rates, best peer), and every one broke in two in the pane, its last columns under
    the next row's start. The rows are a table now; the lines around it stay text."""
    from labkit.workloads.decode import study
    from labkit.workloads.decode.spread import spread_frame

    res = notebooks.run("03_decode", {"source": "recorded"}, out_root=tmp_path, timeout_s=600)
    assert res.ok, res.error
    nb = json.loads(res.notebook.read_text())
    cell = next(c for c in nb["cells"] if "spread_frame(spread)" in "".join(c["source"]))
    printed = "".join("".join(o.get("text", "")) for o in cell["outputs"])
    html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in cell["outputs"])
    table = pd.read_csv(res.run_dir / "data" / "bandwidth.csv")  # the notebook's defaults, as it calls it
    device = json.loads((ROOT / res.recorded_from / "run.json").read_text())["provenance"]["device"]["name"]
    spread = study.recorded_spread(64, 8192, head_dim=128, page_size=64, heads_q=32, heads_kv=8,
                                   kernel=study.table_kernel(table, 64, 8192), device=device)
    assert as_read(printed).startswith(f"{spread.call}: the plan's call in {spread.where} ")
    assert "this notebook's call: " in printed and "TB/s: labkit timed alone" in printed
    assert not [r.source for r in spread.runs if r.source in printed], "a run's row printed as text"
    assert html.count("</tr>") == len(spread.runs) + 2  # the columns, the index's name, then one row a run
    for r in spread.runs:
        assert f"<th>{r.source}</th>" in html
    assert list(spread_frame(spread).columns) == ["GPU", "git", "build", "copy", "TB/s", "best peer", "x peer"]


def test_notebook_03_in_recorded_mode_shows_the_part_of_the_recorded_sweep_that_was_asked_for(tmp_path):
    """`-p batch 64,8 -p kv_lens 8k` on a machine with no GPU had been refused because the recorded run swept more
    (batch 1, 8, 64, 256 x 1k, 8k, 32k); its sweep holds those points, so they are shown: the table and the figure
    have just them, in the order asked, and the banner names the run that covers them."""
    from labkit.cuda import gpu_status

    if gpu_status()[0]:
        pytest.skip("with a GPU the run is live")
    res = notebooks.run("03_decode", {"source": "recorded", "batch": [64, 8], "kv_lens": [8192]}, out_root=tmp_path,
                        timeout_s=600)
    assert res.ok, res.error
    table = pd.read_csv(res.run_dir / "data" / "bandwidth.csv")
    assert table[["batch", "kv_len"]].values.tolist() == [[64, 8192], [8, 8192]]
    recorded = pd.read_csv(ROOT / res.recorded_from / "data" / "bandwidth.csv").set_index(["batch", "kv_len"])
    assert table.set_index(["batch", "kv_len"])["p50_us"].to_dict() == {
        k: recorded.loc[k, "p50_us"] for k in ((64, 8192), (8, 8192))}  # the recorded numbers, not others
    nb = json.loads(res.notebook.read_text())
    text = as_read("".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", [])))
    assert ("with the same parameters except batch=[1, 8, 64, 256], which covers the batch asked for, "
            "kv_lens=[1024, 8192, 32768], which covers the kv_lens asked for; not a new measurement.") in text
    cell = next(c for c in nb["cells"] if "decode_bandwidth" in "".join(c["source"]))
    assert [o for o in cell["outputs"] if "image/png" in o.get("data", {})], "the figure is embedded"
    # every asked point skipped (over 9 GB): the figure says so, the table is empty, the cell does not fail
    res = notebooks.run("03_decode", {"source": "recorded", "batch": [256], "kv_lens": [32768]}, out_root=tmp_path)
    assert res.ok, res.error
    nb = json.loads(res.notebook.read_text())
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "skipped: batch 256 x 32768: 34.4 GB of K+V is over 9 GB" in text and "no fit: 0 calls" in text
    assert (res.run_dir / "figs" / "decode_bandwidth.png").is_file()
    with pytest.raises(LabkitError, match=r"measured with batch=\[2\]; .* Use the recorded values \(for batch, any "
                                          r"subset\), or run on a GPU$"):
        notebooks.run("03_decode", {"source": "recorded", "batch": [2]}, out_root=tmp_path)


def test_nb_script_writes_a_relative_recorded_root_as_the_repo_roots_folder(tmp_path, monkeypatch):
    """The script may run from another folder, so the path is written absolute: a relative one from the repo root, as
    the parameter says (found by a review, which also found this path had no test)."""
    from labkit.notebook_script import write_script

    monkeypatch.chdir(tmp_path)
    script = write_script("03", {"recorded_root": "data/runs"}, tmp_path / "s.py").read_text()
    assert f'recorded_root = "{ROOT / "data" / "runs"}"' in script


def test_a_code_cell_with_no_source_is_not_counted_so_progress_numbers_the_cell_a_failure_names():
    """Found by a review: nbclient never runs an empty code cell (a jupytext `# %%` of blank lines), so it has no
    execution count; counted by the progress lines, every later cell's number was one past the failure's."""
    import nbformat

    cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("\n\n"), nbformat.v4.new_markdown_cell(
        "## Compute"), nbformat.v4.new_code_cell("raise ValueError('boom')")]
    code, titles = nb_progress.cell_titles(cells)
    assert code == [0, 3] and titles[3] == "Compute"


def test_a_cell_past_the_time_limit_is_a_failed_run_with_its_run_json(tmp_path, monkeypatch):
    """Found by a review: nbclient's CellTimeoutError escaped run(), leaving no run.json and the input notebook behind
    (and run-all stopped there)."""
    from labkit import session

    source = tmp_path / "07_hang.py"
    source.write_text('# %% tags=["parameters"]\nfrom labkit.params import Choice, Text\n\n'
                      'source: Choice("auto", "live", "recorded") = "auto"\nout_dir: Text(measured=False) = ""\n\n'
                      '# %%\nimport time\ntime.sleep(60)\n')
    monkeypatch.setattr(session, "plan_source", lambda *a, **k: ("live", None))  # no GPU asked for: it runs nothing
    monkeypatch.setattr(nb_params, "notebook_dir", lambda: tmp_path)  # where resolve() looks
    res = notebooks.run("07", {}, out_root=tmp_path / "runs", timeout_s=3)
    assert not res.ok and res.error == "a cell ran past the 3 s time limit and was stopped"
    run = json.loads((res.notebook.parent / "run.json").read_text())
    assert run["ok"] is False and run["error"] == res.error
    assert not list(res.notebook.parent.glob("*.input.ipynb"))

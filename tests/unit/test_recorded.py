"""Recorded mode answers only the question asked: the newest valid run with the same parameters."""

import json
import re
import shutil

import pytest

from labkit import notebooks, probes
from labkit.device import DeviceInfo
from labkit.errors import ArgumentError, LabkitError, ParameterError
from labkit.recorded_runs import recorded_runs, scan_recorded
from labkit.session import Session, plan_source

from ..conftest import ROOT, as_read


def _record(root, stamp, name="nbx", *, params=None, ok=True, mode="live", data=None):
    run = root / f"{stamp}-{name}"
    (run / "data").mkdir(parents=True)
    doc = {"run_json_version": 2, "notebook": name, "parameters": {"n": 1, **(params or {})}, "ok": ok,
           "error": None if ok else "cell 3: boom", "session": {"mode": mode},
           "provenance": {"device": {"name": "GPU X"}, "created_utc": f"{stamp}", "git_sha": "0" * 40}}
    (run / "run.json").write_text(json.dumps(doc))
    for key, value in (data or {"probe": {"value": stamp}}).items():
        (run / "data" / f"{key}.json").write_text(json.dumps(value))
    return run


def test_newest_valid_run_with_the_same_parameters_is_shown(tmp_path, capsys):
    _record(tmp_path, "20260101T000000Z")
    _record(tmp_path, "20260201T000000Z")
    _record(tmp_path, "20260301T000000Z", params={"n": 2})  # other parameters
    _record(tmp_path, "20260401T000000Z", ok=False)  # a failed run is never a result
    bad = _record(tmp_path, "20260501T000000Z")
    (bad / "data" / "probe.json").write_text('{"value": ')  # broken, and newer
    _record(tmp_path, "20260601T000000Z", mode="recorded")  # not a GPU run

    s = Session.start("nbx", source="recorded", out_dir=tmp_path / "out", parameters={"n": 1}, runs_root=tmp_path)
    assert s.recorded.path.name == "20260201T000000Z-nbx"
    assert "RECORDED mode" in capsys.readouterr().out
    assert s.measure("probe", lambda: pytest.fail("must not run")) == {"value": "20260201T000000Z"}
    assert json.loads((tmp_path / "out" / "data" / "probe.json").read_text()) == {"value": "20260201T000000Z"}
    valid, problems = scan_recorded("nbx", tmp_path)
    assert len(valid) == 3 and len(problems) == 3
    assert any("20260401T000000Z-nbx/run.json: ok: the run failed (cell 3: boom)" in p for p in problems)
    assert any("20260501T000000Z-nbx/data/probe.json" in p and "not valid JSON" in p for p in problems)
    assert any("session.mode" in p and "'live'" in p for p in problems)


@pytest.mark.parametrize("damage, said", [
    (lambda doc: doc.update(notebook="nby"), "notebook = 'nby': expected the notebook its directory"),
    (lambda doc: doc.update(error="cell 2: boom"), "error = 'cell 2: boom': expected null in a run that is ok"),
    (lambda doc: doc.update(extra=1), "extra: unknown key"),
])
def test_a_run_record_that_contradicts_itself_is_not_a_result(damage, said, tmp_path):
    """Found by a readers review: a run.json naming another notebook, one that was ok with an error, and one with
    keys no writer puts there were each taken as a recorded result."""
    run = _record(tmp_path, "20260101T000000Z")
    doc = json.loads((run / "run.json").read_text())
    damage(doc)
    (run / "run.json").write_text(json.dumps(doc))
    valid, problems = scan_recorded("nbx", tmp_path)
    assert not valid and len(problems) == 1 and said in problems[0], problems


def test_a_record_from_before_a_kernel_change_says_so_in_the_banner(tmp_path, capsys):
    """Found by a notebook review: notebook 02's sm90 view showed a record two mainloop changes old, 10 % slower, as if
    it were today's code."""
    import subprocess

    from labkit.staleness import KERNEL_PATHS, kernel_commits_since

    log = subprocess.run(["git", "-C", str(ROOT), "log", "-20", "--format=%H", "--", *KERNEL_PATHS],
                         capture_output=True, text=True)
    # the newest commit that changed code there (a comment alone leaves records current)
    before = next((sha + "^" for sha in log.stdout.split() if kernel_commits_since(sha + "^")), None)
    if log.returncode != 0 or before is None:
        pytest.skip("no git history of the kernel sources here (a shallow clone)")
    for sha, stale in ((before, True), ("HEAD", False), ("0" * 40, False)):  # unknown to git: nothing said
        run = _record(tmp_path / sha[:4], "20260101T000000Z")
        doc = json.loads((run / "run.json").read_text())
        doc["provenance"]["git_sha"] = sha
        (run / "run.json").write_text(json.dumps(doc))
        Session.start("nbx", source="recorded", out_dir=tmp_path / "out", parameters={"n": 1},
                      runs_root=tmp_path / sha[:4])
        banner = as_read(capsys.readouterr().out)
        assert ("labkit's kernels or call plans changed in" in banner and "commit(s) since (git log" in banner
                and "re-record on a GPU to measure today's code." in banner) is stale, banner
    assert kernel_commits_since(before) >= 1 and kernel_commits_since("HEAD") == 0


def test_parameters_no_run_answers_are_refused_with_the_recorded_sets(tmp_path):
    _record(tmp_path, "20260101T000000Z", params={"n": 1})
    _record(tmp_path, "20260201T000000Z", params={"n": 2})
    with pytest.raises(LabkitError) as err:
        Session.start("nbx", source="recorded", out_dir=tmp_path / "o", parameters={"n": 3}, runs_root=tmp_path)
    msg = str(err.value)
    assert "measured with n=3" in msg and "20260101T000000Z-nbx: n=1" in msg and "20260201T000000Z-nbx: n=2" in msg
    assert "\n" not in msg
    assert not (tmp_path / "o").exists()


def test_a_refusal_names_the_three_newest_recorded_runs_and_counts_the_rest(tmp_path):
    for month in range(1, 7):
        _record(tmp_path, f"2026{month:02d}01T000000Z", params={"n": month})
    with pytest.raises(LabkitError) as err:
        Session.start("nbx", source="recorded", out_dir=tmp_path / "o", parameters={"n": 9}, runs_root=tmp_path)
    msg = str(err.value)
    named = re.findall(r"(2026\d{4}T000000Z)-nbx: n=", msg)
    assert named == ["20260601T000000Z", "20260501T000000Z", "20260401T000000Z"], msg
    assert "| and 3 older." in msg and "\n" not in msg


def test_a_run_of_more_answers_a_choice_it_covers_and_an_exact_run_comes_first(tmp_path):
    """A Choice's ``covers``: a run of workload 'both' answers 'a' (the banner says so), an exact run of 'a' is
    taken first even when older, and a run of 'a' never answers 'both'."""
    from labkit.notebooks import Parameter
    from labkit.params import Choice, Int

    declared = {"n": Parameter("n", Int(1, 9), 1, ""),
                "workload": Parameter("workload", Choice("a", "b", "both", covers={"both": ("a", "b")}), "both", "")}
    asked = {"source": "recorded", "n": 1, "workload": "a"}
    _record(tmp_path, "20260101T000000Z", params={"workload": "both"})
    _, run = plan_source("nbx", asked, declared, tmp_path)
    assert run.path.name == "20260101T000000Z-nbx" and run.covering == {"workload": "both"}
    banner = Session("nbx", "recorded", tmp_path, run, "no GPU (test)").banner()
    assert "with the same parameters except workload='both', which covers the workload asked for;" in banner
    _record(tmp_path, "20250101T000000Z", params={"workload": "a"})
    _, run = plan_source("nbx", asked, declared, tmp_path)
    assert run.path.name == "20250101T000000Z-nbx" and run.covering == {}
    shutil.rmtree(tmp_path / "20260101T000000Z-nbx")
    with pytest.raises(LabkitError, match="was measured with workload='both'"):
        plan_source("nbx", {**asked, "workload": "both"}, declared, tmp_path)
    with pytest.raises(ArgumentError, match="covers 'c' -> .* names an option it does not have"):
        Choice("a", "b", covers={"c": ("a",)})


def test_a_run_that_swept_more_values_answers_part_of_a_sweep_axis_and_its_sweep_gives_those_points(tmp_path,
                                                                                                     capsys):
    """``IntList(sweep_axis=True)``: a notebook that asks for some of a recorded sweep's values is shown those points
    of it (the banner says which run covers them), not refused; a value the run did not sweep is refused, with a hint
    that any subset would do, and a list that is not a sweep's axis still has to match."""
    from labkit import sweep
    from labkit.notebooks import Parameter
    from labkit.params import IntList

    declared = {"n": Parameter("n", IntList(1, 9, sweep_axis=True), [1], ""),
                "m": Parameter("m", IntList(1, 9), [1], "")}
    run = _record(tmp_path, "20260101T000000Z", params={"n": [1, 2, 3], "m": [4, 5]})
    sweep.run(run / "data" / "sweeps" / "s", "demo.sleep", {"ms": [1, 2, 3], "i": [4, 5]}, progress=None)
    _, found = plan_source("nbx", {"source": "recorded", "n": [3, 1], "m": [4, 5]}, declared, tmp_path)
    assert found.path == run and found.covering == {"n": [1, 2, 3]}
    session = Session("nbx", "recorded", tmp_path / "o", found, "no GPU (test)")
    assert "with the same parameters except n=[1, 2, 3], which covers the n asked for;" in session.banner()
    rows = session.sweep("s", "demo.sleep", {"ms": [3, 1]}, i=4)
    assert rows[["ms", "i"]].to_dict("records") == [{"ms": 3, "i": 4}, {"ms": 1, "i": 4}]
    with pytest.raises(LabkitError, match=r"measured with n=\[1, 4\]; .* the recorded values \(for n, any subset\)"):
        plan_source("nbx", {"source": "recorded", "n": [1, 4], "m": [4, 5]}, declared, tmp_path)
    with pytest.raises(LabkitError, match=r"measured with m=\[4\]; .* Use the recorded values, or run on a GPU"):
        plan_source("nbx", {"source": "recorded", "n": [1], "m": [4]}, declared, tmp_path)


def test_no_valid_run_names_each_file_and_problem(tmp_path):
    run = _record(tmp_path, "20260101T000000Z")
    (run / "run.json").write_bytes(b"\xff\xfe not json")
    with pytest.raises(LabkitError, match=r"no valid recorded run of nbx.*20260101T000000Z-nbx/run\.json"):
        Session.start("nbx", source="recorded", out_dir=tmp_path / "o", parameters={"n": 1}, runs_root=tmp_path)


def test_measure_names_the_file_when_recorded_data_is_not_what_the_notebook_needs(tmp_path):
    _record(tmp_path, "20260101T000000Z", data={"device": {"name": "GPU X"}})
    s = Session.start("nbx", source="recorded", out_dir=tmp_path / "o", parameters={"n": 1}, runs_root=tmp_path)
    with pytest.raises(LabkitError, match=r"20260101T000000Z-nbx/data/device\.json: does not hold a valid device"):
        s.measure("device", lambda: None, load=DeviceInfo.from_dict)
    with pytest.raises(LabkitError, match=r"data/missing\.json: missing"):
        s.measure("missing", lambda: None)


def test_a_live_measurement_reaches_the_notebook_as_its_json_file_will_read(tmp_path):
    """Notebook 05 failed live on the H200 (cell 4: 'summary cases.sage2[0].shape = [1, 37810, 56, 128]: expected a
    list') while its recorded runs rendered: live mode handed the strict reader the in-memory result, whose case
    plan holds tuples. It now gets the JSON it wrote, as a recorded run reads it."""
    from labkit._json import Node
    from labkit.ncu.cases import CasePlan, sage2_cases

    plan = CasePlan(sage2_cases([1, 1024, 4, 128], q_tail=[1000]))
    assert isinstance(plan.to_dict()["sage2"][0]["shape"], tuple)  # what broke the live run
    (tmp_path / "data").mkdir()
    s = Session("nbx", "live", tmp_path, None, "test")
    got = s.measure("plan", lambda: plan, load=lambda v: CasePlan.from_node(Node(v, "plan")))
    assert got == plan
    assert json.loads((tmp_path / "data" / "plan.json").read_text())["sage2"][0]["shape"] == [1, 1024, 4, 128]


def test_a_live_measurement_that_no_json_file_can_hold_is_refused_live_naming_its_place(tmp_path):
    """Found by a review: live mode wrote NaN with json.dumps and read it back with json.loads, so the notebook ran on,
    while every later reader of the recorded run (strict: no NaN) dropped the run as invalid, silently if an older
    one was there. numpy scalars are numbers in the file, as in memory."""
    import numpy as np

    (tmp_path / "data").mkdir()
    s = Session("nbx", "live", tmp_path, None, "test")
    assert s.measure("ok", lambda: {"p50_us": np.float32(1.5), "n": np.int64(3)}) == {"p50_us": 1.5, "n": 3}
    with pytest.raises(LabkitError, match=r"data/bad\.json: \[1\]\.max_abs_err = nan: not a finite number"):
        s.measure("bad", lambda: [{"max_abs_err": 0.5}, {"max_abs_err": float("nan")}])
    assert not (tmp_path / "data" / "bad.json").exists()


def test_session_checks_values_edited_in_jupyterlab(tmp_path):
    defaults = {k: p.default for k, p in notebooks.parameters("00").items() if k != "source"}
    with pytest.raises(ParameterError, match="parameter copy_mib = 'abc'"):
        Session.start("00_device_and_timing", out_dir=tmp_path, parameters={**defaults, "copy_mib": "abc"})
    with pytest.raises(ParameterError, match=r"pass the measured parameters \['launches'\]"):
        Session.start("00_device_and_timing", out_dir=tmp_path,
                      parameters={k: v for k, v in defaults.items() if k != "launches"})


def test_live_without_a_gpu_is_refused(tmp_path):
    from labkit.cuda import gpu_status

    if gpu_status()[0]:
        pytest.skip("a GPU is present")
    with pytest.raises(LabkitError, match="source='live'"):
        plan_source("nbx", {"source": "live"}, None, tmp_path)


def _copy_recorded(name, tmp_path):
    src = recorded_runs(name)[-1].path
    return shutil.copytree(src, tmp_path / src.name)


def _corruptions(run):
    """(description, function) pairs that damage one file of a recorded run in one way each."""
    files = [run / "run.json", *sorted((run / "data").glob("*.json"))]
    out = []
    for f in files:
        rel = f.relative_to(run)
        out += [(f"{rel}: truncated", lambda f=f: f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2])),
                (f"{rel}: empty", lambda f=f: f.write_text("")),
                (f"{rel}: deleted", lambda f=f: f.unlink()),
                (f"{rel}: a list", lambda f=f: f.write_text("[]")),
                (f"{rel}: null", lambda f=f: f.write_text("null")),
                (f"{rel}: bad UTF-8", lambda f=f: f.write_bytes(b'{"a": "\xff"}')),
                (f"{rel}: first key dropped", lambda f=f: _edit(f, lambda d: d.pop(next(iter(d))))),
                (f"{rel}: first value a string", lambda f=f: _edit(f, lambda d: d.update({next(iter(d)): "x"})))]
    out.append(("run.json: ok false", lambda: _edit(run / "run.json", lambda d: d.update(ok=False))))
    return out


def _edit(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_every_corruption_of_notebook_00s_recorded_run_gives_one_message_naming_a_file(tmp_path):
    """Notebook 00's recorded reads, damaged file by file: each ends in one LabkitError that names
    the damaged file, or (a damage that changes nothing the notebook reads) in the same results."""
    name = "00_device_and_timing"
    params = {k: p.default for k, p in notebooks.parameters(name).items() if k != "source"}
    pristine = _copy_recorded(name, tmp_path / "pristine")
    cases = _corruptions(pristine)
    outcomes = []
    for i, (what, _) in enumerate(cases):
        root = tmp_path / f"case{i}"
        run = shutil.copytree(pristine, root / pristine.name)
        dict(_corruptions(run))[what]()
        try:
            s = Session.start(name, source="recorded", out_dir=root / "out", parameters=params, runs_root=root)
            s.measure("device", None, load=DeviceInfo.from_dict)
            s.measure("copy_bandwidth", None, load=probes.copy_table)
            s.measure("cold_l2_copies", None, load=probes.cold_l2_table)
            s.measure("launch_overhead", None, load=probes.overhead_us)
            s.measure("timing_overhead", None, load=probes.timing_overhead_us)
            outcomes.append((what, "read"))
        except LabkitError as exc:
            msg = str(exc)
            assert "\n" not in msg, (what, msg)
            damaged = what.split(":")[0]
            assert re.search(re.escape(damaged), msg), (what, msg)
            outcomes.append((what, "refused"))
    read = {w for w, o in outcomes if o == "read"}
    # What passes is damage to what the notebook does not read: run.json's first key ('notebook'),
    # the probes' 'launches' counts, and the recorded session.json (the live session's record). A
    # dropped run_json_version reads the run as version 1, whose parameters parse to the same values.
    unread = {"run.json: first key dropped"} | {f"data/{f}.json: first {what}" for f in ("launch_overhead",
              "timing_overhead") for what in ("key dropped", "value a string")}
    assert {w for w in read if not w.startswith("data/session.json")} <= unread, read
    assert len(outcomes) - len(read) >= 30


def test_recorded_runs_exist_for_every_notebook():
    """Each notebook renders on CPU from a real GPU run kept in data/runs/."""
    for name in notebooks.list_notebooks():
        runs = recorded_runs(name)
        assert runs, f"no valid recorded run of {name} in data/runs: {scan_recorded(name)[1]}"
        assert runs[-1].device
        assert re.fullmatch(r"[0-9a-f]{40}", runs[-1].git_sha), runs[-1].git_sha


def test_recorded_runs_answer_each_notebooks_defaults():
    for name in notebooks.list_notebooks():
        values = {k: p.default for k, p in notebooks.parameters(name).items()}
        mode, run = plan_source(name, {**values, "source": "recorded"}, notebooks.declared_parameters(name))
        assert run is not None and run.path.parent == ROOT / "data" / "runs"


def test_a_kernel_change_and_its_revert_leave_a_record_current(tmp_path, monkeypatch):
    """A record is stale when the kernel sources differ from the ones it ran, not when commits merely touched them: an
    A/B knob added and reverted (7f612f2, c39f510) had the banner call every record before it two changes old."""
    import subprocess

    from labkit import _env
    from labkit.staleness import kernel_commits_since

    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    kernel = tmp_path / "labkit" / "k.cu"
    kernel.parent.mkdir()
    git("init", "-q")
    git("config", "user.email", "t@t"), git("config", "user.name", "t")
    kernel.write_text("int v = 1;\n")
    git("add", "."), git("commit", "-qm", "v1")
    recorded = git("rev-parse", "HEAD")
    monkeypatch.setattr(_env, "repo_root", lambda: tmp_path)
    kernel.write_text("int v = 2;\n")
    git("commit", "-qam", "v2")
    assert kernel_commits_since(recorded) == 1
    git("revert", "--no-edit", "HEAD")
    assert kernel_commits_since(recorded) == 0  # two commits, the same source
    kernel.write_text("int v = 3;\n")
    git("commit", "-qam", "v3")
    assert kernel_commits_since(recorded) == 3
    assert kernel_commits_since("0" * 40) is None


def test_a_run_that_kept_a_value_as_its_command_line_text_answers_that_value(tmp_path):
    """Older runs kept a list as its text ('3,5'): recorded mode reads it by the declared type, so it still answers
    [3, 5], and a refusal names it as a list."""
    from labkit.notebooks import Parameter
    from labkit.params import IntList

    declared = {"n": Parameter("n", IntList(1, 100), [1], "")}
    _record(tmp_path, "20260101T000000Z", params={"n": "3,5"})
    _, run = plan_source("nbx", {"source": "recorded", "n": [3, 5]}, declared, tmp_path)
    assert run.path.name == "20260101T000000Z-nbx" and run.parameters["n"] == [3, 5]
    with pytest.raises(LabkitError, match=re.escape("20260101T000000Z-nbx: n=[3, 5]")):
        plan_source("nbx", {"source": "recorded", "n": [4]}, declared, tmp_path)


def test_with_a_gpu_auto_runs_live_and_reads_no_record(tmp_path, monkeypatch):
    import labkit.session

    monkeypatch.setattr(labkit.session, "gpu_status", lambda: (True, "a faked GPU (test)"))
    assert plan_source("nbx", {"source": "auto"}, None, tmp_path / "none") == ("live", None)
    assert plan_source("nbx", {"source": "live"}, None, tmp_path / "none") == ("live", None)


def test_a_live_measurement_of_a_dataclass_is_kept_as_its_fields(tmp_path):
    from dataclasses import dataclass

    @dataclass
    class Copy:
        nbytes: int
        p50_s: float

    (tmp_path / "data").mkdir()
    s = Session("nbx", "live", tmp_path, None, "test")
    assert s.measure("copy", lambda: Copy(1 << 20, 2.5e-5)) == {"nbytes": 1 << 20, "p50_s": 2.5e-5}
    assert json.loads((tmp_path / "data" / "copy.json").read_text()) == {"nbytes": 1 << 20, "p50_s": 2.5e-5}


def test_save_figure_writes_the_png_and_svg_under_figs_and_shows_the_png_in_a_notebook(tmp_path, monkeypatch):
    import IPython
    import IPython.display
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()  # before the fake kernel below: pyplot asks it for hooks
    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())  # as inside a kernel
    monkeypatch.setattr(IPython.display, "display", shown.append)
    (tmp_path / "figs").mkdir()
    s = Session("nbx", "live", tmp_path, None, "test")
    assert s.save_figure(fig, "copy") is None  # a cell's last line echoes nothing under the figure
    png = tmp_path / "figs" / "copy.png"
    assert png.is_file() and (tmp_path / "figs" / "copy.svg").is_file()
    assert [d.data for d in shown] == [png.read_bytes()]


def _recorded_git_shas(doc, found):
    """Every ``git_sha`` value in a JSON document that is a bare sha (``-dirty`` allowed; a free-text value names a
    branch commit in words and is left to its record)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "git_sha" and isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}(-dirty)?", value):
                found.add(value.removesuffix("-dirty"))
            else:
                _recorded_git_shas(value, found)
    elif isinstance(doc, list):
        for value in doc:
            _recorded_git_shas(value, found)
    return found


def test_every_recorded_git_sha_is_a_commit_of_this_repository():
    """A record's sha places it before or after a fix (``report show``, the staleness banner): nine shas typed by hand,
    right in their first 7 characters only, had placed nothing (their folders' git_sha_corrected.txt)."""
    import subprocess

    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout: the records' commits cannot be looked up")
    if subprocess.run([git, "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                      text=True).stdout.strip() == "true":
        pytest.skip("a shallow clone lacks the records' older commits")
    shas = set()
    for path in (ROOT / "data" / "runs").rglob("*.json"):
        _recorded_git_shas(json.loads(path.read_text(encoding="utf-8-sig")), shas)
    assert len(shas) > 20  # the records span many commits; fewer means the walk missed them
    check = subprocess.run([git, "cat-file", "--batch-check"], cwd=ROOT, capture_output=True, text=True,
                           input="".join(f"{s}^{{commit}}\n" for s in sorted(shas)))
    missing = [line.split()[0].removesuffix("^{commit}") for line in check.stdout.splitlines()
               if line.endswith(" missing")]
    assert not missing, f"recorded git shas that are no commit of this repository: {missing}"


def test_manifest_vars_that_resolve_to_the_recorded_ones_are_answered_by_that_run():
    """Found by a notebook review: notebook 01 recorded with manifest_vars {'tokens': 2} refused 'tokens=2,seqs=2',
    though seqs' max is 2, so the manifest resolves both to the same vars; 'seqs=1' is another call, still refused."""
    name = "01_decode_manifest"
    values = {k: p.default for k, p in notebooks.parameters(name).items()}
    declared = notebooks.declared_parameters(name)
    _, default_run = plan_source(name, {**values, "source": "recorded"}, declared)
    _, run = plan_source(name, {**values, "source": "recorded", "manifest_vars": {"tokens": 2, "seqs": 2}}, declared)
    assert run.path == default_run.path and run.covering == {}
    banner = Session(name, "recorded", ROOT, run, "no GPU (test)").banner()
    assert "with the same parameters; not a new measurement." in banner, banner
    with pytest.raises(LabkitError, match=r"no recorded run of 01_decode_manifest was measured with manifest_vars="
                                          r"\{'tokens': 2, 'seqs': 1\}"):
        plan_source(name, {**values, "source": "recorded", "manifest_vars": {"tokens": 2, "seqs": 1}}, declared)


def test_manifest_vars_are_resolved_only_against_the_manifest_the_run_read(tmp_path):
    """A review: the vars a run left to their max took the maxima of the manifest it read, so another manifest (a copy
    outside the repository, or a repository file edited since the run's commit) cannot say they were the same."""
    import shutil

    from labkit.params import IntDict

    vars_param = IntDict(1, 2147483647, vars_of="manifest")
    run = next(r for r in reversed(recorded_runs("01_decode_manifest"))
               if r.parameters["manifest_vars"] == {"tokens": 2})
    seed = "data/trtllm_gen_decode_manifest_v4.json"
    wanted = {"tokens": 2, "seqs": 2}
    assert vars_param.same_beside({"tokens": 2}, wanted, {"manifest": seed}, run.git_sha)
    assert not vars_param.same_beside({"tokens": 2}, {"tokens": 2, "seqs": 1}, {"manifest": seed}, run.git_sha)
    assert not vars_param.same_beside({"tokens": 2}, wanted, {"manifest": seed}, "0" * 40)  # no such commit
    copy = shutil.copy(ROOT / seed, tmp_path / "m.json")
    assert not vars_param.same_beside({"tokens": 2}, wanted, {"manifest": str(copy)}, run.git_sha)


def test_notebook_00s_text_on_a_copy_past_half_the_l2_holds_in_the_newest_recorded_run():
    """The text says that past half the L2 a hot copy pays the last copy's write-backs, runs with `cold` and slower
    than `cold_clean` (a review had found hot slower than cold_clean there, unexplained)."""
    import pandas as pd

    run = sorted((ROOT / "data" / "runs").glob("*-00_device_and_timing"))[-1]
    device = json.loads((run / "data" / "device.json").read_text())
    half_l2_mib = device["l2_bytes"] / 2**21
    p50 = pd.read_csv(run / "data" / "cold_l2_copies.csv").pivot(index="MiB", columns="mode", values="p50_us")
    past = p50[p50.index >= half_l2_mib]
    assert len(past) >= 2
    assert (past["hot"] > past["cold_clean"]).all() and ((past["hot"] / past["cold"] - 1).abs() < 0.05).all()
    assert "pays write-backs as `cold` does" in (ROOT / "notebooks" / "00_device_and_timing.py").read_text()


def test_recorded_runs_take_a_notebooks_prefix_and_a_run_as_a_str():
    """An API walk: recorded_runs('03') gave [] (the CLI takes 03), an unknown notebook gave [] too, and
    read_recorded_run of a str path failed with a TypeError."""
    from labkit.recorded_runs import read_recorded_run

    runs = recorded_runs("03")
    assert runs and runs == recorded_runs("03_decode")
    with pytest.raises(LabkitError, match="notebook '99_nope': not found; available: 00_device_and_timing"):
        recorded_runs("99_nope")
    assert read_recorded_run(str(runs[-1].path)) == runs[-1]


def test_a_session_of_a_notebooks_prefix_is_told_the_notebooks_name():
    """An API walk: Session.start('03') in recorded mode was told to run it once on a GPU, as if no run existed."""
    with pytest.raises(LabkitError, match=r"no valid recorded run of 03 \(did you mean 03_decode\?\) under "):
        Session.start("03", source="recorded")

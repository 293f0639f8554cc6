"""A sweep's points name the code that measured them; a resume after the code changed runs them again and keeps the
old records aside (a review against sweeps-dask.md: a point's id had hashed its parameters alone, so a resume after a
kernel edit took the old kernel's numbers as done and mixed them with the new one's)."""

import importlib
import json
import sys

from labkit import cli, sweep
from labkit.sweep import workloads
from labkit.sweep.code import code_digest

MODULE = '''
from labkit.sweep import workloads

KERNEL_VERSION = {version}


@workloads.register("test.versioned")
def versioned(x: int = 0) -> dict:
    return {{"x": x, "kernel": KERNEL_VERSION}}
'''


def _workload_module(tmp_path, version: int):
    (tmp_path / "versioned_wl.py").write_text(MODULE.format(version=version))
    sys.path.insert(0, str(tmp_path))
    try:
        sys.modules.pop("versioned_wl", None)
        importlib.invalidate_caches()
        return importlib.import_module("versioned_wl")
    finally:
        sys.path.remove(str(tmp_path))


def test_the_digest_follows_labkit_and_a_workload_module_outside_it(tmp_path):
    mod = _workload_module(tmp_path, 1)
    first = code_digest(mod.versioned)
    assert first == code_digest(mod.versioned) and len(first) == 16
    assert first != code_digest()  # the workload's own file counts
    assert code_digest(workloads.get("demo.sleep")) == code_digest()  # labkit's own: already in labkit's files
    (tmp_path / "versioned_wl.py").write_text(MODULE.format(version=2))
    assert code_digest(mod.versioned) != first  # read from disk: an edit is seen without a reload


def test_a_resume_after_the_code_changed_runs_every_point_again_and_keeps_the_old_records(tmp_path):
    out, grid = tmp_path / "s", {"x": [1, 2, 3]}
    mod = _workload_module(tmp_path, 1)
    assert sweep.run(out, "test.versioned", grid, progress=None)["ok"] == 3
    old_code = code_digest(mod.versioned)
    assert set(sweep.collect(out)["code"]) == {old_code}
    assert sweep.run(out, "test.versioned", grid, progress=None)["skipped"] == 3  # the same code: nothing runs

    mod = _workload_module(tmp_path, 2)  # the kernel changed
    assert sweep.status(out)["stale"] == 3
    import io

    lines = io.StringIO()
    counts = sweep.run(out, "test.versioned", grid, progress=lines)
    assert (counts["ok"], counts["skipped"], counts["stale"]) == (3, 0, 3)
    said = " ".join(lines.getvalue().split())  # wrapped to a notebook pane's width
    assert said.startswith(f"3 points measured by other code (labkit code {old_code}; now "
                           f"{code_digest(mod.versioned)}) run again; their records move to "
                           f"{out / 'points' / 'stale'} [1/3 done, ")
    df = sweep.collect(out)
    assert list(df["result.kernel"]) == [2, 2, 2] and set(df["code"]) == {code_digest(mod.versioned)}
    kept = sorted((out / "points" / "stale" / old_code).glob("*.json"))
    assert len(kept) == 3 and {json.loads(f.read_text())["result"]["kernel"] for f in kept} == {1}
    assert sweep.status(out)["stale"] == 0


def test_the_cli_says_which_points_other_code_measured(tmp_path, capsys):
    """A record from before records named their code, and one of another code: status counts both, the resume runs
    both again and says so, and the old files are kept under points/stale/."""
    out = tmp_path / "s"
    run = ["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1,2,3", "--out", str(out)]
    assert cli.main(run) == 0
    capsys.readouterr()
    legacy = out / "points" / f"{sweep.point_id({'ms': 1})}.json"
    doc = json.loads(legacy.read_text())
    del doc["code"]
    legacy.write_text(json.dumps(doc))
    other = out / "points" / f"{sweep.point_id({'ms': 2})}.json"
    doc = json.loads(other.read_text())
    doc["code"] = "0123456789abcdef"
    other.write_text(json.dumps(doc))
    assert cli.main(["sweep", "status", str(out)]) == 0
    assert capsys.readouterr().out == (f"{out}: demo.sleep, 3 points: 3 ok, 0 failed, 0 missing; 2 measured by other "
                                       "code (a resume runs them again)\n")
    assert cli.main(run) == 0
    captured = capsys.readouterr()
    assert "2 points measured by other code (labkit code 0123456789abcdef, unknown; now " in " ".join(
        captured.err.split())
    assert captured.out == (f"{out}: 2 ok, 0 failed, 1 done before, 3 points, 2 of them run again (measured by other "
                            "code)\n")
    assert (out / "points" / "stale" / "unknown" / legacy.name).is_file()
    assert (out / "points" / "stale" / "0123456789abcdef" / other.name).is_file()
    assert cli.main(["sweep", "status", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}: demo.sleep, 3 points: 3 ok, 0 failed, 0 missing\n"


def test_the_digest_reads_kernels_in_subpackages_and_nothing_but_source(tmp_path, monkeypatch):
    """An edit to a kernel deep in a workload's package changes the digest (the sweep must not take the old kernel's
    points as done); a file that decides no result (a figure style, a cache) does not."""
    from labkit.sweep import code

    kernels = tmp_path / "workloads" / "decode" / "kernels"
    kernels.mkdir(parents=True)
    (tmp_path / "__init__.py").write_text("")
    (kernels / "paged.cu").write_text("// v1\n")
    (kernels / "paged.cuh").write_text("// header v1\n")
    (kernels.parent / "plan.py").write_text("SPLITS = 1\n")
    (tmp_path / "style.mplstyle").write_text("lines.linewidth: 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "plan.cpython-311.py").write_text("stale\n")
    monkeypatch.setattr(code, "_package_dir", lambda: tmp_path)
    seen = {code_digest()}
    for path, text in ((kernels / "paged.cu", "// v2\n"), (kernels / "paged.cuh", "// header v2\n"),
                       (kernels.parent / "plan.py", "SPLITS = 2\n")):
        path.write_text(text)
        digest = code_digest()
        assert digest not in seen, f"an edit of {path.relative_to(tmp_path)} left the digest as it was"
        seen.add(digest)
    (tmp_path / "style.mplstyle").write_text("lines.linewidth: 2\n")
    (tmp_path / "__pycache__" / "plan.cpython-311.py").write_text("staler\n")
    assert code_digest() in seen

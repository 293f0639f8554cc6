"""A record stays current when a kernel or plan changed only in comments, docstrings or whitespace; it turns stale
when the code changed (labkit.staleness, the notebooks' banner)."""

import json
import re
import subprocess

import pytest

import labkit.workloads.decode as decode_package
from labkit import _env
from labkit.kernels import compile_cubin, kernel_path
from labkit.manifest.elf import _sections
from labkit.staleness import code_of, has_commit, kernel_commits_since
from labkit.workloads.decode import DecodeGeometry
from labkit.workloads.decode.plan import plan_call

from ..conftest import as_read


def _git_repo(tmp_path, monkeypatch):
    """A git repository in ``tmp_path`` that labkit takes for its own; returns its ``git(*args)`` (stdout)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@t"), git("config", "user.name", "t")
    monkeypatch.setattr(_env, "repo_root", lambda: tmp_path)
    return git


def test_a_comment_or_docstring_in_a_kernel_or_plan_leaves_a_record_current(tmp_path, monkeypatch):
    """A comment on a not-kept A/B in decode/loads.py (8401753) had the banner call every notebook's record stale:
    what counts is code. A change in code beside a comment still counts."""
    git = _git_repo(tmp_path, monkeypatch)
    kernel, plan = tmp_path / "labkit" / "k.cuh", tmp_path / "labkit" / "workloads" / "decode" / "loads.py"
    plan.parent.mkdir(parents=True)
    kernel.write_text('#define A 1\nint v = A; // one\nconst char* s = "// kept";\n')
    plan.write_text('"""Loads."""\nX = (1,)  # one\n\n\ndef f():\n    """Doc."""\n    return X\n')
    git("add", "."), git("commit", "-qm", "v1")
    recorded = git("rev-parse", "HEAD")
    kernel.write_text('/* why,\n   at length */\n#define A 1\nint   v = A;  // two\n\nconst char* s = "// kept";\n')
    plan.write_text('"""Loads, said again."""\n# a measurement\nX = (1,)  # two\n\n\ndef f():\n    """Doc 2."""\n'
                    '    return X\n')
    git("commit", "-qam", "comments, docstrings, blank lines and spaces")
    assert kernel_commits_since(recorded) == 0
    for path, text in ((kernel, '#define A 1\nint v = A; // one\nconst char* s = "// kept!";\n'),
                       (plan, '"""Loads."""\nX = (1, 2)  # one\n\n\ndef f():\n    """Doc."""\n    return X\n')):
        before = path.read_text()
        path.write_text(text)  # a string literal's "comment", a value
        git("commit", "-qam", "code")
        assert kernel_commits_since(recorded) == int(git("rev-list", "--count", f"{recorded}..HEAD")), path
        path.write_text(before)
        git("commit", "-qam", "back")
        assert kernel_commits_since(recorded) == 0


def test_what_a_raise_says_is_not_code_but_when_it_raises_is():
    """Reworded refusals in decode/geometry.py (this session) called every recorded notebook stale: a call that runs
    never reaches them. The condition that raises, and whether it raises, are code."""
    plan = ('def f(w):\n    if w not in (4, 8):\n        raise ValueError(f"warps {w}: expected 4 or 8")\n'
            '    return w\n')
    words = plan.replace('f"warps {w}: expected 4 or 8"', '"warps " + ("x" if w else "y") + str(w)')
    assert code_of("p.py", plan) == code_of("p.py", words)
    assert code_of("p.py", plan) != code_of("p.py", plan.replace("(4, 8)", "(4, 8, 16)"))
    # the class stays: plan.py catches ArgumentError from kernel_build (found by a review)
    assert code_of("p.py", plan) != code_of("p.py", plan.replace("ValueError", "KeyError"))
    assert code_of("p.py", plan) != code_of("p.py", plan.replace("        raise ValueError(", "        print("))


def _texts(image: bytes) -> dict:
    return {name: image[off:off + size] for name, (_, off, size, _) in _sections(image).items()
            if name.startswith(".text")}


@pytest.mark.parametrize("batch, kv_len", [(1, 8192), (64, 1024)])
def test_the_code_of_a_kernel_compiles_to_its_machine_code(batch, kv_len):
    """What the check compares is the code NVRTC compiles: the plan's decode build (page ids ahead at batch 1, the
    one-stage 4-warp build at 64 x 1k), its header inlined, read as code_of reads it, compiles to the same .text."""
    kb = plan_call(DecodeGeometry(batch, 32, 8, 128, 64, kv_len // 64, kv_len)).kernel
    src = kernel_path(decode_package.__file__, kb.source)
    header = src.with_name("paged_decode.cuh")
    inlined = src.read_text().replace('#include "paged_decode.cuh"', header.read_text())
    code = code_of(src.name, inlined)
    assert "//" not in re.sub(r'"[^"\n]*"', "", code) and "/*" not in code and "\n\n" not in code
    assert len(code) < 0.7 * len(inlined)  # the comments are most of the text
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    read = compile_cubin(src, arch="sm_90", options=kb.options(), code=code)
    assert _texts(read.image) == _texts(now.image) and _texts(now.image)


@pytest.mark.parametrize("before, after", [
    ("#define X a \\\n// note\nb;\n", "#define X a \\\nb;\n"),  # a comment line inside a spliced macro ends it
    ("#define X a\\\n b\n", "#define X a\\\nb\n"),  # a spliced line's blanks part tokens: `a b` against `ab`
    ("#define A 1 /* x\n */ + 2\nint v = A;", "#define A 1\n+ 2\nint v = A;"),  # a comment is one space, not lines
    ('asm("mov.u32  %0, 1;");', 'asm("mov.u32 %0, 1;");'),  # blanks inside a literal are its own
    ('"""a"""\nX = __doc__\n', '"""b"""\nX = __doc__\n'),  # a docstring that the code reads
])
def test_code_of_tells_apart_what_c_or_python_reads_differently(before, after):
    """Found by review: the first version worked line by line before splicing lines, kept a comment's newlines and
    collapsed blanks inside string literals, so each of these pairs read as the same code."""
    path = "k.py" if '"""' in before else "k.cuh"
    assert code_of(path, before) != code_of(path, after)


@pytest.mark.parametrize("before, after", [
    ("int a /* c */ b;", "int a b;"),
    ("int v = A;  // two\n\n\t\n", "int   v = A;"),
    ("#define A 1 /* x\n */ + 2\n", "#define A 1 + 2\n"),
    ("#define X a \\\n  b\n", "#define X a b\n"),
])
def test_code_of_reads_comments_and_blanks_as_c_does(before, after):
    assert code_of("k.cu", before) == code_of("k.cu", after)


def test_a_kernel_whose_name_git_quotes_still_counts(tmp_path, monkeypatch):
    """Found by review: names split on blanks, or quoted by git, could not be shown at either commit and compared equal
    (None == None)."""
    git = _git_repo(tmp_path, monkeypatch)
    kernels = [tmp_path / "labkit" / "a b.cu", tmp_path / "labkit" / "k\u00e9.cu"]
    kernels[0].parent.mkdir()
    for k in kernels:
        k.write_text("int v = 1;\n")
    git("add", "."), git("commit", "-qm", "v1")
    recorded = git("rev-parse", "HEAD")
    for k in kernels:
        k.write_text("int v = 2;\n")
        git("commit", "-qam", k.name)
        assert kernel_commits_since(recorded) == int(git("rev-list", "--count", f"{recorded}..HEAD")), k.name
        k.write_text("int v = 1;\n")
        git("commit", "-qam", "back")
        assert kernel_commits_since(recorded) == 0


def test_has_commit_reads_the_history(tmp_path, monkeypatch):
    """Whether a record's commit has a fix in its history (the decode reports' persisting-L2 note asks): a commit has
    itself and its parents, not its children; a sha git does not know is None."""
    git = _git_repo(tmp_path, monkeypatch)
    (tmp_path / "f").write_text("1")
    git("add", "."), git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD")
    (tmp_path / "f").write_text("2")
    git("commit", "-qam", "two")
    second = git("rev-parse", "HEAD")
    assert has_commit(first, second) and has_commit(first, first)
    assert has_commit(second, first) is False
    assert has_commit(first, "f" * 40) is None


def test_a_kernel_file_added_or_deleted_counts_even_if_it_holds_only_comments(tmp_path, monkeypatch):
    """A file missing at either commit is a change (``_same_code``): found by mutation testing, a missing file read as
    empty code, so an added or deleted file of comments alone read as the same code as nothing."""
    git = _git_repo(tmp_path, monkeypatch)
    (tmp_path / "labkit").mkdir()
    (tmp_path / "labkit" / "k.cu").write_text("int v = 1;\n")
    git("add", "."), git("commit", "-qm", "v1")
    recorded = git("rev-parse", "HEAD")
    added = tmp_path / "labkit" / "notes.cuh"
    added.write_text("// only a comment\n")
    git("add", "."), git("commit", "-qm", "add")
    assert kernel_commits_since(recorded) == 1
    git("rm", "-q", str(added)), git("commit", "-qm", "delete")
    assert kernel_commits_since(git("rev-parse", "HEAD~1")) == 1  # deleted since the commit that had it
    assert kernel_commits_since(recorded) == 0  # added then deleted: the same files as at the record, a revert


def test_code_of_leaves_a_file_neither_python_nor_c_as_it_is():
    text = "a  b // not a comment here\n\n/* nor this */\n"
    assert code_of("notes.txt", text) == text and code_of("bad.py", "def (:\n") == "def (:\n"


def test_a_bare_raise_or_a_raise_of_a_class_reads_as_code():
    """Found by mutation testing: only ``raise Class(words)`` was read; a re-raise has no exception to strip."""
    plan = "try:\n    f()\nexcept KeyError:\n    raise\n"
    assert code_of("p.py", plan) != code_of("p.py", plan.replace("raise", "pass"))
    assert code_of("p.py", "raise KeyError\n") != code_of("p.py", "raise ValueError\n")


def test_a_record_is_called_stale_only_where_its_notebook_runs_the_changed_code(tmp_path, monkeypatch, capsys):
    """Found by opening every notebook in JupyterLab: a rework of decode/geometry.py's refusals and a helper added
    beside them had all six recorded notebooks say "labkit's kernels or call plans changed in 4 commit(s)", 00-02
    among them, which run no decode code; and the count was of commits touching any kernel path, four where the git log
    the banner names lists three. The banner now holds a record to the code its notebook runs, names the files whose
    code differs, and counts the commits that command lists."""
    from labkit.session import Session

    from .test_recorded import _record

    git = _git_repo(tmp_path, monkeypatch)
    sources = {"labkit/timing/kernels/timing_helpers.cu": "int t = 1;\n",
               "labkit/workloads/sage2/kernels/attn_fwd.cu": "int a = 1;\n",
               "labkit/workloads/decode/geometry.py": "X = 1\n", "labkit/workloads/decode/loads.py": "L = 1\n"}
    for path, text in sources.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git("add", "."), git("commit", "-qm", "recorded here")
    recorded = git("rev-parse", "HEAD")
    for path, text, why in (("labkit/workloads/decode/loads.py", "L = 1  # why\n", "a comment"),
                            ("labkit/workloads/decode/geometry.py", "X = 2\n", "code"),
                            ("labkit/workloads/decode/geometry.py", "X = 3\n", "code again")):
        (tmp_path / path).write_text(text)
        git("commit", "-qam", why)
    listed = git("log", "--oneline", f"{recorded}..HEAD", "--", "labkit/workloads/decode/geometry.py").splitlines()
    assert len(listed) == 2
    stale = (f"labkit's kernels or call plans changed in 2 commit(s) since (git log {recorded[:12]}..HEAD -- "
             "labkit/workloads/decode/geometry.py): re-record on a GPU to measure today's code.")
    for name, runs in (("00_device_and_timing", False), ("01_decode_manifest", False), ("02_sage2_phases", False),
                       ("03_decode", True), ("04_cta_scheduling", True), ("05_ncu_correlation", True),
                       ("another", True)):  # a notebook not in the table: held to every kernel and plan
        run = _record(tmp_path / "runs" / name, "20260101T000000Z", name)
        doc = json.loads((run / "run.json").read_text())
        doc["provenance"]["git_sha"] = recorded
        (run / "run.json").write_text(json.dumps(doc))
        Session.start(name, source="recorded", out_dir=tmp_path / "out" / name, parameters={"n": 1},
                      runs_root=tmp_path / "runs" / name)
        banner = as_read(capsys.readouterr().out)
        assert (stale in banner) is runs and ("re-record" in banner) is runs, (name, banner)


def _decode_geometry_committed(tmp_path, monkeypatch):
    """A repository holding decode/geometry.py (code every decode notebook runs) in one commit: (git, the file, the
    commit)."""
    git = _git_repo(tmp_path, monkeypatch)
    geometry = tmp_path / "labkit" / "workloads" / "decode" / "geometry.py"
    geometry.parent.mkdir(parents=True)
    geometry.write_text("X = 1\n")
    git("add", "."), git("commit", "-qm", "recorded here")
    return git, geometry, git("rev-parse", "HEAD")


def test_a_record_of_a_dirty_tree_edits_not_committed_and_a_commit_not_here_are_not_called_current(
        tmp_path, monkeypatch, capsys):
    """Found by a review: a record's ``<sha>-dirty`` failed every git call and its banner said nothing (as if
    current); a kernel edited and not committed, or a new file beside it, left a record current; and a commit this
    checkout lacks read as current too."""
    from labkit.session import Session

    from .test_recorded import _record

    git, geometry, recorded = _decode_geometry_committed(tmp_path, monkeypatch)

    shown = []

    def banner(sha):
        shown.append(sha)
        runs = tmp_path / "runs" / str(len(shown))  # outside the repository's tree: not an untracked kernel
        run = _record(runs, "20260101T000000Z", "03_decode")
        doc = json.loads((run / "run.json").read_text())
        doc["provenance"]["git_sha"] = sha
        (run / "run.json").write_text(json.dumps(doc))
        Session.start("03_decode", source="recorded", out_dir=tmp_path / "out" / str(len(shown)), parameters={"n": 1},
                      runs_root=runs)
        return as_read(capsys.readouterr().out)

    assert "changed" not in banner(recorded) and "cannot be told" not in banner(recorded)
    geometry.write_text("X = 2\n")  # not committed
    edited = ("labkit's kernels or call plans changed in uncommitted edits (git diff HEAD -- "
              "labkit/workloads/decode/geometry.py): re-record on a GPU")
    assert edited in banner(recorded)
    assert edited in banner(recorded + "-dirty") and f"git {recorded[:12]} with uncommitted changes)" in banner(
        recorded + "-dirty")
    git("commit", "-qam", "code")
    (tmp_path / "labkit" / "workloads" / "decode" / "kernels").mkdir()
    (tmp_path / "labkit" / "workloads" / "decode" / "kernels" / "new.cu").write_text("int k = 1;\n")  # untracked
    both = banner(recorded + "-dirty")
    assert (f"changed in 1 commit(s) since (git log {recorded[:12]}..HEAD -- labkit/workloads/decode/geometry.py "
            "labkit/workloads/decode/kernels/new.cu) and uncommitted edits (git diff HEAD --") in both
    assert "cannot be told here (no git, or commit 0123456789ab is not in this checkout)" in banner("0123456789ab" * 3)


def test_notebook_04_of_one_workload_is_held_to_that_workloads_code(tmp_path, monkeypatch, capsys):
    """Found by reading notebook 04 run with -p workload sage2: its banner blamed a decode change, code the run never
    ran; a run of both workloads, or of decode, is held to it."""
    from labkit.session import Session

    from .test_recorded import _record

    git, geometry, recorded = _decode_geometry_committed(tmp_path, monkeypatch)
    geometry.write_text("X = 2\n")
    git("commit", "-qam", "decode code")
    for workload, stale in (("sage2", False), ("decode", True), ("both", True)):
        runs = tmp_path / "runs" / workload
        run = _record(runs, "20260101T000000Z", "04_cta_scheduling", params={"workload": workload})
        doc = json.loads((run / "run.json").read_text())
        doc["provenance"]["git_sha"] = recorded
        (run / "run.json").write_text(json.dumps(doc))
        Session.start("04_cta_scheduling", source="recorded", out_dir=tmp_path / "out" / workload,
                      parameters={"n": 1, "workload": workload}, runs_root=runs)
        assert ("decode/geometry.py): re-record" in as_read(capsys.readouterr().out)) is stale, workload


def test_a_change_to_the_occupancy_model_stales_the_records_that_it_sized_or_tabled(tmp_path, monkeypatch, capsys):
    """Found by reading notebook 04's record after the 1 KB system reserve stopped being counted twice: its occupancy
    table showed 34816 B of shared memory per CTA where today's model says 33792, under a banner blaming only
    kernels. The decode plan sizes its splits by the same model, so a decode record is held to it as well; a Sage2
    phase record (notebook 02) runs none of it."""
    from labkit.session import Session

    from .test_recorded import _record

    git = _git_repo(tmp_path, monkeypatch)
    model = tmp_path / "labkit" / "sched" / "occupancy.py"
    model.parent.mkdir(parents=True)
    model.write_text("RESERVE = 1024\n")
    git("add", "."), git("commit", "-qm", "recorded here")
    recorded = git("rev-parse", "HEAD")
    model.write_text("RESERVE = 0\n")
    git("commit", "-qam", "the reserve counted once")
    for name, params, stale in (("02_sage2_phases", {}, False), ("03_decode", {}, True),
                                ("04_cta_scheduling", {"workload": "sage2"}, True),
                                ("04_cta_scheduling", {"workload": "decode"}, True)):
        runs = tmp_path / "runs" / f"{name}-{params.get('workload')}"
        run = _record(runs, "20260101T000000Z", name, params=params or None)
        doc = json.loads((run / "run.json").read_text())
        doc["provenance"]["git_sha"] = recorded
        (run / "run.json").write_text(json.dumps(doc))
        Session.start(name, source="recorded", out_dir=tmp_path / "out" / runs.name, parameters={"n": 1, **params},
                      runs_root=runs)
        shown = as_read(capsys.readouterr().out)
        assert (f"1 commit(s) since (git log {recorded[:12]}..HEAD -- labkit/sched/occupancy.py): re-record"
                in shown) is stale, (name, params, shown)

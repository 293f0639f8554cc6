"""Whether a recorded run measured today's code: the kernels, the plans that choose their builds and the occupancy
model they size launches by, read as code.

A recorded notebook says so when labkit's kernels or call plans changed since its run (``Session``'s banner). What
counts is code: a comment, a docstring, a line's indentation or what a ``raise`` says changed in a kernel or a plan
leaves the machine code and the plans as they were, so it leaves a record current (a comment on a not-kept A/B in
``decode/loads.py`` had called every notebook's record stale, and reworded refusals in ``decode/geometry.py`` did
again).
"""

import ast
import re
import subprocess
from pathlib import Path

from . import _env

# what a recorded measurement depends on: the CUDA sources and the plans that choose the builds and launches
# (decode/geometry.py: default_splits and kernel_build, the split count and build defaults the plan starts from)
# the occupancy model (decode/plan.py sizes splits by it; notebook 04 records its table) counts too: the 1 KB system
# reserve counted twice had left notebook 04's record showing 1024 B more shared memory per CTA with no word why
_OCCUPANCY = ("labkit/sched/occupancy.py", "labkit/manifest/elf.py")
KERNEL_PATHS = (":(glob)labkit/**/*.cu", ":(glob)labkit/**/*.cuh", "labkit/workloads/decode/plan.py",
                "labkit/workloads/decode/geometry.py", "labkit/workloads/decode/loads.py",
                "labkit/workloads/sage2/schedule.py", *_OCCUPANCY)

# the part of them each notebook measures: every timed sample runs the timing pads; a notebook not named here is held
# to all of them (a change to the decode plan had called notebooks 00-02's records stale, which run none of it)
_TIMING = (":(glob)labkit/timing/kernels/*",)
_SAGE2 = (":(glob)labkit/workloads/sage2/kernels/*", "labkit/workloads/sage2/schedule.py")
_DECODE = (":(glob)labkit/workloads/decode/kernels/*", "labkit/workloads/decode/plan.py",
           "labkit/workloads/decode/geometry.py", "labkit/workloads/decode/loads.py", *_OCCUPANCY)
NOTEBOOK_KERNEL_PATHS = {
    "00_device_and_timing": _TIMING,
    "01_decode_manifest": _TIMING + (":(glob)labkit/manifest/kernels/*",),
    "02_sage2_phases": _TIMING + _SAGE2,
    "03_decode": _TIMING + _DECODE,
    "04_cta_scheduling": _TIMING + _SAGE2 + _DECODE + (":(glob)labkit/sched/kernels/*",),  # _OCCUPANCY in _DECODE
    "05_ncu_correlation": _TIMING + _SAGE2 + _DECODE,
}


# notebook 04 studies one workload or both (its ``workload`` parameter): a run of one is held to that one's code
_WORKLOAD_PATHS = {"sage2": _TIMING + _SAGE2 + (":(glob)labkit/sched/kernels/*",) + _OCCUPANCY,
                   "decode": _TIMING + _DECODE + (":(glob)labkit/sched/kernels/*",)}


def kernel_paths(notebook: str, parameters: dict | None = None) -> tuple[str, ...]:
    """The kernels and plans ``notebook``'s measurements run (git pathspecs), all of ``KERNEL_PATHS`` for another;
    with its ``parameters``, only those of the workload it studies (notebook 04's ``workload``)."""
    workload = (parameters or {}).get("workload")
    if notebook == "04_cta_scheduling" and workload in _WORKLOAD_PATHS:
        return _WORKLOAD_PATHS[workload]
    return NOTEBOOK_KERNEL_PATHS.get(notebook, KERNEL_PATHS)

# a C/CUDA string or character literal (kept whole), a comment (one space, as C reads it) or a run of blanks (one)
_C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|[ \t\f\v]+', re.S)


def _c_code(text: str) -> str:
    """C's own first steps: lines ending in a backslash spliced to the next, then each comment one space; then runs of
    blanks outside literals as one space and blank lines dropped (newlines stay: the preprocessor reads them)."""
    spliced = text.replace("\\\r\n", "").replace("\\\n", "")
    def one_space(m: re.Match) -> str:
        return m.group(0) if m.group(0)[0] in "\"'" else " "

    bare = _C_TOKEN.sub(one_space, _C_TOKEN.sub(one_space, spliced))  # again: a comment's space beside blanks
    return "\n".join(line.strip() for line in bare.splitlines() if line.strip())


def code_of(path: str, text: str) -> str:
    """``text`` as code: Python as its syntax tree without docstrings (unless it reads ``__doc__``) and with each
    ``raise`` only saying which exception it raises (its words are what a refused call prints, not what a call that
    runs does); C/CUDA as C reads it, without comments and with one space for each run of blanks outside literals.
    Anything else, or Python that does not parse, as it is."""
    if path.endswith(".py"):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return text
        if "__doc__" in text:
            return ast.dump(tree)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
            if isinstance(node, ast.Raise):  # its class stays: a caller may catch one class and not another
                if isinstance(node.exc, ast.Call):
                    node.exc.args, node.exc.keywords = [], []
                node.cause = None
        return ast.dump(tree)
    if path.endswith((".cu", ".cuh", ".h", ".c", ".cpp")):
        return _c_code(text)
    return text


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(_env.repo_root()), *args], capture_output=True, text=True, timeout=20,
                          stdin=subprocess.DEVNULL)


def _code_at(rev: str, path: str) -> str | None:
    shown = _git("show", f"{rev}:{path}")
    return code_of(path, shown.stdout) if shown.returncode == 0 else None


def _code_now(path: str) -> str | None:
    """``path``'s code as this checkout has it on disk (uncommitted edits included); None where it is gone."""
    try:
        return code_of(path, (_env.repo_root() / path).read_text())
    except (OSError, UnicodeDecodeError):
        return None


def _same_code(sha: str, path: str, now: str | None) -> bool:
    """Whether ``path`` reads as the same code at ``sha`` and at ``now`` (a commit, or ``None``: the files on disk);
    a file missing from either (added, deleted, renamed) or that git cannot show is a change."""
    before = _code_at(sha, path)
    return before is not None and before == (_code_now(path) if now is None else _code_at(now, path))


def _changed_code(sha: str, paths: tuple[str, ...], now: str | None = None) -> list[str] | None:
    """The files of ``paths`` that read as other code at ``now`` (a commit, or ``None``: the files on disk, new ones
    too) than at ``sha``; None without git or where ``sha`` is not a commit of this checkout."""
    changed = _git("diff", "--name-only", "-z", sha, *([now] if now else []), "--", *paths)  # -z: names as they are
    if changed.returncode != 0:
        return None
    names = [p for p in changed.stdout.split("\0") if p]
    if now is None:  # files git does not track yet are code the record did not run
        new = _git("ls-files", "--others", "--exclude-standard", "-z", "--", *paths)
        names += [p for p in new.stdout.split("\0") if p and p not in names] if new.returncode == 0 else []
    return [p for p in names if not _same_code(sha, p, now)]


def _commits(sha: str, paths) -> int | None:
    out = _git("rev-list", "--count", f"{sha}..HEAD", "--", *paths)
    return int(out.stdout) if out.returncode == 0 and out.stdout.strip().isdigit() else None


def kernel_commits_since(sha: str, paths: tuple[str, ...] = KERNEL_PATHS) -> int | None:
    """Commits after ``sha`` up to HEAD that changed ``paths`` (``KERNEL_PATHS``), or 0 where those files read at HEAD
    as the same code as at ``sha`` (a change and its revert, a comment, a docstring); None without git or where
    ``sha`` is not a commit of this checkout. A notebook that renders a record from before such a change says so
    (notebook 02's sm90 view had shown a mainloop two changes old, 10 % slower, as if current)."""
    try:
        commits = _commits(sha, paths)
        if not commits:
            return commits
        changed = _changed_code(sha, paths, "HEAD")
        return None if changed is None else commits if changed else 0
    except (OSError, subprocess.SubprocessError):
        return None


def same_file_since(sha: str, path: str | Path) -> bool:
    """Whether the repository's file ``path`` (absolute, or from the repository root) holds on disk the text it held
    at commit ``sha``; False without git, for a file outside the repository, or one git did not hold at ``sha``."""
    root = _env.repo_root().resolve()
    try:
        rel = _env.repo_path(path).resolve().relative_to(root)
        shown = _git("show", f"{sha.removesuffix('-dirty')}:{rel.as_posix()}")
        return shown.returncode == 0 and shown.stdout == (root / rel).read_text()
    except (OSError, ValueError, UnicodeDecodeError, subprocess.SubprocessError):
        return False


def changed_since(sha: str, paths: tuple[str, ...] = KERNEL_PATHS) -> tuple[list[str], int, bool] | None:
    """The files of ``paths`` whose code in this checkout (uncommitted edits and new files included) differs from
    ``sha``'s, the commits since that touched them (what ``git log sha..HEAD -- files`` lists: a banner's count and
    command agree), and whether uncommitted edits are among the differences; ([], 0, False) where none differ, None
    without git or where ``sha`` is not a commit of this checkout. A ``-dirty`` sha (a record of a tree with
    uncommitted changes) is compared as its commit."""
    sha = sha.removesuffix("-dirty")
    try:
        if _commits(sha, paths) is None:
            return None
        changed = _changed_code(sha, paths)
        if not changed:
            return None if changed is None else ([], 0, False)
        commits = _commits(sha, changed)
        edited = _git("status", "--porcelain", "-z", "--", *changed)
        return None if commits is None else (changed, commits, bool(edited.stdout.strip("\0")))
    except (OSError, subprocess.SubprocessError):
        return None


def stale_note(sha: str, paths: tuple[str, ...]) -> str:
    """The recorded-run banner's sentence on whether today's code differs from a record's (empty where it does not):
    the files, the commits since (the ``git log`` that lists them) and uncommitted edits; or that it cannot be told."""
    import shlex

    found = changed_since(sha, paths)
    short = sha.removesuffix("-dirty")[:12]
    if found is None:  # no git here, or a commit this checkout does not have: say so, not "current"
        return (f" Whether labkit's kernels or call plans changed since cannot be told here (no git, or commit {short} "
                "is not in this checkout).")
    changed, since, edited = found
    if not changed:
        return ""
    files = " ".join(map(shlex.quote, changed))
    how = [f"{since} commit(s) since (git log {short}..HEAD -- {files})"] if since else []
    how += [f"uncommitted edits (git diff HEAD -- {files})"] if edited else []
    return (f" labkit's kernels or call plans changed in {' and '.join(how)}: re-record on a GPU to measure today's "
            "code.")


def has_commit(ancestor: str, sha: str) -> bool | None:
    """Whether commit ``sha`` has ``ancestor`` in its history (``ancestor`` itself counts), e.g. whether a recorded run
    measured with a fix to the timing; None without git or where either is not a commit of this checkout."""
    try:
        out = _git("merge-base", "--is-ancestor", ancestor, sha)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(out.returncode)
